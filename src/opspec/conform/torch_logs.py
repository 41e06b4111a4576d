"""torch's own log lines (guard failures, recompiles, graph breaks) go to a file, not the terminal.

A run's terminal shows verdicts; the tracebacks torch logs while tracing the
cases (most of them guard evaluations it recovers from), and whatever native
libraries print, are kept beside the report (``REPORT.log``) for whoever needs them.
"""
from __future__ import annotations

import contextlib
import logging
import os
import sys
from typing import Iterator


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
