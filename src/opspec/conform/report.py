"""Results on disk: a journal of JSON lines written as cases finish, and one final JSON report.

The journal (``REPORT`` with ``.jsonl``) starts with a header line and gets one
line per finished case, flushed at once, so a killed run keeps what it
finished; ``--resume`` reads a journal or a final report. The final report
(schema ``conformance_report.schema.json``) is written atomically at the end,
after which the journal is removed.
"""
from __future__ import annotations

import datetime
import json
import os
import platform
import re
from collections import Counter
from pathlib import Path
from typing import Any, Iterable, TextIO

from opspec import __version__
from opspec.conform import hardware
from opspec.conform import lowering as lowering_mod
from opspec.conform.finish import FORMAT, SCHEMA_URL, finish
from opspec.results.model import (
    Backend,
    Case,
    CaseRecord,
    Functionalization,
    Header,
    Report,
    ReportFormatError,
    as_written,
)
from opspec.results.vocabulary import BLAME, EXECUTED, RIGHT_ANSWERS, STATUSES
from opspec.spec import atomic


class ReportError(ValueError):
    """A report or journal cannot be read: one line naming the file (and line)."""


def journal_path(report: Path) -> Path:
    return report.with_suffix(".jsonl")


def header(*, backend: Backend, device: str, opset: str, seed: int, max_examples: int, max_compiles: int,
           dtypes: list[str] | None, ops: list[str] | None, expectations: str | None, isolate: bool,
           shuffle: int | None = None, dynamic: bool = True, special_cases: bool = True) -> Header:
    """The run's header: what is tested, with what, and how (an expectation file or a shuffle not used is
    written as null)."""
    import torch

    return Header(
        format=FORMAT, opspec=__version__, torch=torch.__version__, python=platform.python_version(),
        platform=platform.platform(terse=True), backend=backend, device=device, device_name=hardware.name(device),
        opset=opset, seed=seed, max_examples=max_examples, max_compiles=max_compiles,
        dtypes=tuple(dtypes or ["all"]), ops=tuple(ops or ["*"]), expectations=expectations, isolated=isolate,
        shuffle=shuffle, dynamic=dynamic, special_cases=special_cases,
        extra={"date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")},  # the scoreboard's
        nulls=frozenset(name for name, value in (("expectations", expectations), ("shuffle", shuffle))
                        if value is None),
    )


class Journal:
    """Appends one JSON line per finished case; the file stays valid JSON lines after any kill."""

    def __init__(self, path: Path, head: Header, carried: Iterable[CaseRecord] = ()):
        self.path = path
        lines = [json.dumps({"header": head.to_dict()}, sort_keys=True)] + [_line(r) for r in carried]
        atomic.write_text(path, "\n".join(lines) + "\n")
        self._handle: TextIO | None = open(path, "a", encoding="utf-8")

    def append(self, record: CaseRecord) -> None:
        assert self._handle is not None
        self._handle.write(_line(record) + "\n")
        self._handle.flush()
        os.fsync(self._handle.fileno())

    def close(self, *, remove: bool = False) -> None:
        if self._handle is not None:
            self._handle.close()
            self._handle = None
        if remove:
            self.path.unlink(missing_ok=True)


def _line(record: CaseRecord) -> str:
    return json.dumps(record.to_dict(), sort_keys=True)


def read_previous(path: Path) -> tuple[Header, list[CaseRecord]]:
    """(header, records) of a final report or a journal; ReportError when it cannot be used."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as err:
        raise ReportError(f"{path}: cannot read ({err.strerror if isinstance(err, OSError) else err})") from None
    try:
        whole = json.loads(text)
    except json.JSONDecodeError:
        whole = None  # JSON lines, or a broken report: told apart below
    if isinstance(whole, dict) and "header" not in whole:  # one object: a final report
        try:
            previous = Report.from_dict(whole)
        except ReportFormatError as err:
            raise ReportError(f"{path}: {err}") from None
        return previous.header, [r for r in previous.records if r.status in STATUSES]
    if text.lstrip().startswith("{") and "\n" not in text.strip() and whole is None:
        raise ReportError(f"{path}:1: not valid JSON")
    head: dict[str, Any] | None = None
    records: list[CaseRecord] = []
    lines = text.splitlines()
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            item = json.loads(line)
        except json.JSONDecodeError:
            if number == len(lines):
                break  # the run was killed while writing its last line
            raise ReportError(f"{path}:{number}: not a JSON line") from None
        if isinstance(item, dict) and isinstance(item.get("header"), dict) and head is None:
            head = item["header"]
        elif (record := _record(item)) is not None:
            records.append(record)
        else:
            raise ReportError(f"{path}:{number}: not a conformance record")
    if head is None:
        raise ReportError(f"{path}: no header line; not a conformance journal")
    return _journal_header(head, path), records


def _journal_header(data: dict[str, Any], path: Path) -> Header:
    """The header line's header, read once every line was (a garbled line is told first)."""
    try:
        return Header.from_dict(data)
    except ReportFormatError as err:
        raise ReportError(f"{path}: its header line: {err}") from None


