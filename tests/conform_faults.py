"""Purpose-built faulty torch.compile backends for tests/test_conform.py.

``faulty`` behaves like eager except on one op each: it segfaults on sin, hangs
on cos, returns a wrong dtype for neg, a wrong shape for abs, wrong values for
exp and raises while compiling floor.
"""
from __future__ import annotations

import ctypes
import os
import signal
import time

import torch
from torch.utils import _pytree


def _ops(gm: torch.fx.GraphModule) -> set[str]:
    return {str(getattr(n.target, "__name__", n.target)) for n in gm.graph.nodes if n.op == "call_function"}


def _mapped(gm, fn):
    def run(*inputs):
        return _pytree.tree_map_only(torch.Tensor, fn, gm(*inputs))

    return run


def faulty(gm: torch.fx.GraphModule, example_inputs):
    ops = _ops(gm)
    if "sin.default" in ops:
        os.kill(os.getpid(), signal.SIGSEGV)
        ctypes.string_at(0)  # in case the signal is ignored
    if "cos.default" in ops:
        time.sleep(3600)
    if "floor.default" in ops:
        raise RuntimeError("no lowering for aten::floor")
    if "neg.default" in ops:
        return _mapped(gm, lambda t: t.to(torch.float64))
    if "abs.default" in ops:
        return _mapped(gm, lambda t: t.unsqueeze(0))
    if "exp.default" in ops:
        return _mapped(gm, lambda t: t + 1)
    return gm.forward
