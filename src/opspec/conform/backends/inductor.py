"""``inductor``: torch.compile's default backend. Who executed an op is read from the wrapper code it generates
(ATen calls ran in PyTorch, generated kernels in Inductor); its own front end is its decompositions.
Its GEMM and convolution lowerings may choose a library kernel (``extern_kernels.mm``: ATen's BLAS or oneDNN
kernel on CPU) over generated code: that is Inductor's lowering, a library call, not a fallback; its fallbacks
are the ops it hands back (``make_fallback``, ``FallbackKernel``: ``aten.cumsum`` in the wrapper).
Its C++ kernels are built with uninitialized locals patterned, so a kernel that reads one gives the same answer
in every run (:mod:`opspec.conform.uninitialized`)."""
from __future__ import annotations

from opspec.conform import evidence, uninitialized
from opspec.bridge import torch_ops
from opspec.conform.backends import dynamo


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
        watchers=(evidence.watching_inductor, uninitialized.patterned_cpp_kernels),
        build_note=lambda: f"uninitialized locals in its C++ kernels: {uninitialized.setting()}",
        target="Inductor's generated kernels",
        lowering_meaning="Lowered: Inductor generates code for the op (directly, or after decomposing it into ops "
                         "it lowers). Library call: its lowering calls a library kernel for the op (extern_kernels.mm, "
                         "addmm, bmm, convolution: ATen's BLAS and oneDNN kernels on CPU), lowered and counted apart. "
                         "Fallback: the op is handed back (make_fallback, FallbackKernel) and runs its ATen kernel "
                         "inside the compiled graph.",
        library_kernels=library_kernels,
    ),
)
