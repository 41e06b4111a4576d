"""``inductor``: torch.compile's default backend. Who executed an op is read from the wrapper code it generates
(ATen calls ran in PyTorch, generated kernels in Inductor); its own front end is its decompositions."""
from __future__ import annotations

from opspec.conform import evidence
from opspec.conform.backends import dynamo

DECLARATIONS = (
    dynamo.declare(
        "inductor",
        stages=dynamo.stages_with(("decompositions", "aot_eager_decomp_partition")),
        watchers=(evidence.watching_inductor,),
        target="Inductor's generated kernels",
        lowering_meaning="Lowered: Inductor generates code for the op (directly, or after decomposing it into ops "
                         "it lowers). Fallback: the op runs its ATen kernel inside the compiled graph.",
    ),
)
