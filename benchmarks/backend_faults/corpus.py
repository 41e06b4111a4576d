"""Faulty backends: each runs the program in PyTorch but computes one op subtly wrong.

A backend is a ``torch.compile`` backend (``GraphModule, example_inputs -> callable``)
that swaps the target of every node calling its op for a faulty function with
the op's signature; ``control`` swaps nothing, so it passes every case of a correct
suite. ``manifest.yaml`` lists each backend with its op, category and a
description; ``benchmarks/backend_detection.py`` runs ``opspec conform`` on them.
Each fault mimics a bug real backends ship: fast-math flushing, NaN-ignoring
min/max instructions, another rounding mode, a different tie rule.
"""
from __future__ import annotations

import torch

aten = torch.ops.aten


def _claiming(gm: torch.fx.GraphModule, ops: set[str]):
    """gm's forward, saying (opspec's evidence hook) that the backend executed ``ops``: each corpus
    backend stands for a backend that computes the ops itself, one of them wrongly."""
    def run(*inputs):
        return gm(*inputs)

    run.executed_ops = lambda: {"backend": sorted(ops), "pytorch": []}
    return run


def _aten_ops(gm: torch.fx.GraphModule) -> set[str]:
    return {f"aten::{n.target._schema.name.removeprefix('aten::')}" + (f".{n.target._overloadname}"
            if n.target._overloadname != "default" else "")
            for n in gm.graph.nodes if n.op == "call_function" and hasattr(n.target, "_schema")}


def _swapping(op, faulty):
    def backend(gm: torch.fx.GraphModule, example_inputs):
        ops = _aten_ops(gm)
        for node in gm.graph.nodes:
            if node.op == "call_function" and node.target is op:
                node.target = faulty
        gm.recompile()
        return _claiming(gm, ops)

    backend.__name__ = getattr(faulty, "__name__", "control")
    return backend


def control(gm: torch.fx.GraphModule, example_inputs):
    """The program as dynamo hands it over: correct by construction."""
    return _claiming(gm, _aten_ops(gm))


# ---- edge ranges ----

def _sigmoid_flush(x):
    """sigmoid flushed to 0 below x = -8 (a lookup table's range)."""
    return torch.where(x < -8, torch.zeros_like(x), aten.sigmoid.default(x))


def _tanh_exp(x):
    """tanh as (e^2x - 1) / (e^2x + 1): inf / inf = NaN for x > 44."""
    e = torch.exp(2 * x)
    return (e - 1) / (e + 1)


def _softmax_unshifted(x, dim, half_to_float):
    """softmax without subtracting the max: exp overflows for inputs above 88."""
    e = torch.exp(x)
    return e / e.sum(dim, keepdim=True)


# ---- precision ----

def _exp_half(x):
    """exp computed in float16 for float32 inputs (a low-precision kernel)."""
    return aten.exp.default(x.to(torch.float16)).to(x.dtype) if x.dtype == torch.float32 else aten.exp.default(x)


# ---- NaN rules ----

def _maximum_fmax(a, b):
    """maximum as a NaN-ignoring max instruction (fmax)."""
    return torch.fmax(a, b)


def _minimum_fmin(a, b):
    """minimum as a NaN-ignoring min instruction (fmin)."""
    return torch.fmin(a, b)


def _amax_nan_ignored(x, dim=(), keepdim=False):
    """amax that skips NaN (-inf where a row is all NaN)."""
    return aten.amax.default(torch.where(x.isnan(), torch.full_like(x, float("-inf")), x), dim, keepdim)


def _eq_nan_equal(a, b):
    """eq treating NaN as equal to NaN (a bitwise compare)."""
    return aten.eq.Tensor(a, b) | (a.isnan() & b.isnan())


def _sign_nan_propagated(x):
    """sign(NaN) = NaN, as x / |x| gives it; torch's sign gives 0 for NaN."""
    return torch.where(x.isnan(), x, aten.sign.default(x))


# ---- rounding ----

def _div_floor_as_trunc(a, b, *, rounding_mode=None):
    """rounding_mode='floor' rounds toward zero."""
    return aten.div.Tensor_mode(a, b, rounding_mode="trunc" if rounding_mode == "floor" else rounding_mode)


def _round_half_away(x):
    """round half away from zero instead of half to even."""
    if not x.dtype.is_floating_point:
        return aten.round.default(x)
    return torch.sign(x) * torch.floor(x.abs() + 0.5)


def _remainder_fmod(x, other):
    """remainder with the dividend's sign (C fmod) instead of the divisor's."""
    return torch.fmod(x, other)


# ---- ties ----

def _argmax_last(x, dim=None, keepdim=False):
    """argmax picks the last of tied maxima instead of the first."""
    if dim is None:
        flat = x.reshape(-1)
        index = flat.numel() - 1 - aten.argmax.default(flat.flip(0))
        return index.reshape([1] * x.dim()) if keepdim else index
    size = x.size(dim) if x.dim() else 1
    return size - 1 - aten.argmax.default(x.flip(dim) if x.dim() else x, dim, keepdim)


