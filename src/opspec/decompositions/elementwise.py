"""Lowerings of elementwise core ops, for backends that lack a native kernel.

torch 2.13 keeps ``expm1``, ``log1p``, ``log2``, ``log10``, ``atan2``, ``pow.Scalar``,
``div.Tensor_mode``, ``copy`` and ``full_like`` in the core set, and the decompositions it
registers for most of them trace to ``prims`` rather than to core ATen.  These
functions are exact-to-a-few-ulp rewrites in terms of other core overloads only; the
review's one-line formulas (``exp(x+1)``, ``atan(y/x)``...) are wrong and are not used.

Each function takes the aten overload's arguments, in order and with the same names.
"""
from __future__ import annotations

import math

import torch

from opspec.decompositions._common import aten, cast, compute_dtype, int_to_float_dtype


def _unary_float(self: torch.Tensor):
    out_dtype = int_to_float_dtype(self)
    if out_dtype.is_complex:
        raise NotImplementedError("opspec lowering covers real dtypes only")
    work = compute_dtype(out_dtype)
    return cast(self, work), out_dtype


def expm1(self: torch.Tensor) -> torch.Tensor:
    """exp(x) - 1 without cancellation (Kahan): (u - 1) * x / log(u) with u = exp(x), for |x| < 1."""
    x, out_dtype = _unary_float(self)
    u = aten.exp.default(x)
    um1 = aten.sub.Scalar(u, 1)
    ratio = aten.div.Tensor(aten.mul.Tensor(um1, x), aten.log.default(u))
    # u == 1: x is tiny and expm1(x) == x (this keeps -0.0).
    small = aten.where.self(aten.eq.Scalar(u, 1), x, ratio)
    # |x| >= 1 (and inf, nan): u - 1 has no cancellation, and the product could overflow.
    result = aten.where.self(aten.lt.Scalar(aten.abs.default(x), 1), small, um1)
    return cast(result, out_dtype)


def log1p(self: torch.Tensor) -> torch.Tensor:
    """log(1 + x) without cancellation (Goldberg): log(u) * x / (u - 1) with u = 1 + x, for |x| < 1."""
    x, out_dtype = _unary_float(self)
    u = aten.add.Scalar(x, 1)
    log_u = aten.log.default(u)
    ratio = aten.div.Tensor(aten.mul.Tensor(log_u, x), aten.sub.Scalar(u, 1))
    # u == 1: x below half an ulp of 1, log1p(x) == x (keeps -0.0).
    small = aten.where.self(aten.eq.Scalar(u, 1), x, ratio)
    # |x| >= 1 (and inf, nan): 1 + x loses nothing that matters, and the product could overflow.
    result = aten.where.self(aten.lt.Scalar(aten.abs.default(x), 1), small, log_u)
    return cast(result, out_dtype)


def log2(self: torch.Tensor) -> torch.Tensor:
    """log(x) / ln 2, in float32 for half-precision inputs."""
    x, out_dtype = _unary_float(self)
    return cast(aten.mul.Scalar(aten.log.default(x), 1.0 / math.log(2.0)), out_dtype)


def log10(self: torch.Tensor) -> torch.Tensor:
    """log(x) / ln 10, in float32 for half-precision inputs."""
    x, out_dtype = _unary_float(self)
    return cast(aten.mul.Scalar(aten.log.default(x), 1.0 / math.log(10.0)), out_dtype)


def _negative(t: torch.Tensor) -> torch.Tensor:
    """Sign bit as a bool tensor: true for negative values and for -0.0 (1/-0 == -inf)."""
    return aten.where.self(
        aten.eq.Scalar(t, 0), aten.lt.Scalar(aten.reciprocal.default(t), 0), aten.lt.Scalar(t, 0)
    )


