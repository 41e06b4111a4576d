"""Wrong decompositions of reductions and normalizations."""
from __future__ import annotations

import functools

import torch
from opmath import LOW_PRECISION, upcast


def _dims(x: torch.Tensor, dim) -> list[int]:
    """The reduced dims, non-negative; None or [] means all."""
    if dim is None or (isinstance(dim, (list, tuple)) and len(dim) == 0):
        return list(range(x.dim()))
    dims = [dim] if isinstance(dim, int) else list(dim)
    return [d % max(x.dim(), 1) for d in dims]


def _count(x: torch.Tensor, dims: list[int]) -> int:
    n = 1
    for d in dims:
        n *= x.shape[d] if x.dim() else 1
    return n


# ---- overflow ----

def softmax_no_max(self, dim, dtype=None):
    """exp(x) / sum(exp(x)) without subtracting the max: inf / inf for large x."""
    x = self.to(dtype) if dtype is not None else self
    compute = torch.float32 if x.dtype in LOW_PRECISION else x.dtype
    e = torch.exp(x.to(compute))
    return (e / e.sum(dim, keepdim=True)).to(x.dtype)


def logsumexp_no_max(self, dim, keepdim=False):
    """log(sum(exp(x))) without the max shift: exp overflows for large x."""
    x = self if self.is_floating_point() else self.to(torch.get_default_dtype())
    compute = torch.float32 if x.dtype in LOW_PRECISION else x.dtype
    return torch.log(torch.exp(x.to(compute)).sum(dim, keepdim=keepdim)).to(x.dtype)


def mean_in_half(self, dim, keepdim=False, *, dtype=None):
    """Sums fp16/bf16 in the input dtype: the sum overflows (or rounds) before the division."""
    x = self.to(dtype) if dtype is not None else self
    dims = _dims(x, dim)
    return x.sum(dims, keepdim=keepdim) / _count(x, dims)


def argmin_by_negation(self, dim=None, keepdim=False):
    """argmax(-x): -x wraps for unsigned and minimum integers (uint8: -1 is 255)."""
    return torch.argmax(-self, dim, keepdim)


# ---- lost precision ----

def log_softmax_via_log(self, dim, dtype=None):
    """log(softmax(x)): softmax underflows to 0 and log gives -inf."""
    x = self.to(dtype) if dtype is not None else self
    compute = torch.float32 if x.dtype in LOW_PRECISION else x.dtype
    return torch.log(torch.softmax(x.to(compute), dim)).to(x.dtype)


@upcast
def var_one_pass(self, dim=None, *, correction=None, keepdim=False):
    """E[x^2] - E[x]^2: cancels catastrophically when the mean is large against the spread."""
    dims = _dims(self, dim)
    n = _count(self, dims)
    c = 1 if correction is None else correction
    mean = self.mean(dims, keepdim=keepdim)
    mean_sq = (self * self.conj()).real.mean(dims, keepdim=keepdim) if self.is_complex() else (self * self).mean(dims, keepdim=keepdim)
    return (mean_sq - (mean * mean.conj()).real if self.is_complex() else mean_sq - mean * mean) * n / max(n - c, 0)


def sum_in_half(self, dim, keepdim=False, *, dtype=None):
    """Accumulates fp16/bf16 element by element in the input dtype."""
    x = self.to(dtype) if dtype is not None else self
    if x.dtype not in LOW_PRECISION:
        return torch.sum(x, dim, keepdim=keepdim)
    dims = _dims(x, dim)
    kept = [d for d in range(x.dim()) if d not in dims]
    flat = x.permute(dims + kept).reshape(-1, *[x.shape[d] for d in kept])
    total = functools.reduce(torch.add, flat.unbind(0), torch.zeros(flat.shape[1:], dtype=x.dtype))
    if keepdim:
        for d in sorted(dims):
            total = total.unsqueeze(d)
    return total


# ---- wrong formula ----

