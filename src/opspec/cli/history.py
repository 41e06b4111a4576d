"""``opspec history archive|changes``: keep each published run, and say what changed between two."""
from __future__ import annotations

import datetime
import subprocess
from pathlib import Path

from opspec.cli import UsageError, checkout, pathargs
from opspec.reports import history


def add_parser(subparsers) -> None:
    parser = subparsers.add_parser(
        "history",
        help="archive conformance reports as dated runs; compare two runs",
        description="The scoreboard's history: each published run kept as a compact per-case status table in "
        "conformance/results/history/BACKEND-DEVICE/DATE_OPSET_TORCH.json.",
    )
    commands = parser.add_subparsers(dest="history_command", required=True, metavar="ACTION")
    archive = commands.add_parser(
        "archive", help="add reports to the history (the same run archived again is a no-op)",
        description="Archive each REPORT as one dated run. Its date: --date, else the report's own date field, else "
        "the author date of the commit that last changed it when it is committed unchanged, else the time the file "
        "was written. Exit 0, 2 for an unusable report (nothing written).",
    )
    archive.add_argument("reports", nargs="+", type=pathargs.input_file, metavar="REPORT")
    archive.add_argument("--into", type=pathargs.output_folder, metavar="DIR",
                         help="history folder (default: conformance/results/history of the checkout)")
    archive.add_argument("--date", help="when the run happened (ISO date or date-time, UTC unless it says otherwise)")
    archive.add_argument("--root", type=pathargs.input_folder, metavar="DIR",
                         help="repository root (default: the checkout around the cwd)")
    archive.set_defaults(func=run_archive)
    compare = commands.add_parser(
        "changes", help="what changed between two runs: fixed cases, new failures, other changes, added, removed",
        description="Compare two runs, each a history entry or a full report: cases fixed (not passing before, "
        "passing now), new failures (passing before, not now), other status changes, cases added and removed. "
        "Exit 0, 2 for an unusable file.",
    )
    compare.add_argument("older", type=pathargs.input_file, metavar="OLD")
    compare.add_argument("newer", type=pathargs.input_file, metavar="NEW")
    compare.set_defaults(func=run_changes)


def run_archive(args) -> int:
    into = args.into or checkout(args.root).results / "history"
    try:
        date = history.parse_date(args.date) if args.date else None
        runs = [history.from_report(data, str(path), date or _date_of(data, path), {"report": _shown(path)})
                for path in args.reports for data in [history.read_report(path)]]
        for run in runs:  # every report is read before anything is written
            print(history.write(run, into))
    except history.HistoryError as err:
        raise UsageError(err) from None
    return 0


def run_changes(args) -> int:
    try:
        older, newer = (_run_of(path) for path in (args.older, args.newer))
    except history.HistoryError as err:
        raise UsageError(err) from None
    print("\n".join(history.describe(history.changes(older, newer))))
    return 0


def _shown(path: Path) -> str:
    """The report as the entry names it: relative to the cwd, else its file name alone (a scratch folder's
    absolute path would name the machine that archived it, not the run)."""
    try:
        return path.resolve().relative_to(Path.cwd().resolve()).as_posix()
    except ValueError:
        return path.name


def _run_of(path: Path) -> history.Run:
    data = history.read_report(path)
    if isinstance(data, dict) and isinstance(data.get("cases"), dict):
        try:
            return history.Run.from_dict(data, str(path))
        except (KeyError, TypeError) as err:
            raise history.HistoryError(f"{path}: not a history entry (no {err})") from None
    return history.from_report(data, str(path), _date_of(data, path))


def _date_of(data: dict, path: Path) -> str:
    own = data.get("date") if isinstance(data, dict) else None
    if isinstance(own, str) and own:
        return history.parse_date(own)
    return _committed(path) or history.utc(datetime.datetime.fromtimestamp(path.stat().st_mtime, datetime.timezone.utc))


def _committed(path: Path) -> str | None:
    """The author date of the commit that last changed ``path``, when the file is committed unchanged."""
    folder = path.resolve().parent
    try:
        dirty = subprocess.run(["git", "status", "--porcelain", "--", path.name], cwd=folder,
                               capture_output=True, text=True, timeout=10)
        last = subprocess.run(["git", "log", "-1", "--format=%aI", "--", path.name], cwd=folder,
                              capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return None
    if dirty.returncode or last.returncode or dirty.stdout.strip() or not last.stdout.strip():
        return None
    return history.parse_date(last.stdout.strip())
