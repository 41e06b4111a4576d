"""The mathematical function behind each op whose accuracy is measured: data only, no logic.

Each entry has the function twice: ``exact`` in mpmath at any precision (the truth, used where a rounding is
close), and ``wide`` on numpy arrays of ``wide_dtype`` with a stated error bound, used for every input whose
rounding to the result dtype that bound cannot change (:mod:`opspec.testing.correct_rounding`). Both take the
op's tensor arguments in ``args`` order, then its fixed non-tensor arguments (the contract's ``arguments``) by
name; a mask argument (``masks``) arrives as booleans.

``wide`` is x87 extended precision (``np.longdouble``, 64 significand bits) through the C library's ``expl``,
``sinl``, ...: glibc's test suite fails any of them more than 9 ULPs off (its manual, "Errors in Math
Functions"), and published measurements of its long double functions (Gladman, Innocente, Mather, Zimmermann,
"Accuracy of Mathematical Functions in Single, Double, Double Extended, and Quadruple Precision") stay within a
few ULPs for these; ``wide_error`` allows 16, and the tests check the result against mpmath. A composite
expression adds one rounding per operation; where its terms can cancel, ``wide_bound`` states the error in
absolute terms from the terms' own sizes, since a bound relative to the result would not hold. ``erf`` has no
long double version in numpy: scipy's float64 one, good for float32 and narrower results; float64 results of
erf go to mpmath. Where ``np.longdouble`` is only float64 (some platforms), every float64 result goes to mpmath.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import mpmath
import numpy as np

LIBM_ERROR = 16.0  # ULPs of np.longdouble: above the 9 ULPs glibc's own tests allow
LD_EPS = float(np.finfo(np.longdouble).eps)
F64_EPS = float(np.finfo(np.float64).eps)


@dataclass(frozen=True)
class Function:
    op: str
    exact: Callable  # mpmath numbers -> mpmath number (a complex one off the real domain)
    wide: Callable  # numpy arrays of wide_dtype -> array
    wide_error: float = LIBM_ERROR  # bound on wide's error, in ULPs of wide_dtype
    wide_dtype: type = np.longdouble
    args: tuple[str, ...] = ("self",)  # the tensor arguments, in the order both functions take them
    masks: tuple[str, ...] = ()  # tensor arguments that are bool masks (drawn alternating, not measured)
    wide_bound: Callable | None = None  # (*args, result) -> absolute bound on wide's error, where terms cancel


def _erf_float64(x: np.ndarray) -> np.ndarray:
    from scipy import special

    return special.erf(x.astype(np.float64))


def _erf_wide(x: np.ndarray) -> np.ndarray:
    return _erf_float64(x).astype(np.longdouble)


def _trunc(x):
    return mpmath.floor(x) if x >= 0 else mpmath.ceil(x)


def _remainder(x, y):
    """Python's modulo: the sign of the divisor."""
    r = mpmath.fmod(x, y)
    return r + y if r and (r < 0) != (y < 0) else r


def _remainder_wide(x, y):
    r = np.fmod(x, y)
    return np.where((r != 0) & ((r < 0) != (y < 0)), r + y, r)


def _floor_divide(x, y):
    """Python's floor division; NaN (the numpy result stands) where an operand is infinite, which Python's
    divmod defines by its own rules (inf // y is NaN, -3 // inf is -1)."""
    return mpmath.floor(x / y) if mpmath.isfinite(x) and mpmath.isfinite(y) else mpmath.nan


def _sum_bound(*terms):
    """The error of adding these terms in long double, each already within 2 ULPs of its own size."""
    return 4 * LD_EPS * sum(np.abs(t) for t in terms) + np.finfo(np.longdouble).smallest_subnormal


def _gelu(x):
    return x / 2 * (1 + mpmath.erf(x / mpmath.sqrt(2)))


def _gelu_wide(x):
    return x / 2 * (1 + _erf_wide(x / np.sqrt(np.longdouble(2))))


def _silu(x):
    return x / (1 + mpmath.exp(-x))


SOFTPLUS_THRESHOLD = 20  # softplus's default: above it the op is defined as x itself


