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
from opspec.results import tally
from opspec.results.json_text import report_text
from opspec.results.model import Case, CaseRecord, Header
from opspec.results.vocabulary import BLAME, CLEAN, EXECUTED, RIGHT_ANSWERS, STATUSES
from opspec.spec import atomic
SECTIONS = ("results", "summary", "executed", "blame", "root_causes", "lowering", "functionalization")  # computed by a run, never carried by --resume


class ReportError(ValueError):
    """A report or journal cannot be read: one line naming the file (and line)."""


def journal_path(report: Path) -> Path:
    return report.with_suffix(".jsonl")


def header(*, backend: dict, device: str, opset: str, seed: int, max_examples: int, max_compiles: int,
           dtypes: list[str] | None, ops: list[str] | None, expectations: str | None, isolate: bool,
           shuffle: int | None = None, dynamic: bool = True, special_cases: bool = True) -> dict[str, Any]:
    import torch

    return {
        "format": FORMAT,
        "opspec": __version__,
        "torch": torch.__version__,
        "python": platform.python_version(),
        "platform": platform.platform(terse=True),
        "backend": backend,
        "device": device,
        "device_name": hardware.name(device),
        "opset": opset,
        "seed": seed,
        "max_examples": max_examples,
        "max_compiles": max_compiles,
        "dtypes": dtypes or ["all"],
        "ops": ops or ["*"],
        "expectations": expectations,
        "isolated": isolate,
        "shuffle": shuffle,
        "dynamic": dynamic,
        "special_cases": special_cases,
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),  # the scoreboard's date
    }


class Journal:
    """Appends one JSON line per finished case; the file stays valid JSON lines after any kill."""

    def __init__(self, path: Path, head: dict[str, Any], carried: Iterable[dict[str, Any]] = ()):
        self.path = path
        lines = [json.dumps({"header": head}, sort_keys=True)] + [json.dumps(r, sort_keys=True) for r in carried]
        atomic.write_text(path, "\n".join(lines) + "\n")
        self._handle: TextIO | None = open(path, "a", encoding="utf-8")

    def append(self, record: dict[str, Any]) -> None:
        assert self._handle is not None
        self._handle.write(json.dumps(record, sort_keys=True) + "\n")
        self._handle.flush()
        os.fsync(self._handle.fileno())

    def close(self, *, remove: bool = False) -> None:
        if self._handle is not None:
            self._handle.close()
            self._handle = None
        if remove:
            self.path.unlink(missing_ok=True)


def read_previous(path: Path) -> tuple[dict[str, Any], list[dict[str, Any]]]:
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
        if not isinstance(whole.get("results"), list):
            raise ReportError(f"{path}: not a conformance report (no results list)")
        head = {k: v for k, v in whole.items() if k not in SECTIONS}
        return head, [r for r in whole["results"] if _is_record(r)]
    if text.lstrip().startswith("{") and "\n" not in text.strip() and whole is None:
        raise ReportError(f"{path}:1: not valid JSON")
    head: dict[str, Any] | None = None
    records: list[dict[str, Any]] = []
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
        elif _is_record(item):
            records.append(item)
        else:
            raise ReportError(f"{path}:{number}: not a conformance record")
    if head is None:
        raise ReportError(f"{path}: no header line; not a conformance journal")
    return head, records


def _is_record(item: Any) -> bool:
    return (isinstance(item, dict) and all(isinstance(item.get(k), str) for k in ("op", "dtype", "device"))
            and item.get("status") in STATUSES)


def check_compatible(previous: dict[str, Any], current: dict[str, Any], path: Path) -> None:
    """A resumed run must test the same thing as the run it continues."""
    for key in ("backend", "device", "opset", "seed", "max_examples", "max_compiles", "shard"):
        was, now = previous.get(key), current.get(key)
        if key == "backend":
            was, now = (was or {}).get("name") if isinstance(was, dict) else was, now["name"]
        if was != now:
            raise ReportError(f"{path}: recorded with {key} {was!r}, this run has {now!r}")


def case_of(record: dict[str, Any]) -> Case:
    return Case(record["op"], record["dtype"], record["device"])


def previous_section(path: Path, name: str) -> dict[str, Any] | None:
    """A computed section of a final report (None for a journal, or a report without it)."""
    try:
        whole = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return None
    section = whole.get(name) if isinstance(whole, dict) else None
    return section if isinstance(section, dict) else None


def with_section(final: dict[str, Any], name: str, section: dict[str, Any]) -> dict[str, Any]:
    """The report with one more section, placed before the per-case results."""
    rest = {k: v for k, v in final.items() if k not in ("results", name)}
    return {**rest, name: section, "results": final["results"]}


def final(head: dict[str, Any], records: list[dict[str, Any]], *, order: list[Case], warnings: list[str],
          duration_s: float, manifests_dir: Path | None = None, declaration=None) -> dict[str, Any]:
    """The report; with a ``lowering`` section when the backend has a manifest (``manifests_dir``: where to look).
    ``declaration``: the backend's, as the run looked it up, for the manifest it names (None: found by name);
    the registry is not consulted here, so a merge finishes without the backends and torch."""
    header = Header.from_dict(head)
    return finish(header, [CaseRecord.from_dict(r) for r in records], order=order, warnings=warnings,
                  duration_s=duration_s, manifests_dir=manifests_dir,
                  declared=declaration.manifest if declaration is not None else None).to_dict()