@upcast
def var_ignores_correction(self, dim=None, *, correction=None, keepdim=False):
    """Always Bessel's correction (N - 1), whatever correction says."""
    dims = _dims(self, dim)
    n = _count(self, dims)
    centered = self - self.mean(dims, keepdim=True)
    squares = (centered * centered.conj()).real if self.is_complex() else centered * centered
    return squares.sum(dims, keepdim=keepdim) / max(n - 1, 0)


def prod_by_exp_log(self, *, dtype=None):
    """exp(sum(log(x))): log of a negative value is NaN, so signs are lost."""
    x = self.to(dtype) if dtype is not None else self
    if x.dtype == torch.bool:
        return x.all().to(torch.int64)
    out = torch.exp(torch.log(x.double()).sum())
    target = x.dtype if (x.is_floating_point() or x.is_complex()) else torch.int64
    return out.to(target)


# ---- tie-breaking ----

def argmax_last(self, dim=None, keepdim=False):
    """Returns the last of several maxima: argmax over the reversed input."""
    if dim is None:
        flat = self.reshape(-1)
        index = flat.numel() - 1 - torch.argmax(flat.flip(0))
        return index.reshape([1] * self.dim()) if keepdim else index
    size = self.shape[dim] if self.dim() else 1
    return size - 1 - torch.argmax(self.flip(dim) if self.dim() else self, dim, keepdim)


# ---- NaN ----

def max_ignores_nan(self):
    """A running fmax: NaN is skipped, where max propagates it."""
    return functools.reduce(torch.fmax, self.reshape(-1).unbind(0))


# ---- dim and keepdim ----

def max_dim_ignores_keepdim(self, dim, keepdim=False):
    """Always drops the reduced dim."""
    values = torch.amax(self, dim)
    return values, torch.argmax(self, dim)


def mean_divides_by_first_dim(self, dim, keepdim=False, *, dtype=None):
    """Divides the sum by the size of dim 0 instead of the number of reduced elements."""
    x = self.to(dtype) if dtype is not None else self
    compute = torch.float32 if x.dtype in LOW_PRECISION else x.dtype
    total = x.to(compute).sum(_dims(x, dim), keepdim=keepdim)
    return (total / (x.shape[0] if x.dim() else 1)).to(x.dtype)


def amax_empty_dim_is_identity(self, dim=(), keepdim=False):
    """Treats dim=[] as "reduce nothing"; amax reads it as "reduce everything"."""
    if len(dim) == 0:
        return self.clone()
    return torch.amax(self, dim, keepdim)


# ---- empty and 0-dim ----

def mean_empty_is_zero(self, dim, keepdim=False, *, dtype=None):
    """Guards the division with max(n, 1): the mean of nothing becomes 0 instead of NaN."""
    x = self.to(dtype) if dtype is not None else self
    compute = torch.float32 if x.dtype in LOW_PRECISION else x.dtype
    dims = _dims(x, dim)
    return (x.to(compute).sum(dims, keepdim=keepdim) / max(_count(x, dims), 1)).to(x.dtype)


def softmax_amax_on_empty(self, dim, dtype=None):
    """Max-shifted softmax whose amax raises on an empty tensor (softmax returns it empty)."""
    x = self.to(dtype) if dtype is not None else self
    compute = torch.float32 if x.dtype in LOW_PRECISION else x.dtype
    y = x.to(compute)
    e = torch.exp(y - torch.amax(y, dim, keepdim=True))
    return (e / e.sum(dim, keepdim=True)).to(x.dtype)


# ---- dtype promotion ----

def sum_keeps_dtype(self, *, dtype=None):
    """Sums integers and bools in their own dtype; sum promotes them to int64."""
    return torch.sum(self, dtype=dtype if dtype is not None else self.dtype)


def cumsum_keeps_dtype(self, dim, *, dtype=None):
    """Same for cumsum."""
    return torch.cumsum(self, dim, dtype=dtype if dtype is not None else self.dtype)


def mean_ignores_dtype(self, dim, keepdim=False, *, dtype=None):
    """Ignores the dtype= argument: the result keeps the input's dtype."""
    return torch.mean(self, dim, keepdim)
