"""Dtype helpers shared by opspec's own decompositions.

Kept separate so that every implementation module makes the same choices about
integer-to-float promotion and about computing half-precision inputs in float32
(which is what the eager CPU kernels do internally).
"""
from __future__ import annotations

import torch

aten = torch.ops.aten

LOW_PRECISION = (torch.float16, torch.bfloat16)


def int_to_float_dtype(*values) -> torch.dtype:
    """Result dtype of an INT_TO_FLOAT elementwise op (``expm1``, ``atan2``, ``log2``...)."""
    dtype = torch.result_type(*values) if len(values) > 1 else values[0].dtype
    if not (dtype.is_floating_point or dtype.is_complex):
        dtype = torch.get_default_dtype()
    return dtype


def compute_dtype(dtype: torch.dtype) -> torch.dtype:
    """float16/bfloat16 are computed in float32 and rounded once at the end."""
    return torch.float32 if dtype in LOW_PRECISION else dtype


def cast(tensor: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
    """``aten::_to_copy`` only when the dtype really changes."""
    if tensor.dtype == dtype:
        return tensor
    return aten._to_copy.default(tensor, dtype=dtype)