def _record(item: Any) -> CaseRecord | None:
    """A journal line as a record; None for one that is not (a status this opspec does not write, a part not of the
    report schema's shape)."""
    try:
        record = CaseRecord.from_dict(item)
    except ReportFormatError:
        return None
    return record if record.status in STATUSES else None


def check_compatible(previous: Header, current: Header, path: Path) -> None:
    """A resumed run must test the same thing as the run it continues."""
    for key in ("backend", "device", "opset", "seed", "max_examples", "max_compiles", "shard"):
        was, now = getattr(previous, key), getattr(current, key)
        if key == "backend":
            was, now = was.name, now.name
        if was != now:
            raise ReportError(f"{path}: recorded with {key} {as_written(was)!r}, this run has {as_written(now)!r}")


def previous_functionalization(path: Path) -> Functionalization | None:
    """The functionalization section of a final report (None for a journal, or a report without one)."""
    try:
        return Report.load(path).functionalization
    except ReportFormatError:
        return None


def final(head: Header, records: list[CaseRecord], *, order: list[Case], warnings: list[str],
          duration_s: float, manifests_dir: Path | None = None, declaration=None) -> Report:
    """The report; with a ``lowering`` section when the backend has a manifest (``manifests_dir``: where to look).
    ``declaration``: the backend's, as the run looked it up, for the manifest it names (None: found by name);
    the registry is not consulted here, so a merge finishes without the backends and torch."""
    return finish(head, records, order=order, warnings=warnings, duration_s=duration_s, manifests_dir=manifests_dir,
                  declared=declaration.manifest if declaration is not None else None)


def write(path: Path, report: Report) -> None:
    atomic.write_text(path, report.dumps())


# ---- terminal ----

def progress_line(index: int, total: int, record: CaseRecord) -> str:
    width = len(str(total))
    detail = f"{record.examples or 0} ex, {record.compiles or 0} compiles, {record.duration_s or 0:.1f}s"
    line = f"[{index:>{width}}/{total}] {record.status:<13} {record.op} {record.dtype} {record.device} ({detail})"
    if not record.clean and record.message:
        line += f"\n{' ' * (2 * width + 4)}{_who(record)}{_clip(record.message, 160)}"
    return line


def _who(record: CaseRecord) -> str:
    """``[frontend: dynamo] ``, or ``[backend] `` where the stage says no more than the party."""
    party, stage = record.blame, record.blame_stage or ""
    if not party:
        return ""
    return f"[{party}: {stage}] " if stage and stage != party else f"[{party}] "


def summary_table(report: Report, causes_shown: int = 12) -> str:
    summary, head = report.summary, report.header
    version = f" ({head.backend.version})" if head.backend.version else ""
    lines = [f"{report.backend_name}{version} on {head.device}{_device_detail(head)}, opset {head.opset}, "
             f"torch {head.torch or '?'}: {summary['cases']} cases, {summary['compiles']} compiles, "
             f"{head.duration_s:.0f}s", ""]
    lines.append(f"{'status':<14}{'cases':>6}")
    for status in STATUSES:
        if summary.get(status):
            lines.append(f"{status:<14}{summary[status]:>6}")
    if report.executed:
        lines += ["", "who computed the op (cases run): " + ", ".join(
            f"{report.executed[k]} {_level_name(k, head.backend)}" for k in EXECUTED if report.executed.get(k))]
    if summary.get("unverified"):
        lines += _unverified_lines(report.records)
    lines += _not_the_target_lines(report.records)
    lines += _log_lines(report.records)
    lines += ["", *lowering_mod.summary_lines(report)]
    lines += _root_cause_lines(report, causes_shown)
    bad = [r for r in report.records if not r.clean]
    if bad:
        lines += ["", "not passing and not expected:"]
        lines += [f"  {r.status:<13} {r.op} {r.dtype}: {_who(r)}{_clip(r.message, 140)}" for r in bad]
    return "\n".join(lines)


