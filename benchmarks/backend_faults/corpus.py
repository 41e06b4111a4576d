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

def _trunc_division(a, b):
    """Integer division toward zero without the trap of min / -1 (x86 idiv raises SIGFPE there):
    the faulty backends stand for backends that are wrong, not ones that crash the process."""
    if a.dtype.is_floating_point or b.dtype.is_floating_point:
        return aten.div.Tensor_mode(a, b, rounding_mode="trunc")
    minus_one = b == -1
    quotient = aten.div.Tensor_mode(a, torch.where(minus_one, torch.ones_like(b), b), rounding_mode="trunc")
    return torch.where(minus_one, -a, quotient)


def _div_floor_as_trunc(a, b, *, rounding_mode=None):
    """rounding_mode='floor' rounds toward zero."""
    if rounding_mode == "floor":
        return _trunc_division(a, b)
    return aten.div.Tensor_mode(a, b, rounding_mode=rounding_mode)


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



# ---- out of domain and on its edge ----

def _sqrt_clamped(x):
    """sqrt of a negative clamped to 0 (an input guard) instead of NaN."""
    return aten.sqrt.default(x.clamp_min(0) if x.dtype.is_floating_point else x)


def _log_negative_inf(x):
    """log of a negative gives -inf (as of 0) instead of NaN."""
    result = aten.log.default(x)
    return torch.where(x < 0, torch.full_like(result, float("-inf")), result)


def _acos_clamped(x):
    """acos clamps its input to [-1, 1]: 0 or pi beyond, not NaN."""
    return aten.acos.default(x.clamp(-1, 1))


def _log1p_below_minus_one(x):
    """log1p below -1 gives -inf instead of NaN."""
    result = aten.log1p.default(x)
    return torch.where(x < -1, torch.full_like(result, float("-inf")), result) if x.dtype.is_floating_point else result


# ---- NaN through a select, a max, a clamp ----

def _relu_select(x):
    """relu as where(x > 0, x, 0): relu(NaN) = 0, not NaN."""
    return torch.where(x > 0, x, torch.zeros_like(x))


def _argmax_nan_ignored(x, dim=None, keepdim=False):
    """argmax skips NaN (pytorch#113175): the index of the largest number, not of the NaN."""
    if x.dtype.is_floating_point:
        x = torch.nan_to_num(x, nan=float("-inf"), posinf=float("inf"), neginf=float("-inf"))
    return aten.argmax.default(x, dim, keepdim)


def _clamp_fminmax(x, min=None, max=None):
    """clamp with fmax/fmin instructions: a NaN input comes out as a bound."""
    if x.dtype.is_floating_point:
        if min is not None:
            x = torch.fmax(x, torch.tensor(min, dtype=x.dtype))
        if max is not None:
            x = torch.fmin(x, torch.tensor(max, dtype=x.dtype))
        return x
    return aten.clamp.default(x, min, max)


# ---- ties ----

def _argmin_last(x, dim=None, keepdim=False):
    """argmin returns the last tied minimum."""
    if dim is None:
        flat = x.reshape(-1)
        index = flat.numel() - 1 - aten.argmin.default(flat.flip(0), 0, False)
        return index.reshape([1] * x.dim()) if keepdim else index
    size = x.size(dim) if x.dim() else 1
    return size - 1 - aten.argmin.default(x.flip(dim) if x.dim() else x, dim, keepdim)


def _min_dim_last(x, dim, keepdim=False):
    """min.dim indexes the last tied minimum."""
    values, indices = aten.min.dim(x.flip(dim) if x.dim() else x, dim, keepdim)
    size = x.size(dim) if x.dim() else 1
    return values, size - 1 - indices


def _sort_ties_reversed(x, dim=-1, descending=False):
    """sort puts tied elements in reverse order of position: an unstable sort, which the contract allows."""
    if x.dim() == 0:
        return aten.sort.default(x, dim, descending)
    values, indices = aten.sort.stable(x.flip(dim), stable=True, dim=dim, descending=descending)
    return values, x.size(dim) - 1 - indices


