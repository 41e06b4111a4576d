"""Warnings torch's C++ kernels print straight to stderr, held back while opspec calls them on purpose.

An op called through ``torch.ops`` reports ``TORCH_WARN`` on file descriptor 2,
past Python's warning filters (``var`` with a correction at least the sample
size); newer torch (2.15) turns the same ``TORCH_WARN`` into a Python
``UserWarning`` attributed to ``torch._ops``. A check that calls kernels at their
edges on purpose would fill the terminal with them; everything else native code
prints is passed on after.
"""
from __future__ import annotations

import contextlib
import os
import re
import sys
import tempfile
import warnings
from typing import Iterator, TextIO

WARNING = re.compile(r"^\[W\d{4} [\d:.]+ [^\]]+\] Warning: ")


@contextlib.contextmanager
def held_back(out: TextIO | None = None) -> Iterator[None]:
    """Native ``[W...] Warning:`` lines written while the block runs are dropped; other output follows it."""
    out = out or sys.stderr
    sys.stderr.flush()
    saved = os.dup(2)
    with tempfile.TemporaryFile() as held, warnings.catch_warnings():
        warnings.filterwarnings("ignore", category=UserWarning, module=r"torch\._ops")  # TORCH_WARN as Python sees it
        os.dup2(held.fileno(), 2)
        try:
            yield
        finally:
            sys.stderr.flush()
            os.dup2(saved, 2)
            os.close(saved)
            held.seek(0)
            kept = [line for line in held.read().decode("utf-8", "replace").splitlines() if not WARNING.match(line)]
            if kept:
                print("\n".join(kept), file=out)
