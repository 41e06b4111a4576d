"""The schema-driven path: every argument drawn from its declared type, its name and the hints.

A custom strategy (see :mod:`.custom`) may fix some arguments first; this
module fills in the rest, so custom code only states the relations a schema
and hints cannot.
"""
from __future__ import annotations

import math
from typing import Any, Callable

import torch
from hypothesis import strategies as st

from opspec.spec.model import Interval, TestingHints
from opspec.testing.strategies import cached
from opspec.testing.strategies import shapes as shape_draws
from opspec.testing.strategies import values as value_draws
from opspec.testing.strategies.call import Call
from opspec.testing.strategies.op_traits import (
    BOOL_TENSOR_NAMES,
    CONTIGUOUS_ONLY,
    DIM_NAMES,
    INTEGER_DIVISOR,
    PICKS_ELEMENTS,
    REJECTS_EMPTY,
    SQUARES_INPUTS,
)
from opspec.testing.strategies.schema_args import Argument


class _Omit:
    def __repr__(self) -> str:
        return "OMIT"


OMIT: Any = _Omit()  # leave the argument out so its schema default applies
SMALL_INT = (0, 3)
SCALAR_SPECIALS = (float("nan"), float("inf"), float("-inf"), 0.0, -0.0)
TORCH_ENUM_TYPES = ("ScalarType", "Layout", "MemoryFormat")
# A dtype argument that differs from the tensors' dtype, yet one every kernel with a dtype= accepts for them.
OTHER_DTYPE = {torch.float16: torch.float64, torch.bfloat16: torch.float64, torch.float32: torch.float64,
               torch.float64: torch.float32, torch.complex64: torch.complex128, torch.complex128: torch.complex64}


class Drawer:
    """What one example draws with: the hypothesis ``draw``, the op, its hints, dtype and device."""

    def __init__(self, draw, op: str, hints: TestingHints, dtype: torch.dtype, device: str):
        self.draw = draw
        self.op = op
        self.hints = hints
        self.dtype = dtype
        self.device = device
        self.ties_often = op in PICKS_ELEMENTS
        self.overflowing_squares = op not in SQUARES_INPUTS
        self.allow_empty = op not in REJECTS_EMPTY
        self.views = op not in CONTIGUOUS_ONLY and not hints.contiguous

    # -- structure --
    def smallest_side(self) -> int:
        return shape_draws.min_side(self.draw, self.allow_empty)

    def shape(self, *, min_dims: int = 0, max_dims: int = shape_draws.MAX_DIMS, smallest: int | None = None,
              max_side: int = shape_draws.MAX_SIDE) -> tuple[int, ...]:
        smallest = self.smallest_side() if smallest is None else smallest
        return shape_draws.shape(self.draw, min_dims=min_dims, max_dims=max_dims, smallest=smallest, max_side=max_side)

    def dim(self, rank: int) -> int:
        return shape_draws.dim(self.draw, rank)

    def dims(self, rank: int, **kwargs) -> list[int]:
        return shape_draws.dims(self.draw, rank, **kwargs)

    def integer(self, low: int, high: int) -> int:
        return self.draw(cached.integers(low, high))

    def boolean(self) -> bool:
        return self.draw(cached.booleans)

    def pick(self, options):
        return self.draw(cached.sampled_from(list(options)))

    # -- tensors --
    def tensor(self, name: str, shape: tuple[int, ...], dtype: torch.dtype | None = None, *,
               views: bool = True, domain: Interval | None | str = "hint") -> torch.Tensor:
        """A tensor for argument ``name``: values within its domain hint, in a drawn layout."""
        dtype = dtype or self.dtype
        if domain == "hint":
            domain = self.hints.domain.get(name) if dtype != torch.bool else None
        dense = value_draws.values(self.draw, tuple(shape), dtype, domain, ties_often=self.ties_often,
                                   overflowing_squares=self.overflowing_squares)
        return value_draws.layout(self.draw, dense.to(self.device), allow_views=views and self.views)

    def index(self, shape: tuple[int, ...], high: int, *, low: int = 0, views: bool = True) -> torch.Tensor:
        """An int64 index tensor with values in [low, high)."""
        domain = Interval(float(low), float(high), True, False)
        return self.tensor("", shape, torch.int64, views=views, domain=domain)

    def scalar(self, name: str):
        """A Python number of the kind the tensor dtype pairs with, inside the name's domain."""
        domain = self.hints.domain.get(name)
        divisor = self.dtype_is_integer() and INTEGER_DIVISOR.get(self.op) == name
        if self.dtype == torch.bool:
            return self.boolean()
        if self.dtype_is_integer():
            low, high = (-4, 4) if domain is None else _int_range(domain, -4, 4)
            value = self.integer(low, high)
            return 1 if divisor and value == 0 else value
        if domain is not None:
            return self.real(domain)
        kind = self.pick(("float", "float", "int", "special"))
        if kind == "float":
            return self.draw(cached.floats(-4, 4, allow_subnormal=False))
        if kind == "int":
            return self.integer(-4, 4)
        return self.pick(SCALAR_SPECIALS)

    def real(self, domain: Interval | None, default: tuple[float, float] = (0.0, 1.0)) -> float:
        if domain is None:
            return self.draw(cached.floats(*default))
        low = domain.low if math.isfinite(domain.low) else min(-4.0, domain.high - 4)
        high = domain.high if math.isfinite(domain.high) else max(4.0, domain.low + 4)
        return self.draw(cached.floats(low, high, exclude_min=not domain.low_closed, exclude_max=not domain.high_closed))

    def dtype_is_integer(self) -> bool:
        return not (self.dtype.is_floating_point or self.dtype.is_complex or self.dtype == torch.bool)