# ---- arguments beyond their typical range ----

def _leaky_relu_max(x, negative_slope=0.01):
    """leaky_relu as max(x, slope * x): right only for slopes in [0, 1]."""
    return torch.maximum(x, x * negative_slope)


def _hardtanh_min_wins(x, min_val=-1.0, max_val=1.0):
    """hardtanh with min_val > max_val returns min_val; torch gives max_val."""
    return torch.minimum(torch.maximum(x, torch.tensor(min_val, dtype=x.dtype)), torch.tensor(max_val, dtype=x.dtype)) \
        if min_val <= max_val else torch.full_like(x, min_val)


def _elu_alpha_one(x, alpha=1.0, scale=1.0, input_scale=1.0):
    """elu ignores alpha (a kernel specialised for alpha = 1)."""
    return aten.elu.default(x, 1.0, scale, input_scale)


# ---- extreme spreads in reductions and normalisations ----

def _var_one_pass(x, dim=None, *, correction=None, keepdim=False):
    """var as E[x^2] - E[x]^2: cancels catastrophically when the mean is large against the spread."""
    dims = list(range(x.dim())) if not dim else [d % max(x.dim(), 1) for d in dim]  # None or []: every dim
    n = 1
    for d in (dims if x.dim() else []):
        n *= x.size(d)
    mean_sq = (x * x).mean(dims, keepdim=True) if x.dim() else x * x
    sq_mean = x.mean(dims, keepdim=True) ** 2 if x.dim() else x * x
    c = 1 if correction is None else correction
    result = (mean_sq - sq_mean) * n / max(n - c, 0) if n - c > 0 else (mean_sq - sq_mean) * float("inf")
    return result if keepdim or not x.dim() else result.squeeze(dims) if dims else result


def _layer_norm_one_pass(x, normalized_shape, weight=None, bias=None, eps=1e-5):
    """native_layer_norm with a one-pass variance (E[x^2] - E[x]^2)."""
    dims = list(range(x.dim() - len(normalized_shape), x.dim()))
    mean = x.mean(dims, keepdim=True)
    var = (x * x).mean(dims, keepdim=True) - mean * mean
    rstd = torch.rsqrt(var + eps)
    out = (x - mean) * rstd
    if weight is not None:
        out = out * weight
    if bias is not None:
        out = out + bias
    return out, mean, rstd


def _log_softmax_unshifted(x, dim, half_to_float):
    """log_softmax as x - log(sum(exp(x))): overflows above 88."""
    return x - torch.log(torch.exp(x).sum(dim, keepdim=True))


# ---- tiny magnitudes ----

def _expm1_naive(x):
    """expm1 as exp(x) - 1: 0 for 1e-10."""
    return torch.exp(x) - 1 if x.dtype.is_floating_point else aten.expm1.default(x)


def _log1p_naive(x):
    """log1p as log(1 + x): 0 for 1e-10."""
    return torch.log(1 + x) if x.dtype.is_floating_point else aten.log1p.default(x)


def _sinh_naive(x):
    """sinh as (e^x - e^-x) / 2: cancels near 0."""
    return (torch.exp(x) - torch.exp(-x)) / 2 if x.dtype.is_floating_point else aten.sinh.default(x)


# ---- signed zeros ----

def _div_unsigned_zero(a, b):
    """a / b with a zero divisor's sign dropped: 1 / -0 gives +inf."""
    if b.dtype.is_floating_point:
        b = torch.where(b == 0, torch.zeros_like(b), b)
    return aten.div.Tensor(a, b)


def _rsqrt_unsigned_zero(x):
    """rsqrt(-0) gives +inf; torch gives -inf."""
    return aten.rsqrt.default(torch.where(x == 0, torch.zeros_like(x), x) if x.dtype.is_floating_point else x)


# ---- integer semantics ----

