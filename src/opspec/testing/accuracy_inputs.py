"""The inputs accuracy is measured on: every value of a 16-bit dtype, or samples of a wider one by binade.

Values are chosen by ordinal (:mod:`opspec.testing.ulp`), so a domain is a set of ordinal ranges and a
binade is one range. A stratified sample gives every binade of the domain (each sign apart, the subnormals as
one more) the same number of inputs, drawn uniformly by ordinal with a seeded generator, and adds what chance
would miss: the special values, the largest finite values, and the values beside each finite end of the domain.
The same seed, dtype, domain and count give the same inputs on every machine.
"""
from __future__ import annotations

from typing import Sequence

import numpy as np
import torch

from opspec.spec.model import Interval
from opspec.testing.ulp import Format, format_of, from_ordinals, ordinals

EXHAUSTIVE_BITS = 16  # dtypes this narrow are measured on every bit pattern
EDGE_NEIGHBOURS = 256  # values on each side of a finite end of the domain
LARGEST = 256  # largest finite values of each sign


def exhaustive(dtype: torch.dtype) -> torch.Tensor:
    """Every bit pattern of a 16-bit dtype, NaNs included, in ordinal order from -NaN up."""
    fmt = format_of(dtype)
    if fmt.bits != EXHAUSTIVE_BITS:
        raise ValueError(f"{fmt.name} has {2 ** fmt.bits} values: sample it instead")
    ords = np.arange(-(1 << (fmt.bits - 1)) + 1, 1 << (fmt.bits - 1), dtype=np.int64)
    return torch.cat([from_ordinals(ords, dtype), from_ordinals(np.array([0]), dtype).neg()])  # -0 has no ordinal


def ordinal_ranges(domain: Sequence[Interval], fmt: Format) -> list[tuple[int, int]]:
    """The domain as inclusive ordinal ranges; infinities count where a closed end names them."""
    ranges = []
    for interval in domain:
        low = _first_inside(interval.low, interval.low_closed, fmt, upward=True)
        high = _first_inside(interval.high, interval.high_closed, fmt, upward=False)
        if low <= high:
            ranges.append((low, high))
    return ranges


def _first_inside(end: float, closed: bool, fmt: Format, *, upward: bool) -> int:
    """The ordinal of the first value of the dtype inside an interval's end, walking inward."""
    nearest = int(ordinals(torch.tensor([end], dtype=torch.float64).to(fmt.dtype))[0])
    step = 1 if upward else -1
    value = float(from_ordinals(np.array([nearest]), fmt.dtype).to(torch.float64)[0])
    if (value < end) if upward else (value > end):
        nearest += step
    elif value == end and not closed:
        nearest += step
    return nearest


def within(values: torch.Tensor, domain: Sequence[Interval]) -> np.ndarray:
    """Which elements lie in the domain; NaN is in every domain (an op must propagate it)."""
    fmt = format_of(values.dtype)
    ords = ordinals(values)
    inside = np.isnan(values.detach().cpu().to(torch.float64).numpy())
    for low, high in ordinal_ranges(domain, fmt):
        inside |= (ords >= low) & (ords <= high)
    return inside


def stratified(dtype: torch.dtype, domain: Sequence[Interval], count: int, seed: int) -> torch.Tensor:
    """``count`` distinct inputs in the domain (fewer where it holds fewer; a drawn one may repeat a fixed one),
    sorted by ordinal, then a NaN: the fixed ones, and every stratum alike."""
    fmt = format_of(dtype)
    ranges = ordinal_ranges(domain, fmt)
    fixed = _fixed(fmt, ranges)
    strata = [part for stratum in _strata(fmt) for part in _clip(stratum, ranges)]
    generator = np.random.default_rng(seed)
    shares = _shares([high - low + 1 for low, high in strata], count - len(fixed) - 1)  # the NaN is one
    drawn = [_draw(generator, low, high, share) for (low, high), share in zip(strata, shares)]
    ords = _sorted_distinct(np.concatenate([fixed, *drawn]))
    nan = from_ordinals(np.array([fmt.nan_ordinal]), dtype)
    return torch.cat([from_ordinals(ords, dtype), nan])


