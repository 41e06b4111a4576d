"""Correct decompositions written differently from torch's: the checkers must pass them."""
from __future__ import annotations

import math

import torch
from opmath import LOW_PRECISION, float_op, upcast


@float_op
def logaddexp_log1p(self, other):
    """max(a, b) + log1p(exp(-|a - b|)); equal infinities return themselves."""
    larger = torch.maximum(self, other)
    combined = larger + torch.log1p(torch.exp(-(self - other).abs()))
    return torch.where(torch.isinf(self) & (self == other), self, combined)


@float_op
def silu_ratio(self):
    """x / (1 + exp(-x))."""
    return self / (1 + torch.exp(-self))


@float_op
def sigmoid_reciprocal(self):
    """1 / (1 + exp(-x)): exp overflows to inf for very negative x, and 1 / inf is the right 0."""
    return 1 / (1 + torch.exp(-self))


@upcast
def hardsigmoid_clamp(self):
    """clamp(x / 6 + 1 / 2, 0, 1)."""
    return torch.clamp(self / 6 + 0.5, 0, 1)


def relu6_clamp(self):
    """clamp(x, 0, 6)."""
    return torch.clamp(self, 0, 6)


@upcast
def hardswish_clamp(self):
    """x * clamp(x + 3, 0, 6) / 6."""
    return self * torch.clamp(self + 3, 0, 6) / 6


@upcast
def gelu_both(self, *, approximate="none"):
    """0.5 x (1 + erf(x / sqrt 2)), or the tanh form when asked."""
    if approximate == "tanh":
        inner = math.sqrt(2 / math.pi) * (self + 0.044715 * self * self * self)
        return 0.5 * self * (1 + torch.tanh(inner))
    return 0.5 * self * (1 + torch.erf(self * (1 / math.sqrt(2))))


@upcast
def elu_where(self, alpha=1, scale=1, input_scale=1):
    """where(x < 0, scale alpha expm1(input_scale x), scale x): zero takes the linear branch,
    as the kernel does (it matters only for non-finite alpha or input_scale)."""
    return torch.where(self < 0, torch.expm1(self * input_scale) * alpha * scale, self * scale)


@upcast
def leaky_relu_where(self, negative_slope=0.01):
    """where(x > 0, x, slope x); integer and bool inputs refused, as the op's row says."""
    if not self.is_floating_point():
        raise NotImplementedError(f"leaky_relu is not implemented for {self.dtype}")
    return torch.where(self > 0, self, self * negative_slope)


def relu_maximum(self):
    """maximum(x, 0): NaN propagates, -inf becomes 0."""
    return torch.maximum(self, torch.zeros((), dtype=self.dtype))


def clamp_min_maximum(self, min):
    """maximum(x, min) with min as a 0-dim tensor of x's dtype."""
    return torch.maximum(self, torch.tensor(min, dtype=self.dtype))


def rsub_tensor(self, other, *, alpha=1):
    """other - alpha * self, through sub's own alpha."""
    return torch.sub(other, self, alpha=alpha)


@upcast
def frac_trunc(self):
    """x - trunc(x)."""
    return self - torch.trunc(self)


@float_op
def log10_ratio(self):
    """log(x) / log(10), computed in float32 or wider."""
    return torch.log(self) / math.log(10)


@float_op
def log2_ratio(self):
    """log(x) / log(2), computed in float32 or wider."""
    return torch.log(self) / math.log(2)


def softmax_shifted(self, dim, dtype=None):
    """exp(x - max) / sum(exp(x - max)); an empty input is returned as is."""
    x = self.to(dtype) if dtype is not None else self
    compute = torch.float32 if x.dtype in LOW_PRECISION else x.dtype
    y = x.to(compute)
    if y.numel() == 0:
        return y.to(x.dtype).clone()
    e = torch.exp(y - torch.amax(y, dim, keepdim=True))
    return (e / e.sum(dim, keepdim=True)).to(x.dtype)


def logsumexp_shifted(self, dim, keepdim=False):
    """max + log(sum(exp(x - max))), the max zeroed where it is infinite."""
    x = self if self.is_floating_point() else self.to(torch.get_default_dtype())
    compute = torch.float32 if x.dtype in LOW_PRECISION else x.dtype
    y = x.to(compute)
    if y.numel() == 0:
        return torch.log(torch.exp(y).sum(dim, keepdim=keepdim)).to(x.dtype)
    shift = torch.amax(y, dim, keepdim=True)
    shift = torch.where(torch.isinf(shift), torch.zeros_like(shift), shift)
    total = torch.log(torch.exp(y - shift).sum(dim, keepdim=True)) + shift
    return (total if keepdim else total.squeeze(dim)).to(x.dtype)


def var_two_pass(self, dim=None, *, correction=None, keepdim=False):
    """sum(|x - mean|^2) / max(N - correction, 0), in float32 for fp16/bf16."""
    compute = torch.float32 if self.dtype in LOW_PRECISION else self.dtype
    x = self.to(compute)
    dim = [dim] if isinstance(dim, int) else dim  # int[1] accepts a bare int
    dims = list(range(x.dim())) if dim is None or len(dim) == 0 else [d % max(x.dim(), 1) for d in dim]
    n = 1
    for d in dims:
        n *= x.shape[d] if x.dim() else 1
    c = 1 if correction is None else correction
    centered = x - x.mean(dims, keepdim=True)
    squares = centered.real**2 + centered.imag**2 if x.is_complex() else centered * centered
    out = squares.sum(dims, keepdim=keepdim) / max(n - c, 0)
    return out.to(self.dtype.to_real() if self.is_complex() else self.dtype)


def stack_via_cat(tensors, dim=0):
    """cat of unsqueezed inputs; unsqueeze wraps negative dims with rank + 1, as stack does."""
    return torch.cat([t.unsqueeze(dim) for t in tensors], dim)


def max_dim_stable_sort(self, dim, keepdim=False):
    """The first element of a stable descending sort: first index among ties, NaN first."""
    if self.dim() == 0:  # a 0-dim input is its own maximum, at index 0
        return self.clone(), torch.zeros((), dtype=torch.int64)
    values, indices = torch.sort(self, dim=dim, descending=True, stable=True)
    values, indices = values.narrow(dim, 0, 1), indices.narrow(dim, 0, 1)
    if not keepdim:
        values, indices = values.squeeze(dim), indices.squeeze(dim)
    return values, indices


def where_broadcast(condition, self, other):
    """torch.where over explicitly broadcast operands."""
    shape = torch.broadcast_shapes(condition.shape, self.shape, other.shape)
    return torch.where(condition.expand(shape), self.expand(shape), other.expand(shape)).clone()
