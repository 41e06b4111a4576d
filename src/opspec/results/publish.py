"""The published form of a conformance report: what ``conformance/results/NAME.json`` holds.

``opspec conform --report`` writes the full report of a run: every record with its
duration, where its repro was written, and the evidence and expectation it shares with
many others. The published form keeps every verdict and what decided it (status,
outcome, message, executed and its evidence, blame, the expectation that applied,
special cases, accuracy, errors and tolerances, decided_by, first_run) and leaves out
what changes from run to run or says nothing new:

- a record's ``duration_s`` and ``repro_file`` (a path on the machine that ran it): the
  header's ``op_seconds`` keeps each op's mean seconds per case instead, what
  ``tools/measure_costs.py`` cuts shards by;
- a record's fields written as null (read as not written) and ``property_checked``
  when false;
- the repro of a right answer the target did not compute (``undelegated``, ``fallback``,
  ``unverified``) beyond the first case of each op: the op's lowering guide takes that
  one; ``opspec conform --ops OP --dtypes DTYPE`` writes any other again, the same
  (drawn from the case's seed);
- the values many records share (``evidence``, ``expectation``, ``special_cases``,
  ``handed_ops``), each written once in the ``shared`` section and named in the record by
  its key (:func:`opspec.results.model.share_key`); reading the report through the model
  puts them back.

The header stays as the run wrote it: its ``date``, total ``duration_s`` (history tells runs
apart by it) and ``op_seconds`` describe the run. Two runs with the same verdicts
publish the same records and shared values, byte for byte, and differ in those header
lines alone; publishing a published report changes nothing.
"""
from __future__ import annotations

from opspec.results import vocabulary
from opspec.results.model import Report

# record fields written once in the shared section, by key
SHARED = ("evidence", "expectation", "special_cases", "handed_ops")
# record fields a published report leaves out: they change every run or name a file on the machine that ran it
VOLATILE = ("duration_s", "repro_file")
# a published report's size at most: 1,722 cases' verdicts and the repros of those that did not pass (the largest,
# executorch-xnnpack-cpu.json, 1.99 MB, 0.5 MB of it the repros of its 544 known failures)
BUDGET_BYTES = 2 * 1024 * 1024


def published(report: Report) -> Report:
    """``report`` in its published form (a published report: itself)."""
    seen_ops: set[str] = set()
    records = []
    header = report.header
    if any(record.duration_s is not None for record in report.records):
        header = header.replace(op_seconds=op_seconds(report))
    for record in report.records:
        record = record.without(*VOLATILE, *record.nulls)
        if record.property_checked is False:
            record = record.without("property_checked")
        if record.repro is not None and record.status in vocabulary.RIGHT_ANSWERS:
            if record.op in seen_ops:
                record = record.without("repro")
            else:
                seen_ops.add(record.op)
        records.append(record)
    return report.replace(header=header, records=tuple(records), shared=SHARED)


def op_seconds(report: Report) -> dict[str, float]:
    """Each op's mean ``duration_s`` per case in the report's records (none recorded: 0), in seconds to 3 decimals,
    by op name."""
    durations: dict[str, list[float]] = {}
    for record in report.records:
        durations.setdefault(record.op, []).append(float(record.duration_s or 0.0))
    return {op: round(sum(values) / len(values), 3) for op, values in sorted(durations.items())}


def text(report: Report) -> str:
    """The published report's file: keys in the model's order, one line per case."""
    return published(report).dumps()


def is_published(report: Report, written: str) -> bool:
    """Whether ``written`` (the report's file) is the report's published form, byte for byte."""
    return text(report) == written