def _sorted_distinct(ords: np.ndarray) -> np.ndarray:
    """np.unique by sorting: numpy's hashed unique takes seconds on a million clustered int64 values."""
    ords = np.sort(ords, kind="stable")
    return ords[np.concatenate(([True], ords[1:] != ords[:-1]))] if len(ords) else ords


def _strata(fmt: Format) -> list[tuple[int, int]]:
    """Each binade of each sign, and the subnormals of each sign, as ordinal ranges."""
    positive = [(1, fmt.normal_ordinal - 1)] + [fmt.binade(e) for e in range(fmt.min_exponent, fmt.max_exponent + 1)]
    return positive + [(-high, -low) for low, high in positive]


def _clip(stratum: tuple[int, int], ranges: list[tuple[int, int]]) -> list[tuple[int, int]]:
    low, high = stratum
    return [(max(low, a), min(high, b)) for a, b in ranges if max(low, a) <= min(high, b)]


def _shares(sizes: list[int], budget: int) -> list[int]:
    """Equal shares of ``budget`` for strata of these sizes; a stratum smaller than its share gives the rest back."""
    shares = [0] * len(sizes)
    left, budget = len(sizes), max(0, budget)
    for index in sorted(range(len(sizes)), key=lambda i: sizes[i]):
        shares[index] = min(sizes[index], budget // left)
        budget -= shares[index]
        left -= 1
    return shares


def _draw(generator: np.random.Generator, low: int, high: int, count: int) -> np.ndarray:
    if high - low + 1 <= count:
        return np.arange(low, high + 1, dtype=np.int64)
    return low + generator.choice(high - low + 1, size=count, replace=False)


def _fixed(fmt: Format, ranges: list[tuple[int, int]]) -> np.ndarray:
    """Zero, the infinities, the smallest subnormal and normal and the largest values, and the domain's ends."""
    top = fmt.infinity_ordinal - 1
    points = [0, fmt.infinity_ordinal, 1, fmt.normal_ordinal - 1, fmt.normal_ordinal]
    points += list(range(top - LARGEST + 1, top + 1))
    points += [-p for p in points]
    for low, high in ranges:
        for end in (low, high):
            if abs(end) < fmt.infinity_ordinal:
                points += range(end - EDGE_NEIGHBOURS, end + EDGE_NEIGHBOURS + 1)
    ords = np.array(points, dtype=np.int64)
    inside = np.zeros(len(ords), dtype=bool)
    for low, high in ranges:
        inside |= (ords >= low) & (ords <= high)
    return ords[inside]


NEAR_SHARE = 4  # one pair in this many puts the second operand near the first (cancellation, quotients near 1)


def combined(dtype: torch.dtype, domains: Sequence[Sequence[Interval]], count: int, seed: int) -> list[torch.Tensor]:
    """Inputs for an op of several tensors: each operand a stratified sample of its own domain (so every binade of
    each, the subnormals and largest values included, meets the others), paired in a seeded random order, with
    one pair in NEAR_SHARE moving the later operands to within a few thousand ULPs of the first, either sign, so
    sums that cancel and quotients near 1 are measured too. 16-bit dtypes are sampled as well: their pairs are
    too many to enumerate. Equal lengths, a NaN in each operand at its own place."""
    fmt = format_of(dtype)
    generator = np.random.default_rng(seed)
    columns = [ordinals(stratified(dtype, domain, count, seed + position))
               for position, domain in enumerate(domains)]
    length = min(len(c) for c in columns)
    columns = [generator.permutation(c)[:length] for c in columns]
    near = np.flatnonzero(generator.random(length) < 1 / NEAR_SHARE)
    ranges = [ordinal_ranges(domain, fmt) for domain in domains]
    for column, allowed in zip(columns[1:], ranges[1:]):
        offset = generator.integers(-(1 << (fmt.precision // 2)), 1 << (fmt.precision // 2), len(near))
        moved = columns[0][near] + offset
        moved = np.where(generator.random(len(near)) < 0.5, -moved, moved)
        finite = (np.abs(moved) <= fmt.infinity_ordinal) & (np.abs(columns[0][near]) < fmt.infinity_ordinal)
        inside = np.zeros(len(near), dtype=bool)
        for low, high in allowed:
            inside |= (moved >= low) & (moved <= high)
        keep = finite & inside
        column[near[keep]] = moved[keep]
    return [from_ordinals(c, dtype) for c in columns]
