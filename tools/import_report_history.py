"""Import earlier runs of the published reports from git into conformance/results/history/.

Maintainer script. Every commit that changed ``conformance/results/BACKEND-DEVICE.json``
(that exact path: copies from other reports are not followed) holds one published
version of the report. Versions are grouped into runs by what identifies a run in the
header (opset, torch, backend version, dtypes, case count and the run's own
``duration_s``, and how many re-runs were spliced in): a later commit that only re-triaged the same run (expectations
applied again, paths renamed) is the same run. Each run is dated by the commit that
first published it (its author date: a rebase moves the committer date) and keeps the verdicts of the last commit that published it;
both commits are recorded as its source. A run the history already holds (archived
by ``opspec history archive``, or imported before) keeps its entry's date and name
and takes the verdicts of the last commit. A version whose header names another
backend or device than its file is skipped with a note.

    python tools/import_report_history.py            # every report, written into the history folder
    python tools/import_report_history.py --check    # exit 1 when a run is missing or its verdicts are stale
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

from opspec.reports import history
from opspec.results.model import Report

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "conformance" / "results"


def git(*args: str) -> str:
    return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True, check=True).stdout


def versions(path: Path) -> list[tuple[str, str, dict]]:
    """(commit, commit date, the report's JSON) for every commit that changed ``path``, oldest first."""
    relative = path.relative_to(ROOT).as_posix()
    found = []
    for line in reversed(git("log", "--format=%H %aI", "--", relative).splitlines()):
        commit, date = line.split()
        found.append((commit, date, json.loads(git("show", f"{commit}:{relative}"))))
    return found


def run_identity(report: Report) -> tuple:
    head = report.header
    return (head.opset, head.torch, head.backend.version, tuple(head.dtypes or ()), len(report.records),
            head.duration_s, len(head.spliced or ()))


def runs_of(path: Path) -> tuple[list[history.Run], list[str]]:
    relative = path.relative_to(ROOT).as_posix()
    runs: list[tuple[tuple, str, str, str, Report]] = []  # identity, first commit, its date, last commit, report
    notes = []
    for commit, date, data in versions(path):
        where = f"{relative}@{commit[:10]}"
        try:
            report = history.report_of(data, where)
            run = history.from_report(report, where, date)
        except history.HistoryError as err:
            notes.append(str(err))
            continue
        if run.key != path.stem:
            notes.append(f"{where}: its header names {run.key}, not {path.stem}; skipped")
            continue
        identity = run_identity(report)
        if runs and runs[-1][0] == identity:
            runs[-1] = (identity, runs[-1][1], runs[-1][2], commit, report)
        else:
            runs.append((identity, commit, date, commit, report))
    found = []
    for _, first, date, last, report in runs:
        source = {"report": relative, "first_commit": first, "commit": last}
        found.append(history.from_report(report, f"{relative}@{last[:10]}", history.parse_date(date), source))
    return found, notes


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=RESULTS / "history", help="the history folder")
    parser.add_argument("--check", action="store_true", help="write nothing; exit 1 when a run is not archived")
    args = parser.parse_args()
    missing = 0
    for path in sorted(RESULTS.glob("*.json")):
        runs, notes = runs_of(path)
        for note in notes:
            print(f"note: {note}", file=sys.stderr)
        for run in runs:
            if args.check:
                held = [history.Run.from_dict(json.loads(p.read_text(encoding="utf-8")))
                        for p in sorted((args.out / run.key).glob("*.json"))]
                if not [h for h in held if history.identity(h) == history.identity(run) and h.cases == run.cases]:
                    missing += 1
                    print(f"{args.out / run.key}: the run first published {run.date} is missing or has other verdicts")
                continue
            try:
                history.record(run, args.out)
            except history.HistoryError as err:
                print(f"error: {err}", file=sys.stderr)
                return 2
        print(f"{path.name}: {len(runs)} run(s)", file=sys.stderr)
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main())
