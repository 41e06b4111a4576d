"""Report history: each published conformance run kept as a compact per-case status table.

A full report is 100-400 KB (repros, messages, per-case evidence); what a trend and a
"what changed" list need is the identity of the run and one status per case. So each
run is kept as ``conformance/results/history/BACKEND-DEVICE/DATE_OPSET_TORCH.json``
(schema ``report_history.schema.json``): the header, the summary counts and
``cases``: ``"aten::op dtype device" -> status``. No torch is needed here.
"""
from __future__ import annotations

import dataclasses
import datetime
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from opspec.results.model import CaseRecord, Report, ReportFormatError
from opspec.results.vocabulary import PASSING
from opspec.spec import atomic

FORMAT = 1
SCHEMA = "report_history.schema.json"


class HistoryError(ValueError):
    """A report that cannot be archived (one line: the file and why)."""


@dataclass(frozen=True)
class Run:
    """One archived run."""
    backend: str
    device: str
    opset: str
    torch: str
    date: str  # ISO 8601, UTC
    cases: dict[str, str]  # "op dtype device" -> status
    backend_version: str = ""
    opspec: str = ""
    dtypes: tuple[str, ...] = ()
    duration_s: float | None = None
    source: dict[str, str] = field(default_factory=dict)
    path: str = ""
    spliced: int = 0  # later partial re-runs spliced into the report: with each, the report is another run

    @property
    def key(self) -> str:
        """The history folder's name: one per backend and device."""
        return f"{self.backend}-{self.device}"

    @property
    def total(self) -> int:
        return len(self.cases)

    @property
    def passed(self) -> int:
        return sum(1 for status in self.cases.values() if status in PASSING)

    @property
    def pass_rate(self) -> float:
        return 100 * self.passed / self.total if self.total else 0.0

    def summary(self) -> dict[str, int]:
        counts: dict[str, int] = {}
        for status in self.cases.values():
            counts[status] = counts.get(status, 0) + 1
        return dict(sorted(counts.items()))

    def file_name(self) -> str:
        stamp = self.date[:19].replace(":", "")  # 2026-11-23T222318
        torch = re.sub(r"[^A-Za-z0-9.]+", "-", self.torch)
        return f"{stamp}Z_{self.opset}_torch-{torch}.json"

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "format": FORMAT, "backend": self.backend, "backend_version": self.backend_version,
            "device": self.device, "opset": self.opset, "torch": self.torch, "opspec": self.opspec,
            "date": self.date, "source": dict(self.source), "dtypes": list(self.dtypes),
            "duration_s": self.duration_s, "summary": self.summary(),
            "cases": dict(sorted(self.cases.items())),
        }
        if self.spliced:
            data["spliced"] = self.spliced
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any], path: str = "") -> "Run":
        return cls(backend=data["backend"], device=data["device"], opset=data["opset"], torch=data["torch"],
                   date=data["date"], cases=dict(data["cases"]), backend_version=data.get("backend_version", ""),
                   opspec=data.get("opspec", ""), dtypes=tuple(data.get("dtypes", ())),
                   duration_s=data.get("duration_s"), source=dict(data.get("source", {})), path=path,
                   spliced=int(data.get("spliced", 0)))


def case_key(record: CaseRecord) -> str:
    return record.case.name


def report_of(data: Any, where: str) -> Report:
    """A report's JSON read through the model; HistoryError naming ``where`` when it is not one."""
    try:
        return Report.from_dict(data)
    except ReportFormatError as err:
        raise HistoryError(f"{where}: {err}") from None


def from_report(report: Report | Any, where: str, date: str, source: dict[str, str] | None = None) -> Run:
    """The compact form of a conformance report, or of its JSON (``where`` names it in errors)."""
    if not isinstance(report, Report):
        report = report_of(report, where)
    head = report.header
    missing = [key for key, value in (("backend", head.backend.name), ("device", head.device), ("opset", head.opset),
                                      ("torch", head.torch)) if not isinstance(value, str) or not value]
    if missing:
        raise HistoryError(f"{where}: the report's header lacks {', '.join(missing)}")
    cases: dict[str, str] = {}
    for index, record in enumerate(report.records):
        key = case_key(record)
        if key in cases:
            raise HistoryError(f"{where}: results[{index}] repeats the case {key}")
        cases[key] = record.status
    duration = head.duration_s
    return Run(
        backend=head.backend.name, device=head.device, opset=head.opset, torch=head.torch, date=date, cases=cases,
        backend_version=head.backend.version, opspec=head.opspec or "",
        dtypes=tuple(d for d in head.dtypes or () if isinstance(d, str)),
        duration_s=float(duration) if isinstance(duration, (int, float)) and not isinstance(duration, bool) else None,
        source=dict(source or {}),
        spliced=len(head.spliced or ()),
    )


def read_report(path: Path) -> Any:
    """A report's JSON, or a history entry's: ``from_report`` and ``Run.from_dict`` tell them apart."""
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as err:
        raise HistoryError(f"{path}: cannot read ({type(err).__name__})") from None
    except json.JSONDecodeError as err:
        raise HistoryError(f"{path}:{err.lineno}:{err.colno}: not JSON ({err.msg})") from None


