"""A report judged again from what it recorded, with today's rules: nothing is run.

When the way verdicts are read from a run changes (who computed an op, since
execution levels), a committed report need not be run again to follow: each
record's evidence is read in today's terms, a right answer gets the status its
level gives, and today's expectations are applied, as ``--resume`` does for the
records it carries. Failures keep their outcome and blame.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

from opspec.conform import attribution, evidence, report
from opspec.conform import expectations as expectations_mod
from opspec.conform.backends import Declaration
from opspec.conform.runner import right_answer_message
from opspec.results.vocabulary import RIGHT_ANSWERS

# what a run computes from its records; everything else in a report is its header
COMPUTED = (*report.SECTIONS, "$schema", "duration_s", "warnings")


def record(found: dict[str, Any], declaration: Declaration | None) -> dict[str, Any]:
    """One record with its evidence level and, for a right answer, its status judged again."""
    recorded = found.get("evidence")
    if recorded is None:
        return found
    if _legacy(recorded):  # written before the levels: judged again from the ops it names
        found = evidence.upgraded(found)
        level = _level(found, found["evidence"], declaration)
    else:  # judged at run time with everything the run saw; only a declared fact overrides it
        level = (declaration.static_evidence() if declaration is not None else None) or _as_evidence(recorded)
    rejudged = {**found, "evidence": level.as_dict(), "executed": level.executed}
    outcome = found.get("outcome", found["status"])
    if outcome not in ("pass", *RIGHT_ANSWERS):
        return rejudged
    now = evidence.PASSING_STATUS[level.executed]
    if now == outcome:
        return rejudged
    rejudged.update(status=now, outcome=now, message="" if now == "pass" else right_answer_message(level, declaration))
    for key in ("blame", "blame_stage", "blame_reason"):
        rejudged.pop(key, None)
    if now != "pass":
        rejudged.update(attribution.right_answer(now).as_dict())
    return rejudged


def _legacy(recorded: dict[str, Any]) -> bool:
    return recorded.get("executed") in evidence.LEGACY_EXECUTED or "backend_ops" in recorded


def _as_evidence(recorded: dict[str, Any]) -> evidence.Evidence:
    return evidence.Evidence(recorded["executed"], recorded["source"], list(recorded.get("target_ops", ())),
                             list(recorded.get("pytorch_ops", ())), recorded.get("note", ""),
                             list(recorded.get("runtime_ops", ())), recorded.get("kernels", 0))


def _level(found: dict[str, Any], recorded: dict[str, Any], declaration: Declaration | None) -> evidence.Evidence:
    static = declaration.static_evidence() if declaration is not None else None
    if static is not None:
        return static
    if recorded.get("source", "none") == "none":
        return evidence.Evidence("unknown", "none", note=recorded.get("note", ""))
    target, runtime = set(recorded.get("target_ops", ())), set(recorded.get("runtime_ops", ()))
    delegated = set(found.get("delegated_ops", ()))
    if not runtime and declaration is not None and declaration.runtime:
        # written before the levels: the delegate's ops were recorded apart, the rest ran in the runtime
        target, runtime = delegated, target - delegated
    seen = evidence.Seen(recorded["source"], target, set(recorded.get("pytorch_ops", ())), recorded.get("note", ""),
                         kernels=recorded.get("kernels", 0), runtime_ops=runtime)
    return evidence.judge(found["op"], [seen])


def rejudge(previous: dict[str, Any], declaration: Declaration | None, expectations_path: Path | None,
            opset) -> dict[str, Any]:
    """The report ``previous`` judged again: records, summary, counts and warnings rebuilt."""
    # matched against the torch and the hardware the report ran on, not this machine's
    expected = expectations_mod.read(expectations_path, opset, previous.get("torch"), previous.get("device_name") or "") \
        if expectations_path else expectations_mod.Expectations()
    head = {key: value for key, value in previous.items() if key not in COMPUTED}
    if declaration is not None and isinstance(head.get("backend"), dict):
        head["backend"] = {**head["backend"], "target": declaration.target,
                           **({"runtime": declaration.runtime} if declaration.runtime else {})}
    # a record that names its own machine (spliced in, or merged from parts run on several) is matched against it
    records = [expectations_mod.reapply(record(r, declaration),
                                        expected.lookup(report.case_of(r), r.get("device_name", "")))
               for r in previous["results"]]
    final = report.final(head, records, order=[report.case_of(r) for r in records],
                         warnings=[*expected.warnings, *expectations_mod.stale(records)],
                         duration_s=float(previous.get("duration_s") or 0.0), declaration=declaration)
    if "functionalization" in previous:
        final = report.with_section(final, "functionalization", previous["functionalization"])
    return final
