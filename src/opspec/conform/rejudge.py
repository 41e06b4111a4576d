"""A report judged again from what it recorded, with today's rules: nothing is run.

When the way verdicts are read from a run changes (who computed an op, since
execution levels), a committed report need not be run again to follow: each
record's evidence is read in today's terms, a right answer gets the status its
level gives, and today's expectations are applied, as ``--resume`` does for the
records it carries. Failures keep their outcome and blame.
"""
from __future__ import annotations

from pathlib import Path

from opspec.conform import attribution, evidence, report
from opspec.conform import expectations as expectations_mod
from opspec.conform.backends import Declaration
from opspec.conform.runner import right_answer_message
from opspec.results import model
from opspec.results.model import CaseRecord, Report
from opspec.results.vocabulary import RIGHT_ANSWERS

BLAME_FIELDS = ("blame", "blame_stage", "blame_reason")


def record(found: CaseRecord, declaration: Declaration | None) -> CaseRecord:
    """One record with its evidence level and, for a right answer, its status judged again."""
    recorded = found.evidence
    if recorded is None:
        return found
    if _legacy(recorded):  # written before the levels: judged again from the ops it names
        found = evidence.upgraded(found)
        level = _level(found, found.evidence, declaration)
    else:  # judged at run time with everything the run saw; only a declared fact overrides it
        level = (declaration.static_evidence() if declaration is not None else None) or _as_evidence(recorded)
    rejudged = found.replace(evidence=level.as_record(), executed=level.executed)
    outcome = found.final_outcome
    if outcome not in ("pass", *RIGHT_ANSWERS):
        return rejudged
    now = evidence.PASSING_STATUS[level.executed]
    if now == outcome:
        return rejudged
    rejudged = rejudged.without(*BLAME_FIELDS).replace(
        status=now, outcome=now, message="" if now == "pass" else right_answer_message(level, declaration))
    if now != "pass":
        rejudged = rejudged.replace(**attribution.right_answer(now).as_dict())
    return rejudged


def _legacy(recorded: model.Evidence) -> bool:
    return recorded.executed in evidence.LEGACY_EXECUTED or "backend_ops" in recorded.extra


def _as_evidence(recorded: model.Evidence) -> evidence.Evidence:
    return evidence.Evidence(recorded.executed, recorded.source, list(recorded.target_ops or ()),
                             list(recorded.pytorch_ops or ()), recorded.note or "", list(recorded.runtime_ops or ()),
                             recorded.kernels or 0)


def _level(found: CaseRecord, recorded: model.Evidence, declaration: Declaration | None) -> evidence.Evidence:
    static = declaration.static_evidence() if declaration is not None else None
    if static is not None:
        return static
    if recorded.source == "none":
        return evidence.Evidence("unknown", "none", note=recorded.note or "")
    target, runtime = set(recorded.target_ops or ()), set(recorded.runtime_ops or ())
    delegated = set(found.delegated_ops or ())
    if not runtime and declaration is not None and declaration.runtime:
        # written before the levels: the delegate's ops were recorded apart, the rest ran in the runtime
        target, runtime = delegated, target - delegated
    seen = evidence.Seen(recorded.source, target, set(recorded.pytorch_ops or ()), recorded.note or "",
                         kernels=recorded.kernels or 0, runtime_ops=runtime)
    return evidence.judge(found.op, [seen])


def rejudge(previous: Report, declaration: Declaration | None, expectations_path: Path | None, opset) -> Report:
    """The report ``previous`` judged again: records, summary, counts and warnings rebuilt."""
    head = previous.header
    # matched against the torch and the hardware the report ran on, not this machine's
    expected = expectations_mod.read(expectations_path, opset, head.torch, head.device_name or "") \
        if expectations_path else expectations_mod.Expectations()
    if declaration is not None and not head.backend.name_only:
        head = head.replace(backend=head.backend.replace(target=declaration.target,
                                                         runtime=declaration.runtime or head.backend.runtime))
    # a record that names its own machine (spliced in, or merged from parts run on several) is matched against it
    records = [expectations_mod.reapply(record(r, declaration), expected.lookup(r.case, r.device_name or ""))
               for r in previous.records]
    final = report.final(head, records, order=[r.case for r in records],
                         warnings=[*expected.warnings, *expectations_mod.stale(records)],
                         duration_s=float(head.duration_s or 0.0), declaration=declaration)
    return final.replace(functionalization=previous.functionalization)
