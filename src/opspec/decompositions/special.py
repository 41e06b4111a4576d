"""Rules for torch.special entries whose torch decompositions leave non-core ops behind.

``exp2`` traces to ``prims::exp2`` and the scalar overloads of ``xlogy`` and ``xlog1py``
to ``prims::scalar_tensor``; ``round.decimals`` has no rule at all. Each function here
computes the same value as the eager kernel from core overloads only. ``exp2`` is not
``exp(x * ln 2)``: the rounding of the product grows with |x| (67 ULP in float32 over
[-125, 125] on torch 2.13), while ``pow(2, x)`` stays within 0.6 ULP there.

Each function takes the aten overload's arguments, in order and with the same names.
"""
from __future__ import annotations

import torch

from opspec.decompositions._common import aten, cast, compute_dtype, int_to_float_dtype


def exp2(self: torch.Tensor) -> torch.Tensor:
    """2 ** x as the core ``pow.Scalar`` with base 2; integer inputs give the default float dtype."""
    out_dtype = int_to_float_dtype(self)
    return aten.pow.Scalar(2.0, cast(self, out_dtype))


def round_decimals(self: torch.Tensor, *, decimals: int) -> torch.Tensor:
    """The kernel's own arithmetic: round(x * 10**d) / 10**d, or round(x / 10**-d) * 10**-d for d < 0,
    half-precision inputs computed in float32 and rounded once."""
    if decimals == 0:
        return aten.round.default(self)
    work = compute_dtype(self.dtype)
    x = cast(self, work)
    ten_pow = 10.0 ** abs(decimals)
    if decimals > 0:
        result = aten.div.Scalar(aten.round.default(aten.mul.Scalar(x, ten_pow)), ten_pow)
    else:
        result = aten.mul.Scalar(aten.round.default(aten.div.Scalar(x, ten_pow)), ten_pow)
    return cast(result, self.dtype)


def _x_log(x: torch.Tensor, y: torch.Tensor, log) -> torch.Tensor:
    """where(isnan(y), nan, where(x == 0, 0, x * log(y))), the convention of xlogy and xlog1py."""
    product = aten.mul.Tensor(x, log(y))
    zero = aten.scalar_tensor.default(0, dtype=product.dtype, device=product.device)
    nan = aten.scalar_tensor.default(float("nan"), dtype=product.dtype, device=product.device)
    return aten.where.self(aten.isnan.default(y), nan, aten.where.self(aten.eq.Scalar(x, 0), zero, product))


def _scalar_other(self: torch.Tensor, other, log) -> torch.Tensor:
    out_dtype = int_to_float_dtype(self, other)
    y = aten.scalar_tensor.default(other, dtype=out_dtype, device=self.device)
    return _x_log(cast(self, out_dtype), y, log)


def _scalar_self(self, other: torch.Tensor, log) -> torch.Tensor:
    out_dtype = int_to_float_dtype(self, other)
    x = aten.scalar_tensor.default(self, dtype=out_dtype, device=other.device)
    return _x_log(x, cast(other, out_dtype), log)


def xlogy_Scalar_Other(self: torch.Tensor, other) -> torch.Tensor:
    return _scalar_other(self, other, aten.log.default)


def xlogy_Scalar_Self(self, other: torch.Tensor) -> torch.Tensor:
    return _scalar_self(self, other, aten.log.default)


def xlog1py_other_scalar(self: torch.Tensor, other) -> torch.Tensor:
    return _scalar_other(self, other, aten.log1p.default)


def xlog1py_self_scalar(self, other: torch.Tensor) -> torch.Tensor:
    return _scalar_self(self, other, aten.log1p.default)