def _int_range(domain: Interval, low: int, high: int) -> tuple[int, int]:
    lo = math.ceil(domain.low) + (0 if domain.low_closed or not domain.low.is_integer() else 1) if math.isfinite(domain.low) else None
    hi = math.floor(domain.high) - (0 if domain.high_closed or not domain.high.is_integer() else 1) if math.isfinite(domain.high) else None
    if lo is None and hi is None:
        return low, high
    if lo is None:
        return min(low, hi), hi
    if hi is None:
        return lo, max(high, lo)
    return lo, hi


def _choice(argument: Argument, value: Any) -> Any:
    """A choice as written in YAML, turned into what torch expects."""
    if isinstance(value, str) and argument.base_type in TORCH_ENUM_TYPES:
        return getattr(torch, value)
    if isinstance(value, str) and argument.base_type == "Device":
        return torch.device(value)
    return value


# ---- tensors ----

def fill_tensors(d: Drawer, arguments: tuple[Argument, ...], chosen: dict) -> None:
    """Draw every tensor argument not yet chosen: hinted shapes first, the rest broadcast together."""
    pending = [a for a in arguments if a.is_tensor and a.name not in chosen]
    for argument in pending:
        if argument.optional and d.boolean():
            chosen[argument.name] = OMIT if argument.has_default else None
    pending = [a for a in pending if a.name not in chosen]

    for argument in [a for a in pending if a.writes and a.kwarg_only]:  # out=: an empty tensor the op resizes
        chosen[argument.name] = torch.empty(0, dtype=d.dtype, device=d.device)
    pending = [a for a in pending if a.name not in chosen]

    hinted = [a for a in pending if a.name in d.hints.shapes]
    if hinted:
        sizes = shape_draws.symbol_sizes(d.draw, {a.name: d.hints.shapes[a.name] for a in hinted}, d.hints.domain,
                                         d.allow_empty)
        for argument in hinted:
            chosen[argument.name] = _tensor_argument(d, argument, shape_draws.resolve(d.hints.shapes[argument.name], sizes))

    free = [a for a in pending if a.name not in chosen]
    singles = [a for a in free if a.base_type == "Tensor"]
    if singles:
        ranks = [d.hints.ranks.get(a.name, (0, shape_draws.MAX_DIMS)) for a in singles]
        min_dims, max_dims = max(r[0] for r in ranks), min(r[1] for r in ranks)
        max_dims = max(max_dims, min_dims)
        drawn = shape_draws.broadcastable(d.draw, len(singles), min_dims=min_dims, max_dims=max_dims,
                                          smallest=d.smallest_side())
        for argument, shape in zip(singles, drawn):
            chosen[argument.name] = _tensor_argument(d, argument, shape)
    for argument in free:
        if argument.name not in chosen:  # lists of tensors: a few mutually broadcastable ones
            count = d.integer(1, 3)
            drawn = shape_draws.broadcastable(d.draw, count, smallest=d.smallest_side())
            chosen[argument.name] = [_tensor_argument(d, argument, s) for s in drawn]


def _tensor_argument(d: Drawer, argument: Argument, shape: tuple[int, ...]) -> torch.Tensor:
    dtype = torch.bool if argument.name in BOOL_TENSOR_NAMES else d.dtype
    tensor = d.tensor(argument.name, shape, dtype, views=not argument.writes)
    if d.dtype_is_integer() and INTEGER_DIVISOR.get(d.op) == argument.name:
        tensor = torch.where(tensor == 0, torch.ones_like(tensor), tensor)
    return tensor


