"""Held-out faulty backends: 51 faults written blind to the special-case rows and the edge inputs.

They were written from real backend bugs (NaN-ignoring selects, strength-reduced arithmetic, lerp forms,
flushing, one-pass variances, tie rules) by looking only at each op's torch semantics, then measured once
before anything was changed for them: a default run caught 45 of 51 (2026-11-27). The six it missed (ties
of +0 and -0, a tie away from the first place with dim None, a lerp overflowing at ±max, one-pass
variances near a large mean) are what the suite was then taught; the rest measure it as found.
Same form as ``corpus.py``: each backend swaps one op for a faulty function with its signature.
"""
from __future__ import annotations

import math

import torch

from backend_faults.corpus import _swapping

aten = torch.ops.aten


def _fp(x):
    return isinstance(x, torch.Tensor) and (x.is_floating_point() or x.is_complex())


# ---------------------------------------------------------------- NaN propagation

def _max_pool2d_nan_ignored(self, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
    """max_pool2d with a NaN-ignoring max (NaN read as -inf): a window holding NaN returns its largest number."""
    if self.is_floating_point():
        self = torch.where(self.isnan(), torch.full_like(self, float("-inf")), self)
    return aten.max_pool2d_with_indices.default(self, kernel_size, stride, padding, dilation, ceil_mode)


def _prod_dim_zero_shortcircuit(self, dim, keepdim=False, *, dtype=None):
    """prod.dim_int stops at the first zero (an early-exit kernel): 0 * NaN and 0 * inf come out 0, not NaN."""
    out = aten.prod.dim_int(self, dim, keepdim, dtype=dtype)
    if not out.is_floating_point() or self.dim() == 0:
        return out
    has_zero = aten.any.dim(self == 0, dim, keepdim)
    return torch.where(has_zero, torch.zeros_like(out), out)


def _where_arith_select(condition, self, other):
    """where as c * a + (1 - c) * b (an arithmetic select): a NaN/inf in the unselected branch poisons the result."""
    if not (_fp(self) or _fp(other)):
        return aten.where.self(condition, self, other)
    dtype = torch.result_type(self, other)
    c = condition.to(dtype)
    return (c * self + (1 - c) * other).to(dtype)


def _mul_scalar_zero_folded(self, other):
    """mul.Scalar by 0 strength-reduced to zeros (x * 0 -> 0): NaN * 0 and inf * 0 give 0, -3 * 0 gives +0."""
    if self.is_floating_point() and other == 0:
        return torch.zeros_like(aten.mul.Scalar(self, other))
    return aten.mul.Scalar(self, other)


# ---------------------------------------------------------------- signed zeros

def _ceil_unsigned_zero(self):
    """ceil as floor(x) + (x > floor(x)): ceil(-0.5) = -1 + 1 = +0, where torch gives -0."""
    if not self.is_floating_point():
        return aten.ceil.default(self)
    f = torch.floor(self)
    return f + (self > f).to(self.dtype)


def _leaky_relu_decomposed(self, negative_slope=0.01):
    """leaky_relu as relu(x) + slope * min(x, 0) built from selects against +0: leaky_relu(-0) = +0, not -0."""
    zero = torch.zeros_like(self)
    return torch.where(self > 0, self, zero) + negative_slope * torch.where(self < 0, self, zero)


def _add_scalar_zero_folded(self, other, alpha=1):
    """add.Scalar of 0 folded away (x + 0 -> x): -0 + 0 stays -0, where IEEE (and torch) give +0."""
    if self.is_floating_point() and other * alpha == 0:
        return self.clone()
    return aten.add.Scalar(self, other, alpha)


# ---------------------------------------------------------------- infinities

def _sigmoid_exp_ratio(self):
    """sigmoid as e^x / (1 + e^x): inf / inf = NaN for x = inf and for every x above ~88."""
    if not self.is_floating_point():
        return aten.sigmoid.default(self)
    e = torch.exp(self)
    return e / (1 + e)


def _atan2_via_atan(self, other):
    """atan2 as atan(y / x) with a quadrant fix-up: inf / inf = NaN, so atan2(inf, inf) is NaN, not pi/4."""
    y, x = self, other
    dtype = torch.result_type(y, x)
    if not dtype.is_floating_point:
        dtype = torch.get_default_dtype()
    y, x = y.to(dtype), x.to(dtype)
    r = torch.atan(y / x)
    r = torch.where(x < 0, torch.where(y >= 0, r + math.pi, r - math.pi), r)
    return torch.where(x == 0, torch.where(y == 0, torch.zeros_like(r), torch.sign(y) * (math.pi / 2)), r)


def _softmax_masked_rows_zero(self, dim, half_to_float):
    """_softmax returning 0 for a row that is all -inf (the masked-attention convention); torch gives NaN."""
    out = aten._softmax.default(self, dim, half_to_float)
    if self.dim() == 0:
        return out
    all_masked = (self == float("-inf")).all(dim, keepdim=True)
    return torch.where(all_masked, torch.zeros_like(out), out)


def _pow_via_exp_log(self, exponent):
    """pow.Tensor_Tensor as exp(y * log|x|) (in float64, sign fixed for odd integer y): 0^0, inf^0, 1^inf, NaN^0
    and 1^NaN come out NaN where torch gives 1."""
    dtype = torch.result_type(self, exponent)
    if not dtype.is_floating_point:
        return aten.pow.Tensor_Tensor(self, exponent)
    x, y = self.to(torch.float64), exponent.to(torch.float64)
    mag = torch.exp(y * torch.log(x.abs()))
    y_int = y == torch.round(y)
    y_odd = y_int & (torch.remainder(y, 2) == 1)
    neg = x < 0
    out = torch.where(neg & ~y_int, torch.full_like(mag, float("nan")), mag)
    out = torch.where(neg & y_odd, -out, out)
    return out.to(dtype)


def _mean_running_update(self, *, dtype=None):
    """mean as a running update m += (x - m) / k: after an inf, (x - inf) / k = -inf and inf - inf = NaN."""
    if not self.is_floating_point() or self.numel() == 0:
        return aten.mean.default(self, dtype=dtype)
    flat = self.reshape(-1).to(torch.float64 if self.dtype == torch.float64 else torch.float32)
    m = flat[0]
    for k in range(1, flat.numel()):
        m = m + (flat[k] - m) / (k + 1)
    return m.to(dtype or self.dtype)


# ---------------------------------------------------------------- domain

def _sqrt_via_rsqrt(self):
    """sqrt as x * rsqrt(x) (the fast-math form): sqrt(0) = 0 * inf = NaN, sqrt(inf) = inf * 0 = NaN."""
    if not self.is_floating_point():
        return aten.sqrt.default(self)
    return self * torch.rsqrt(self)


def _atanh_clamped_edge(self):
    """atanh with its input clamped to [-1 + eps, 1 - eps] (an input guard): atanh(1) is finite, not inf;
    atanh(2) is finite, not NaN."""
    if not self.is_floating_point():
        return aten.atanh.default(self)
    eps = torch.finfo(self.dtype).eps
    return aten.atanh.default(torch.clamp(self, -1 + eps, 1 - eps))


def _pow_scalar_abs_base(self, exponent):
    """pow.Tensor_Scalar with a non-integer exponent computed on |x| (a cbrt-style kernel): (-4) ** 0.5 = 2, not NaN."""
    if self.is_floating_point() and isinstance(exponent, float) and exponent != int(exponent) \
            and math.isfinite(exponent):
        return aten.pow.Tensor_Scalar(self.abs(), exponent)
    return aten.pow.Tensor_Scalar(self, exponent)


# ---------------------------------------------------------------- division by zero

def _div_scalar_safe(self, other):
    """div.Scalar with a guarded zero divisor (DivNoNan): x / 0 = 0, not +-inf or NaN."""
    out = aten.div.Scalar(self, other)
    return torch.zeros_like(out) if other == 0 else out


def _div_scalar_mode_floor_zero(self, other, *, rounding_mode=None):
    """floor division as (a - fmod(a, b)) / b with a sign fix-up: for b = 0 fmod is NaN, so x // 0 is NaN, not +-inf."""
    if rounding_mode != "floor" or not (self.is_floating_point() or isinstance(other, float)):
        return aten.div.Scalar_mode(self, other, rounding_mode=rounding_mode)
    a = self if self.is_floating_point() else self.to(torch.get_default_dtype())
    m = torch.fmod(a, other)
    q = (a - m) / other
    fix = (m != 0) & ((m < 0) != (other < 0))
    return torch.where(fix, q - 1, q)


def _fmod_tensor_zero_returns_dividend(self, other):
    """fmod.Tensor returning the dividend for a zero divisor (a guarded kernel): fmod(1., 0.) = 1, not NaN."""
    out = aten.fmod.Tensor(self, other)
    if not out.is_floating_point():
        return out
    return torch.where(other == 0, self.to(out.dtype).expand_as(out), out)


# ---------------------------------------------------------------- ties

def _total_order_key(x):
    """-0 mapped just below +0 (a bitwise / totalOrder compare)."""
    if not x.is_floating_point():
        return x
    neg_zero = (x == 0) & torch.signbit(x)
    return torch.where(neg_zero, torch.full_like(x, -torch.finfo(x.dtype).tiny * 2 ** -22), x)


def _argmax_total_order(self, dim=None, keepdim=False):
    """argmax comparing with a total order (-0 < +0): argmax([-0., 0.]) = 1, but the two are equal so torch gives 0."""
    return aten.argmax.default(_total_order_key(self), dim, keepdim)


def _min_dim_total_order(self, dim, keepdim=False):
    """min.dim with a total-order compare: min([0., -0.]) returns -0 at index 1; torch returns the first (0., index 0)."""
    _, idx = aten.min.dim(_total_order_key(self), dim, keepdim)
    values = torch.gather(self, dim, idx if keepdim else idx.unsqueeze(dim)) if self.dim() else self
    return (values if keepdim or not self.dim() else values.squeeze(dim)), idx


def _argmin_colmajor_ties(self, dim=None, keepdim=False):
    """argmin over all elements scanning the last dimension outermost (a transposed layout): among tied minima it
    returns the first in column-major order, not the first in row-major (flat) order."""
    if dim is not None or self.dim() < 2:
        return aten.argmin.default(self, dim, keepdim)
    perm = list(range(self.dim()))[::-1]
    t = self.permute(perm).contiguous()
    i = aten.argmin.default(t)
    coords_t = torch.unravel_index(i, t.shape)
    coords = [int(c) for c in coords_t][::-1]
    flat = 0
    for c, s in zip(coords, self.shape):
        flat = flat * s + c
    out = torch.tensor(flat, dtype=torch.int64)
    return out.reshape([1] * self.dim()) if keepdim else out


# ---------------------------------------------------------------- argument branch points

def _gelu_tanh_ignored(self, *, approximate="none"):
    """gelu always exact (erf): approximate='tanh' is ignored; the two differ by up to ~5e-4."""
    return aten.gelu.default(self)


def _avg_pool1d_count_include_pad_ignored(self, kernel_size, stride=(), padding=(0,), ceil_mode=False,
                                          count_include_pad=True):
    """avg_pool1d always counts padding in the divisor: count_include_pad=False is ignored."""
    return aten.avg_pool1d.default(self, kernel_size, stride, padding, ceil_mode, True)


def _avg_pool2d_ceil_divisor(self, kernel_size, stride=(), padding=0, ceil_mode=False, count_include_pad=True,
                             divisor_override=None):
    """avg_pool2d with ceil_mode dividing every window by the full kernel area, also the last windows that hang
    past the input (torch divides those by the part inside input + padding)."""
    if ceil_mode and divisor_override is None and count_include_pad:
        ks = list(kernel_size) if len(kernel_size) == 2 else [kernel_size[0]] * 2
        return aten.avg_pool2d.default(self, kernel_size, stride, padding, ceil_mode, count_include_pad,
                                       ks[0] * ks[1])
    return aten.avg_pool2d.default(self, kernel_size, stride, padding, ceil_mode, count_include_pad,
                                   divisor_override)


def _upsample_nearest_round(input, output_size, scale_factors):
    """upsample_nearest2d picking the source pixel by rounding the centre (nearest-exact / half-pixel),
    not floor(dst * scale) as torch's 'nearest' does."""
    return aten._upsample_nearest_exact2d.vec(input, output_size, scale_factors)


def _reflection_pad_symmetric(self, padding):
    """reflection_pad2d as symmetric padding (the edge pixel repeated): [1,2,3] pad 1 -> [1,1,2,3,3], not [2,1,2,3,2]."""
    out = self
    left, right, top, bottom = padding
    w_dim, h_dim = out.dim() - 1, out.dim() - 2

    def pad_dim(t, d, lo, hi):
        parts = []
        if lo > 0:
            parts.append(t.narrow(d, 0, lo).flip(d))
        parts.append(t)
        if hi > 0:
            parts.append(t.narrow(d, t.size(d) - hi, hi).flip(d))
        return torch.cat(parts, d)

    if min(padding) < 0 or left > self.size(w_dim) or right > self.size(w_dim) \
            or top > self.size(h_dim) or bottom > self.size(h_dim):
        return aten.reflection_pad2d.default(self, padding)
    out = pad_dim(out, w_dim, left, right)
    out = pad_dim(out, h_dim, top, bottom)
    return out


def _var_correction_as_bool(self, dim=None, *, correction=None, keepdim=False):
    """var.correction mapping correction onto the old unbiased flag: any nonzero correction acts as 1."""
    if correction is not None and correction != 0:
        correction = 1
    return aten.var.correction(self, dim, correction=correction, keepdim=keepdim)


def _scatter_reduce_include_self_ignored(self, dim, index, src, reduce, *, include_self=True):
    """scatter_reduce.two always folds self into the reduction: include_self=False is ignored."""
    return aten.scatter_reduce.two(self, dim, index, src, reduce, include_self=True)


# ---------------------------------------------------------------- empty and 0-d

def _mean_dim_empty_zero(self, dim, keepdim=False, *, dtype=None):
    """mean.dim as sum / max(n, 1) (a guarded divide): the mean over an empty dim is 0, not NaN."""
    out = aten.mean.dim(self, dim, keepdim, dtype=dtype)
    if out.is_floating_point() and self.numel() == 0 and out.numel() > 0:
        return torch.zeros_like(out)
    return out


def _var_dim_single_zero(self, dim, unbiased=True, keepdim=False):
    """var.dim dividing by max(n - 1, 1): the unbiased variance of one element is 0, not NaN."""
    out = aten.var.dim(self, dim, unbiased, keepdim)
    if not unbiased:
        return out
    sq = (self - self.mean(dim, keepdim=True)) ** 2 if self.dim() else (self - self) ** 2
    s = sq.sum(dim, keepdim=keepdim) if self.dim() else sq
    n = self.numel() // max(s.numel(), 1) if self.numel() else 0
    return s / max(n - 1, 1) if n > 0 else out


def _nonzero_0d_as_1d(self):
    """nonzero of a 0-d tensor treated as a 1-element vector: shape (1, 1) instead of (1, 0)."""
    if self.dim() == 0:
        return aten.nonzero.default(self.reshape(1))
    return aten.nonzero.default(self)


# ---------------------------------------------------------------- integer semantics

def _bitwise_not_bool_as_int(self):
    """bitwise_not of bool computed as integer ~ then cast back: ~1 = -2 is nonzero, so ~True = True."""
    if self.dtype == torch.bool:
        return aten.bitwise_not.default(self.to(torch.int32)).to(torch.bool)
    return aten.bitwise_not.default(self)


def _abs_int_min_saturating(self):
    """abs with a saturating negate (DSP style): abs(INT_MIN) = INT_MAX, where torch wraps to INT_MIN."""
    out = aten.abs.default(self)
    if self.dtype in (torch.int8, torch.int16, torch.int32, torch.int64):
        info = torch.iinfo(self.dtype)
        out = torch.where(self == info.min, torch.full_like(out, info.max), out)
    return out


def _add_tensor_saturating(self, other, *, alpha=1):
    """add.Tensor with saturating integer adds (paddsb-style) for 8/16/32-bit ints: 100 + 100 in int8 is 127,
    where torch wraps to -56."""
    dtype = torch.result_type(self, other)
    if dtype in (torch.int8, torch.uint8, torch.int16, torch.int32):
        info = torch.iinfo(dtype)
        wide = aten.add.Tensor(self.to(torch.int64), other.to(torch.int64) if isinstance(other, torch.Tensor)
                               else other, alpha=alpha)
        return wide.clamp(info.min, info.max).to(dtype)
    return aten.add.Tensor(self, other, alpha=alpha)


# ---------------------------------------------------------------- output dtype

def _gt_scalar_returns_float(self, other):
    """gt.Scalar returning 0./1. in the input's (floating) dtype instead of bool."""
    out = aten.gt.Scalar(self, other)
    return out.to(self.dtype) if self.is_floating_point() else out


def _cumsum_keeps_int_dtype(self, dim, *, dtype=None):
    """cumsum of integer/bool inputs keeping the input dtype; torch promotes them to int64."""
    out = aten.cumsum.default(self, dim, dtype=dtype)
    if dtype is None and not self.is_floating_point() and not self.is_complex():
        return out.to(self.dtype)
    return out


def _any_dim_uint8_bool(self, dim, keepdim=False):
    """any.dim returning bool for uint8 inputs; torch keeps uint8 for uint8 (legacy)."""
    return aten.any.dim(self, dim, keepdim).to(torch.bool)


# ---------------------------------------------------------------- largest finite values

def _batch_norm_inference_folded(input, weight, bias, running_mean, running_var, momentum, eps):
    """inference batch norm folded into x * scale + shift (shift = b - mean * scale): for x ~ mean ~ 3e38 the
    products overflow (inf - inf = NaN) and for x ~ mean ~ 1e6 the result cancels; torch computes (x - mean) first."""
    out, m, r = aten._native_batch_norm_legit_no_training.default(input, weight, bias, running_mean, running_var,
                                                                  momentum, eps)
    shape = [1, -1] + [1] * (input.dim() - 2)
    scale = torch.rsqrt(running_var + eps)
    if weight is not None:
        scale = scale * weight
    shift = -running_mean * scale
    if bias is not None:
        shift = shift + bias
    return (input * scale.reshape(shape) + shift.reshape(shape)).to(out.dtype), m, r


def _upsample_bilinear_lerp(input, output_size, align_corners, scale_factors):
    """upsample_bilinear2d interpolating as a + t * (b - a): b - a overflows for a = -3e38, b = 3e38 (inf / NaN
    where torch's (1 - t) * a + t * b is finite)."""
    out = aten.upsample_bilinear2d.vec(input, output_size, align_corners, scale_factors)
    if not input.is_floating_point():
        return out
    H, W = input.shape[-2:]
    OH, OW = out.shape[-2:]

    def coords(o, i, scale):
        d = torch.arange(o, dtype=torch.float64)
        if align_corners:
            src = d * ((i - 1) / (o - 1)) if o > 1 else torch.zeros_like(d)
        else:
            s = (1.0 / scale) if scale is not None else i / o
            src = ((d + 0.5) * s - 0.5).clamp(min=0)
        i0 = src.floor().long().clamp(max=i - 1)
        i1 = (i0 + 1).clamp(max=i - 1)
        t = (src - i0).to(input.dtype)
        return i0, i1, t

    sh = scale_factors[0] if scale_factors else None
    sw = scale_factors[1] if scale_factors else None
    h0, h1, th = coords(OH, H, sh)
    w0, w1, tw = coords(OW, W, sw)
    a = input[..., h0, :]
    b = input[..., h1, :]
    rows = a + th.reshape(-1, 1) * (b - a)
    a = rows[..., w0]
    b = rows[..., w1]
    return (a + tw * (b - a)).to(out.dtype).contiguous(memory_format=torch.contiguous_format) \
        if out.is_contiguous() else (a + tw * (b - a)).to(out.dtype)


# ---------------------------------------------------------------- subnormals

def _div_tensor_reciprocal_mul(self, other):
    """div.Tensor as a * (1 / b) (fast-math reciprocal): 1 / b overflows for subnormal b, so 1e-39 / 1e-39 = inf,
    not 1."""
    dtype = torch.result_type(self, other)
    if not dtype.is_floating_point:
        return aten.div.Tensor(self, other)
    b = other.to(dtype) if isinstance(other, torch.Tensor) else torch.tensor(other, dtype=dtype)
    return (self.to(dtype) * torch.reciprocal(b)).to(dtype)


def _sign_daz(self):
    """sign with subnormal inputs treated as zero (DAZ): sign(1e-40) = 0, not 1."""
    if not self.is_floating_point():
        return aten.sign.default(self)
    tiny = torch.finfo(self.dtype).tiny
    return aten.sign.default(torch.where(self.abs() < tiny, torch.zeros_like(self), self))


def _floor_daz(self):
    """floor with subnormal inputs treated as zero (DAZ): floor(-1e-40) = -0, not -1."""
    if not self.is_floating_point():
        return aten.floor.default(self)
    tiny = torch.finfo(self.dtype).tiny
    return aten.floor.default(torch.where(self.abs() < tiny, self * 0, self))


# ---------------------------------------------------------------- tiny magnitudes

def _tanh_by_sigmoid(self):
    """tanh as 2 * sigmoid(2x) - 1: cancels near 0 (tanh(1e-10) = 0) and loses -0."""
    if not self.is_floating_point():
        return aten.tanh.default(self)
    return 2 * torch.sigmoid(2 * self) - 1


def _erf_via_erfc(self):
    """erf as 1 - erfc(x): cancels near 0, erf(1e-10) = 0 instead of 1.1e-10."""
    if not self.is_floating_point():
        return aten.erf.default(self)
    return 1 - torch.special.erfc(self)


def _asin_via_acos(self):
    """asin as pi/2 - acos(x): cancels near 0, asin(1e-10) = 0 instead of 1e-10."""
    if not self.is_floating_point():
        return aten.asin.default(self)
    return (math.pi / 2 - torch.acos(self.to(torch.float32) if self.dtype != torch.float64 else self)).to(self.dtype)


# ---------------------------------------------------------------- extreme spreads

def _group_norm_one_pass(input, weight, bias, N, C, HxW, group, eps):
    """native_group_norm with a one-pass variance E[x^2] - E[x]^2: cancels when the mean is large against the spread."""
    out, mean, rstd = aten.native_group_norm.default(input, weight, bias, N, C, HxW, group, eps)
    if input.numel() == 0:
        return out, mean, rstd
    x = input.reshape(N, group, -1)
    m = x.mean(-1, keepdim=True)
    var = ((x * x).mean(-1, keepdim=True) - m * m).clamp_min(0)
    r = torch.rsqrt(var + eps)
    y = ((x - m) * r).reshape(input.shape)
    shape = [1, C] + [1] * (input.dim() - 2)
    if weight is not None:
        y = y * weight.reshape(shape)
    if bias is not None:
        y = y + bias.reshape(shape)
    return y.to(out.dtype), m.reshape(N, group).to(mean.dtype), r.reshape(N, group).to(rstd.dtype)


def _batch_norm_one_pass(input, weight, bias, training, momentum, eps):
    """_native_batch_norm_legit.no_stats with a one-pass batch variance E[x^2] - E[x]^2."""
    out, save_mean, save_rstd = aten._native_batch_norm_legit.no_stats(input, weight, bias, training, momentum, eps)
    if not training or input.numel() == 0:
        return out, save_mean, save_rstd
    dims = [0] + list(range(2, input.dim()))
    m = input.mean(dims)
    var = ((input * input).mean(dims) - m * m).clamp_min(0)
    r = torch.rsqrt(var + eps)
    shape = [1, -1] + [1] * (input.dim() - 2)
    y = (input - m.reshape(shape)) * r.reshape(shape)
    if weight is not None:
        y = y * weight.reshape(shape)
    if bias is not None:
        y = y + bias.reshape(shape)
    return y.to(out.dtype), m.to(save_mean.dtype), r.to(save_rstd.dtype)


# ---------------------------------------------------------------- backends

FAULTS = {
    "max_pool2d_nan_ignored": (aten.max_pool2d_with_indices.default, _max_pool2d_nan_ignored),
    "prod_dim_zero_shortcircuit": (aten.prod.dim_int, _prod_dim_zero_shortcircuit),
    "where_arith_select": (aten.where.self, _where_arith_select),
    "mul_scalar_zero_folded": (aten.mul.Scalar, _mul_scalar_zero_folded),
    "ceil_unsigned_zero": (aten.ceil.default, _ceil_unsigned_zero),
    "leaky_relu_decomposed": (aten.leaky_relu.default, _leaky_relu_decomposed),
    "add_scalar_zero_folded": (aten.add.Scalar, _add_scalar_zero_folded),
    "sigmoid_exp_ratio": (aten.sigmoid.default, _sigmoid_exp_ratio),
    "atan2_via_atan": (aten.atan2.default, _atan2_via_atan),
    "softmax_masked_rows_zero": (aten._softmax.default, _softmax_masked_rows_zero),
    "pow_via_exp_log": (aten.pow.Tensor_Tensor, _pow_via_exp_log),
    "mean_running_update": (aten.mean.default, _mean_running_update),
    "sqrt_via_rsqrt": (aten.sqrt.default, _sqrt_via_rsqrt),
    "atanh_clamped_edge": (aten.atanh.default, _atanh_clamped_edge),
    "pow_scalar_abs_base": (aten.pow.Tensor_Scalar, _pow_scalar_abs_base),
    "div_scalar_safe": (aten.div.Scalar, _div_scalar_safe),
    "div_scalar_mode_floor_zero": (aten.div.Scalar_mode, _div_scalar_mode_floor_zero),
    "fmod_tensor_zero_returns_dividend": (aten.fmod.Tensor, _fmod_tensor_zero_returns_dividend),
    "argmax_total_order": (aten.argmax.default, _argmax_total_order),
    "min_dim_total_order": (aten.min.dim, _min_dim_total_order),
    "argmin_colmajor_ties": (aten.argmin.default, _argmin_colmajor_ties),
    "gelu_tanh_ignored": (aten.gelu.default, _gelu_tanh_ignored),
    "avg_pool1d_count_include_pad_ignored": (aten.avg_pool1d.default, _avg_pool1d_count_include_pad_ignored),
    "avg_pool2d_ceil_divisor": (aten.avg_pool2d.default, _avg_pool2d_ceil_divisor),
    "upsample_nearest_round": (aten.upsample_nearest2d.vec, _upsample_nearest_round),
    "reflection_pad_symmetric": (aten.reflection_pad2d.default, _reflection_pad_symmetric),
    "var_correction_as_bool": (aten.var.correction, _var_correction_as_bool),
    "scatter_reduce_include_self_ignored": (aten.scatter_reduce.two, _scatter_reduce_include_self_ignored),
    "mean_dim_empty_zero": (aten.mean.dim, _mean_dim_empty_zero),
    "var_dim_single_zero": (aten.var.dim, _var_dim_single_zero),
    "nonzero_0d_as_1d": (aten.nonzero.default, _nonzero_0d_as_1d),
    "bitwise_not_bool_as_int": (aten.bitwise_not.default, _bitwise_not_bool_as_int),
    "abs_int_min_saturating": (aten.abs.default, _abs_int_min_saturating),
    "add_tensor_saturating": (aten.add.Tensor, _add_tensor_saturating),
    "gt_scalar_returns_float": (aten.gt.Scalar, _gt_scalar_returns_float),
    "cumsum_keeps_int_dtype": (aten.cumsum.default, _cumsum_keeps_int_dtype),
    "any_dim_uint8_bool": (aten.any.dim, _any_dim_uint8_bool),
    "batch_norm_inference_folded": (aten._native_batch_norm_legit_no_training.default, _batch_norm_inference_folded),
    "upsample_bilinear_lerp": (aten.upsample_bilinear2d.vec, _upsample_bilinear_lerp),
    "div_tensor_reciprocal_mul": (aten.div.Tensor, _div_tensor_reciprocal_mul),
    "sign_daz": (aten.sign.default, _sign_daz),
    "floor_daz": (aten.floor.default, _floor_daz),
    "tanh_by_sigmoid": (aten.tanh.default, _tanh_by_sigmoid),
    "erf_via_erfc": (aten.erf.default, _erf_via_erfc),
    "asin_via_acos": (aten.asin.default, _asin_via_acos),
    "group_norm_one_pass": (aten.native_group_norm.default, _group_norm_one_pass),
    "batch_norm_one_pass": (aten._native_batch_norm_legit.no_stats, _batch_norm_one_pass),
}

# ---------------------------------------------------------------- single-mechanism variants
# (added after the first run: the faults above were sometimes caught through a side effect — a NaN or
# inf input — rather than the mechanism named; these differ from torch ONLY in the named mechanism)

def _leaky_relu_signed_zero_only(self, negative_slope=0.01):
    """leaky_relu right everywhere (NaN included) except that -0 comes out +0 (a select against +0)."""
    out = aten.leaky_relu.default(self, negative_slope)
    if not self.is_floating_point():
        return out
    return torch.where(self == 0, torch.zeros_like(out), out)


def _all_finite(*ts):
    return all(t is None or not t.is_floating_point() or bool(torch.isfinite(t).all()) for t in ts)


def _group_norm_one_pass_finite(input, weight, bias, N, C, HxW, group, eps):
    """native_group_norm with the one-pass variance, only where every input is finite (so only the
    cancellation differs from torch)."""
    if not _all_finite(input, weight, bias):
        return aten.native_group_norm.default(input, weight, bias, N, C, HxW, group, eps)
    return _group_norm_one_pass(input, weight, bias, N, C, HxW, group, eps)


def _batch_norm_one_pass_finite(input, weight, bias, training, momentum, eps):
    """_native_batch_norm_legit.no_stats with the one-pass variance, only where every input is finite."""
    if not _all_finite(input, weight, bias):
        return aten._native_batch_norm_legit.no_stats(input, weight, bias, training, momentum, eps)
    return _batch_norm_one_pass(input, weight, bias, training, momentum, eps)


FAULTS.update({
    "leaky_relu_signed_zero_only": (aten.leaky_relu.default, _leaky_relu_signed_zero_only),
    "group_norm_one_pass_finite": (aten.native_group_norm.default, _group_norm_one_pass_finite),
    "batch_norm_one_pass_finite": (aten._native_batch_norm_legit.no_stats, _batch_norm_one_pass_finite),
})


def _group_norm_one_pass_f32(input, weight, bias, N, C, HxW, group, eps):
    """native_group_norm with the one-pass variance accumulated in (at least) float32 like torch's own
    statistics, finite inputs only: differs from torch only by the E[x^2] - E[x]^2 cancellation."""
    if not _all_finite(input, weight, bias) or input.dtype == torch.float64:
        return _group_norm_one_pass_finite(input, weight, bias, N, C, HxW, group, eps)
    out, mean, rstd = _group_norm_one_pass(input.float(), None if weight is None else weight.float(),
                                           None if bias is None else bias.float(), N, C, HxW, group, eps)
    ref = aten.native_group_norm.default(input, weight, bias, N, C, HxW, group, eps)
    return out.to(ref[0].dtype), mean.to(ref[1].dtype), rstd.to(ref[2].dtype)


FAULTS["group_norm_one_pass_f32"] = (aten.native_group_norm.default, _group_norm_one_pass_f32)


for _name, (_op, _fn) in FAULTS.items():
    _fn.__name__ = _name
    globals()[_name] = _swapping(_op, _fn)
