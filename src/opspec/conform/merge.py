"""``opspec report merge``: the parts of one split run (``--shard K/N`` reports) as one report.

The parts must have tested the same thing: the same opset, torch, backend (name and
package versions), device and settings, cut by the same cost table into the same
number of shards. Every shard must be there once, and no case may appear twice.
The merged report is what one unsharded run would have written: records in the
opset's order, summary, blame, root causes and lowering computed again, each
non-passing case's repro beside it; it records the parts it came from.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

from opspec.conform import expectations, hardware, lowering, report
from opspec.conform.cases import Case
from opspec.conform.runner import cached_opset
from opspec.spec import atomic

# header keys every part must share: what was tested and how
SAME = ("format", "opspec", "torch", "backend", "device", "opset", "seed", "max_examples", "max_compiles", "dtypes",
        "ops", "expectations", "isolated", "dynamic", "special_cases")
# header keys that describe one part's machine or run, kept per part
PER_PART = ("python", "platform", "device_name", "duration_s", "jobs", "shuffle")


class MergeError(ValueError):
    """The parts cannot be merged: one line naming the parts and what differs."""


def read_part(path: Path) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """A final report's header and records; a journal (a run not finished) is refused."""
    try:
        head, records = report.read_previous(path)
    except report.ReportError as err:
        raise MergeError(str(err)) from None
    if "duration_s" not in head:  # only a final report has it
        raise MergeError(f"{path}: a journal, not a final report (finish the run with --resume {path} first)")
    return head, records


def merge(paths: list[Path]) -> tuple[dict[str, Any], list[str]]:
    """The merged report and its warnings; MergeError when the parts disagree or do not add up."""
    parts = [(path, *read_part(path)) for path in paths]
    first_path, first, _ = parts[0]
    for path, head, _ in parts[1:]:
        for key in SAME:
            if head.get(key) != first.get(key):
                raise MergeError(f"{path} and {first_path} differ in {key}: {head.get(key)!r} vs {first.get(key)!r}")
    _check_shards(parts)
    machines = {h.get("device_name") for _, h, _ in parts}
    records, seen = [], {}
    for path, head, part_records in parts:
        for record in part_records:
            case = report.case_of(record)
            if case in seen:
                raise MergeError(f"{case.op} {case.dtype} {case.device} is in both {seen[case]} and {path}")
            seen[case] = path
            if len(machines) > 1 and head.get("device_name") and "device_name" not in record:
                # parts from several machines: each case names its own, for expectations limited by hardware
                record = {**record, "device_name": head["device_name"]}
            records.append(record)
    warnings = []
    for key in ("device_name", "platform", "python"):
        values = sorted({str(head.get(key)) for _, head, _ in parts if head.get(key) is not None})
        if len(values) > 1 and key == "device_name" and first.get("device") == "cuda":  # another GPU, another result
            raise MergeError(f"the parts ran on different GPUs: {'; '.join(values)}")
        if len(values) > 1:  # CPU models of hosted runners vary: said, not refused
            warnings.append(f"the parts ran on different {key.replace('_', ' ')}s: {'; '.join(values)}")
    # the first part's header (its python and platform; the warnings name any other), less what was its alone
    head = {key: value for key, value in first.items()
            if key not in ("shard", "$schema", "warnings", "duration_s", "jobs", "shuffle")}
    if "device_name" in head:
        head["device_name"] = hardware.JOINED.join(sorted({str(h["device_name"]) for _, h, _ in parts if h.get("device_name")}))
    head["parts"] = [{"report": str(path), "shard": _shard_text(h), "cases": len(r),
                      **{key: h[key] for key in PER_PART if key in h}} for path, h, r in parts]
    kept = [w for _, h, _ in parts for w in h.get("warnings", []) if not _computed_warning(w)]
    final = report.final(head, records, order=_order(first["opset"], parts),
                         warnings=[*dict.fromkeys(kept), *expectations.stale(records), *warnings],
                         duration_s=sum(float(h.get("duration_s") or 0.0) for _, h, _ in parts))
    return final, warnings


def _check_shards(parts: list[tuple[Path, dict[str, Any], list]]) -> None:
    shards = [head.get("shard") for _, head, _ in parts]
    if not all(isinstance(s, dict) for s in shards):
        unsplit = next(path for (path, _, _), s in zip(parts, shards) if not isinstance(s, dict))
        raise MergeError(f"{unsplit}: not a part of a split run (no shard in its header; run it with --shard K/N)")
    first_path = parts[0][0]
    for (path, _, records), shard in zip(parts, shards):
        for key in ("count", "costs"):
            if shard.get(key) != shards[0].get(key):
                what = "shard count" if key == "count" else "cost table (digest)"
                raise MergeError(f"{path} and {first_path} were split differently: {what} "
                                 f"{shard.get(key)!r} vs {shards[0].get(key)!r}")
        if shard.get("cases") is not None and shard["cases"] != len(records):
            raise MergeError(f"{path}: shard {_shard_text({'shard': shard})} planned {shard['cases']} cases "
                             f"but holds {len(records)}")
    held: dict[int, Path] = {}
    for (path, _, _), shard in zip(parts, shards):
        if shard["index"] in held:
            raise MergeError(f"shard {shard['index']}/{shard['count']} is given twice: {held[shard['index']]} and {path}")
        held[shard["index"]] = path
    count = shards[0]["count"]
    missing = [f"{index}/{count}" for index in range(1, count + 1) if index not in held]
    if missing:
        raise MergeError(f"missing shard{'s' if len(missing) > 1 else ''} {', '.join(missing)}: "
                         f"{'their' if len(missing) > 1 else 'its'} cases are in none of the {len(parts)} parts")


def _shard_text(head: dict[str, Any]) -> str:
    shard = head.get("shard") or {}
    return f"{shard.get('index')}/{shard.get('count')}"


def _computed_warning(text: str) -> bool:
    """Warnings the merged report computes again over all the records: stale expectations, the lowering section's."""
    return text.startswith(lowering.WARNING_PREFIX) or ": stale expectation on " in text


def _order(opset_version: str, parts) -> list[Case]:
    """The unsharded plan's order: ops as the opset lists them, each op's cases as its part ran them."""
    rank = {op.name: index for index, op in enumerate(cached_opset(opset_version).active_ops())}
    cases = [report.case_of(r) for _, _, records in parts for r in records]
    return sorted(cases, key=lambda case: rank.get(case.op, len(rank)))  # sorted() is stable


def write(path: Path, final: dict[str, Any]) -> None:
    """The merged report, with each repro its records carry written beside it (REPORT.repros/CASE.py)."""
    repro_dir = path.with_suffix(".repros")
    results = []
    for record in final["results"]:
        if record.get("repro") and record.get("repro_file"):
            target = repro_dir / f"{report.case_of(record).id}.py"
            atomic.write_text(target, record["repro"])
            record = {**record, "repro_file": str(target)}
        results.append(record)
    report.write(path, {**final, "results": results})
    if repro_dir.is_dir() and not any(repro_dir.iterdir()):
        repro_dir.rmdir()
