"""Purpose-built closure probes for tests/test_drift_closure.py, run in closure's probe processes.

``faulty_probe`` answers like a real probe except on one entry each: it hangs where
no alarm can interrupt it on ``aten::hang``, segfaults on ``aten::crash``, overruns
its deadline in Python on ``aten::slow`` and prints a long traceback to stderr on
``aten::noisy`` before reporting it untraceable; ``aten::mutating`` meets an in-place op.
"""
from __future__ import annotations

import ctypes
import os
import signal
import sys
import time
import traceback


def faulty_probe(name: str, schema: str, core: set[str], table) -> tuple[str, object]:
    if name == "aten::hang":
        signal.pthread_sigmask(signal.SIG_BLOCK, [signal.SIGALRM])  # as a thread stuck in a futex wait
        time.sleep(3600)
    if name == "aten::crash":
        os.kill(os.getpid(), signal.SIGSEGV)
        ctypes.string_at(0)
    if name == "aten::slow":
        time.sleep(3600)
    if name == "aten::noisy":
        try:
            raise RuntimeError("fake tensor error\n" + "deep frame\n" * 200)
        except RuntimeError:
            traceback.print_exc(file=sys.stderr)
        return "untraceable", "no drawn call could be traced (last: RuntimeError: fake tensor error)"
    if name == "aten::mutating":
        return "result", {"survivors": [], "inplace": {"aten::add_.Scalar": ["aten::mutating (torch's composite kernel)"]}}
    return "result", {"survivors": ["aten::not_core", "aten::decided"] if name == "aten::leaky" else [], "inplace": {}}
