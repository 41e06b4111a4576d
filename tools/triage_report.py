"""Triage a run that covers more dtypes than its expectations were written for.

    python tools/triage_report.py REPORT.json [--dry-run]

The report must be judged with today's expectation file (the one it names). Two
edits are made to that file, in place, and printed:

- an xfail entry whose cases pass in some dtypes (xpass) is limited to the dtypes
  in which its cases still fail, and so is an entry written without dtypes whose
  cases in other dtypes fail another way (another status or another first line of
  the message) than in the dtype it was measured in;
- every case left untriaged (fail, compile-error, run-error, crash, timeout, xpass)
  gets an xfail entry, one per op, status and kind of message, naming the dtypes and
  devices it was measured in, blamed as the run blamed it, and quoting one message.

Then judge the report again (``tools/rejudge_reports.py REPORT``) and run this
again until it has nothing left to do. Reasons written here say what was measured;
a human names the cause where one is known.
"""
from __future__ import annotations

import argparse
import re
import sys
from collections import defaultdict
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "src"))
from opspec.conform import expectations as expectations_mod  # noqa: E402
from opspec.conform.lowering import shown  # noqa: E402
from opspec.conform.runner import cached_opset  # noqa: E402
from opspec.results.model import CaseRecord, Report  # noqa: E402
from opspec.spec import atomic  # noqa: E402
from opspec.spec.load import OpsetError  # noqa: E402

UNTRIAGED = ("fail", "compile-error", "run-error", "crash", "timeout")
HEADER = "  # ---- every dtype: cases measured with --dtypes all ({date}); the message quoted is the run's ----\n"


def kind(record: CaseRecord) -> str:
    """What a failure looked like, without its numbers and places: two cases of one kind share a cause."""
    first = (record.message or record.status).splitlines()[0]
    first = re.sub(r"opset/special_cases/[\w./-]+:\d+", "ROW", first)
    first = re.sub(r"0x[0-9a-fA-F]+|\d+(\.\d+)?(e[-+]?\d+)?", "N", first)
    return f"{record.final_outcome}: {first[:60]}"


def judged_by(record: CaseRecord) -> str | None:
    """Where the expectation entry that judged the case is (FILE:LINE), if one did."""
    return record.expectation.where if record.expectation is not None else None


def expectation_file(report: Report) -> Path:
    if not report.header.expectations:
        raise LookupError("the report names no expectation file")
    return REPO / report.header.expectations


def line_of(where: str) -> int:
    return int(where.rsplit(":", 1)[1])


def quote(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def narrowed(lines: list[str], line: int, dtypes: list[str]) -> None:
    """Give the entry starting at ``line`` (1-based, its ``- op:`` line) exactly these dtypes."""
    start = line - 1
    indent = len(lines[start]) - len(lines[start].lstrip(" -"))
    end = start + 1
    while end < len(lines) and lines[end].startswith(" " * indent) and not lines[end].lstrip().startswith("- "):
        end += 1
    text = f"{' ' * indent}dtypes: [{', '.join(dtypes)}]\n"
    for i in range(start + 1, end):
        if lines[i].strip().startswith("dtypes:"):
            lines[i] = text
            return
    lines.insert(start + 1, text)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("report", type=Path)
    parser.add_argument("--dry-run", action="store_true", help="print the edits, write nothing")
    args = parser.parse_args(argv)
    try:  # a report or expectation file that cannot be read is one line, and nothing is written
        report = Report.load(args.report)
        path = expectation_file(report)
        loaded = expectations_mod.read(path, cached_opset(report.opset), report.header.torch)
    except (OSError, ValueError, KeyError, TypeError, LookupError, OpsetError) as err:
        print(f"{args.report}: not triaged: {type(err).__name__}: {err}", file=sys.stderr)
        return 2
    by_line = {line_of(entry.where): entry for entry in loaded.entries}  # one file: its line names an entry

    # the cases each entry judged, by dtype, and the kind of failure in the dtype it was written for
    judged: dict[int, list[CaseRecord]] = defaultdict(list)
    for record in report.records:
        where = judged_by(record)
        if where and record.status in ("xfail", "xpass"):
            judged[line_of(where)].append(record)
    limits: dict[int, list[str]] = {}
    for line, records in judged.items():
        entry = by_line[line]
        where = entry.where
        failing = [r for r in records if r.status == "xfail"]
        if not entry.dtypes:  # written from a float32 run (or the op's first dtype): the cause it names is that one's
            measured = next((r for r in records if r.dtype == "float32"), records[0])
            failing = [r for r in failing if measured.status == "xfail" and kind(r) == kind(measured)]
        dtypes = sorted({r.dtype for r in failing})
        if not dtypes:
            print(f"{where}: every case it matches passes: stale, left for a human")
            continue
        if len(dtypes) < len({r.dtype for r in records}):
            limits[line] = dtypes
            print(f"{where}: limited to {', '.join(dtypes)}")

    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    for line in sorted(limits, reverse=True):  # bottom up, so the lines above keep their numbers
        narrowed(lines, line, limits[line])

    # what no entry (after the limits) covers: grouped by op, status and kind of message
    groups: dict[tuple, list[CaseRecord]] = defaultdict(list)
    for record in report.records:
        outcome = record.final_outcome
        where = judged_by(record)
        limit = limits.get(line_of(where)) if where else None
        unjudged = record.status in UNTRIAGED
        left_out = outcome in UNTRIAGED and limit is not None and record.dtype not in limit
        if unjudged or left_out:
            groups[(record.op, outcome, kind(record), record.blame or "")].append(record)
    added = []
    for (op, outcome, _, blame), records in sorted(groups.items()):
        dtypes = sorted({r.dtype for r in records})
        devices = sorted({r.device for r in records})
        message = (records[0].message or outcome).splitlines()[0][:300]
        entry = [f"  - op: {op}\n", f"    dtypes: [{', '.join(dtypes)}]\n", f"    devices: [{', '.join(devices)}]\n",
                 "    status: xfail\n"]
        if blame in ("backend", "frontend"):
            entry.append(f"    attribution: {blame}\n")
        why = records[0].blame_reason or "no blame recorded"
        entry.append(f"    reason: {quote(f'measured {outcome} in {len(records)} case(s) ({why}): {message}')}\n")
        added.append("".join(entry))
        print(f"{op} {', '.join(dtypes)}: {outcome}, blamed on {blame or 'nobody'}")
    if added:
        date = report.header.extra.get("date") or "this run"
        header = HEADER.format(date=date)
        if header not in "".join(lines):
            lines.append(header)
        lines.extend(added)
    if not args.dry_run and (limits or added):
        atomic.write_text(path, "".join(lines))
    print(f"{shown(path)}: {len(limits)} entries limited, {len(added)} added")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
