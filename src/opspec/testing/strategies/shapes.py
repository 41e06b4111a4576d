"""Shapes, symbolic sizes and dims: the structural half of an input.

Shapes come from ``hypothesis.extra.numpy`` (array_shapes,
mutually_broadcastable_shapes) so 0-dim, size-1 and broadcast cases shrink the
way hypothesis users expect; this module only adds the numel budget, the
"empty sometimes, not half the time" switch, and dims valid for a rank.
"""
from __future__ import annotations

import math
from typing import Mapping, Sequence

from opspec.spec.model import Interval
from opspec.testing.strategies import cached

MAX_DIMS = 3
MAX_SIDE = 4
NUMEL_BUDGET = 64  # keeps one example well under a millisecond; a shape hint may ask for more
EMPTY_ODDS = (1, 1, 1, 1, 0)  # min_side choices: one example in five may carry a zero-size dim


def min_side(draw, allow_empty: bool) -> int:
    return draw(cached.sampled_from(EMPTY_ODDS)) if allow_empty else 1


def shape(draw, *, min_dims: int = 0, max_dims: int = MAX_DIMS, smallest: int = 0,
          max_side: int = MAX_SIDE) -> tuple[int, ...]:
    drawn = draw(cached.array_shapes(min_dims=min_dims, max_dims=max_dims, min_side=smallest, max_side=max_side))
    return fit_budget([drawn], smallest)[0]


def broadcastable(draw, count: int, *, min_dims: int = 0, max_dims: int = MAX_DIMS,
                  smallest: int = 0) -> list[tuple[int, ...]]:
    """``count`` shapes that broadcast together."""
    if count == 1:  # array_shapes costs a third of mutually_broadcastable_shapes
        return [shape(draw, min_dims=min_dims, max_dims=max_dims, smallest=smallest)]
    drawn = draw(cached.mutually_broadcastable_shapes(
        num_shapes=count, min_dims=min_dims, max_dims=max_dims, min_side=smallest, max_side=MAX_SIDE))
    return fit_budget(list(drawn.input_shapes), smallest)


def fit_budget(shapes: list[tuple[int, ...]], smallest: int, budget: int = NUMEL_BUDGET) -> list[tuple[int, ...]]:
    """Shrink the largest broadcast dim until every shape fits the numel budget.

    Shrinking a right-aligned dim in all shapes at once keeps them broadcastable.
    """
    shapes = [list(s) for s in shapes]
    while max((math.prod(s) for s in shapes), default=0) > budget:
        rank = max(len(s) for s in shapes)
        sizes = [max((s[len(s) - rank + i] for s in shapes if len(s) - rank + i >= 0), default=1) for i in range(rank)]
        axis = max(range(rank), key=sizes.__getitem__)
        if sizes[axis] <= max(smallest, 1):
            break
        for s in shapes:
            index = len(s) - rank + axis
            if index >= 0 and s[index] == sizes[axis]:
                s[index] = sizes[axis] - 1
    return [tuple(s) for s in shapes]


def symbol_sizes(draw, shapes: Mapping[str, Sequence[str | int]], domain: Mapping[str, Interval],
                 allow_empty: bool, budget: int = NUMEL_BUDGET) -> dict[str, int]:
    """A size for every symbol in symbolic shapes; a ``domain`` entry named after a symbol bounds it."""
    symbols = sorted({s for dims in shapes.values() for s in dims if isinstance(s, str)})
    floor = min_side(draw, allow_empty)
    bounds = {}
    for symbol in symbols:
        interval = domain.get(symbol)
        if interval is None:
            bounds[symbol] = (floor, MAX_SIDE)
        else:
            low = math.ceil(interval.low) + (0 if interval.low_closed or not interval.low.is_integer() else 1)
            high = interval.high if math.isfinite(interval.high) else max(low, MAX_SIDE)
            high = math.floor(high) - (0 if interval.high_closed or not float(high).is_integer() else 1)
            bounds[symbol] = (max(low, 0), max(high, low, 0))
    sizes = {symbol: draw(cached.integers(*bounds[symbol])) for symbol in symbols}

    def largest_numel() -> int:
        return max((math.prod(sizes[d] if isinstance(d, str) else d for d in dims) for dims in shapes.values()), default=0)

    while largest_numel() > budget:
        shrinkable = [s for s in symbols if sizes[s] > max(bounds[s][0], 1)]
        if not shrinkable:
            break
        biggest = max(shrinkable, key=sizes.__getitem__)
        sizes[biggest] -= 1
    return sizes


def resolve(dims: Sequence[str | int], sizes: Mapping[str, int]) -> tuple[int, ...]:
    return tuple(sizes[d] if isinstance(d, str) else d for d in dims)


def dim(draw, rank: int) -> int:
    """A dim valid for ``rank`` (negative ones included); a 0-dim tensor takes 0 and -1."""
    extent = max(rank, 1)
    return draw(cached.integers(-extent, extent - 1))


def dims(draw, rank: int, *, min_size: int = 0, max_size: int | None = None) -> list[int]:
    """Distinct dims of ``rank`` in drawn order, some spelled negatively."""
    extent = max(rank, 1)
    order = draw(cached.permutations(extent))
    upper = min(extent, max_size if max_size is not None else extent)
    chosen = order[:draw(cached.integers(min(min_size, upper), upper))]
    return [d - extent if draw(cached.booleans) else d for d in chosen]
