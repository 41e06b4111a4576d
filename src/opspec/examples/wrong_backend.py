"""A ``torch.compile`` backend that is deliberately wrong on one op, to show model-level conformance finding it.

``wrong_gelu`` runs every graph as given except ``aten::gelu``, which it replaces
by ``x * sigmoid(x)`` (SiLU): close to GELU in shape, wrong in value. Run
``opspec conform --model opspec.examples.models:transformer_block --backend
opspec.examples.wrong_backend:wrong_gelu``: the model's outputs diverge, the
localisation names ``aten::gelu`` and writes a repro that ``opspec conform --ops
gelu --inputs REPRO --backend opspec.examples.wrong_backend:wrong_gelu`` replays.
"""
from __future__ import annotations

import torch

aten = torch.ops.aten


def _silu(x, approximate="none"):
    return aten.mul.Tensor(x, aten.sigmoid.default(x))


def wrong_gelu(gm: torch.fx.GraphModule, example_inputs):
    for node in gm.graph.nodes:
        if node.op == "call_function" and node.target is aten.gelu.default:
            node.target = _silu
    gm.recompile()
    return gm.forward
