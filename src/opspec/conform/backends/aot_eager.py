"""``aot_eager`` and ``aot_eager_decomp_partition``: torch's front ends with PyTorch's eager kernels behind them.

A pass says the front end kept the op's meaning; a failure no earlier layer
shows is the last layer's (AOT autograd).
"""
from __future__ import annotations

from opspec.conform.backends import dynamo

DECLARATIONS = (
    dynamo.declare(
        "aot_eager",
        evidence="reference", target="PyTorch's eager kernels behind the front end",
        evidence_note="dynamo and AOT autograd, then PyTorch's eager kernels: a pass says the front end kept the op's "
                      "meaning",
        stages=dynamo.stages_with(aot=True),
        unexplained=lambda own_rule: ("frontend", "aot_autograd",
                                      "dynamo alone passes; AOT autograd with eager kernels does not"),
        lowering_meaning="AOT autograd traces the program to ATen and runs each op with its eager ATen kernel. "
                         "Every op reaches the backend by construction, so its manifest's 100% is a tautology, not "
                         "code generation: its results test tracing (Dynamo, AOT autograd, decompositions), not a "
                         "compiler.",
        lowering_figure=False,
    ),
    dynamo.declare(
        "aot_eager_decomp_partition",
        evidence="reference", target="PyTorch's eager kernels behind the front end",
        evidence_note="dynamo, AOT autograd and Inductor's decompositions, then PyTorch's eager kernels",
    ),
)