def primary_rank(arguments: tuple[Argument, ...], chosen: dict) -> int:
    """Rank of the first tensor argument: what ``dim`` arguments index into."""
    for argument in arguments:
        value = chosen.get(argument.name)
        if isinstance(value, torch.Tensor):
            return value.dim()
    return 0


# ---- everything else ----

def fill_others(d: Drawer, arguments: tuple[Argument, ...], chosen: dict) -> None:
    rank = primary_rank(arguments, chosen)
    for argument in arguments:
        if argument.name in chosen:
            continue
        choices = d.hints.choices.get(argument.name)
        default_allowed = choices is None or argument.default in choices
        if argument.has_default and default_allowed and d.boolean():
            chosen[argument.name] = OMIT
        elif choices is not None:
            chosen[argument.name] = _choice(argument, d.pick(choices))
        else:
            chosen[argument.name] = draw_by_type(d, argument, rank)


def draw_by_type(d: Drawer, argument: Argument, rank: int) -> Any:
    name, base = argument.name, argument.base_type
    if argument.optional and base not in ("Tensor",) and d.pick((True, False, False)):
        return None
    domain = d.hints.domain.get(name)
    if base == "int":
        if name in DIM_NAMES:
            return d.dim(rank)
        if name == "step":
            return d.integer(1, 3)
        if name in ("start", "end"):
            return d.integer(-5, 5)
        return d.integer(*(_int_range(domain, *SMALL_INT) if domain else SMALL_INT))
    if base == "List[int]":
        if name in DIM_NAMES:
            return d.dims(rank)
        if name == "size":
            return list(d.shape())
        length = argument.length or d.integer(0, 3)
        low, high = _int_range(domain, *SMALL_INT) if domain else SMALL_INT
        return [d.integer(low, high) for _ in range(length)]
    if base == "float":
        return d.real(domain)
    if base == "List[float]":
        return [d.real(domain) for _ in range(argument.length or d.integer(1, 2))]
    if base == "bool":
        return False if name == "pin_memory" else d.boolean()
    if base == "List[bool]":
        return [d.boolean() for _ in range(argument.length or d.integer(1, 3))]
    if base == "number":
        return d.scalar(name)
    if base == "str":
        if argument.has_default:
            return argument.default
        raise LookupError(f"{d.op}: str argument {name!r} needs a 'choices' hint")
    if base == "ScalarType":
        if name != "dtype":  # e.g. input_dtype describes the tensors themselves
            return d.dtype
        # a result dtype: mostly the dtype under test, sometimes another, so a candidate that ignores dtype= is caught
        return d.pick((d.dtype, d.dtype, OTHER_DTYPE.get(d.dtype, torch.float64)))
    if base == "Layout":
        return torch.strided
    if base == "Device":
        return torch.device(d.device)
    if base == "MemoryFormat":
        return torch.contiguous_format
    if base == "Generator":
        return None
    raise LookupError(f"{d.op}: no strategy for argument {name!r} of type {argument.type}")


# ---- the call ----

def assemble(op: str, arguments: tuple[Argument, ...], chosen: dict) -> Call:
    """Positional arguments until the first omitted one; keywords after it and for kwarg-only ones."""
    args, kwargs, positional = [], {}, True
    for argument in arguments:
        value = chosen[argument.name]
        if value is OMIT:
            positional = positional and argument.kwarg_only
            continue
        if argument.kwarg_only or not positional:
            kwargs[argument.name] = value
        else:
            args.append(value)
    return Call(op, tuple(args), kwargs)


CustomStrategy = Callable[[Drawer], dict]


@st.composite
def draw_call(draw, op: str, arguments: tuple[Argument, ...], hints: TestingHints, dtype: torch.dtype, device: str,
              custom: CustomStrategy | None) -> Call:
    d = Drawer(draw, op, hints, dtype, device)
    chosen = dict(custom(d)) if custom else {}
    fill_tensors(d, arguments, chosen)
    fill_others(d, arguments, chosen)
    return assemble(op, arguments, chosen)


def call_strategy(op: str, arguments: tuple[Argument, ...], hints: TestingHints, dtype: torch.dtype, device: str,
                  custom: CustomStrategy | None) -> st.SearchStrategy[Call]:
    # one composite for every op, its parameters passed in: defining one per call had hypothesis read and parse
    # its source each time (about a millisecond a strategy, thousands of strategies a run)
    return draw_call(op, arguments, hints, dtype, device, custom)
