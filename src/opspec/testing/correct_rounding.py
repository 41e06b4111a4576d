"""The correctly rounded result of a function in a floating dtype, and where the exact value lies from it.

Rounding an approximation twice (the function in float64, then to float16) can land on the wrong side of a
rounding boundary, so the exact value is rounded once, decided against the boundaries themselves:

1. ``wide``: the function in a wider type (long double) with a stated error bound, for all inputs at once. An
   input whose wide result lies further than that bound from every boundary of the result dtype (the midpoints
   between neighbouring values) is settled: the exact value is on the same side.
2. mpmath, for the inputs left (a wide result within its bound of a boundary, or a wide type too narrow for the
   result dtype): the function at 128 bits, then at 384 bits, each with a margin; what both leave is an exact
   tie, rounded to even.

Overflow follows round to nearest: +inf stands for 2**(emax+1) at the boundary, so a value rounds to inf exactly
where an unbounded exponent would round it to that power.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping, Sequence

import mpmath
import numpy as np
import torch

from opspec.testing.accuracy_functions import Function
from opspec.testing.ulp import Format, format_of, from_ordinals, ordinals, wide_values

MPMATH_PRECISIONS = (128, 384)  # bits: 128 settles nearly every case, the hardest float64 ones need up to about 160
MPMATH_SLACK_BITS = 8  # mpmath's functions are within a few ULPs of their working precision
NEIGHBOURS = tuple(range(-3, 4))  # a first guess is at most one off (double rounding), a tie moves one more


@dataclass(frozen=True)
class Reference:
    rounded: torch.Tensor  # correctly rounded results, in the result dtype, on the CPU
    residual: np.ndarray  # (exact - rounded) in ULPs, in [-0.5, 0.5]; 0 where rounded is infinite or NaN
    refined: int  # inputs that needed mpmath


def correctly_rounded(function: Function, inputs: Sequence[torch.Tensor], dtype: torch.dtype,
                      arguments: Mapping[str, Any] | None = None) -> Reference:
    """``function`` of ``inputs`` (element by element, broadcast; its non-tensor ``arguments`` by name) rounded
    once to ``dtype``."""
    fmt = format_of(dtype)
    arguments = dict(arguments or {})
    args = np.broadcast_arrays(*(t.detach().cpu().to(torch.float64).numpy() for t in inputs))
    args = [a.reshape(-1) for a in args]
    ords, residual, unsure = _from_wide(function, args, fmt, arguments)
    points = np.flatnonzero(unsure)
    exact = _from_mpmath(function, [tuple(float(a[i]) for a in args) for i in points], fmt, arguments)
    for index, settled in zip(points, exact):
        if settled is not None:  # None: mpmath has no real value there (a pole), the wide result stands
            ords[index], residual[index] = settled
    shape = np.broadcast_shapes(*(tuple(t.shape) for t in inputs))
    return Reference(from_ordinals(ords, dtype).reshape(shape), residual.reshape(shape), len(points))


def _from_wide(function: Function, args: list[np.ndarray], fmt: Format,
               arguments: Mapping[str, Any]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Ordinals of the rounded results, residuals, and the inputs the wide result cannot settle."""
    wide = function.wide_dtype
    wide_args = [a.astype(wide) for a in args]
    with np.errstate(all="ignore"):  # overflow to inf and NaN off the domain are results like any other
        y = np.asarray(function.wide(*wide_args, **arguments), dtype=wide)
        nearest = y.astype(np.float64)
    finite = np.isfinite(y)
    ords = ordinals(torch.from_numpy(nearest).to(fmt.dtype))
    ords = np.where(np.isnan(y), fmt.nan_ordinal, ords)
    if np.finfo(wide).nmant + 1 < fmt.precision + 2:  # too narrow to place a boundary of the result dtype
        return ords, np.zeros(len(y)), finite
    # values and boundaries of the dtype are exact in float64 below float64 itself (one bit more than the dtype)
    exact_in = np.float64 if fmt.precision < np.finfo(np.float64).nmant else np.longdouble
    with np.errstate(all="ignore"):
        info = np.finfo(wide)  # a ULP of y is at most |y| * eps (np.spacing of long doubles just below 1 is NaN)
        bound = function.wide_error * (np.abs(y) * info.eps + info.smallest_subnormal)
        if function.wide_bound is not None:  # terms that can cancel: a bound from their sizes, not the result's
            bound = np.maximum(bound, np.asarray(function.wide_bound(*wide_args, y, **arguments), dtype=wide))
        bound = np.where(finite & np.isfinite(bound), bound, np.where(finite, np.inf, 0))
        below, value, above = _neighbours(ords, fmt, exact_in)
        for _ in range(2):  # the guess was rounded twice (through float64, through float32): at most one off
            off = np.flatnonzero((y > (value + above) / 2 + bound) | (y < (value + below) / 2 - bound))
            if not len(off):
                break
            ords[off] += np.where(y[off] > value[off], 1, -1)
            below[off], value[off], above[off] = _neighbours(ords[off], fmt, exact_in)
        unsure = finite & ~((y > (value + below) / 2 + bound) & (y < (value + above) / 2 - bound))
        residual = np.where(y >= value, (y - value) / (above - value), (y - value) / (value - below))
    settled = np.isfinite(residual) & (np.abs(ords) < fmt.infinity_ordinal)
    # the rounding is decided exactly, the residual only to the wide error: keep it on its side of a boundary
    return ords, np.clip(np.where(settled, residual, 0.0), -0.5, 0.5).astype(np.float64), unsure


