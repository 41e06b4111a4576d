"""Held-out wrong decompositions (and correct controls), written blind to the special-case rows.

Each function takes the aten overload's arguments, in schema order (kwarg-only
arguments by name), and returns what the op should return, but subtly wrong, the
way decomposition tables ship bugs. Measured once before any change for them
(2026-11-27): 46 of 46 killed, several for a reason other than their planted bug;
``held_out_sharpened.py`` isolates those. The witnesses are in manifest.yaml.
"""
from __future__ import annotations

import math

import torch

aten = torch.ops.aten


# ---------------------------------------------------------------- formula

def selu_rounded_constants(x):
    """SELU with alpha/scale rounded to 5 significant digits (1.6733, 1.0507)."""
    alpha, scale = 1.6733, 1.0507
    return scale * torch.where(x > 0, x, alpha * torch.expm1(x))


def glu_swapped_halves(x, dim=-1):
    """GLU gating the wrong half: sigmoid(a) * b instead of a * sigmoid(b)."""
    a, b = x.chunk(2, dim)
    return torch.sigmoid(a) * b


# ---------------------------------------------------------------- sign

def fmod_as_remainder(a, b):
    """fmod by a - b * floor(a / b): that is Python's %, result takes the divisor's sign."""
    return a - b * torch.floor(a / b)


def frac_floor(x):
    """frac as x - floor(x): 0.5 for -1.5 where torch's frac is x - trunc(x) = -0.5."""
    return x - torch.floor(x)


# ---------------------------------------------------------------- precision

def erf_via_erfc(x):
    """erf as 1 - erfc(x): cancels to 0 for tiny x (erf(1e-10) = 1.13e-10)."""
    return 1 - torch.special.erfc(x)


def tanh_one_minus_ratio(x):
    """tanh as 1 - 2 / (exp(2x) + 1): safe at +-inf, but cancels to 0 near 0."""
    return 1 - 2 / (torch.exp(2 * x) + 1)


def lerp_naive(start, end, weight):
    """lerp as start + w * (end - start) for every w: at w = 1 it is not end when |start| >> |end|."""
    return start + weight * (end - start)


# ---------------------------------------------------------------- overflow

def acosh_naive(x):
    """acosh as log(x + sqrt(x * x - 1)): x * x overflows for x > 1.8e19 (float32)."""
    return torch.log(x + torch.sqrt(x * x - 1))


def cosh_by_exp(x):
    """cosh as (exp(x) + exp(-x)) / 2: exp(89) overflows float32, cosh(89) = 2.2e38 does not."""
    return (torch.exp(x) + torch.exp(-x)) / 2


# ---------------------------------------------------------------- nan

def clamp_min_by_where(x, min):
    """clamp_min as where(x < min, min, x): a NaN bound is dropped (clamp_min(x, nan) is NaN)."""
    bound = torch.as_tensor(min, dtype=torch.result_type(x, min))
    return torch.where(x < bound, bound, x).to(torch.result_type(x, min))


def any_by_sign(x):
    """any as (x > 0) | (x < 0): NaN is truthy for torch.any, not for this."""
    out = ((x > 0) | (x < 0)).any() if x.dtype != torch.bool else x.any()
    return out.to(torch.uint8) if x.dtype == torch.uint8 else out


def threshold_gt_select(x, threshold, value):
    """threshold as where(x > threshold, x, value): NaN becomes value (torch keeps NaN: x <= t is the test)."""
    return torch.where(x > threshold, x, torch.as_tensor(value, dtype=x.dtype))


def masked_fill_arith(x, mask, value):
    """masked_fill as x * ~mask + value * mask: NaN/inf under the mask leak through 0 * x."""
    m = mask.to(x.dtype)
    return (x * (1 - m) + value * m).to(x.dtype)


# ---------------------------------------------------------------- ties

def min_dim_last(x, dim, keepdim=False):
    """min.dim returning the LAST of tied minima (via flip)."""
    flipped = x.flip(dim) if x.dim() else x
    values, idx = aten.min.dim(flipped, dim, keepdim)
    size = x.shape[dim] if x.dim() else 1
    return values, (size - 1 - idx)


def bucketize_right_ignored(x, boundaries, *, out_int32=False, right=False):
    """bucketize that always counts boundaries <= x (right=True semantics): values on a boundary move up."""
    return torch.searchsorted(boundaries, x, right=True, out_int32=out_int32)


# ---------------------------------------------------------------- dims

def amin_sequential_dims(x, dim=(), keepdim=False):
    """amin over a dim list one dim at a time without renumbering the later dims."""
    if len(dim) == 0:
        return aten.amin(x, dim, keepdim)
    out = x
    for d in dim:
        out = aten.amin(out, [d], keepdim)
    return out


