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

from opspec.conform import hardware, lowering
from opspec.conform.finish import finish
from opspec.results import tally
from opspec.results.model import Case, Part, Report, ReportFormatError, as_written
from opspec.spec import atomic, load

# header fields every part must share: what was tested and how
SAME = ("format", "opspec", "torch", "backend", "device", "opset", "seed", "max_examples", "max_compiles", "dtypes",
        "ops", "expectations", "isolated", "dynamic", "special_cases")
# header fields that describe one part's machine or run, kept per part
PER_PART = ("python", "platform", "device_name", "duration_s", "jobs", "shuffle")


class MergeError(ValueError):
    """The parts cannot be merged: one line naming the parts and what differs."""


def read_part(path: Path) -> Report:
    """A final report; a journal (a run not finished) is refused."""
    try:
        part = Report.load(path)
    except ReportFormatError as err:
        if _is_journal(path):
            raise MergeError(f"{path}: a journal, not a final report (finish the run with --resume {path} first)") from None
        raise MergeError(str(err)) from None
    if part.header.duration_s is None:  # only a final report has it
        raise MergeError(f"{path}: a journal, not a final report (finish the run with --resume {path} first)")
    return part


def _is_journal(path: Path) -> bool:
    try:
        with open(path, encoding="utf-8") as handle:
            return handle.readline().lstrip().startswith('{"header"')
    except (OSError, UnicodeDecodeError):
        return False


def merge(paths: list[Path]) -> tuple[Report, list[str]]:
    """The merged report and its warnings; MergeError when the parts disagree or do not add up."""
    parts = [(path, read_part(path)) for path in paths]
    first_path, first = parts[0]
    for path, part in parts[1:]:
        for key in SAME:
            mine, theirs = getattr(part.header, key), getattr(first.header, key)
            if mine != theirs:
                raise MergeError(f"{path} and {first_path} differ in {key}: {as_written(mine)!r} vs {as_written(theirs)!r}")
    _check_shards(parts)
    machines = {part.header.device_name for _, part in parts}
    records, seen = [], {}
    for path, part in parts:
        for record in part.records:
            if record.case in seen:
                raise MergeError(f"{record.case.name} is in both {seen[record.case]} and {path}")
            seen[record.case] = path
            if len(machines) > 1 and part.header.device_name and record.device_name is None:
                # parts from several machines: each case names its own, for expectations limited by hardware
                record = record.replace(device_name=part.header.device_name)
            records.append(record)
    warnings = []
    for key in ("device_name", "platform", "python"):
        values = sorted({str(v) for _, part in parts if (v := getattr(part.header, key)) is not None})
        if len(values) > 1 and key == "device_name" and first.device == "cuda":  # another GPU, another result
            raise MergeError(f"the parts ran on different GPUs: {'; '.join(values)}")
        if len(values) > 1:  # CPU models of hosted runners vary: said, not refused
            warnings.append(f"the parts ran on different {key.replace('_', ' ')}s: {'; '.join(values)}")
    # the first part's header (its python and platform; the warnings name any other), less what was its alone
    names = sorted({str(p.header.device_name) for _, p in parts if p.header.device_name})
    alone = {"schema", "shard", "duration_s", "jobs", "shuffle"}
    head = first.header.replace(
        **dict.fromkeys(alone), nulls=first.header.nulls - alone,
        device_name=hardware.JOINED.join(names) if first.header.device_name is not None else None,
        parts=tuple(Part(report=str(path), shard=str(p.header.shard), cases=len(p.records),
                         nulls=frozenset(k for k in PER_PART if k in p.header.nulls),
                         **{key: getattr(p.header, key) for key in PER_PART if getattr(p.header, key) is not None})
                    for path, p in parts))
    kept = [w for _, p in parts for w in p.warnings if not _computed_warning(w)]
    final = finish(head, records, order=_order(first.opset, parts),
                   warnings=[*dict.fromkeys(kept), *tally.stale_expectations(records), *warnings],
                   duration_s=sum(float(p.header.duration_s or 0.0) for _, p in parts),
                   declared=_applied_manifest(first))
    return final, warnings


def _applied_manifest(part: Report) -> Path | None:
    """The manifest the part's lowering section applied, where it is found from here (else found by name)."""
    path = Path(part.lowering.manifest) if part.lowering is not None else None
    return path if path is not None and path.is_file() else None


def _check_shards(parts: list[tuple[Path, Report]]) -> None:
    unsplit = next((path for path, part in parts if part.header.shard is None), None)
    if unsplit is not None:
        raise MergeError(f"{unsplit}: not a part of a split run (no shard in its header; run it with --shard K/N)")
    first_path, first = parts[0][0], parts[0][1].header.shard
    for path, part in parts:
        shard = part.header.shard
        for key, what in (("count", "shard count"), ("costs", "cost table (digest)")):
            if getattr(shard, key) != getattr(first, key):
                raise MergeError(f"{path} and {first_path} were split differently: {what} "
                                 f"{getattr(shard, key)!r} vs {getattr(first, key)!r}")
        if shard.cases is not None and shard.cases != len(part.records):
            raise MergeError(f"{path}: shard {shard} planned {shard.cases} cases but holds {len(part.records)}")
    held: dict[int, Path] = {}
    for path, part in parts:
        index = part.header.shard.index
        if index in held:
            raise MergeError(f"shard {part.header.shard} is given twice: {held[index]} and {path}")
        held[index] = path
    missing = [f"{index}/{first.count}" for index in range(1, first.count + 1) if index not in held]
    if missing:
        raise MergeError(f"missing shard{'s' if len(missing) > 1 else ''} {', '.join(missing)}: "
                         f"{'their' if len(missing) > 1 else 'its'} cases are in none of the {len(parts)} parts")


def _computed_warning(text: str) -> bool:
    """Warnings the merged report computes again over all the records: stale expectations, the lowering section's."""
    return text.startswith(lowering.WARNING_PREFIX) or ": stale expectation on " in text


def _order(opset_version: str, parts: list[tuple[Path, Report]]) -> list[Case]:
    """The unsharded plan's order: ops as the opset lists them, each op's cases as its part ran them."""
    rank = {op.name: index for index, op in enumerate(load.load_opset(opset_version).active_ops())}
    cases = [record.case for _, part in parts for record in part.records]
    return sorted(cases, key=lambda case: rank.get(case.op, len(rank)))  # sorted() is stable


def write(path: Path, final: Report) -> None:
    """The merged report, with each repro its records carry written beside it (REPORT.repros/CASE.py)."""
    repro_dir = path.with_suffix(".repros")
    records = []
    for record in final.records:
        if record.repro and record.repro_file:
            target = repro_dir / f"{record.case.id}.py"
            atomic.write_text(target, record.repro)
            record = record.replace(repro_file=str(target))
        records.append(record)
    atomic.write_text(path, final.with_records(records).dumps())
    if repro_dir.is_dir() and not any(repro_dir.iterdir()):
        repro_dir.rmdir()
