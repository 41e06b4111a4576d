"""Held-out wrong decompositions, second round: sharpened faults (right everywhere except their one mechanism: low-precision
inputs computed in float32 like the kernels do, empty/0-d inputs handled) and faults
aimed at input classes a drawn-call checker may rarely produce (mixed dtypes, output
signed zeros, non-contiguous layouts, long dims, rare argument settings)."""
from __future__ import annotations

import math

import torch

aten = torch.ops.aten
LOW = (torch.float16, torch.bfloat16)


def _up(x):
    return x.float() if x.dtype in LOW else x


# ---------------------------------------------------------------- sharpened

def cosh_by_exp_opmath(x):
    """(exp(x) + exp(-x)) / 2 in float32 for half inputs: only the overflow near the top of the range is wrong."""
    if not x.is_floating_point():
        return aten.cosh(x)
    y = _up(x)
    return ((torch.exp(y) + torch.exp(-y)) / 2).to(x.dtype)


def sqrt_via_rsqrt_opmath(x):
    """x * rsqrt(x) in float32 for half inputs: NaN at 0 and +inf (torch: 0 and inf)."""
    if not x.is_floating_point():
        return aten.sqrt(x)
    y = _up(x)
    return (y * torch.rsqrt(y)).to(x.dtype)


def huber_loss_smooth_l1_opmath(x, target, reduction=1, delta=1.0):
    """smooth_l1's quadratic 0.5 d^2 / delta in huber_loss, computed in float32 for half: wrong only for delta != 1."""
    d = (_up(x) - _up(target)).abs()
    loss = torch.where(d < delta, 0.5 * d * d / delta, delta * (d - 0.5 * delta))
    out = loss if reduction == 0 else loss.sum() if reduction == 2 else loss.mean()
    return out.to(x.dtype)


def pow_signed_abs_exact(x, exponent):
    """torch.pow except a finite negative base with a non-integer exponent gives -|x|^e (torch: NaN)."""
    out = aten.pow.Tensor_Scalar(x, exponent)
    if not x.is_floating_point() or isinstance(exponent, (bool, int, complex)) or float(exponent).is_integer() \
            or math.isnan(float(exponent)) or math.isinf(float(exponent)):
        return out
    bad = (x < 0) & torch.isfinite(x)
    return torch.where(bad, -aten.pow.Tensor_Scalar(x.abs(), exponent), out)


def atan2_quadrant_signed(y, x):
    """atan(y / x) with a copysign quadrant fix and exact zero handling: only +-inf / +-inf gives NaN (torch: +-pi/4, +-3pi/4)."""
    yy, xx = _up(y), _up(x)
    if not yy.is_floating_point():
        yy, xx = yy.to(torch.get_default_dtype()), xx.to(torch.get_default_dtype())
    pi = torch.full_like(yy, math.pi)
    q = torch.atan(yy / xx)
    r = torch.where(xx > 0, q, torch.where(xx < 0, q + torch.copysign(pi, yy), torch.copysign(pi / 2, yy)))
    zero_y = torch.where(torch.signbit(xx), torch.copysign(pi, yy), torch.copysign(torch.zeros_like(yy), yy))
    r = torch.where(yy == 0, zero_y, r)
    r = torch.where(yy.isnan() | xx.isnan(), torch.full_like(r, math.nan), r)
    return r.to(torch.result_type(y, x) if torch.result_type(y, x).is_floating_point else torch.get_default_dtype())


def vector_norm_scaled_safe(x, ord=2, dim=None, keepdim=False, *, dtype=None):
    """max-scaled 2-norm m * sqrt(sum((x/m)^2)), empty/0-d handled: NaN for an inf element (torch: inf),
    and finite where torch's unscaled sum of squares overflows to inf."""
    if ord != 2 or x.numel() == 0 or x.dim() == 0 or x.is_complex():
        return aten.linalg_vector_norm(x, ord, dim, keepdim, dtype=dtype)
    y = _up(x.to(dtype) if dtype is not None else x)
    dims = list(range(x.dim())) if dim is None or len(dim) == 0 else [d % x.dim() for d in dim]
    a = y.abs()
    m = a.amax(dims, keepdim=True)
    safe = torch.where(m == 0, torch.ones_like(m), m)
    out = safe * torch.sqrt(((a / safe) ** 2).sum(dims, keepdim=True))
    out = torch.where(m == 0, torch.zeros_like(out), out)
    if not keepdim:
        out = out.squeeze(dims)
    expected_dtype = dtype if dtype is not None else x.dtype
    return out.to(expected_dtype)