def utc(moment: datetime.datetime) -> str:
    return moment.astimezone(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def parse_date(text: str) -> str:
    """A date or date-time given by a user, as the ISO UTC form history keeps; HistoryError when unreadable."""
    try:
        moment = datetime.datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise HistoryError(f"--date {text}: not an ISO date (e.g. 2026-11-23 or 2026-11-23T22:23:18Z)") from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=datetime.timezone.utc)
    return utc(moment)


def write(run: Run, folder: Path) -> Path:
    """Write ``run`` under ``folder/BACKEND-DEVICE/``; the same run archived again is left as it is, another run
    with the same date, opset and torch is refused."""
    target = folder / run.key / run.file_name()
    text = json.dumps(run.to_dict(), indent=1) + "\n"
    if target.is_file():
        if _same_run(target, run):
            return target
        raise HistoryError(f"{target}: another run is archived under this date, opset and torch; nothing written")
    atomic.write_text(target, text)
    return target


def identity(run: Run) -> tuple:
    """What identifies a run apart from its verdicts: a run judged again (expectations, today's rules) keeps it."""
    return (run.backend, run.device, run.opset, run.torch, run.backend_version, run.dtypes, sorted(run.cases),
            run.duration_s, run.spliced)


def record(run: Run, folder: Path) -> Path:
    """Write ``run``, or, where the history holds the same run already, give that entry ``run``'s verdicts
    (the entry keeps its date and name)."""
    for path in sorted((folder / run.key).glob("*.json")):
        try:
            held = Run.from_dict(json.loads(path.read_text(encoding="utf-8")))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError, KeyError, TypeError):
            continue
        if identity(held) == identity(run):
            text = json.dumps(dataclasses.replace(run, date=held.date).to_dict(), indent=1) + "\n"
            if path.read_text(encoding="utf-8") != text:
                atomic.write_text(path, text)
            return path
    return write(run, folder)


def _same_run(path: Path, run: Run) -> bool:
    """Whether ``path`` already holds ``run`` (where it was read from aside)."""
    try:
        held = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return False
    mine = run.to_dict()
    return isinstance(held, dict) and {k: v for k, v in held.items() if k != "source"} == \
        {k: v for k, v in mine.items() if k != "source"}


def read_all(folder: Path) -> tuple[dict[str, list[Run]], list[str]]:
    """Every archived run by BACKEND-DEVICE, oldest first, and notes about files that could not be read."""
    runs: dict[str, list[Run]] = {}
    notes: list[str] = []
    if not folder.is_dir():
        return runs, notes
    for path in sorted(folder.glob("*/*.json")):
        try:
            run = Run.from_dict(json.loads(path.read_text(encoding="utf-8")), str(path))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError, KeyError, TypeError, AttributeError) as err:
            notes.append(f"{path.parent.name}/{path.name}: not a readable history entry ({type(err).__name__})")
            continue
        runs.setdefault(run.key, []).append(run)
    for entries in runs.values():
        entries.sort(key=lambda r: r.date)
    return dict(sorted(runs.items())), notes


@dataclass(frozen=True)
class Changes:
    """What changed from one run to the next, case by case."""
    older: Run
    newer: Run
    fixed: list[tuple[str, str, str]]  # (case, old status, new status): not passing before, passing now
    new_failures: list[tuple[str, str, str]]  # passing before, not passing now
    changed: list[tuple[str, str, str]]  # other status changes (a failure triaged to xfail, pass to fallback...)
    added: list[tuple[str, str]]  # (case, status) only in the newer run
    removed: list[tuple[str, str]]  # only in the older run

    @property
    def count(self) -> int:
        return len(self.fixed) + len(self.new_failures) + len(self.changed) + len(self.added) + len(self.removed)


def changes(older: Run, newer: Run) -> Changes:
    fixed, failures, changed = [], [], []
    for case in sorted(set(older.cases) & set(newer.cases)):
        before, after = older.cases[case], newer.cases[case]
        if before == after:
            continue
        was, now = before in PASSING, after in PASSING
        (fixed if now and not was else failures if was and not now else changed).append((case, before, after))
    added = [(case, newer.cases[case]) for case in sorted(set(newer.cases) - set(older.cases))]
    removed = [(case, older.cases[case]) for case in sorted(set(older.cases) - set(newer.cases))]
    return Changes(older, newer, fixed, failures, changed, added, removed)


def describe(change: Changes) -> list[str]:
    """The terminal form of a comparison."""
    old, new = change.older, change.newer
    lines = [f"{new.key}: {old.date} (opset {old.opset}, torch {old.torch}, {old.pass_rate:.1f}% pass) -> "
             f"{new.date} (opset {new.opset}, torch {new.torch}, {new.pass_rate:.1f}% pass)"]
    for label, items in (("fixed", change.fixed), ("new failures", change.new_failures), ("changed", change.changed)):
        lines += [f"  {label}: {case}: {before} -> {after}" for case, before, after in items]
    for label, items in (("added", change.added), ("removed", change.removed)):
        lines += [f"  {label}: {case} ({status})" for case, status in items]
    if not change.count:
        lines.append("  no case changed")
    return lines