def _softplus(x):
    return x if x > SOFTPLUS_THRESHOLD else mpmath.log1p(mpmath.exp(x))


def _mish(x):
    return x * mpmath.tanh(mpmath.log1p(mpmath.exp(x)))


def _gelu_backward(g, x):
    return g * (mpmath.erfc(-x / mpmath.sqrt(2)) / 2 + x * mpmath.exp(-x * x / 2) / mpmath.sqrt(2 * mpmath.pi))


SELU_ALPHA, SELU_SCALE = 1.6732632423543772848170429916717, 1.0507009873554804934193349852946


def _scipy(name: str) -> Callable:
    """A scipy.special function on float64, for the special functions numpy has no long double version of."""
    def wide(*args):
        from scipy import special

        return getattr(special, name)(*(a.astype(np.float64) for a in args))
    return wide


def _pole(x) -> bool:
    return x <= 0 and x == mpmath.floor(x)


def _lgamma(x):
    """log|gamma(x)|: the real part of mpmath's loggamma (whose imaginary part carries the sign); +inf at poles."""
    return mpmath.inf if _pole(x) else mpmath.re(mpmath.loggamma(x))


def _digamma(x):
    """torch's convention at the poles: -inf at zero (either sign), NaN at the negative integers."""
    if _pole(x):
        return -mpmath.inf if x == 0 else mpmath.nan
    return mpmath.digamma(x)


ERFC_ZERO = 40  # erfc(x) < 1e-697 beyond it: below half the smallest float64 subnormal, and mpmath's series check overflows


def _erfc(x):
    return mpmath.mpf(0) if x > ERFC_ZERO else mpmath.erfc(x)


def _erfcx(x):
    """exp(x^2) erfc(x); for large x the asymptotic 1/(x sqrt(pi)) (1 - 1/(2x^2)), off by 3/(4x^4) relatively."""
    if x > 1e8:
        return (1 - 1 / (2 * x * x)) / (x * mpmath.sqrt(mpmath.pi))
    return mpmath.exp(x * x) * mpmath.erfc(x)


def _x_log(log):
    """xlogy's convention, x * log(y) with 0 where x is 0 and y is not NaN, for the scalar overloads."""
    return lambda x, y: 0 if x == 0 and not mpmath.isnan(y) else x * log(y)


def _x_log_wide(log):
    return lambda x, y: np.where((x == 0) & ~np.isnan(y), 0, x * log(y))


# scipy (Cephes) double precision special functions: a few ULPs of float64 where the result is not tiny; 64
# ULPs leave every rounding they could change to mpmath.
SCIPY_ERROR = 64.0