def lerp_naive_finite(start, end, weight):
    """start + w (end - start) for every w, but only where all inputs are finite (torch's formula elsewhere):
    the w >= 0.5 precision loss alone (lerp(1e8, 1, 1) = 0)."""
    s, e = _up(start), _up(end)
    w = weight
    naive = s + w * (e - s)
    ref = _up(aten.lerp.Scalar(start, end, weight))
    ok = torch.isfinite(s) & torch.isfinite(e) & torch.isfinite(naive)
    if isinstance(w, float) and not math.isfinite(w):
        return aten.lerp.Scalar(start, end, weight)
    return torch.where(ok, naive, ref).to(torch.result_type(start, end))


def group_norm_one_pass_fused(x, weight, bias, N, C, HxW, group, eps):
    """native_group_norm with E[x^2] - E[x]^2, but torch's fused scale/shift and float32 opmath:
    only the variance cancellation differs."""
    if x.numel() == 0:
        return aten.native_group_norm(x, weight, bias, N, C, HxW, group, eps)
    y = _up(x)
    g = y.reshape(N, group, -1)
    mean = g.mean(-1)
    var = ((g * g).mean(-1) - mean * mean).clamp_min(0)
    rstd = torch.rsqrt(var + eps)
    cpg = C // group
    rstd_c = rstd.repeat_interleave(cpg, 1)  # (N, C)
    mean_c = mean.repeat_interleave(cpg, 1)
    w = _up(weight) if weight is not None else torch.ones(C, dtype=y.dtype)
    b = _up(bias) if bias is not None else torch.zeros(C, dtype=y.dtype)
    a = rstd_c * w
    shift = b - mean_c * a
    shape = [N, C] + [1] * (x.dim() - 2)
    out = y * a.reshape(shape) + shift.reshape(shape)
    return out.to(x.dtype), mean.to(x.dtype), rstd.to(x.dtype)


# ---------------------------------------------------------------- signed zero (output only)

def ceil_by_floor_step(x):
    """ceil as floor(x) + (floor(x) < x): +0 for -0.5 (torch: -0)."""
    if not x.is_floating_point():
        return aten.ceil(x)
    f = torch.floor(x)
    return f + (f < x).to(x.dtype)


def abs_by_where(x):
    """abs as where(x < 0, -x, x): -0 stays -0 (torch: +0)."""
    if x.dtype == torch.bool or x.is_complex():
        return aten.abs(x)
    return torch.where(x < 0, -x, x)


# ---------------------------------------------------------------- mixed dtypes

def maximum_keeps_self_dtype(a, b):
    """maximum computed in self's dtype: int32 vs float32 truncates the float and returns int32."""
    return torch.maximum(a, b.to(a.dtype))


# ---------------------------------------------------------------- layout

def diagonal_assumes_contiguous(x, offset=0, dim1=0, dim2=1):
    """diagonal by as_strided with strides computed from the shape: wrong for non-contiguous views."""
    nd = x.dim()
    d1, d2 = dim1 % nd, dim2 % nd
    shape = list(x.shape)
    cs = [1] * nd
    for i in range(nd - 2, -1, -1):
        cs[i] = cs[i + 1] * max(shape[i + 1], 1)
    if offset >= 0:
        n, start = max(min(shape[d1], shape[d2] - offset), 0), offset * cs[d2]
    else:
        n, start = max(min(shape[d1] + offset, shape[d2]), 0), -offset * cs[d1]
    if n == 0:
        start = 0
    keep = [i for i in range(nd) if i not in (d1, d2)]
    size = [shape[i] for i in keep] + [n]
    stride = [cs[i] for i in keep] + [cs[d1] + cs[d2]]
    return x.as_strided(size, stride, x.storage_offset() + start)


# ---------------------------------------------------------------- long dims

def cumsum_blocked_carry(x, dim, *, dtype=None):
    """blocked scan (blocks of 64) whose carry omits each block's last element: wrong only past 64 elements."""
    if dtype is not None:
        x = x.to(dtype)
    elif not x.is_floating_point() and not x.is_complex():
        x = x.to(torch.int64)
    if x.dim() == 0 or x.shape[dim] <= 64:
        return aten.cumsum(x, dim, dtype=x.dtype)
    y = x.movedim(dim, -1)
    blocks, carry = [], None
    for s in range(0, y.shape[-1], 64):
        blk = torch.cumsum(y[..., s:s + 64], -1, dtype=y.dtype)
        if carry is not None:
            blk = blk + carry
        blocks.append(blk)
        carry = blk[..., -2:-1] if blk.shape[-1] > 1 else blk[..., -1:]
    return torch.cat(blocks, -1).movedim(-1, dim)


# ---------------------------------------------------------------- rare argument settings

def add_alpha_truncated(a, b, *, alpha=1):
    """add with alpha truncated to an int: alpha = 0.5 acts as 0."""
    if isinstance(alpha, float) and not isinstance(alpha, bool) and math.isfinite(alpha):
        alpha = int(alpha)
    return aten.add.Tensor(a, b, alpha=alpha)


