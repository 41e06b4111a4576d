"""The conformance report's ``functionalization`` section: every mutating variant of a core op, exported.

For each in-place or ``out=`` variant of an active core op and each mutation
shape (see :mod:`opspec.functionalization`), calls of the functional op are
drawn from the strategy layer until one builds the program; it is exported,
lowered with the opset's table and checked. A variant that does not
functionalize on the installed torch is a *finding*, recorded with its reason in
``conformance/expectations/functionalization.yaml`` (schema
``functionalization_findings.schema.json``); the run reports it as ``xfail``,
and a finding that no longer fails as ``xpass``.
"""
from __future__ import annotations

import fnmatch
import sys
import time
import warnings
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, TextIO

from .. import functional_variants, load, torch_bridge, yamlio
from .. import functionalization as fx
from ..model import Opset
from ..strategies import Call
from . import cases as cases_mod
from .backends import root_cause_line
from .expectations import expectations_dir

SCHEMA = "functionalization_findings.schema.json"
# skip: this view cannot reach the drawn outputs (transpose of a vector); no-program: not even the plain
# mutation could be built from any drawn call, which would leave the variant unchecked
STATUSES = ("pass", "not-functional", "fail", "export-error", "run-error", "no-program", "xfail", "xpass", "skip")
CLEAN = ("pass", "xfail", "skip")
CALLS = 6  # drawn calls per variant; a mutation takes the first one it can be built from
EXPORTED_WITH = "torch.export.export(strict=False), then run_decompositions with the opset's decomposition table"


@dataclass(frozen=True)
class Finding:
    """A known way some variants do not functionalize on the installed torch."""

    variants: tuple[str, ...]  # fnmatch globs over variant names, with or without aten::
    programs: tuple[str, ...]  # globs over "target/view"
    reason: str
    status: str = ""  # the failing status it expects; any when empty
    strict: bool = True  # False: it fails for some values only, so a pass is not stale
    excluding: tuple[str, ...] = ()  # variant globs the entry does not cover
    link: str = ""
    where: str = ""

    def covers(self, mutation: fx.Mutation) -> bool:
        name = mutation.variant.name
        return (any(cases_mod.op_matches(name, glob) for glob in self.variants)
                and not any(cases_mod.op_matches(name, glob) for glob in self.excluding)) and any(
            fnmatch.fnmatchcase(mutation.program_id, glob) for glob in self.programs)

    def as_dict(self) -> dict[str, str]:
        entry = {"reason": self.reason, "where": self.where}
        return {**entry, "link": self.link} if self.link else entry


@dataclass(frozen=True)
class Findings:
    entries: tuple[Finding, ...] = ()
    path: str = ""
    warnings: tuple[str, ...] = ()

    def lookup(self, mutation: fx.Mutation) -> Finding | None:
        return next((f for f in self.entries if f.covers(mutation)), None)


def default_path() -> Path:
    return expectations_dir() / "functionalization.yaml"


def read_findings(path: Path, variants: list[functional_variants.Variant], opset: Opset) -> Findings:
    """Parse and schema-check the findings file; OpsetError (file:line: message) when it is unusable."""
    data = load.read_checked(path, SCHEMA, "findings")
    entries, notes = [], []
    if data.get("opset", opset.version) != opset.version:
        notes.append(f"{path}:1: findings recorded for opset {data['opset']}, run on {opset.version}")
    for item in data["findings"]:
        mark = yamlio.mark_of(item)
        entry = Finding(variants=tuple(item["variants"]), programs=tuple(item.get("programs", ["*"])),
                        reason=item["reason"], status=item.get("status", ""), strict=item.get("strict", True),
                        excluding=tuple(item.get("excluding", ())), link=item.get("link", ""),
                        where=f"{mark.path}:{mark.line}")
        for glob in (*entry.variants, *entry.excluding):
            if not any(cases_mod.op_matches(v.name, glob) for v in variants):
                notes.append(f"{mark}: finding {glob!r} matches no in-place or out variant of opset {opset.version}")
        entries.append(entry)
    return Findings(tuple(entries), str(path), tuple(notes))


def judge(outcome: str, finding: Finding | None) -> tuple[str, str]:
    """(status, note) for a raw outcome once the finding is applied; the note says why a finding did not hold."""
    if finding is None or outcome == "skip":
        return outcome, ""
    if outcome == "pass" and not finding.strict:
        return "pass", ""
    if outcome == "pass":
        return "xpass", f"stale finding at {finding.where}: the program functionalizes"
    if finding.status and finding.status != outcome:  # it fails, but not the recorded way
        return outcome, f"the finding at {finding.where} expects {finding.status}"
    return "xfail", ""


def rejudge(record: dict[str, Any], findings: Findings) -> dict[str, Any]:
    """A record from an earlier run, judged by today's findings (its raw outcome is kept)."""
    fresh = {k: v for k, v in record.items() if k not in ("finding", "note")}
    variant = functional_variants.Variant(record["functional"], record["variant"], record["kind"])
    finding = findings.lookup(fx.Mutation(variant, record["target"], record["view"]))
    return _judged(fresh, finding)


def _judged(record: dict[str, Any], finding: Finding | None) -> dict[str, Any]:
    record["status"], note = judge(record["outcome"], finding)
    if note:
        record["note"] = note
    if finding is not None:
        record["finding"] = finding.as_dict()
    return record


