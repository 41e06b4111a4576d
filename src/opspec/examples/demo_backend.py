"""A toy backend with fused operators in its own ``demo`` namespace, for ``opspec.checks.fused``.

A backend fuses a chain of core ops into one kernel it runs faster. Each fused op
ships with the core-op pattern it replaces: that pattern is its decomposition (what
the op means in the portable op set) and the graph shape a rewrite pass looks for.
Importing this module registers the ops.

``demo::add_relu_wrong`` is deliberately broken (relu(self) + other): it exists so
the equivalence check can be seen to catch a fused kernel that drifts from its pattern.
"""
from __future__ import annotations

import torch
from torch import nn

from opspec.checks.fused import FusedOp
from opspec.spec.model import TestingHints

aten = torch.ops.aten
LIBRARY = torch.library.Library("demo", "DEF")


# ---- the patterns, in core aten ops only ----

def add_relu_pattern(input: torch.Tensor, other: torch.Tensor) -> torch.Tensor:
    # `input`, not the schema's `self`: torch.fx traces patterns into methods that already have a self
    return aten.relu.default(aten.add.Tensor(input, other))


def linear_bias_relu_pattern(input: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
    # the shape nn.Linear takes after core decomposition: addmm(bias, input, weight^T)
    return aten.relu.default(aten.addmm.default(bias, input, aten.permute.default(weight, [1, 0])))


def linear_nobias_relu_pattern(input: torch.Tensor, weight: torch.Tensor) -> torch.Tensor:
    return aten.relu.default(aten.mm.default(input, aten.permute.default(weight, [1, 0])))


def linear_relu_pattern(input: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor | None = None) -> torch.Tensor:
    if bias is None:
        return linear_nobias_relu_pattern(input, weight)
    return linear_bias_relu_pattern(input, weight, bias)


# ---- the fused kernels: one pass where the pattern takes two or three ----

def _add_relu_kernel(self, other):
    return torch.add(self, other).clamp_min_(0)


def _linear_relu_kernel(input, weight, bias=None):
    return torch.nn.functional.linear(input, weight, bias).clamp_min_(0)


def _add_relu_wrong_kernel(self, other):
    return torch.relu(self) + other  # wrong on purpose: relu before the add


def _define(schema: str, kernel, meta) -> None:
    name = schema.split("(", 1)[0]
    LIBRARY.define(schema)
    LIBRARY.impl(name, kernel, "CPU")
    LIBRARY.impl(name, meta, "Meta")  # the pattern on meta tensors gives the output's metadata for tracing


_define("add_relu(Tensor self, Tensor other) -> Tensor", _add_relu_kernel, add_relu_pattern)
_define("linear_relu(Tensor input, Tensor weight, Tensor? bias=None) -> Tensor", _linear_relu_kernel, linear_relu_pattern)
_define("add_relu_wrong(Tensor self, Tensor other) -> Tensor", _add_relu_wrong_kernel, add_relu_pattern)


# ---- what the rewrite pass puts in place of each pattern ----

def add_relu_replacement(input, other):
    return torch.ops.demo.add_relu.default(input, other)


def linear_bias_relu_replacement(input, weight, bias):
    return torch.ops.demo.linear_relu.default(input, weight, bias)


def linear_nobias_relu_replacement(input, weight):
    return torch.ops.demo.linear_relu.default(input, weight)


def add_relu_wrong_replacement(input, other):
    return torch.ops.demo.add_relu_wrong.default(input, other)


_FLOATS = ("float32", "float64")

FUSED_OPS = (
    FusedOp(
        op="demo::add_relu",
        pattern=f"{__name__}:add_relu_pattern",
        hints=TestingHints(dtypes=(*_FLOATS, "int64")),
        rewrites=((add_relu_pattern, add_relu_replacement),),
    ),
    FusedOp(
        op="demo::linear_relu",
        pattern=f"{__name__}:linear_relu_pattern",
        hints=TestingHints(dtypes=_FLOATS, shapes={"input": ("n", "k"), "weight": ("m", "k"), "bias": ("m",)}),
        # the longer pattern first, so a biased linear is never half-matched as mm
        rewrites=((linear_bias_relu_pattern, linear_bias_relu_replacement),
                  (linear_nobias_relu_pattern, linear_nobias_relu_replacement)),
    ),
)

WRONG = FusedOp(
    op="demo::add_relu_wrong",
    pattern=f"{__name__}:add_relu_pattern",
    hints=TestingHints(dtypes=("float32",)),
    rewrites=((add_relu_pattern, add_relu_wrong_replacement),),
)


class AddReluLinearRelu(nn.Module):
    """x + y -> relu, then linear -> relu twice (with and without bias): every pattern above, once or more."""

    def __init__(self, features: int = 8, hidden: int = 6):
        super().__init__()
        self.first = nn.Linear(features, hidden)
        self.second = nn.Linear(hidden, hidden, bias=False)

    def forward(self, x, y):
        h = torch.relu(x + y)
        return torch.relu(self.second(torch.relu(self.first(h))))


def model():
    """``(module, example_inputs)`` for the rewrite check, fixed seed and small sizes."""
    torch.manual_seed(0)
    return AddReluLinearRelu().eval(), (torch.randn(4, 8), torch.randn(4, 8))