def _remainder_tensor_fmod(a, b):
    """remainder takes the dividend's sign (C's %), for every dtype."""
    return torch.fmod(a, b)


def _right_shift_logical(a, b):
    """>> on signed integers shifts in zeros (a logical shift), not the sign bit."""
    if a.dtype == torch.uint8 or not isinstance(b, torch.Tensor):
        return aten.bitwise_right_shift.Tensor(a, b)
    bits = a.element_size() * 8
    shifted = aten.bitwise_right_shift.Tensor(a, b)
    n = b.to(torch.int64).clamp(0, bits)
    keep = torch.where(n >= bits, torch.zeros_like(n), (torch.ones_like(n) << (bits - n).clamp(max=63)) - 1)
    logical = torch.where(n == 0, a.to(torch.int64), shifted.to(torch.int64) & keep)
    return torch.where(a < 0, logical.to(a.dtype), shifted)


def _left_shift_modulo(a, b):
    """<< by the shift count modulo the width (x86's shl), not 0 past it."""
    bits = a.element_size() * 8
    return aten.bitwise_left_shift.Tensor(a, b % bits if isinstance(b, torch.Tensor) else b)


def _div_floor_int_trunc(a, b, rounding_mode=None):
    """integer floor division truncates toward zero; floats are right."""
    if rounding_mode == "floor" and not a.dtype.is_floating_point and not b.dtype.is_floating_point:
        return _trunc_division(a, b)
    return aten.div.Tensor_mode(a, b, rounding_mode=rounding_mode)


# ---- output dtype of integer and bool inputs ----

def _div_int_stays_int(a, b):
    """true division of integers keeps the integer dtype (C's /)."""
    result = aten.div.Tensor(a, b)
    if not a.dtype.is_floating_point and not a.dtype.is_complex and isinstance(b, torch.Tensor) \
            and not b.dtype.is_floating_point and not b.dtype.is_complex:
        return _trunc_division(a, b)
    return result


def _sum_keeps_dtype(x, dim=None, keepdim=False, *, dtype=None):
    """sum of integers and bools keeps the input dtype (torch promotes to int64)."""
    result = aten.sum.dim_IntList(x, dim, keepdim, dtype=dtype)
    return result.to(x.dtype) if dtype is None and not x.dtype.is_floating_point and not x.dtype.is_complex else result


def _sigmoid_int_keeps_dtype(x):
    """sigmoid of an integer tensor computed in float64 (torch gives float32, the default dtype)."""
    return aten.sigmoid.default(x.to(torch.float64)) if not x.dtype.is_floating_point and not x.dtype.is_complex \
        else aten.sigmoid.default(x)

# ---- 2026-11-27: more faults where semantics branch, one or two per class ----

def _amin_nan_ignored(x, dim=(), keepdim=False):
    """amin skips NaN (a NaN-ignoring min instruction)."""
    return aten.amin.default(torch.where(torch.isnan(x), torch.full_like(x, float("inf")), x), dim, keepdim)


def _argmin_nan_ignored(x, dim=None, keepdim=False):
    """argmin skips NaN, where torch returns the NaN's index."""
    return aten.argmin.default(torch.where(torch.isnan(x), torch.full_like(x, float("inf")), x), dim, keepdim)


def _neg_by_subtraction(x):
    """neg as 0 - x: neg(+0) comes out +0, not -0."""
    return torch.zeros_like(x) - x if x.is_floating_point() else aten.neg.default(x)


def _abs_by_select(x):
    """abs as where(x < 0, -x, x): abs(-0) stays -0."""
    return torch.where(x < 0, -x, x)


def _atan_by_asin(x):
    """atan as asin(x / sqrt(1 + x^2)): inf / inf is NaN where atan(inf) is pi / 2."""
    return torch.asin(x / torch.sqrt(1 + x * x))


def _acosh_clamped(x):
    """acosh clamps its input to 1, so below the domain it gives 0, not NaN."""
    return aten.acosh.default(torch.clamp(x, min=1))


