"""``inductor``: torch.compile's default backend. Who executed an op is read from the wrapper code it generates
(ATen calls ran in PyTorch, generated kernels in Inductor); its own front end is its decompositions.
Its GEMM and convolution lowerings may choose a library kernel (``extern_kernels.mm``: ATen's BLAS or oneDNN
kernel on CPU) over generated code: that is Inductor's lowering, a library call, not a fallback; its fallbacks
are the ops it hands back (``make_fallback``, ``FallbackKernel``: ``aten.cumsum`` in the wrapper).

Its C++ kernels are built so that a read of memory they never wrote gives one fixed value. A kernel that reads
a local it never initialized (a vector lane of a reduction that no input reached, say) returns whatever the
stack held: the same case passes in one process and fails in another, depending on what ran before it. Built
with ``-ftrivial-auto-var-init=pattern`` (GCC 12+, Clang 8+), every such local starts as the byte pattern
0xFE..., so a kernel that uses one gets the same answer on every run (mostly a wrong one, though a kernel may map
the pattern back to a right index) and the verdict stops depending on history. Kernels that never read
uninitialized memory compute exactly what they did.

Both are watchers of its declaration: nothing outside this module knows them."""
from __future__ import annotations

import contextlib
import functools
import re
import subprocess
import tempfile
from pathlib import Path
from typing import Iterator

from opspec.bridge import torch_ops
from opspec.conform import evidence
from opspec.conform.backends import dynamo

# ---- who executed each op: its generated code ----

_KERNEL_CALL = re.compile(r"\b(?:extern_kernels\.(\w+)|(?:torch\.ops\.)?aten\.(\w+)(?:\.(\w+))?)\(")
_GENERATED_KERNEL = re.compile(r"async_compile\.(?:cpp|cpp_pybinding|triton|cuda|halide)\(")


def from_inductor_code(code: str) -> evidence.Seen:
    """ATen kernels the wrapper calls ran in PyTorch; generated kernels ran in Inductor."""
    pytorch = set()
    for extern, packet, overload in _KERNEL_CALL.findall(code):
        name = extern or packet
        if name in ("empty_strided", "empty"):  # buffer allocation, not computation
            continue
        pytorch.add(f"aten::{name}" + (f".{overload}" if overload and overload != "default" else ""))
    kernels = len(_GENERATED_KERNEL.findall(code))
    return evidence.Seen("generated-code", set(), pytorch, kernels=kernels)


@contextlib.contextmanager
def watching_inductor() -> Iterator[None]:
    from torch._inductor.graph import GraphLowering

    previous = GraphLowering.save_output_code

    def save(code: str) -> None:
        evidence.note(from_inductor_code(code))
        if previous is not None:
            previous(code)

    GraphLowering.save_output_code = save
    try:
        yield
    finally:
        GraphLowering.save_output_code = previous


# ---- uninitialized locals in its C++ kernels: one fixed pattern ----

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




def library_kernels() -> dict[str, str]:
    """The aten ops Inductor's lowerings can hand to a library kernel, by the name its ``extern_kernels``
    namespace gives the kernel."""
    from torch._inductor import select_algorithm
    from torch._inductor.kernel import bmm, conv, mm  # noqa: F401 - importing registers their extern kernels

    known = set(torch_ops.all_aten_schemas())
    return {f"aten::{name}": f"extern_kernels.{name}" for name in sorted(vars(select_algorithm.extern_kernels))
            if f"aten::{name}" in known}


DECLARATIONS = (
    dynamo.declare(
        "inductor",
        stages=dynamo.stages_with(("decompositions", "aot_eager_decomp_partition")),
        watchers=(watching_inductor, patterned_cpp_kernels),
        build_note=lambda: f"uninitialized locals in its C++ kernels: {setting()}",
        target="Inductor's generated kernels",
        lowering_meaning="Lowered: Inductor generates code for the op (directly, or after decomposing it into ops "
                         "it lowers). Library call: its lowering calls a library kernel for the op (extern_kernels.mm, "
                         "addmm, bmm, convolution: ATen's BLAS and oneDNN kernels on CPU), lowered and counted apart. "
                         "Fallback: the op is handed back (make_fallback, FallbackKernel) and runs its ATen kernel "
                         "inside the compiled graph.",
        library_kernels=library_kernels,
    ),
)