def squeeze_dims_sequential(x, dim):
    """squeeze.dims by squeezing ascending dims one at a time: later indices shift."""
    out = x
    nd = max(x.dim(), 1)
    for d in sorted(d % nd for d in dim):
        out = aten.squeeze.dim(out, d)
    return out


def any_dims_none_drops_keepdim(x, dim=None, keepdim=False):
    """any.dims with dim=None returns a 0-d result even when keepdim=True."""
    if dim is None:
        out = aten.any(x)
        return out
    return aten.any.dims(x, dim, keepdim)


# ---------------------------------------------------------------- dtype

def mul_promote_ignores_0d(a, b):
    """mul computing in promote_types(a, b): a 0-d float64 operand makes a float32 tensor float64."""
    dt = torch.promote_types(a.dtype, b.dtype)
    return a.to(dt) * b.to(dt)


def pow_scalar_base_cast(self, exponent):
    """pow.Scalar with the scalar base cast to the exponent's dtype: 2.5 ** int tensor becomes 2 ** int."""
    base = torch.tensor(self, dtype=exponent.dtype)
    return torch.pow(base, exponent)


def any_always_bool(x):
    """any returning bool for uint8 input (torch returns uint8 there)."""
    return (x != 0).any()


# ---------------------------------------------------------------- broadcast

def sub_reshape_same_numel(a, b, *, alpha=1):
    """sub that 'aligns' other by reshape when the element counts match: (2,1) - (1,2) gives (2,1)."""
    if b.numel() == a.numel() and b.shape != a.shape:
        b = b.reshape(a.shape)
    return a - alpha * b


def lerp_expand_as_start(start, end, weight):
    """lerp that expands end and weight to start's shape: start cannot broadcast up."""
    end = end.expand_as(start)
    weight = weight.expand_as(start)
    return aten.lerp.Tensor(start, end, weight)


def copy_returns_src(self, src, non_blocking=False):
    """copy returning src cast to self's dtype: self's shape (src broadcast into it) is lost."""
    return src.clone().to(self.dtype)


# ---------------------------------------------------------------- empty / 0-d

def split_empty_returns_nothing(x, split_size, dim=0):
    """split by narrowing at range(0, size, split_size): an empty dim gives [] (torch gives [x])."""
    size = x.shape[dim] if x.dim() else 1
    return [x.narrow(dim, s, min(split_size, size - s)) for s in range(0, size, split_size)]


def prod_dim_first_slice_init(x, dim, keepdim=False, *, dtype=None):
    """prod.dim_int accumulating from the first slice: raises on an empty reduced dim (prod is 1 there)."""
    if dtype is not None:
        x = x.to(dtype)
    elif not x.is_floating_point() and not x.is_complex():
        x = x.to(torch.int64)
    if x.dim() == 0:
        return x.clone()
    acc = x.select(dim, 0)
    for i in range(1, x.shape[dim]):
        acc = acc * x.select(dim, i)
    return acc.unsqueeze(dim) if keepdim else acc


def transpose_0d_permute(x, dim0, dim1):
    """transpose by swapping entries of a permutation list: IndexError for a 0-d tensor."""
    perm = list(range(x.dim()))
    perm[dim0], perm[dim1] = perm[dim1], perm[dim0]
    return x.permute(perm)


# ---------------------------------------------------------------- domain

def pow_signed_abs(x, exponent):
    """pow as sign(x) * |x| ** e: (-8) ** 0.5 gives -2.83, torch gives NaN (non-integer power of a negative)."""
    return torch.sign(x) * torch.pow(x.abs(), exponent) if x.is_floating_point() else torch.pow(x, exponent)


def sqrt_via_rsqrt(x):
    """sqrt as x * rsqrt(x): 0 * inf = NaN at 0 (and inf * 0 at inf)."""
    return x * torch.rsqrt(x)


def div_floor_via_remainder(a, b, *, rounding_mode=None):
    """floor division as (a - remainder(a, b)) / b: NaN for b = 0 where torch gives +-inf."""
    if rounding_mode == "floor" and (a.is_floating_point() or b.is_floating_point()):
        return (a - torch.remainder(a, b)) / b
    return aten.div.Tensor_mode(a, b, rounding_mode=rounding_mode)


# ---------------------------------------------------------------- branch

def mse_loss_none_as_mean(x, target, reduction=1):
    """mse_loss treating reduction=0 (none) like mean."""
    sq = (x - target) ** 2
    return sq.sum() if reduction == 2 else sq.mean()


