"""The wrapper code Inductor writes for a compiled function, read before its kernels are built.

Reading what a compiled program calls back into ATen (``aten.X.overload(...)``) needs only
the wrapper code; building the C++ kernels behind it would cost most of the compile time.
"""
from __future__ import annotations

from typing import Callable


class _CodeWritten(Exception):
    """Raised once Inductor has written its wrapper code: the kernels need not be compiled to read it."""


def wrapper_code(fn: Callable, *args, **kwargs) -> list[str]:
    """The wrapper code Inductor generates while ``fn`` (compiled with backend='inductor') first runs,
    stopping before the kernels are built; an exception from Inductor before that point propagates."""
    from torch._inductor.graph import GraphLowering

    codes: list[str] = []
    previous = GraphLowering.save_output_code

    def save(code: str) -> None:
        codes.append(code)
        raise _CodeWritten

    GraphLowering.save_output_code = save
    try:
        fn(*args, **kwargs)
    except Exception:
        if not codes:
            raise
    finally:
        GraphLowering.save_output_code = previous
    return codes
