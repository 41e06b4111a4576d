"""Wrong decompositions of elementwise ops. Each docstring names the bug; the
manifest records an input that exposes it."""
from __future__ import annotations

import math

import torch
from opmath import float_op, promote_integers, upcast

# ---- the core-opset review's proposed formulas, taken literally ----

@float_op
def expm1_review(self):
    """exp(x + 1): the review's formula; it means exp(x) - 1."""
    return torch.exp(self + 1)


@float_op
def atan2_review(self, other):
    """atan(y / x): loses the quadrant whenever x < 0."""
    return torch.atan(self / other)


@float_op
def elu_review(self, alpha=1, scale=1, input_scale=1):
    """min(alpha * exp(x) - 1, 0) + max(x, 0): alpha multiplies exp(x) instead of exp(x) - 1."""
    x = self * input_scale
    negative = torch.clamp_max(alpha * torch.exp(x) - 1, 0)
    return scale * (negative + torch.clamp_min(self, 0))


@promote_integers
def log1p_review(self):
    """log(1 + x) as written into a graph: 1 + x rounds away the low bits of a small x."""
    return torch.log(1 + self)


# ---- wrong formula ----

@promote_integers
def expm1_naive(self):
    """exp(x) - 1 as written into a graph: cancels catastrophically near 0."""
    return torch.exp(self) - 1


@upcast
def gelu_tanh_always(self, *, approximate="none"):
    """The tanh approximation used for the exact (erf) GELU too."""
    inner = math.sqrt(2 / math.pi) * (self + 0.044715 * self**3)
    return 0.5 * self * (1 + torch.tanh(inner))


@upcast
def hardswish_boundary(self):
    """Upper knee at 4 instead of 3: x * (x + 3) / 6 is kept on (3, 4]."""
    middle = self * (self + 3) / 6
    return torch.where(self <= -3, torch.zeros_like(self), torch.where(self > 4, self, middle))


# ---- sign of negative values ----

def remainder_as_fmod(self, other):
    """fmod (truncated) for remainder (floored): the result takes the dividend's sign."""
    return torch.fmod(self, other)


def floor_divide_trunc(self, other):
    """Truncating division for floor_divide: -7 // 2 gives -3, not -4."""
    return torch.div(self, other, rounding_mode="trunc")


# ---- lost precision ----

def div_mode_via_true_division(self, other, *, rounding_mode=None):
    """floor/trunc applied to a / b rounded to the dtype: 1.0 // 0.1 gives 10, not 9;
    integers go through float and lose large values."""
    quotient = torch.div(self.double() if not self.is_floating_point() else self, other)
    if rounding_mode == "floor":
        quotient = torch.floor(quotient)
    elif rounding_mode == "trunc":
        quotient = torch.trunc(quotient)
    else:
        return torch.div(self, other)
    return quotient.to(torch.promote_types(self.dtype, other.dtype))


# ---- overflow for large inputs ----

def abs_via_sqrt(self):
    """sqrt(x * x): x * x overflows for |x| above sqrt(max)."""
    if not (self.is_floating_point() or self.is_complex()):
        return torch.sqrt((self * self).double()).to(self.dtype)
    return upcast(lambda x: torch.sqrt(x * x))(self)


@float_op
def softplus_no_threshold(self, beta=1, threshold=20):
    """log1p(exp(beta * x)) / beta everywhere: ignores the linear regime above threshold."""
    return torch.log1p(torch.exp(beta * self)) / beta


@float_op
def tanh_via_exp(self):
    """(exp(2x) - 1) / (exp(2x) + 1): inf / inf for large x."""
    e = torch.exp(2 * self)
    return (e - 1) / (e + 1)


@float_op
def sigmoid_exp_ratio(self):
    """exp(x) / (1 + exp(x)): inf / inf for large positive x."""
    e = torch.exp(self)
    return e / (1 + e)


@float_op
def logaddexp_naive(self, other):
    """log(exp(a) + exp(b)) without taking the max out first."""
    return torch.log(torch.exp(self) + torch.exp(other))


# ---- NaN and infinity handling ----

def sign_by_division(self):
    """x / |x|: 0 / 0 is NaN where sign(0) is 0."""
    if self.dtype == torch.bool:
        return self.clone()
    return upcast(lambda x: x / x.abs())(self) if self.is_floating_point() else torch.div(self, self.abs(), rounding_mode="trunc")