def _neighbours(ords: np.ndarray, fmt: Format, exact_in: type) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The values below, at and above each ordinal."""
    return wide_values(ords - 1, fmt, exact_in), wide_values(ords, fmt, exact_in), wide_values(ords + 1, fmt, exact_in)


def _from_mpmath(function: Function, points: list[tuple[float, ...]], fmt: Format,
                 arguments: Mapping[str, Any] | None = None) -> list[tuple[int, float] | None]:
    """(ordinal, residual) of each point, from mpmath at rising precision; None where mpmath has no real value."""
    settled: dict[int, tuple[int, float] | None] = {}
    pending = list(range(len(points)))
    for attempt, precision in enumerate(MPMATH_PRECISIONS):
        last = attempt == len(MPMATH_PRECISIONS) - 1
        with mpmath.workprec(precision):
            exact = [_evaluate(function, points[i], arguments or {}) for i in pending]
            candidates, values = _candidates(exact, fmt)
            slack = mpmath.ldexp(1, MPMATH_SLACK_BITS - precision)
            for i, value, ords, floats in zip(pending, exact, candidates, values):
                if value is None:
                    settled[i] = None
                    continue
                result = _round(value, 0 if last else abs(value) * slack, ords, floats, fmt)
                if result is not None:
                    settled[i] = result
        pending = [i for i in pending if i not in settled]
    return [settled[i] for i in range(len(points))]


def _evaluate(function: Function, point: tuple[float, ...], arguments: Mapping[str, Any]) -> mpmath.mpf | None:
    """The exact value (at the working precision); None off the real domain (a complex result, a pole)."""
    try:
        value = function.exact(*(mpmath.mpf(x) for x in point), **arguments)
        value = mpmath.mpf(value) if isinstance(value, int) else value
    except (ZeroDivisionError, ValueError):
        return None
    return value if isinstance(value, mpmath.mpf) and not mpmath.isnan(value) else None


def _candidates(exact: list, fmt: Format) -> tuple[np.ndarray, np.ndarray]:
    """For each value, consecutive ordinals around its nearest float64 rounded to the dtype, and their values in
    float64 (infinity's ordinal stands for 2**(emax+1), which float64 itself cannot hold: see _mp)."""
    nearest = torch.tensor([float(v) if v is not None else 0.0 for v in exact], dtype=torch.float64)
    ords = ordinals(nearest.to(fmt.dtype))[:, None] + np.array(NEIGHBOURS)[None, :]
    with np.errstate(over="ignore"):
        return ords, wide_values(ords, fmt, np.float64)


def _round(exact, bound, ords: np.ndarray, floats: np.ndarray, fmt: Format) -> tuple[int, float] | None:
    """The ordinal nearest ``exact`` among consecutive ``ords`` (values ``floats``) and the residual; None while
    ``exact`` is within ``bound`` of a boundary. Ties go to the even ordinal (an even significand)."""
    values = [_mp(int(o), float(f), fmt) for o, f in zip(ords, floats)]
    middle = len(ords) // 2
    for at in (middle, middle + 1, middle - 1):
        low, high = (values[at - 1] + values[at]) / 2, (values[at] + values[at + 1]) / 2
        inside = (low + bound < exact < high - bound) if bound else (low <= exact <= high)
        if inside:
            if not bound and exact in (low, high) and ords[at] % 2:  # an exact tie: to the even neighbour
                at += 1 if exact == high else -1
            return int(ords[at]), _residual(exact, values[at - 1:at + 2], int(ords[at]), fmt)
        if bound and (abs(exact - low) <= bound or abs(exact - high) <= bound):
            return None
    return None


def _residual(exact, values: list, ordinal: int, fmt: Format) -> float:
    below, value, above = values
    if abs(ordinal) >= fmt.infinity_ordinal:
        return 0.0
    return float((exact - value) / ((above - value) if exact >= value else (value - below)))


def _mp(ordinal: int, value: float, fmt: Format):
    """The value of an ordinal as an mpmath number, 2**(emax+1) standing for infinity's."""
    if abs(ordinal) == fmt.infinity_ordinal:
        return (-1 if ordinal < 0 else 1) * mpmath.ldexp(1, fmt.max_exponent + 1)
    return mpmath.mpf(value)