def huber_loss_smooth_l1(x, target, reduction=1, delta=1.0):
    """huber_loss with smooth_l1's quadratic 0.5 d^2 / delta (right only for delta = 1)."""
    d = (x - target).abs()
    loss = torch.where(d < delta, 0.5 * d * d / delta, delta * (d - 0.5 * delta))
    return loss if reduction == 0 else loss.sum() if reduction == 2 else loss.mean()


def avg_pool2d_ignores_count_include_pad(x, kernel_size, stride=(), padding=0, ceil_mode=False,
                                         count_include_pad=True, divisor_override=None):
    """avg_pool2d that always counts padding in the divisor."""
    return aten.avg_pool2d(x, kernel_size, stride, padding, ceil_mode, True, divisor_override)


def baddbmm_beta_zero_kept(self, batch1, batch2, *, beta=1, alpha=1):
    """baddbmm as beta * self + alpha * bmm: with beta = 0, NaN/inf in self still propagate."""
    return beta * self + alpha * torch.bmm(batch1, batch2)


def var_negative_dof(x, dim=None, *, correction=None, keepdim=False):
    """var dividing by N - correction without the max(., 0): negative variance when correction > N."""
    c = 1 if correction is None else correction
    dims = list(range(x.dim())) if dim is None or len(dim) == 0 else list(dim)
    n = 1
    for d in dims:
        n *= x.shape[d] if x.dim() else 1
    mean = x.mean(dims, keepdim=True) if x.dim() else x
    ss = ((x - mean) ** 2).sum(dims, keepdim=keepdim) if x.dim() else (x - mean) ** 2
    return ss / (n - c)


def celu_alpha_ignored_in_exp(x, alpha=1.0):
    """celu as max(0, x) + min(0, alpha * expm1(x)): forgets x / alpha in the exponent."""
    return torch.clamp_min(x, 0) + torch.clamp_max(alpha * torch.expm1(x), 0)


# ---------------------------------------------------------------- spread

def group_norm_one_pass(x, weight, bias, N, C, HxW, group, eps):
    """native_group_norm with var = E[x^2] - E[x]^2: catastrophic when the mean dwarfs the spread."""
    g = x.reshape(N, group, -1)
    mean = g.mean(-1)
    var = ((g * g).mean(-1) - mean * mean).clamp_min(0)
    rstd = torch.rsqrt(var + eps)
    out = ((g - mean.unsqueeze(-1)) * rstd.unsqueeze(-1)).reshape(x.shape)
    shape = [1, C] + [1] * (x.dim() - 2)
    if weight is not None:
        out = out * weight.reshape(shape)
    if bias is not None:
        out = out + bias.reshape(shape)
    return out, mean, rstd


def softmax_mean_shift(x, dim, half_to_float):
    """softmax shifted by the mean instead of the max: exp overflows when max - mean > 88 (float32)."""
    if half_to_float:
        x = x.float()
    if x.dim() == 0:
        return torch.ones_like(x)
    e = torch.exp(x - x.mean(dim, keepdim=True))
    return e / e.sum(dim, keepdim=True)


# ---------------------------------------------------------------- integer semantics

def div_int_floor_through_float32(a, b, *, rounding_mode=None):
    """integer div with rounding computed in float32: int32/int64 values above 2**24 lose their low bits."""
    if rounding_mode is not None and not a.is_floating_point() and not b.is_floating_point():
        dt = torch.result_type(a, b)
        return torch.div(a.float(), b.float(), rounding_mode=rounding_mode).to(dt)
    return aten.div.Tensor_mode(a, b, rounding_mode=rounding_mode)


def add_saturating(a, b, *, alpha=1):
    """integer add that saturates at the dtype's range instead of wrapping (250 + 10 in uint8 gives 255, not 4)."""
    dt = torch.result_type(a, b)
    if dt.is_floating_point or dt.is_complex or dt == torch.bool:
        return aten.add.Tensor(a, b, alpha=alpha)
    info = torch.iinfo(dt)
    wide = a.to(torch.int64) + alpha * b.to(torch.int64)
    return wide.clamp(info.min, info.max).to(dt)


def right_shift_pow_wrap(a, b):
    """right shift as floor_divide(a, 2 ** b) with 2 ** b in the operands' dtype: wraps for b = bits - 1."""
    dt = torch.result_type(a, b)
    p = torch.pow(torch.tensor(2, dtype=dt), b.to(dt))
    return torch.floor_divide(a.to(dt), p)


# ---------------------------------------------------------------- signed zeros

def reciprocal_zero_guard(x):
    """reciprocal with a division-by-zero guard: 1 / -0 gives +inf (torch: -inf)."""
    return torch.where(x == 0, torch.full_like(x, math.inf), 1 / x)


def atan2_zero_sign_by_compare(y, x):
    """atan2 folding y's sign by comparison: atan2(-0, -1) gives +pi (torch: -pi)."""
    r = torch.atan2(y.abs(), x)
    return torch.where(y < 0, -r, r)