def _max_dim_last(x, dim, keepdim=False):
    """max.dim returns the index of the last tied maximum."""
    values, _ = aten.max.dim(x, dim, keepdim)
    return values, _argmax_last(x, dim, keepdim)


# ---- signed zero ----

def _reciprocal_unsigned_zero(x):
    """1 / (x + 0): the addition turns -0 into +0, so 1/-0 gives +inf."""
    return aten.reciprocal.default(x + 0.0) if x.dtype.is_floating_point else aten.reciprocal.default(x)


def _atan2_unsigned_zero(y, x):
    """atan2 with x's signed zero lost: atan2(0, -0) gives 0 instead of pi."""
    return aten.atan2.default(y, x + 0.0 if x.dtype.is_floating_point else x)


# ---- argument branches ----

def _clamp_min_wins(x, min=None, max=None):
    """clamp as max(min(x, max), min): min wins when min > max (torch gives max)."""
    if max is not None:
        x = torch.clamp_max(x, max)
    if min is not None:
        x = torch.clamp_min(x, min)
    return x


def _clamp_tensor_min_wins(x, min=None, max=None):
    """clamp.Tensor with the same order: min wins when min > max."""
    return _clamp_min_wins(x, min, max)


def _pow_nan_zero_exponent(x, exponent):
    """pow keeping NaN for a zero exponent (NaN ** 0 is 1)."""
    result = aten.pow.Tensor_Scalar(x, exponent)
    return torch.where(x.isnan(), x, result) if x.dtype.is_floating_point else result


def _leaky_relu_abs_slope(x, negative_slope=0.01):
    """leaky_relu with |negative_slope|: wrong only for negative slopes."""
    return aten.leaky_relu.default(x, abs(negative_slope))


# ---- denormals ----

def _log_daz(x):
    """log with denormal inputs treated as zero (DAZ): -inf instead of about -88."""
    tiny = torch.finfo(x.dtype).tiny if x.dtype.is_floating_point else 0
    return aten.log.default(torch.where(x.abs() < tiny, torch.zeros_like(x), x))


def _rsqrt_daz(x):
    """rsqrt with denormal inputs treated as zero: inf instead of about 1e19."""
    tiny = torch.finfo(x.dtype).tiny if x.dtype.is_floating_point else 0
    return aten.rsqrt.default(torch.where(x.abs() < tiny, torch.zeros_like(x), x))


# ---- empty and 0-d tensors ----

def _sum_empty_nan(x, dim=None, keepdim=False, *, dtype=None):
    """sum over nothing gives NaN instead of 0."""
    result = aten.sum.dim_IntList(x, dim, keepdim, dtype=dtype)
    return torch.full_like(result, float("nan")) if x.numel() == 0 and result.dtype.is_floating_point else result


def _cumsum_0d_1d(x, dim, *, dtype=None):
    """cumsum of a 0-d tensor returns shape (1,)."""
    return aten.cumsum.default(x.reshape(-1) if x.dim() == 0 else x, dim, dtype=dtype)


sigmoid_flush = _swapping(aten.sigmoid.default, _sigmoid_flush)
tanh_exp = _swapping(aten.tanh.default, _tanh_exp)
softmax_unshifted = _swapping(aten._softmax.default, _softmax_unshifted)
exp_half = _swapping(aten.exp.default, _exp_half)
maximum_fmax = _swapping(aten.maximum.default, _maximum_fmax)
minimum_fmin = _swapping(aten.minimum.default, _minimum_fmin)
amax_nan_ignored = _swapping(aten.amax.default, _amax_nan_ignored)
eq_nan_equal = _swapping(aten.eq.Tensor, _eq_nan_equal)
sign_nan_propagated = _swapping(aten.sign.default, _sign_nan_propagated)
div_floor_as_trunc = _swapping(aten.div.Tensor_mode, _div_floor_as_trunc)
round_half_away = _swapping(aten.round.default, _round_half_away)
remainder_fmod = _swapping(aten.remainder.Scalar, _remainder_fmod)
argmax_last = _swapping(aten.argmax.default, _argmax_last)
max_dim_last = _swapping(aten.max.dim, _max_dim_last)
reciprocal_unsigned_zero = _swapping(aten.reciprocal.default, _reciprocal_unsigned_zero)
atan2_unsigned_zero = _swapping(aten.atan2.default, _atan2_unsigned_zero)
clamp_min_wins = _swapping(aten.clamp.default, _clamp_min_wins)
clamp_tensor_min_wins = _swapping(aten.clamp.Tensor, _clamp_tensor_min_wins)
pow_nan_zero_exponent = _swapping(aten.pow.Tensor_Scalar, _pow_nan_zero_exponent)
leaky_relu_abs_slope = _swapping(aten.leaky_relu.default, _leaky_relu_abs_slope)
log_daz = _swapping(aten.log.default, _log_daz)
rsqrt_daz = _swapping(aten.rsqrt.default, _rsqrt_daz)
sum_empty_nan = _swapping(aten.sum.dim_IntList, _sum_empty_nan)
cumsum_0d_1d = _swapping(aten.cumsum.default, _cumsum_0d_1d)