def _log2_of_abs(x):
    """log2 of |x|: a negative input gives a number, not NaN."""
    return aten.log2.default(torch.abs(x))


def _asinh_naive(x):
    """asinh as log(x + sqrt(x^2 + 1)): 0 for tiny x, NaN at -inf."""
    return torch.log(x + torch.sqrt(x * x + 1))


def _atanh_naive(x):
    """atanh as log((1 + x) / (1 - x)) / 2: 0 for tiny x."""
    return 0.5 * torch.log((1 + x) / (1 - x))


def _addmm_beta_zero_kept(input, mat1, mat2, *, beta=1, alpha=1):
    """addmm as beta * input + alpha * mm: with beta = 0 a NaN or inf in input still poisons the result."""
    return beta * input + alpha * aten.mm.default(mat1, mat2)


def _prod_empty_zero(x, *, dtype=None):
    """The product of an empty tensor is 0, not 1."""
    out = aten.prod.default(x, dtype=dtype)
    return torch.zeros_like(out) if x.numel() == 0 else out


def _mul_int_through_double(a, b):
    """Integer multiplication done in float64: exact below 2**53, not two's complement wraparound."""
    if isinstance(b, torch.Tensor) and not a.is_floating_point() and not a.is_complex() and a.dtype != torch.bool:
        return (a.double() * b.double()).to(torch.result_type(a, b))
    return aten.mul.Tensor(a, b)


def _argmax_int32(x, dim=None, keepdim=False):
    """argmax returns int32 indices, not int64."""
    return aten.argmax.default(x, dim, keepdim).to(torch.int32)


def _nonzero_int32(x):
    """nonzero returns int32 indices, not int64."""
    return aten.nonzero.default(x).to(torch.int32)


def _log10_ftz(x):
    """log10 of a subnormal is -inf (flushed to zero first)."""
    out = aten.log10.default(x)
    return torch.where(x.abs() < torch.finfo(x.dtype).tiny, torch.full_like(out, float("-inf")), out) \
        if x.is_floating_point() else out


def _erf_saturating_early(x):
    """erf clamped to +-(1 - 1e-7): a table's range, so erf(inf) is not 1."""
    return torch.clamp(aten.erf.default(x), -0.9999999, 0.9999999) if x.is_floating_point() else aten.erf.default(x)


def _trunc_through_int64(x):
    """trunc as a cast to int64 and back: NaN, inf and values past 2**63 come back as garbage."""
    return x.to(torch.int64).to(x.dtype) if x.is_floating_point() else x


def _bucketize_side_flipped(x, boundaries, *, out_int32=False, right=False):
    """bucketize applies the other side's rule (right for left)."""
    return aten.bucketize.Tensor(x, boundaries, out_int32=out_int32, right=not right)


def _logical_xor_as_ne(a, b):
    """logical_xor as a != b: two different nonzero values are both true, so their xor is false."""
    return a != b


def _topk_ties_last(x, k, dim=-1, largest=True, sorted=True):
    """topk searching from the end, so of equal values the last ones are picked: allowed by the contract."""
    if x.dim() == 0:
        return aten.topk.default(x, k, dim, largest, sorted)
    values, indices = aten.topk.default(x.flip(dim), k, dim, largest, sorted)
    return values, x.size(dim) - 1 - indices