def relu_by_mask(self):
    """x * (x > 0): -inf * 0 is NaN where relu gives 0."""
    return self * (self > 0)


def maximum_by_where(self, other):
    """where(a > b, a, b): a NaN in a loses to b, where maximum propagates it."""
    return torch.where(self > other, self, other)


def where_by_arithmetic(condition, self, other):
    """cond * a + (1 - cond) * b: inf or NaN in the unselected branch poisons the result."""
    if self.dtype == torch.bool:
        return (condition & self) | (~condition & other)
    return condition * self + (~condition) * other


@float_op
def xlogy_naive(self, other):
    """x * log(y): 0 * log(0) is NaN where xlogy gives 0."""
    return self * torch.log(other)


@float_op
def xlogy_drops_nan(self, other):
    """where(x == 0, 0, x * log(y)): xlogy(0, NaN) must be NaN."""
    return torch.where(self == 0, torch.zeros_like(self), self * torch.log(other))


# ---- tie-breaking ----

def round_half_up(self):
    """floor(x + 0.5): rounds halves up, where round() rounds half to even."""
    if not self.is_floating_point():
        return self.clone()
    return upcast(lambda x: torch.floor(x + 0.5))(self)


# ---- min > max ----

def clamp_tensor_max_first(self, min=None, max=None):
    """Applies max before min: when min > max the result is min, where clamp gives max."""
    result = self
    if max is not None:
        result = torch.minimum(result, max)
    if min is not None:
        result = torch.maximum(result, min)
    return result.expand(torch.broadcast_shapes(*(t.shape for t in (self, min, max) if t is not None))).clone()


# ---- broadcasting ----

def maximum_by_stack(self, other):
    """stack([a, b]).amax(0): stack needs equal shapes, maximum broadcasts."""
    return torch.stack([self, other]).amax(0)


def where_expand_as_self(condition, self, other):
    """Broadcasts other to self's shape only: fails when self is the smaller one."""
    return torch.where(condition, self, other.expand_as(self))


def logaddexp_by_stack(self, other):
    """logsumexp(stack([a, b]), 0): correct values, but stack does not broadcast."""
    return torch.logsumexp(torch.stack([self, other]), 0)


# ---- dtype promotion ----

def div_keeps_integers(self, other):
    """Integer true division done as truncating division: 1 / 2 gives 0 (int64), not 0.5."""
    if self.is_floating_point() or self.is_complex():
        return torch.div(self, other)
    return torch.div(self, other, rounding_mode="trunc")


def pow_keeps_dtype(self, exponent):
    """Casts the result back to self's dtype: int ** 0.5 must be float."""
    return torch.pow(self, exponent).to(self.dtype)


# ---- accuracy: within every (rtol, atol), outside the op's accuracy contract ----

def log1p_in_float32(self):
    """A float64 log1p computed in float32 and widened: about 1e-8 relative off, 10**8 ULP of float64."""
    return torch.log1p(self.float()).to(self.dtype) if self.dtype == torch.float64 else torch.log1p(self)


def xlogy_in_float32(self, other):
    """A float64 xlogy computed in float32 and widened."""
    wide = torch.float64 in (self.dtype, other.dtype)
    result = torch.xlogy(self.float(), other.float()) if wide else torch.xlogy(self, other)
    return result.to(torch.promote_types(self.dtype, other.dtype)) if wide else result


def _ulps_up(result: torch.Tensor, k: int) -> torch.Tensor:
    for _ in range(k):
        result = torch.nextafter(result, torch.full_like(result, math.inf))
    return result


def softplus_off_on_one_binade(self, beta=1, threshold=20):
    """A softplus whose float32 approximation is 4 ULP off for x in [1, 2) only (a polynomial fitted badly
    on one interval): every other binade is right."""
    result = torch.nn.functional.softplus(self, beta, threshold)
    if self.dtype != torch.float32:
        return result
    return torch.where((self >= 1) & (self < 2), _ulps_up(result, 4), result)


def sigmoid_off_on_one_binade(self):
    """A float64 sigmoid 8 ULP off for x in [-4, -2) only."""
    result = torch.sigmoid(self)
    if self.dtype != torch.float64:
        return result
    return torch.where((self >= -4) & (self < -2), _ulps_up(result, 8), result)
