"""torch.compile backends a few ULP off, for tests/test_conform_accuracy.py.

Each runs the graph it is handed and says so through the evidence hook (``conform_faults.Executed``), then
changes some float results the way a real kernel errs: ``exp_off_on_one_binade`` adds 4 ULP to float32 exp(x)
for x in [2**-9, 2**-8) (no edge value lies there, and 4 ULP is within (rtol, atol));
``sin_in_float32`` computes float64 sin in float32 wherever float32 holds the input; ``exp_via_float64``
computes float32 exp in float64 and rounds once (not eager's bits, well within the contract);
``small_inputs_only`` is ``exp_off_on_one_binade`` declaring it takes no input beyond 1024 elements.
Ops of several tensors and of fixed arguments: ``atan2_off_on_one_binade`` adds 4 ULP to float32 atan2(y, x) for y
in [2**-9, 2**-8), whatever x; ``atan2_via_float64`` computes it in float64 and rounds once;
``div_scalar_off_on_one_binade`` adds 4 ULP to float32 div.Scalar for self in [2**-9, 2**-8).
"""
from __future__ import annotations

import torch
from conform_faults import Executed
from torch.utils import _pytree

BINADE = (2.0 ** -9, 2.0 ** -8)
ULPS_OFF = 4


def _input(inputs) -> torch.Tensor:
    """The program's tensor (dynamic shapes put its sizes among the inputs too)."""
    return next(t for t in inputs if isinstance(t, torch.Tensor))


def _is_op(gm: torch.fx.GraphModule, name: str) -> bool:
    return any(n.op == "call_function" and getattr(n.target, "__name__", "") == name for n in gm.graph.nodes)


def sin_in_float32(gm: torch.fx.GraphModule, example_inputs):
    if not _is_op(gm, "sin.default"):
        return Executed(gm)

    def run(*inputs):
        x = _input(inputs)
        if x.dtype != torch.float64:
            return gm(*inputs)
        narrow = [t.float() if isinstance(t, torch.Tensor) else t for t in inputs]
        fits = x.abs() < torch.finfo(torch.float32).max
        return _pytree.tree_map_only(torch.Tensor, lambda y: torch.where(fits, y.double(), torch.sin(x)),
                                     gm(*narrow))

    return Executed(gm, run)


def exp_via_float64(gm: torch.fx.GraphModule, example_inputs):
    if not _is_op(gm, "exp.default"):
        return Executed(gm)

    def run(*inputs):
        x = _input(inputs)
        if x.dtype != torch.float32:
            return gm(*inputs)
        return _pytree.tree_map_only(torch.Tensor, lambda y: torch.exp(x.double()).float(), gm(*inputs))

    return Executed(gm, run)


def small_inputs_only(gm: torch.fx.GraphModule, example_inputs):
    return exp_off_on_one_binade(gm, example_inputs)


small_inputs_only.opspec_largest_input = 1024


def _off_on_one_binade(op: str):
    def backend(gm: torch.fx.GraphModule, example_inputs):
        if not _is_op(gm, op):
            return Executed(gm)

        def run(*inputs):
            x = _input(inputs)

            def off(y: torch.Tensor) -> torch.Tensor:
                if y.dtype != torch.float32 or y.shape != x.shape:
                    return y
                inside = (x >= BINADE[0]) & (x < BINADE[1])
                return torch.where(inside, (y.view(torch.int32) + ULPS_OFF).view(torch.float32), y)

            return _pytree.tree_map_only(torch.Tensor, off, gm(*inputs))

        return Executed(gm, run)

    return backend


atan2_off_on_one_binade = _off_on_one_binade("atan2.default")
div_scalar_off_on_one_binade = _off_on_one_binade("div.Scalar")
exp_off_on_one_binade = _off_on_one_binade("exp.default")


def atan2_via_float64(gm: torch.fx.GraphModule, example_inputs):
    if not _is_op(gm, "atan2.default"):
        return Executed(gm)

    def run(*inputs):
        y, x = [t for t in inputs if isinstance(t, torch.Tensor)][:2]
        if y.dtype != torch.float32 or x.dtype != torch.float32:
            return gm(*inputs)
        return _pytree.tree_map_only(torch.Tensor, lambda r: torch.atan2(y.double(), x.double()).float(),
                                     gm(*inputs))

    return Executed(gm, run)