FUNCTIONS: dict[str, Function] = {f.op: f for f in (
    Function("aten::abs", abs, np.abs, 0.0),
    Function("aten::acos", mpmath.acos, np.arccos),
    Function("aten::acosh", mpmath.acosh, np.arccosh),
    Function("aten::add.Scalar", lambda x, other: x + other, lambda x, other: x + other, 1.0),
    Function("aten::add.Tensor", lambda x, y: x + y, lambda x, y: x + y, 1.0, args=("self", "other")),
    Function("aten::addcdiv", lambda x, a, b: x + a / b, lambda x, a, b: x + a / b, args=("self", "tensor1", "tensor2"),
             wide_bound=lambda x, a, b, y: _sum_bound(x, a / b)),
    Function("aten::addcmul", lambda x, a, b: x + a * b, lambda x, a, b: x + a * b, args=("self", "tensor1", "tensor2"),
             wide_bound=lambda x, a, b, y: _sum_bound(x, a * b)),
    Function("aten::asin", mpmath.asin, np.arcsin),
    Function("aten::asinh", mpmath.asinh, np.arcsinh),
    Function("aten::atan", mpmath.atan, np.arctan),
    Function("aten::atan2", mpmath.atan2, np.arctan2, args=("self", "other")),
    Function("aten::atan2.out", mpmath.atan2, np.arctan2, args=("self", "other")),
    Function("aten::atanh", mpmath.atanh, np.arctanh),
    Function("aten::ceil", mpmath.ceil, np.ceil, 0.0),
    Function("aten::celu", lambda x: x if x > 0 else mpmath.expm1(x), lambda x: np.where(x > 0, x, np.expm1(x))),
    Function("aten::clamp", lambda x, min, max: mpmath.mpf(min) if x < min else mpmath.mpf(max) if x > max else x,
             lambda x, min, max: np.clip(x, min, max), 0.0),
    Function("aten::clamp.Tensor", lambda x, lo, hi: min(max(x, lo), hi),
             lambda x, lo, hi: np.minimum(np.maximum(x, lo), hi), 0.0, args=("self", "min", "max")),
    Function("aten::clamp_max", lambda x, max: min(x, mpmath.mpf(max)), lambda x, max: np.minimum(x, max), 0.0),
    Function("aten::clamp_min", lambda x, min: max(x, mpmath.mpf(min)), lambda x, min: np.maximum(x, min), 0.0),
    Function("aten::clone", lambda x: x, lambda x: x, 0.0),
    Function("aten::cos", mpmath.cos, np.cos),
    Function("aten::cosh", mpmath.cosh, np.cosh),
    Function("aten::div.Scalar", lambda x, other: x / other, lambda x, other: x / other, 1.0),
    Function("aten::div.Scalar_mode", lambda x, other, rounding_mode: _floor_divide(x, other),
             lambda x, other, rounding_mode: np.floor_divide(x, other), 1.0),
    Function("aten::div.Tensor", lambda x, y: x / y, lambda x, y: x / y, 1.0, args=("self", "other")),
    Function("aten::div.Tensor_mode", lambda x, y, rounding_mode: _floor_divide(x, y),
             lambda x, y, rounding_mode: np.floor_divide(x, y), 1.0, args=("self", "other")),
    Function("aten::digamma", _digamma, _scipy("psi"), SCIPY_ERROR, np.float64),
    Function("aten::elu", lambda x: x if x > 0 else mpmath.expm1(x), lambda x: np.where(x > 0, x, np.expm1(x))),
    Function("aten::erf", mpmath.erf, _erf_float64, 8.0, np.float64),  # scipy (Cephes): about 1 ULP
    Function("aten::erfc", _erfc, _scipy("erfc"), SCIPY_ERROR, np.float64),
    Function("aten::erfinv", mpmath.erfinv, _scipy("erfinv"), SCIPY_ERROR, np.float64),
    Function("aten::exp", mpmath.exp, np.exp),
    Function("aten::exp2", lambda x: mpmath.power(2, x), np.exp2),
    Function("aten::expm1", mpmath.expm1, np.expm1),
    Function("aten::floor", mpmath.floor, np.floor, 0.0),
    Function("aten::fmod.Scalar", lambda x, other: mpmath.fmod(x, other), lambda x, other: np.fmod(x, other), 0.0),
    Function("aten::fmod.Tensor", mpmath.fmod, np.fmod, 0.0, args=("self", "other")),
    Function("aten::frac", lambda x: x - _trunc(x), lambda x: x - np.trunc(x), 0.0),
    Function("aten::gelu", _gelu, _gelu_wide, 8.0, np.float64, wide_bound=lambda x, y: 16 * F64_EPS * np.abs(x)),
    Function("aten::gelu_backward", _gelu_backward, lambda g, x: g * _gelu_backward_wide(x), 8.0, np.float64,
             args=("grad_output", "self"), wide_bound=lambda g, x, y: 16 * F64_EPS * np.abs(g) * (1 + np.abs(x))),
    Function("aten::hardsigmoid", lambda x: min(max(x / 6 + mpmath.mpf(1) / 2, 0), 1),
             lambda x: np.clip(x / 6 + np.longdouble(0.5), 0, 1), 2.0),
    Function("aten::hardtanh", lambda x: min(max(x, -1), 1), lambda x: np.clip(x, -1, 1), 0.0),
    Function("aten::i0", lambda x: mpmath.besseli(0, x), _scipy("i0"), SCIPY_ERROR, np.float64),
    Function("aten::leaky_relu", lambda x: x if x > 0 else x * mpmath.mpf(0.01),
             lambda x: np.where(x > 0, x, x * np.longdouble(0.01)), 1.0),
    Function("aten::lerp.Scalar", lambda x, end, weight: x + weight * (end - x),
             lambda x, end, weight: x + weight * (end - x), args=("self", "end"),
             wide_bound=lambda x, end, y, weight=0.5: _sum_bound(x, end, weight * (end - x))),
    Function("aten::lerp.Tensor", lambda x, end, w: x + w * (end - x), lambda x, end, w: x + w * (end - x),
             args=("self", "end", "weight"), wide_bound=lambda x, end, w, y: _sum_bound(x, w * end, w * x)),
    Function("aten::lgamma", _lgamma, _scipy("gammaln"), SCIPY_ERROR, np.float64),
    Function("aten::log", mpmath.log, np.log),
    Function("aten::log10", mpmath.log10, np.log10),
    Function("aten::log1p", mpmath.log1p, np.log1p),
    Function("aten::log2", lambda x: mpmath.log(x, 2), np.log2),
    Function("aten::logaddexp", lambda x, y: mpmath.log(mpmath.exp(x) + mpmath.exp(y)), np.logaddexp,
             args=("self", "other")),
    Function("aten::masked_fill.Scalar", lambda x, mask, value: mpmath.mpf(value) if mask else x,
             lambda x, mask, value: np.where(mask, np.longdouble(value), x), 0.0, args=("self", "mask"),
             masks=("mask",)),
    Function("aten::maximum", max, np.maximum, 0.0, args=("self", "other")),
    Function("aten::minimum", min, np.minimum, 0.0, args=("self", "other")),
    Function("aten::mish", _mish, lambda x: x * np.tanh(np.log1p(np.exp(x)))),
    Function("aten::mul.Scalar", lambda x, other: x * other, lambda x, other: x * other, 1.0),
    Function("aten::mul.Tensor", lambda x, y: x * y, lambda x, y: x * y, 1.0, args=("self", "other")),
    Function("aten::nan_to_num", lambda x: x, lambda x: np.where(np.isnan(x), 0, x), 0.0),  # NaN -> 0
    Function("aten::native_dropout_backward", lambda g, mask, scale: g * mask * scale,  # NaN * 0 stays NaN
             lambda g, mask, scale: g * mask * np.longdouble(scale), 1.0, args=("grad_output", "mask"),
             masks=("mask",)),
    Function("aten::neg", lambda x: -x, np.negative, 0.0),
    Function("aten::pow.Scalar", lambda e, self: mpmath.power(self, e), lambda e, self: np.power(np.longdouble(self), e),
             args=("exponent",)),
    Function("aten::pow.Tensor_Scalar", lambda x, exponent: mpmath.power(x, exponent),
             lambda x, exponent: np.power(x, np.longdouble(exponent))),
    Function("aten::pow.Tensor_Tensor", mpmath.power, np.power, args=("self", "exponent")),
    Function("aten::reciprocal", lambda x: 1 / x, lambda x: 1 / x, 1.0),
    Function("aten::relu", lambda x: max(x, 0), lambda x: np.maximum(x, 0), 0.0),
    Function("aten::relu6", lambda x: min(max(x, 0), 6), lambda x: np.clip(x, 0, 6), 0.0),
    Function("aten::remainder.Scalar", lambda x, other: _remainder(x, mpmath.mpf(other)),
             lambda x, other: _remainder_wide(x, np.longdouble(other)), 1.0),
    Function("aten::remainder.Tensor", _remainder, _remainder_wide, 1.0, args=("self", "other")),
    Function("aten::round", mpmath.nint, np.rint, 0.0),
    Function("aten::rsqrt", lambda x: 1 / mpmath.sqrt(x), lambda x: 1 / np.sqrt(x), 2.0),
    Function("aten::rsub.Scalar", lambda x, other: other - x, lambda x, other: other - x, 1.0),
    Function("aten::selu", lambda x: SELU_SCALE * (x if x > 0 else SELU_ALPHA * mpmath.expm1(x)),
             lambda x: np.longdouble(SELU_SCALE) * np.where(x > 0, x, np.longdouble(SELU_ALPHA) * np.expm1(x)),
             LIBM_ERROR + 2),
    Function("aten::sigmoid", lambda x: 1 / (1 + mpmath.exp(-x)), lambda x: 1 / (1 + np.exp(-x)), LIBM_ERROR + 2),
    Function("aten::sigmoid_backward", lambda g, y: g * (1 - y) * y, lambda g, y: g * (1 - y) * y, 3.0,
             args=("grad_output", "output")),
    Function("aten::sign", mpmath.sign, lambda x: np.where(np.isnan(x), 0, np.sign(x)), 0.0),  # torch: NaN -> 0
    Function("aten::silu", _silu, lambda x: x / (1 + np.exp(-x)), LIBM_ERROR + 2),
    Function("aten::sin", mpmath.sin, np.sin),
    Function("aten::sinh", mpmath.sinh, np.sinh),
    Function("aten::softplus", _softplus, lambda x: np.where(x > SOFTPLUS_THRESHOLD, x, np.logaddexp(np.longdouble(0), x))),
    Function("aten::sqrt", mpmath.sqrt, np.sqrt, 1.0),
    Function("aten::special_erfcx", _erfcx, _scipy("erfcx"), SCIPY_ERROR, np.float64),
    Function("aten::special_xlog1py.other_scalar", lambda x, other: _x_log(mpmath.log1p)(x, mpmath.mpf(other)),
             lambda x, other: _x_log_wide(np.log1p)(x, np.longdouble(other)), LIBM_ERROR + 1, args=("self",)),
    Function("aten::special_xlog1py.self_scalar", lambda y, self: _x_log(mpmath.log1p)(mpmath.mpf(self), y),
             lambda y, self: _x_log_wide(np.log1p)(np.longdouble(self), y), LIBM_ERROR + 1, args=("other",)),
    Function("aten::square", lambda x: x * x, np.square, 1.0),
    Function("aten::sub.Scalar", lambda x, other: x - other, lambda x, other: x - other, 1.0),
    Function("aten::sub.Tensor", lambda x, y: x - y, lambda x, y: x - y, 1.0, args=("self", "other")),
    Function("aten::tan", mpmath.tan, np.tan),
    Function("aten::tanh", mpmath.tanh, np.tanh),
    Function("aten::tanh_backward", lambda g, y: g * (1 - y * y), lambda g, y: g * ((1 - y) * (1 + y)), 4.0,
             args=("grad_output", "output")),
    Function("aten::threshold", lambda x, threshold, value: mpmath.mpf(value) if x <= threshold else x,  # NaN stays
             lambda x, threshold, value: np.where(x <= threshold, np.longdouble(value), x), 0.0),
    Function("aten::trunc", _trunc, np.trunc, 0.0),
    Function("aten::where.self", lambda c, x, y: x if c else y, np.where, 0.0, args=("condition", "self", "other"),
             masks=("condition",)),
    Function("aten::xlogy.Tensor", lambda x, y: 0 if x == 0 and not mpmath.isnan(y) else x * mpmath.log(y),
             lambda x, y: np.where((x == 0) & ~np.isnan(y), 0, x * np.log(y)), LIBM_ERROR + 1, args=("self", "other")),
    Function("aten::xlogy.Scalar_Other", lambda x, other: _x_log(mpmath.log)(x, mpmath.mpf(other)),
             lambda x, other: _x_log_wide(np.log)(x, np.longdouble(other)), LIBM_ERROR + 1, args=("self",)),
    Function("aten::xlogy.Scalar_Self", lambda y, self: _x_log(mpmath.log)(mpmath.mpf(self), y),
             lambda y, self: _x_log_wide(np.log)(np.longdouble(self), y), LIBM_ERROR + 1, args=("other",)),
)}


def _gelu_backward_wide(x):
    cdf = (1 + _erf_wide(x / np.sqrt(np.longdouble(2)))) / 2
    return cdf + x * np.exp(-x * x / 2) / np.sqrt(2 * np.pi, dtype=np.longdouble)