def _unverified_lines(records: Iterable[CaseRecord]) -> list[str]:
    """Why the right answers nobody can vouch for are unverified: a hook that named none of their ops, or none."""
    unverified = [r for r in records if r.status == "unverified"]
    hooked = sum(1 for r in unverified if r.evidence is not None and r.evidence.source == "hook")
    lines = []
    if hooked:
        lines.append(f"{hooked} right answers are unverified: the backend's evidence hook named none of their ops")
    if len(unverified) - hooked:
        lines.append(f"{len(unverified) - hooked} right answers are unverified: the backend says nothing about who "
                     "computed them (its evidence hook, executed_ops(), would)")
    return lines


def _not_the_target_lines(records: tuple[CaseRecord, ...]) -> list[str]:
    """Who failed, over the cases failing; the right answers the backend's target did not compute."""
    lines = []
    failed = Counter(r.blame for r in records if r.blame and r.final_outcome not in (*RIGHT_ANSWERS, "pass", "skip"))
    if failed:
        lines.append("who failed (cases failing): " + ", ".join(f"{failed[k]} {k}" for k in BLAME if failed.get(k)))
    right = Counter(r.status for r in records if r.status in RIGHT_ANSWERS)
    if right:
        lines.append("right answers the backend's target did not compute: "
                     + ", ".join(f"{right[k]} {k}" for k in RIGHT_ANSWERS if right.get(k)))
    return lines


def _log_lines(records: Iterable[CaseRecord]) -> list[str]:
    logged = [r.log for r in records if r.log]
    if not any(log.cut_bytes for log in logged):
        return []
    return [f"log: the cases printed {_size(sum(log.bytes for log in logged))}, "
            f"{_size(sum(log.cut_bytes for log in logged))} of it cut (repeated lines, and past each case's cap)"]


def _root_cause_lines(report: Report, shown: int) -> list[str]:
    causes = [c for c in report.root_causes or () if c.outcome not in RIGHT_ANSWERS]
    if not causes:
        return []
    lines = ["", "root causes (not passing, expected or not):"]
    for cause in causes[:shown]:
        ops = ", ".join(c.split(" ")[0].removeprefix("aten::") for c in cause.cases[:6])
        more = f" +{cause.count - 6}" if cause.count > 6 else ""
        lines.append(f"  {cause.count:>3} {cause.blame:<8} {cause.stage + ':':<15} {cause.outcome:<13} "
                     f"{_clip(cause.cause, 90)}")
        lines.append(f"      {ops}{more}")
    if len(causes) > shown:
        lines.append(f"  ... {len(causes) - shown} more in the report's root_causes")
    return lines


def _size(count: int) -> str:
    return f"{count / 2**20:.1f} MB" if count >= 2**20 else f"{count / 1024:.0f} KB"


def _level_name(level: str, backend: Backend) -> str:
    """``target (the XNNPACK delegate)``: a level with what it is for this backend, where the report says."""
    what = getattr(backend, level) if level in ("target", "runtime") else None
    return f"{level} ({what})" if what else level


def _device_detail(head: Header) -> str:
    return f" ({head.device_name})" if head.device_name else ""


def _clip(text: str, limit: int) -> str:
    """One line of at most ``limit`` characters, cut in the middle: a failure's message names what failed at its
    start and the input it failed on at its end, and both are read."""
    text = " ".join(str(text).split())
    if len(text) <= limit:
        return text
    head = (limit - 5) * 2 // 5
    return f"{text[:head]} ... {text[len(text) - (limit - 5 - head):]}"


def slug(name: str) -> str:
    """A backend or model name as a part of a file name."""
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", name).strip("_")