def trunc_by_fmod(x):
    """trunc as x - fmod(x, 1): +0 for -0.5 (torch: -0); only the sign of zero differs."""
    return torch.where(torch.isinf(x), x, x - torch.fmod(x, 1))


# ---------------------------------------------------------------- +-inf inputs

def atan2_quadrant_formula(y, x):
    """atan2 as atan(y / x) plus a quadrant correction: inf / inf = NaN (atan2(inf, inf) = pi/4)."""
    base = torch.atan(y / x)
    pi = torch.full_like(base, math.pi)
    fixed = torch.where(x < 0, torch.where(y >= 0, base + pi, base - pi), base)
    return torch.where(x == 0, torch.sign(y) * math.pi / 2, fixed)


def vector_norm_scaled(x, ord=2, dim=None, keepdim=False, *, dtype=None):
    """2-norm as m * sqrt(sum((x / m)^2)) with m = max |x| (overflow-safe): NaN when an element is inf."""
    if dtype is not None:
        x = x.to(dtype)
    if ord != 2:
        return aten.linalg_vector_norm(x, ord, dim, keepdim)
    a = x.abs()
    dims = list(range(x.dim())) if dim is None or len(dim) == 0 else list(dim)
    if x.dim() == 0:
        return a
    m = a.amax(dims, keepdim=True)
    safe = torch.where(m == 0, torch.ones_like(m), m)
    out = safe * torch.sqrt(((a / safe) ** 2).sum(dims, keepdim=True))
    out = torch.where(m == 0, torch.zeros_like(out), out)
    return out if keepdim else out.squeeze(dims) if dims else out


# ================================================================ controls (correct)
# Low-precision inputs are computed in float32 and rounded once, as torch's kernels (opmath) do:
# the comparison rule for float16/bfloat16 allows no more error than the kernel's own.

_LOW = (torch.float16, torch.bfloat16)


def _up(x):
    return x.float() if x.dtype in _LOW else x


def glu_control(x, dim=-1):
    """a * sigmoid(b) with the halves cut by narrow (float32 opmath)."""
    if x.dim() == 0 or x.shape[dim] % 2:
        raise RuntimeError("glu: Halving dimension must be even")
    half = x.shape[dim] // 2
    y = _up(x)
    return (y.narrow(dim, 0, half) * torch.sigmoid(y.narrow(dim, half, half))).to(x.dtype)


def lerp_control(start, end, weight):
    """torch's two-sided formula: start + w (end - start) for |w| < 0.5, end - (end - start)(1 - w) otherwise."""
    s, e, w = _up(start), _up(end), _up(weight)
    diff = e - s
    out = torch.where(w.abs() < 0.5, s + w * diff, e - diff * (1 - w))
    return out.to(torch.result_type(start, end))


def mse_loss_control(x, target, reduction=1):
    """(x - target)^2 with none / mean / sum."""
    sq = (x - target) * (x - target)
    return sq if reduction == 0 else sq.mean() if reduction == 1 else sq.sum()


def threshold_control(x, threshold, value):
    """where(x <= threshold, value, x): NaN fails the test and is kept."""
    return torch.where(x <= threshold, torch.as_tensor(value, dtype=x.dtype), x)


def celu_control(x, alpha=1.0):
    """where(x > 0, x, alpha * expm1(x / alpha)) (float32 opmath); alpha = 0 refused like the kernel."""
    if alpha == 0:
        raise RuntimeError("ZeroDivisionError in celu: alpha cannot be 0")
    y = _up(x)
    return torch.where(y > 0, y, alpha * torch.expm1(y / alpha)).to(x.dtype)


def any_dims_control(x, dim=None, keepdim=False):
    """(x != 0) reduced per dim; dim=[] reduces nothing; uint8 in, uint8 out."""
    nz = (x != 0)
    if dim is None:
        out = nz.any()
        if keepdim:
            out = out.reshape([1] * x.dim())
    elif len(dim) == 0:
        out = nz.clone()
    else:
        out = nz
        for d in sorted((d % max(x.dim(), 1) for d in dim), reverse=True):
            out = out.any(d, keepdim=True) if x.dim() else out
        if not keepdim and x.dim():
            out = out.squeeze([d % x.dim() for d in dim])
    return out.to(torch.uint8) if x.dtype == torch.uint8 else out


def softplus_control(x, beta=1, threshold=20):
    """where(beta x > threshold, x, log1p(exp(beta x)) / beta) (float32 opmath)."""
    y = _up(x)
    bx = y * beta
    return torch.where(bx > threshold, y, torch.log1p(torch.exp(bx)) / beta).to(x.dtype)