def atan2(self: torch.Tensor, other: torch.Tensor) -> torch.Tensor:
    """Four-quadrant arctangent of self/other from atan, with IEEE zero/inf/nan cases."""
    out_dtype = int_to_float_dtype(self, other)
    if out_dtype.is_complex:
        raise NotImplementedError("atan2 is not defined for complex tensors")
    work = compute_dtype(out_dtype)
    y, x = cast(self, work), cast(other, work)
    y_neg, x_neg = _negative(y), _negative(x)
    # +-1 carrying the sign of y (the result always has y's sign).
    ysign = aten.add.Scalar(aten.mul.Scalar(cast(y_neg, work), -2), 1)
    base = aten.atan.default(aten.div.Tensor(y, x))
    # other < 0 (or -0): move from (-pi/2, pi/2) to the left half-plane.
    result = aten.where.self(x_neg, aten.add.Tensor(base, aten.mul.Scalar(ysign, math.pi)), base)
    # other == +-0: +-pi/2 for y != 0; for y == +-0 the IEEE table gives +-0 or +-pi.
    at_zero = aten.where.self(
        aten.eq.Scalar(y, 0),
        aten.where.self(x_neg, aten.mul.Scalar(ysign, math.pi), y),
        aten.mul.Scalar(ysign, math.pi / 2),
    )
    result = aten.where.self(aten.eq.Scalar(x, 0), at_zero, result)
    # Both infinite: +-pi/4 or +-3pi/4.
    both_inf = aten.logical_and.default(aten.isinf.default(x), aten.isinf.default(y))
    corner = aten.where.self(
        x_neg, aten.mul.Scalar(ysign, 3 * math.pi / 4), aten.mul.Scalar(ysign, math.pi / 4)
    )
    result = aten.where.self(both_inf, corner, result)
    any_nan = aten.logical_or.default(aten.isnan.default(x), aten.isnan.default(y))
    result = aten.where.self(any_nan, aten.add.Tensor(x, y), result)
    return cast(result, out_dtype)


def pow_Scalar(self, exponent: torch.Tensor) -> torch.Tensor:
    """Scalar base raised to a tensor: a 0-dim base tensor and pow.Tensor_Tensor."""
    out_dtype = torch.result_type(self, exponent)
    if out_dtype == torch.bool:
        if isinstance(self, bool):  # a bool base to a bool exponent tensor: eager has no bool pow kernel
            raise NotImplementedError("\"pow\" not implemented for 'Bool'")
        out_dtype = torch.int64  # a number base to a bool exponent: BOOL_TO_LONG promotion, as eager pow
    base = aten.scalar_tensor.default(self, dtype=out_dtype, device=exponent.device)
    return aten.pow.Tensor_Tensor(base, cast(exponent, out_dtype))


def _div_trunc_float(a, b):
    return aten.trunc.default(aten.div.Tensor(a, b))


def _div_floor_float(a, b):
    # The eager CPU/CUDA algorithm (div_floor_floating), which agrees with Python's //.
    mod = aten.fmod.Tensor(a, b)
    div = aten.div.Tensor(aten.sub.Tensor(a, mod), b)
    fix = aten.logical_and.default(
        aten.ne.Scalar(mod, 0), aten.ne.Tensor(aten.lt.Scalar(b, 0), aten.lt.Scalar(mod, 0))
    )
    div = aten.where.self(fix, aten.sub.Scalar(div, 1), div)
    floordiv = aten.floor.default(div)
    floordiv = aten.where.self(
        aten.gt.Scalar(aten.sub.Tensor(div, floordiv), 0.5), aten.add.Scalar(floordiv, 1), floordiv
    )
    true_div = aten.div.Tensor(a, b)
    # div == 0: a zero carrying the sign of a / b.
    floordiv = aten.where.self(aten.eq.Scalar(div, 0), aten.mul.Scalar(true_div, 0), floordiv)
    # a / b overflows (finite a, nonzero b): eager's scalar fmod still yields +-inf, while the
    # vectorized aten::fmod returns nan for such huge ratios; take the quotient itself.
    overflow = aten.logical_and.default(
        aten.isinf.default(true_div), aten.logical_not.default(aten.isinf.default(a))
    )
    special = aten.logical_or.default(aten.eq.Scalar(b, 0), overflow)
    return aten.where.self(special, true_div, floordiv)


