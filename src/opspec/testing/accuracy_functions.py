"""The mathematical function behind each op whose accuracy is measured: data only, no logic.

Each entry has the function twice: ``exact`` in mpmath at any precision (the truth, used where a rounding is
close), and ``wide`` on numpy arrays of ``wide_dtype`` with a stated error bound, used for every input whose
rounding to the result dtype that bound cannot change (:mod:`opspec.testing.correct_rounding`).

``wide`` is x87 extended precision (``np.longdouble``, 64 significand bits) through the C library's ``expl``,
``sinl``, ...: glibc's test suite fails any of them more than 9 ULPs off (its manual, "Errors in Math
Functions"), and published measurements of its long double functions (Gladman, Innocente, Mather, Zimmermann,
"Accuracy of Mathematical Functions in Single, Double, Double Extended, and Quadruple Precision") stay within a
few ULPs for these; ``wide_error`` allows 16, and the tests check the result against mpmath. Composite
expressions add one rounding per operation. ``erf`` has no long
double version in numpy: scipy's float64 one, good for float32 and narrower results; float64 results of erf go to
mpmath. Where ``np.longdouble`` is only float64 (some platforms), every float64 result goes to mpmath too.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import mpmath
import numpy as np

LIBM_ERROR = 16.0  # ULPs of np.longdouble: above the 9 ULPs glibc's own tests allow


@dataclass(frozen=True)
class Function:
    op: str
    exact: Callable  # mpmath numbers -> mpmath number (a complex one off the real domain)
    wide: Callable  # numpy arrays of wide_dtype -> array
    wide_error: float = LIBM_ERROR  # bound on wide's error, in ULPs of wide_dtype
    wide_dtype: type = np.longdouble


def _erf_float64(x: np.ndarray) -> np.ndarray:
    from scipy import special

    return special.erf(x.astype(np.float64))


FUNCTIONS: dict[str, Function] = {f.op: f for f in (
    Function("aten::abs", abs, np.abs, 0.0),
    Function("aten::acos", mpmath.acos, np.arccos),
    Function("aten::acosh", mpmath.acosh, np.arccosh),
    Function("aten::asin", mpmath.asin, np.arcsin),
    Function("aten::asinh", mpmath.asinh, np.arcsinh),
    Function("aten::atan", mpmath.atan, np.arctan),
    Function("aten::atanh", mpmath.atanh, np.arctanh),
    Function("aten::cos", mpmath.cos, np.cos),
    Function("aten::cosh", mpmath.cosh, np.cosh),
    Function("aten::erf", mpmath.erf, _erf_float64, 8.0, np.float64),  # scipy (Cephes): about 1 ULP
    Function("aten::exp", mpmath.exp, np.exp),
    Function("aten::expm1", mpmath.expm1, np.expm1),
    Function("aten::log", mpmath.log, np.log),
    Function("aten::log10", mpmath.log10, np.log10),
    Function("aten::log1p", mpmath.log1p, np.log1p),
    Function("aten::log2", lambda x: mpmath.log(x, 2), np.log2),
    Function("aten::neg", lambda x: -x, np.negative, 0.0),
    Function("aten::reciprocal", lambda x: 1 / x, lambda x: 1 / x, 1.0),
    Function("aten::rsqrt", lambda x: 1 / mpmath.sqrt(x), lambda x: 1 / np.sqrt(x), 2.0),
    Function("aten::sigmoid", lambda x: 1 / (1 + mpmath.exp(-x)), lambda x: 1 / (1 + np.exp(-x)), LIBM_ERROR + 2),
    Function("aten::sin", mpmath.sin, np.sin),
    Function("aten::sinh", mpmath.sinh, np.sinh),
    Function("aten::sqrt", mpmath.sqrt, np.sqrt, 1.0),
    Function("aten::tan", mpmath.tan, np.tan),
    Function("aten::tanh", mpmath.tanh, np.tanh),
)}
