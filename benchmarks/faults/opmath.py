"""Compute-dtype handling shared by the corpus, as torch's own decompositions do it.

fp16/bf16 inputs are computed in float32 and rounded back once; integer and bool
inputs of float-valued ops are promoted to the default float dtype. Faults use
it too, so each one differs from a correct decomposition only by its stated bug.
"""
from __future__ import annotations

import functools

import torch

LOW_PRECISION = (torch.float16, torch.bfloat16)


def is_float(t: torch.Tensor) -> bool:
    return t.dtype.is_floating_point or t.dtype.is_complex


def result_dtype(*tensors: torch.Tensor) -> torch.dtype:
    """The dtype a float-valued elementwise op returns for these inputs."""
    dtype = functools.reduce(torch.promote_types, (t.dtype for t in tensors))
    return dtype if dtype.is_floating_point or dtype.is_complex else torch.get_default_dtype()


def float_op(fn):
    """Run ``fn`` on float32 (or wider) copies of the tensor arguments; round the result once."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        tensors = [a for a in args if isinstance(a, torch.Tensor)]
        out_dtype = result_dtype(*tensors)
        compute = torch.float32 if out_dtype in LOW_PRECISION else out_dtype
        args = tuple(a.to(compute) if isinstance(a, torch.Tensor) else a for a in args)
        return fn(*args, **kwargs).to(out_dtype)

    return wrapper


def upcast(fn):
    """Like :func:`float_op` for ops that keep the input dtype (integers stay integers)."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        tensors = [a for a in args if isinstance(a, torch.Tensor)]
        out_dtype = functools.reduce(torch.promote_types, (t.dtype for t in tensors))
        compute = torch.float32 if out_dtype in LOW_PRECISION else out_dtype
        args = tuple(a.to(compute) if isinstance(a, torch.Tensor) else a for a in args)
        return fn(*args, **kwargs).to(out_dtype)

    return wrapper


def promote_integers(fn):
    """Integer and bool inputs to the default float dtype; fp16/bf16 stay as they are.

    What a formula written straight into a graph does: every intermediate is
    rounded to the input's dtype.
    """

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        tensors = [a for a in args if isinstance(a, torch.Tensor)]
        out_dtype = result_dtype(*tensors)
        args = tuple(a.to(out_dtype) if isinstance(a, torch.Tensor) else a for a in args)
        return fn(*args, **kwargs)

    return wrapper
