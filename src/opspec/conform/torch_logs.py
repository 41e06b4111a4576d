"""torch's own log lines (guard failures, recompiles, graph breaks) go to a file, not the terminal.

A run's terminal shows verdicts; the tracebacks torch logs while tracing the
cases (most of them guard evaluations it recovers from), and whatever native
libraries print, are kept beside the report (``REPORT.log``) for whoever needs them.

Bounded: a worker captures each case's output (Python's and native code's) in a
file of its own (:func:`captured`), then appends it to the log with every line that
repeats an earlier one (numbers aside) left out and at most ``CASE_CAP`` bytes kept
(:func:`settle`); the record says how much was cut, and a failing case keeps the
first lines as the backend's diagnostic. A case that hangs while printing is held
to ``RUNAWAY_CAP`` by its parent (:func:`rein_in`), which keeps the head.
"""
from __future__ import annotations

import contextlib
import logging
import os
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator

CASE_CAP = 64 * 1024  # bytes of one case's output kept in the log: a full run of the opset stays near 12 MB
RUNAWAY_CAP = 8 * 1024 * 1024  # a running case's capture beyond this is cut by the parent, its head kept
HEAD_BYTES = 64 * 1024
DIAGNOSTIC_LINES = 12
_DIGITS = re.compile(r"\d+")


@contextlib.contextmanager
def to_file_while(path: str) -> Iterator[None]:
    """:func:`to_file` for the block only: the loggers' handlers and the warnings capture are put back after."""
    names = {"py.warnings", *_torch_loggers()}
    saved = {name: (list(logging.getLogger(name).handlers), logging.getLogger(name).propagate) for name in names}
    try:
        to_file(path)
        yield
    finally:
        logging.captureWarnings(False)
        for name, (handlers, propagate) in saved.items():
            logger = logging.getLogger(name)
            for handler in logger.handlers:
                if handler not in handlers:
                    handler.close()
            logger.handlers, logger.propagate = handlers, propagate


def to_file(path: str) -> None:
    """Send every ``torch.*`` logger's output and Python warnings to ``path`` (appended)."""
    handler = logging.FileHandler(path, encoding="utf-8", delay=True)
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    _to_handler(handler)


def to_stderr() -> None:
    """Send every ``torch.*`` logger's output and Python warnings to stderr, wherever its descriptor points at the
    time (a worker points it at the running case's capture, see :func:`captured`). No time stamps: what a case
    prints is compared line by line with what it printed before."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(levelname)s %(name)s: %(message)s"))
    _to_handler(handler)


def _to_handler(handler: logging.Handler) -> None:
    for name in sorted(_torch_loggers()):
        logger = logging.getLogger(name)
        for old in [h for h in logger.handlers if isinstance(h, logging.StreamHandler)
                    and not isinstance(h, logging.FileHandler)]:
            logger.removeHandler(old)
        if not logger.propagate or name == "torch":
            logger.addHandler(handler)
    logging.captureWarnings(True)
    warnings_logger = logging.getLogger("py.warnings")
    warnings_logger.handlers = [handler]
    warnings_logger.propagate = False


def _torch_loggers() -> set[str]:
    """The names of torch's loggers: its root and every registered log and artifact."""
    import torch._logging._internal as internal

    return {"torch", *internal.log_registry.get_log_qnames(), *internal.log_registry.get_artifact_log_qnames()}


def redirect_output(path: str) -> None:
    """A worker's stdout and stderr, Python's and native code's alike, appended to ``path``."""
    sys.stdout.flush()
    sys.stderr.flush()
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    os.dup2(descriptor, 1)
    os.dup2(descriptor, 2)
    os.close(descriptor)


def part_path(log_file: str, case_id: str) -> Path:
    """Where a case's output is captured while it runs, beside the log."""
    return Path(f"{log_file}.parts") / f"{case_id}.log"


@contextlib.contextmanager
def captured(part: Path, log_file: str) -> Iterator[None]:
    """The block's stdout and stderr (descriptors 1 and 2) into ``part`` (emptied first), then back to the log."""
    part.parent.mkdir(parents=True, exist_ok=True)
    part.with_suffix(".head").unlink(missing_ok=True)
    _point_output(str(part), truncate=True)
    try:
        yield
    finally:
        _point_output(log_file)


def _point_output(path: str, truncate: bool = False) -> None:
    sys.stdout.flush()
    sys.stderr.flush()
    flags = os.O_WRONLY | os.O_CREAT | os.O_APPEND | (os.O_TRUNC if truncate else 0)
    descriptor = os.open(path, flags, 0o644)
    os.dup2(descriptor, 1)
    os.dup2(descriptor, 2)
    os.close(descriptor)


@dataclass
class Settled:
    """What a case printed: its size, what was cut, and its first lines (the diagnostic of a failure)."""

    bytes: int = 0
    cut_bytes: int = 0
    repeated_lines: int = 0
    head: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, int]:
        return {"bytes": self.bytes, "cut_bytes": self.cut_bytes, "repeated_lines": self.repeated_lines}


def rein_in(part: Path) -> int:
    """A running case's capture past ``RUNAWAY_CAP``: its head kept aside (once), the file emptied; the bytes cut
    (those not kept in the head).
    The worker writes with O_APPEND, so it goes on at the new end."""
    try:
        size = part.stat().st_size
    except OSError:
        return 0
    if size <= RUNAWAY_CAP:
        return 0
    head, kept = part.with_suffix(".head"), 0
    if not head.exists():
        with part.open("rb") as source:
            kept = head.write_bytes(source.read(HEAD_BYTES))
    os.truncate(part, 0)
    return size - kept


def settle(part: Path, log_file: str, title: str, cut_before: int = 0) -> Settled:
    """Append the case's capture to the log, repeated lines left out and cut to ``CASE_CAP``; remove the capture.
    ``cut_before``: bytes :func:`rein_in` already cut."""
    settled = Settled(cut_bytes=cut_before)
    head = part.with_suffix(".head")
    seen: set[bytes] = set()
    kept: list[bytes] = []
    size = 0
    for line in _lines(head, part):
        settled.bytes += len(line)
        key = _DIGITS.sub("N", line.decode("utf-8", "replace").strip()).encode()
        if not key:
            continue
        if key in seen:
            settled.repeated_lines += 1
            settled.cut_bytes += len(line)
            continue
        seen.add(key)
        if size + len(line) > CASE_CAP:
            settled.cut_bytes += len(line)
            continue
        kept.append(line)
        size += len(line)
        if len(settled.head) < DIAGNOSTIC_LINES:
            settled.head.append(line.decode("utf-8", "replace").rstrip()[:300])
    settled.bytes += cut_before
    if settled.bytes:
        note = (f"[opspec: {title} printed {settled.bytes} bytes; {settled.cut_bytes} cut "
                f"({settled.repeated_lines} repeated lines, the rest over the {CASE_CAP // 1024} KB cap)]\n"
                if settled.cut_bytes else "")
        with open(log_file, "ab") as log:
            log.write(f"--- {title}\n".encode() + b"".join(kept) + (b"\n" if kept and not kept[-1].endswith(b"\n") else b"")
                      + note.encode())
    for path in (head, part):
        path.unlink(missing_ok=True)
    return settled


def _lines(*paths: Path) -> Iterator[bytes]:
    for path in paths:
        try:
            with path.open("rb") as source:
                yield from source
        except FileNotFoundError:
            continue

