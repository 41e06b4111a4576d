"""``inductor``: torch.compile's default backend. Who executed an op is read from the wrapper code it generates
(ATen calls ran in PyTorch, generated kernels in Inductor); its own front end is its decompositions.
Its C++ kernels are built with uninitialized locals patterned, so a kernel that reads one gives the same answer
in every run (:mod:`opspec.conform.uninitialized`)."""
from __future__ import annotations

from opspec.conform import evidence, uninitialized
from opspec.conform.backends import dynamo

DECLARATIONS = (
    dynamo.declare(
        "inductor",
        stages=dynamo.stages_with(("decompositions", "aot_eager_decomp_partition")),
        watchers=(evidence.watching_inductor, uninitialized.patterned_cpp_kernels),
        build_note=lambda: f"uninitialized locals in its C++ kernels: {uninitialized.setting()}",
        target="Inductor's generated kernels",
        lowering_meaning="Lowered: Inductor generates code for the op (directly, or after decomposing it into ops "
                         "it lowers). Fallback: the op runs its ATen kernel inside the compiled graph.",
    ),
)
