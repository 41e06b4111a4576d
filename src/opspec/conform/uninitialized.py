"""Inductor's C++ kernels built so that a read of memory they never wrote gives one fixed value.

A kernel that reads a local it never initialized (a vector lane of a reduction
that no input reached, say) returns whatever the stack held: the same case
passes in one process and fails in another, depending on what ran before it.
Built with ``-ftrivial-auto-var-init=pattern`` (GCC 12+, Clang 8+), every such
local starts as the byte pattern 0xFE..., so a kernel that uses one gets the
same answer on every run (mostly a wrong one, though a kernel may map the pattern
back to a right index) and the verdict stops depending on history. Kernels that
never read uninitialized memory compute exactly what they did.
"""
from __future__ import annotations

import contextlib
import functools
import subprocess
import tempfile
from pathlib import Path
from typing import Iterator

FLAG = "ftrivial-auto-var-init=pattern"  # Inductor's builder adds the leading dash


@functools.cache
def refusal(compiler: str) -> str:
    """Why ``compiler`` cannot build with the pattern ("" when it can): an older GCC or a compiler without the flag."""
    with tempfile.TemporaryDirectory(prefix="opspec-flag-") as scratch:
        source = Path(scratch, "probe.cpp")
        source.write_text("int main() { return 0; }\n")
        try:
            done = subprocess.run([compiler, f"-{FLAG}", "-Werror", "-c", str(source), "-o", str(source.with_suffix(".o"))],
                                  capture_output=True, text=True, timeout=120)
        except (OSError, subprocess.TimeoutExpired) as err:
            return f"{compiler} did not run ({err})"
    if done.returncode != 0:
        first = (done.stderr.strip().splitlines() or ["no message"])[0]
        return f"{compiler} refuses -{FLAG} ({first})"
    return ""


def setting() -> str:
    """What the report records about uninitialized locals in Inductor's C++ kernels on this machine."""
    from torch._inductor import cpp_builder

    try:
        reason = refusal(cpp_builder.get_cpp_compiler())
    except Exception as err:  # noqa: BLE001 - no compiler found: Inductor itself will say so when it compiles
        reason = f"no C++ compiler found ({type(err).__name__})"
    return f"left as the compiler leaves them: {reason}" if reason else f"filled with a byte pattern (-{FLAG})"


@contextlib.contextmanager
def patterned_cpp_kernels() -> Iterator[None]:
    """While Inductor compiles: its C++ kernels get the pattern flag where their compiler takes it.
    The flag is part of the command line Inductor hashes, so its code cache never mixes the two builds."""
    from torch._inductor import cpp_builder

    previous = cpp_builder._get_optimization_cflags

    def with_pattern(cpp_compiler: str, *args, **kwargs):
        cflags, ldflags = previous(cpp_compiler, *args, **kwargs)
        if not refusal(cpp_compiler):
            cflags = [*cflags, FLAG]
        return cflags, ldflags

    cpp_builder._get_optimization_cflags = with_pattern
    try:
        yield
    finally:
        cpp_builder._get_optimization_cflags = previous