def huber_loss_difference_of_squares(x, target, reduction=1, delta=1.0):
    """linear branch as 0.5 (d^2 - (d - delta)^2) (= delta (d - delta / 2)): cancels for d >> delta, overflows early."""
    d = (_up(x) - _up(target)).abs()
    lin = 0.5 * (d * d - (d - delta) * (d - delta))
    loss = torch.where(d < delta, 0.5 * d * d, lin)
    out = loss if reduction == 0 else loss.sum() if reduction == 2 else loss.mean()
    return out.to(x.dtype)


def std_half_intermediate(x, dim=None, *, correction=None, keepdim=False):
    """std for float16/bfloat16 with the variance computed in the input dtype (squares overflow above 256 in fp16)."""
    if x.dtype not in LOW:
        return aten.std.correction(x, dim, correction=correction, keepdim=keepdim)
    c = 1 if correction is None else correction
    dims = list(range(x.dim())) if dim is None or len(dim) == 0 else [d % max(x.dim(), 1) for d in dim]
    if x.dim() == 0:
        dims = []
    n = 1
    for d in dims:
        n *= x.shape[d]
    mean = x.mean(dims, keepdim=True) if dims else x
    dev = x - mean
    ss = (dev * dev).sum(dims, keepdim=keepdim) if dims else dev * dev
    return torch.sqrt(ss / max(n - c, 0))


def avg_pool2d_ignores_divisor_override(x, kernel_size, stride=(), padding=0, ceil_mode=False,
                                        count_include_pad=True, divisor_override=None):
    """avg_pool2d dropping divisor_override."""
    return aten.avg_pool2d(x, kernel_size, stride, padding, ceil_mode, count_include_pad, None)


def upsample_nearest_size_ratio(x, output_size, scale_factors):
    """nearest upsampling indexing by in/out sizes even when scale_factors are given (torch uses 1/scale)."""
    if scale_factors is not None:
        output_size = [int(math.floor(x.shape[-2 + i] * s)) for i, s in enumerate(scale_factors)]
    return aten.upsample_nearest2d.vec(x, output_size, None)


def scatter_reduce_ignores_include_self(x, dim, index, src, reduce, *, include_self=True):
    """scatter_reduce always including self's values."""
    return aten.scatter_reduce.two(x, dim, index, src, reduce, include_self=True)


def group_norm_one_pass_isolated(x, weight, bias, N, C, HxW, group, eps):
    """The kernel's output, except where the one-pass variance E[x^2] - E[x]^2 changes rstd by more
    than 1e-4 relatively: then (x - mean) * rstd_one_pass * w + b. Only the cancellation is wrong."""
    out, mean_k, rstd_k = aten.native_group_norm(x, weight, bias, N, C, HxW, group, eps)
    if x.numel() == 0:
        return out, mean_k, rstd_k
    y = _up(x)
    g = y.reshape(N, group, -1)
    mean = g.mean(-1)
    var = ((g * g).mean(-1) - mean * mean).clamp_min(0)
    rstd = torch.rsqrt(var + eps)
    off = ((rstd - _up(rstd_k)).abs() > 1e-4 * _up(rstd_k).abs()) & torch.isfinite(rstd_k)
    if not off.any():
        return out, mean_k, rstd_k
    cpg = C // group
    shape = [N, C] + [1] * (x.dim() - 2)
    r = rstd.repeat_interleave(cpg, 1).reshape(shape)
    m = mean.repeat_interleave(cpg, 1).reshape(shape)
    mine = (y - m) * r
    if weight is not None:
        mine = mine * _up(weight).reshape([1, C] + [1] * (x.dim() - 2))
    if bias is not None:
        mine = mine + _up(bias).reshape([1, C] + [1] * (x.dim() - 2))
    sel = off.repeat_interleave(cpg, 1).reshape(shape).expand_as(mine)
    out = torch.where(sel, mine.to(x.dtype), out)
    rstd_out = torch.where(off, rstd.to(x.dtype), rstd_k)
    return out, mean_k, rstd_out


def group_norm_two_pass_control(x, weight, bias, N, C, HxW, group, eps):
    """CONTROL: two-pass mean / biased variance in float32 opmath, (x - mean) * rstd * w + b."""
    if x.numel() == 0:
        return aten.native_group_norm(x, weight, bias, N, C, HxW, group, eps)
    y = _up(x)
    g = y.reshape(N, group, -1)
    mean = g.mean(-1, keepdim=True)
    var = ((g - mean) ** 2).mean(-1, keepdim=True)
    rstd = torch.rsqrt(var + eps)
    out = ((g - mean) * rstd).reshape(x.shape)
    shape = [1, C] + [1] * (x.dim() - 2)
    if weight is not None:
        out = out * _up(weight).reshape(shape)
    if bias is not None:
        out = out + _up(bias).reshape(shape)
    return out.to(x.dtype), mean.squeeze(-1).to(x.dtype), rstd.squeeze(-1).to(x.dtype)