def every_output(call: Call) -> Call:
    """The call asking for every output: an ``out=`` variant needs them all, a backward's output_mask may drop some."""
    names = [a.name for a in torch_bridge.resolve(call.op)._schema.arguments]
    if "output_mask" not in names:
        return call
    position = names.index("output_mask")
    if position < len(call.args):
        mask = call.args[position]
        return Call(call.op, (*call.args[:position], [True] * len(mask), *call.args[position + 1:]), call.kwargs)
    if "output_mask" in call.kwargs:
        return Call(call.op, call.args, {**call.kwargs, "output_mask": [True] * len(call.kwargs["output_mask"])})
    return call


def run_variant(variant: functional_variants.Variant, opset: Opset, table: dict, findings: Findings, *,
                device: str, seed: int) -> list[dict[str, Any]]:
    """One record per mutation of ``variant``."""
    op = opset.ops_by_name[variant.functional]
    dtype = cases_mod.dtypes_for(op, ["float32"])[0]
    case = cases_mod.Case(variant.name, dtype, device)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            calls = [e.call for e in cases_mod.draw(op, dtype, device, max_examples=CALLS, max_compiles=CALLS,
                                                    seed=case.seed(seed))]
        except Exception as err:  # noqa: BLE001 - a strategy that cannot draw leaves the variant unchecked
            calls, draw_error = [], root_cause_line(err)
        else:
            draw_error = ""
        direct = fx.Mutation(variant, "input", "direct")
        if calls and not any(fx.build(direct, call) for call in calls):
            # rare shapes of call (every output of a multi-output op defined): look further before giving up
            more = [e.call for e in cases_mod.draw(op, dtype, device, max_examples=CALLS * 8,
                                                   max_compiles=CALLS * 8, seed=case.seed(seed + 1))]
            calls += [every_output(call) for call in more]
        tolerance = fx.tolerance_of(opset, variant)
        records = []
        for mutation in fx.mutations(variant):
            started = time.perf_counter()
            program = next((p for p in (fx.build(mutation, call) for call in calls) if p is not None), None)
            if program is not None:
                verdict = fx.check(program, opset, table, tolerance)
            elif mutation.view != "direct" and calls:
                verdict = fx.Verdict("skip", f"a {mutation.view} view cannot reach the outputs of the drawn calls")
            else:
                verdict = fx.Verdict("no-program", draw_error or f"eager refuses the {variant.kind} variant on "
                                                                  f"all {len(calls)} drawn calls")
            record = {"variant": variant.name, "functional": variant.functional, "kind": variant.kind,
                      "target": mutation.target, "view": mutation.view, "dtype": dtype, "device": device,
                      "status": verdict.status, "outcome": verdict.status, "message": verdict.message,
                      "duration_s": round(time.perf_counter() - started, 3)}
            if verdict.status not in ("pass", "skip"):
                record["graph_ops"] = list(verdict.graph_ops)
            record = _judged(record, findings.lookup(mutation))
            records.append(record)
    return records


def summarize(records: list[dict[str, Any]]) -> dict[str, int]:
    counts = Counter(r["status"] for r in records)
    return {**{status: counts[status] for status in STATUSES}, "programs": len(records),
            "variants": len({r["variant"] for r in records}), "ops": len({r["functional"] for r in records})}


def program_key(record: dict[str, Any]) -> tuple[str, str, str, str]:
    return record["variant"], record["target"], record["view"], record["device"]


def section(opset: Opset, variants: list[functional_variants.Variant], findings: Findings, *, device: str,
            seed: int, previous: dict[str, Any] | None = None, out: TextIO | None = None,
            clock: Callable[[], float] = time.perf_counter) -> dict[str, Any]:
    """Run every variant; the report's ``functionalization`` section.

    ``previous``: the section of a resumed report; its programs are judged again by
    today's findings instead of being run (when it was drawn with the same seed).
    """
    out = out or sys.stdout
    started = clock()
    carried: dict[str, list[dict[str, Any]]] = {}
    if previous and previous.get("seed") == seed and previous.get("device") == device:
        for record in previous.get("results", []):
            carried.setdefault(record["variant"], []).append(rejudge(record, findings))
    table = fx.lowering_table(opset)
    records: list[dict[str, Any]] = []
    for index, variant in enumerate(variants, 1):
        mine = carried.get(variant.name) or run_variant(variant, opset, table, findings, device=device, seed=seed)
        records += mine
        tally = ", ".join(f"{n} {s}" for s, n in Counter(r["status"] for r in mine).most_common())
        how = "recorded" if variant.name in carried else "ran"
        print(f"[functionalization {index}/{len(variants)}] {variant.id} ({how}): {tally}", file=out, flush=True)
    duration = sum(r["duration_s"] for r in records)
    return {
        "exported_with": EXPORTED_WITH,
        "findings": findings.path,
        "device": device,
        "seed": seed,
        "calls_per_variant": CALLS,
        "duration_s": round(max(duration, clock() - started), 1),
        "summary": summarize(records),
        "warnings": list(findings.warnings),
        "results": records,
    }


def summary_lines(section: dict[str, Any]) -> list[str]:
    s = section["summary"]
    counts = ", ".join(f"{s[status]} {status}" for status in STATUSES if s[status])
    lines = [f"functionalization: {s['programs']} programs of {s['variants']} variants of {s['ops']} ops: {counts}"]
    bad = [r for r in section["results"] if r["status"] not in CLEAN]
    for r in bad[:20]:
        lines.append(f"  {r['variant'].removeprefix('aten::')}/{r['target']}/{r['view']}: {r['status']}: "
                     f"{_first_line(r.get('note') or r['message'])}")
    if len(bad) > 20:
        lines.append(f"  ... and {len(bad) - 20} more in the report")
    return lines


def _first_line(text: str) -> str:
    return (text.strip().splitlines() or [""])[0][:160]


def clean(section: dict[str, Any]) -> bool:
    return all(r["status"] in CLEAN for r in section["results"])