def write(path: Path, report: dict[str, Any]) -> None:
    atomic.write_text(path, report_text(report))


# ---- terminal ----

def progress_line(index: int, total: int, record: dict[str, Any]) -> str:
    width = len(str(total))
    detail = f"{record.get('examples', 0)} ex, {record.get('compiles', 0)} compiles, {record.get('duration_s', 0):.1f}s"
    line = f"[{index:>{width}}/{total}] {record['status']:<13} {record['op']} {record['dtype']} {record['device']} ({detail})"
    if record["status"] not in CLEAN and record.get("message"):
        line += f"\n{' ' * (2 * width + 4)}{_who(record)}{_clip(record['message'], 160)}"
    return line


def _who(record: dict[str, Any]) -> str:
    """``[frontend: dynamo] ``, or ``[backend] `` where the stage says no more than the party."""
    party, stage = record.get("blame"), record.get("blame_stage", "")
    if not party:
        return ""
    return f"[{party}: {stage}] " if stage and stage != party else f"[{party}] "


def summary_table(report: dict[str, Any], causes_shown: int = 12) -> str:
    summary = report["summary"]
    backend = lowering_mod.backend_name(report)
    described = report["backend"] if isinstance(report["backend"], dict) else {}
    version = f" ({described['version']})" if described.get("version") else ""
    lines = [f"{backend}{version} on {report['device']}{_device_detail(report)}, opset {report['opset']}, "
             f"torch {report.get('torch', '?')}: {summary['cases']} cases, {summary['compiles']} compiles, "
             f"{report['duration_s']:.0f}s", ""]
    lines.append(f"{'status':<14}{'cases':>6}")
    for status in STATUSES:
        if summary.get(status):
            lines.append(f"{status:<14}{summary[status]:>6}")
    executed = report.get("executed")
    if executed:
        lines += ["", "who computed the op (cases run): " + ", ".join(
            f"{executed[k]} {_level_name(k, described)}" for k in EXECUTED if executed.get(k))]
    if summary.get("unverified"):
        unverified = [r for r in report["results"] if r["status"] == "unverified"]
        hooked = sum(1 for r in unverified if r.get("evidence", {}).get("source") == "hook")
        if hooked:
            lines.append(f"{hooked} right answers are unverified: the backend's evidence hook named none of their ops")
        if len(unverified) - hooked:
            lines.append(f"{len(unverified) - hooked} right answers are unverified: the backend says nothing about who "
                         "computed them (its evidence hook, executed_ops(), would)")
    failed = Counter(r["blame"] for r in report["results"] if r.get("blame")
                     and r.get("outcome", r["status"]) not in (*RIGHT_ANSWERS, "pass", "skip"))
    if failed:
        lines.append("who failed (cases failing): " + ", ".join(f"{failed[k]} {k}" for k in BLAME if failed.get(k)))
    right = Counter(r["status"] for r in report["results"] if r["status"] in RIGHT_ANSWERS)
    if right:
        lines.append("right answers the backend's target did not compute: "
                     + ", ".join(f"{right[k]} {k}" for k in RIGHT_ANSWERS if right.get(k)))
    logged = [r["log"] for r in report["results"] if r.get("log")]
    if any(log["cut_bytes"] for log in logged):
        lines.append(f"log: the cases printed {_size(sum(log['bytes'] for log in logged))}, "
                     f"{_size(sum(log['cut_bytes'] for log in logged))} of it cut (repeated lines, and past each "
                     "case's cap)")
    lines += ["", *lowering_mod.summary_lines(report)]
    causes = [c for c in report.get("root_causes", []) if c["outcome"] not in RIGHT_ANSWERS]
    if causes:
        lines += ["", "root causes (not passing, expected or not):"]
        for cause in causes[:causes_shown]:
            ops = ", ".join(c.split(" ")[0].removeprefix("aten::") for c in cause["cases"][:6])
            more = f" +{cause['count'] - 6}" if cause["count"] > 6 else ""
            lines.append(f"  {cause['count']:>3} {cause['blame']:<8} {cause['stage'] + ':':<15} {cause['outcome']:<13} "
                         f"{_clip(cause['cause'], 90)}")
            lines.append(f"      {ops}{more}")
        if len(causes) > causes_shown:
            lines.append(f"  ... {len(causes) - causes_shown} more in the report's root_causes")
    bad = [r for r in report["results"] if r["status"] not in CLEAN]
    if bad:
        lines += ["", "not passing and not expected:"]
        lines += [f"  {r['status']:<13} {r['op']} {r['dtype']}: {_who(r)}{_clip(r.get('message', ''), 140)}"
                  for r in bad]
    return "\n".join(lines)


def _size(count: int) -> str:
    return f"{count / 2**20:.1f} MB" if count >= 2**20 else f"{count / 1024:.0f} KB"


def _level_name(level: str, described: dict[str, Any]) -> str:
    """``target (the XNNPACK delegate)``: a level with what it is for this backend, where the report says."""
    what = described.get(level) if level in ("target", "runtime") else None
    return f"{level} ({what})" if what else level


def _device_detail(report: dict[str, Any]) -> str:
    name = report.get("device_name")
    return f" ({name})" if name else ""


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