def _cosh_by_exp(x):
    """cosh as (e^x + e^-x) / 2: e^x overflows before cosh does, so the largest finite results come out inf."""
    return (torch.exp(x) + torch.exp(-x)) / 2


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
sqrt_clamped = _swapping(aten.sqrt.default, _sqrt_clamped)
log_negative_inf = _swapping(aten.log.default, _log_negative_inf)
acos_clamped = _swapping(aten.acos.default, _acos_clamped)
log1p_below_minus_one = _swapping(aten.log1p.default, _log1p_below_minus_one)
relu_select = _swapping(aten.relu.default, _relu_select)
argmax_nan_ignored = _swapping(aten.argmax.default, _argmax_nan_ignored)
clamp_fminmax = _swapping(aten.clamp.default, _clamp_fminmax)
argmin_last = _swapping(aten.argmin.default, _argmin_last)
min_dim_last = _swapping(aten.min.dim, _min_dim_last)
sort_ties_reversed = _swapping(aten.sort.default, _sort_ties_reversed)
leaky_relu_max = _swapping(aten.leaky_relu.default, _leaky_relu_max)
hardtanh_min_wins = _swapping(aten.hardtanh.default, _hardtanh_min_wins)
elu_alpha_one = _swapping(aten.elu.default, _elu_alpha_one)
var_one_pass = _swapping(aten.var.correction, _var_one_pass)
layer_norm_one_pass = _swapping(aten.native_layer_norm.default, _layer_norm_one_pass)
log_softmax_unshifted = _swapping(aten._log_softmax.default, _log_softmax_unshifted)
expm1_naive = _swapping(aten.expm1.default, _expm1_naive)
log1p_naive = _swapping(aten.log1p.default, _log1p_naive)
sinh_naive = _swapping(aten.sinh.default, _sinh_naive)
div_unsigned_zero = _swapping(aten.div.Tensor, _div_unsigned_zero)
rsqrt_unsigned_zero = _swapping(aten.rsqrt.default, _rsqrt_unsigned_zero)
remainder_tensor_fmod = _swapping(aten.remainder.Tensor, _remainder_tensor_fmod)
right_shift_logical = _swapping(aten.bitwise_right_shift.Tensor, _right_shift_logical)
left_shift_modulo = _swapping(aten.bitwise_left_shift.Tensor, _left_shift_modulo)
div_floor_int_trunc = _swapping(aten.div.Tensor_mode, _div_floor_int_trunc)
div_int_stays_int = _swapping(aten.div.Tensor, _div_int_stays_int)
sum_keeps_dtype = _swapping(aten.sum.dim_IntList, _sum_keeps_dtype)
sigmoid_int_keeps_dtype = _swapping(aten.sigmoid.default, _sigmoid_int_keeps_dtype)
amin_nan_ignored = _swapping(aten.amin.default, _amin_nan_ignored)
argmin_nan_ignored = _swapping(aten.argmin.default, _argmin_nan_ignored)
neg_by_subtraction = _swapping(aten.neg.default, _neg_by_subtraction)
abs_by_select = _swapping(aten.abs.default, _abs_by_select)
atan_by_asin = _swapping(aten.atan.default, _atan_by_asin)
acosh_clamped = _swapping(aten.acosh.default, _acosh_clamped)
log2_of_abs = _swapping(aten.log2.default, _log2_of_abs)
asinh_naive = _swapping(aten.asinh.default, _asinh_naive)
atanh_naive = _swapping(aten.atanh.default, _atanh_naive)
addmm_beta_zero_kept = _swapping(aten.addmm.default, _addmm_beta_zero_kept)
prod_empty_zero = _swapping(aten.prod.default, _prod_empty_zero)
mul_int_through_double = _swapping(aten.mul.Tensor, _mul_int_through_double)
argmax_int32 = _swapping(aten.argmax.default, _argmax_int32)
nonzero_int32 = _swapping(aten.nonzero.default, _nonzero_int32)
log10_ftz = _swapping(aten.log10.default, _log10_ftz)
erf_saturating_early = _swapping(aten.erf.default, _erf_saturating_early)
trunc_through_int64 = _swapping(aten.trunc.default, _trunc_through_int64)
bucketize_side_flipped = _swapping(aten.bucketize.Tensor, _bucketize_side_flipped)
logical_xor_as_ne = _swapping(aten.logical_xor.default, _logical_xor_as_ne)
cosh_by_exp = _swapping(aten.cosh.default, _cosh_by_exp)
topk_ties_last = _swapping(aten.topk.default, _topk_ties_last)