def _div_int(a, b, floor: bool):
    # Integer division from float64 estimates plus exact int64 corrections:
    # q0 = trunc(a/b) may be off by ~|q| * 2**-52, a second estimate on the remainder brings
    # it to within one, and a last step puts the remainder in range with the wanted sign.
    a64, b64 = cast(a, torch.int64), cast(b, torch.int64)
    safe_b = aten.where.self(aten.eq.Scalar(b64, 0), aten.full_like.default(b64, 1), b64)
    fb = cast(safe_b, torch.float64)

    def estimate(n):
        return cast(aten.trunc.default(aten.div.Tensor(cast(n, torch.float64), fb)), torch.int64)

    q = estimate(a64)
    q = aten.add.Tensor(q, estimate(aten.sub.Tensor(a64, aten.mul.Tensor(q, safe_b))))
    r = aten.sub.Tensor(a64, aten.mul.Tensor(q, safe_b))
    wanted_sign = safe_b if floor else a64
    wrong_sign = aten.ne.Tensor(aten.lt.Scalar(r, 0), aten.lt.Scalar(wanted_sign, 0))
    # |INT64_MIN| wraps to a negative number, and no remainder is as large as it.
    abs_b = aten.abs.default(safe_b)
    too_big = aten.logical_and.default(aten.ge.Tensor(aten.abs.default(r), abs_b), aten.ge.Scalar(abs_b, 0))
    adjust = aten.logical_and.default(
        aten.ne.Scalar(r, 0), aten.logical_or.default(wrong_sign, too_big)
    )
    step = aten.mul.Tensor(aten.sign.default(r), aten.sign.default(safe_b))
    q = aten.where.self(adjust, aten.add.Tensor(q, step), q)
    return q


def div_Tensor_mode(self: torch.Tensor, other: torch.Tensor, *, rounding_mode=None) -> torch.Tensor:
    """Division with rounding_mode None / 'trunc' / 'floor', matching eager bit-for-bit on floats.

    Integer division by zero raises in eager; here it yields an unspecified value.
    """
    if rounding_mode is None:
        return aten.div.Tensor(self, other)
    if rounding_mode not in ("trunc", "floor"):
        raise ValueError(f"div expected rounding_mode to be one of None, 'trunc', or 'floor' but found {rounding_mode!r}")
    out_dtype = torch.result_type(self, other)
    if out_dtype.is_complex:
        raise NotImplementedError("div with rounding_mode is not defined for complex tensors")
    if out_dtype.is_floating_point:
        # No float32 detour for half precision: eager rounds every step in the input dtype.
        a, b = cast(self, out_dtype), cast(other, out_dtype)
        return _div_floor_float(a, b) if rounding_mode == "floor" else _div_trunc_float(a, b)
    if out_dtype == torch.bool:
        raise NotImplementedError("div with rounding_mode on bool tensors")
    q = _div_int(cast(self, out_dtype), cast(other, out_dtype), rounding_mode == "floor")
    return cast(q, out_dtype)


def copy(self: torch.Tensor, src: torch.Tensor, non_blocking: bool = False) -> torch.Tensor:
    """Functional copy: src broadcast to self's shape, converted to self's dtype and device."""
    if tuple(src.shape) != tuple(self.shape):
        src = aten.expand.default(src, list(self.shape))
    return aten._to_copy.default(src, dtype=self.dtype, device=self.device)


def full_like(
    self: torch.Tensor,
    fill_value,
    *,
    dtype=None,
    layout=None,
    device=None,
    pin_memory=None,
    memory_format=None,
) -> torch.Tensor:
    """aten::full with self's shape, dtype, layout and device unless overridden (contiguous result)."""
    return aten.full.default(
        list(self.shape),
        fill_value,
        dtype=self.dtype if dtype is None else dtype,
        layout=self.layout if layout is None else layout,
        device=self.device if device is None else device,
        pin_memory=pin_memory,
    )


def lerp(self: torch.Tensor, end: torch.Tensor, weight) -> torch.Tensor:
    """torch's two-sided formula (``torch._refs.lerp``, exact at weight 0 and 1) without its last step.

    torch restrides the result with ``prims::copy_strided`` whenever ``self`` and ``end`` differ
    in layout, an op outside aten and so outside any core set; strides are not part of an op's
    result here, so the values are returned as computed. Both overloads: ``weight`` is a number
    (``lerp.Scalar``) or a tensor (``lerp.Tensor``). float16/bfloat16 are computed in float32.
    """
    out_dtype = self.dtype
    work = compute_dtype(out_dtype)
    start, stop = cast(self, work), cast(end, work)
    if isinstance(weight, torch.Tensor):
        weight = cast(weight, work)
    else:
        weight = aten.full.default([], weight, dtype=work, device=self.device)
    mask = aten.ge.Scalar(aten.abs.default(weight), 0.5)
    coeff = aten.where.self(mask, aten.sub.Tensor(weight, 1), weight)
    base = aten.where.self(mask, stop, start)
    output = aten.add.Tensor(aten.mul.Tensor(coeff, aten.sub.Tensor(stop, start)), base)
    return cast(output, out_dtype)
