"""Edge inputs, deterministically: the values and argument settings where kernels differ.

Random draws find edge values only by luck (a 4-example run rarely holds a
sigmoid input below -8, or a NaN where ``maximum`` compares). This module
rewrites a drawn call instead of drawing new ones:

- ``value_variants``: the call with the contents of its data tensors replaced
  by the domain's edge values (signed zeros, infinities, NaN, extremes, the
  smallest normal and denormal numbers, halfway ties, a ladder of magnitudes
  from 1e-30 to 1e30), cycled so that every edge value lands in every data
  tensor, each tensor rotated against the others so that different edges meet
  at the same position; a call with several data tensors also gets the edges
  aligned, so that each edge meets itself (NaN == NaN, inf - inf, 0 / 0).
  A domain bounds the finite values; NaN, which every float function must
  propagate or define (``pow(nan, 0)`` is 1), is in every domain except where
  values are coordinates (``NAN_UNDEFINED``). Shapes, strides and constants are the call's own, so a
  backend with dynamic shapes runs them in the program it already built.
  Ops that add up many elements (``ACCUMULATES``) get no large finite values:
  there a result of cancelling magnitudes is rounding noise of the summation order;
  normalisations that square their inputs (``SQUARES_INPUTS``) get no infinities either:
  torch's one-pass statistics make the mean of an infinite row NaN, not inf.
- ``branch_variants``: the call with its constants set where the op's
  semantics branch (``BRANCHES``: rounding modes, ``min > max``, a zero
  exponent). Each one is a new program, so callers spend compiles on them.

Which tensors are data: tensors of the call's dtype (index tensors of a float
op and boolean masks keep their drawn values). A tensor with a domain hint also
gets the edge values outside it, one tensor at a time (``_beyond_domain``):
the hint says where an op is well behaved, not where torch leaves it undefined;
a variant the eager kernel rejects is for the caller to drop.
"""
from __future__ import annotations

import math
from typing import Any

import torch

from opspec.spec.model import Interval, TestingHints
from opspec.testing.strategies.call import Call
from opspec.testing.strategies.defaults import with_settings
from opspec.testing.strategies.op_traits import (
    ACCUMULATES,
    BRANCHES,
    INTEGER_DIVISOR,
    NAN_UNDEFINED,
    PICKS_ELEMENTS,
    SQUARES_INPUTS,
)
from opspec.testing.strategies.schema_args import arguments_of
from opspec.testing.strategies.values import (
    contains,
    copy_preserving_layout,
    storage_view,
)

ACCUMULATING_LIMIT = 1e4  # ops in ACCUMULATES see no finite edge value this large (order-dependent rounding)
MAX_VALUE_VARIANTS = 48  # enough for every edge value to reach a one-element tensor
MAGNITUDES = tuple(10.0 ** k for k in (-30, -10, -4, -1, 1, 4, 10, 30)) + (3.0, 9.0, 20.0, 100.0)
TIES = (0.5, 1.5, 2.5)
# Fills for ops that pick elements: every edge value above is distinct, so no slice holds a tie but +0 against
# -0, always in one order and beside a NaN that decides the pick. These fills hold few values, so every slice
# ties: zeros of both signs in both orders (equal, so the first must win) and a tied extreme away from the
# first position (a kernel scanning in another order picks another one).
TIE_FILLS = ((-0.0, 0.0), (0.0, -0.0), (1.0, 0.0, 0.0, 1.0), (0.0, 1.0, 1.0, 0.0))


def float_edges(dtype: torch.dtype, domain: Interval | None, *, nan: bool = True) -> list[float]:
    """The edge values of a floating dtype inside ``domain`` (and NaN, with ``nan``), each once, in a fixed order."""
    info = torch.finfo(dtype)
    candidates = [0.0, -0.0, float("nan"), float("inf"), float("-inf"), info.max, -info.max, info.tiny, -info.tiny,
                  info.smallest_normal / 4, -info.smallest_normal / 4, info.eps, 1.0, -1.0]
    candidates += [v for tie in TIES for v in (tie, -tie)]
    candidates += [v for m in MAGNITUDES for v in (m, -m)]
    if domain is not None:
        candidates = [v for v in candidates if math.isnan(v) or contains(domain, v)]
        candidates += [b for b, closed in ((domain.low, domain.low_closed), (domain.high, domain.high_closed))
                       if closed and math.isfinite(b)]
    kept, seen = [], set()
    for value in candidates:
        if math.isnan(value):
            if nan and "nan" not in seen:
                seen.add("nan")
                kept.append(value)
            continue
        rounded = float(torch.tensor(value, dtype=torch.float64).to(dtype).item())  # as the tensor will hold it
        key = (rounded, math.copysign(1.0, rounded))
        if key not in seen and contains(domain, rounded):
            seen.add(key)
            kept.append(value)
    return kept


def integer_edges(dtype: torch.dtype, domain: Interval | None, *, divisor: bool = False) -> list[int]:
    """Zero, ones, the extremes and small ties; never the minimum (``min // -1`` traps) nor 0 for a divisor."""
    info = torch.iinfo(dtype)
    candidates = [0, 1, -1, 2, -2, 3, -3, 7, -7, info.max, info.min + 1]
    if divisor:
        candidates = [v for v in candidates if v != 0]
    return [v for v in dict.fromkeys(candidates) if info.min <= v <= info.max and contains(domain, float(v))]


def edges_for(tensor: torch.Tensor, domain: Interval | None, divisor: bool = False, nan: bool = True) -> list:
    if tensor.dtype == torch.bool:
        return [False, True]
    if tensor.dtype.is_complex:
        part = float_edges(torch.float32 if tensor.dtype == torch.complex64 else torch.float64, None)
        finite = [v for v in part if math.isfinite(v)]  # as values.py: C99 Annex G cases are not promised
        return [complex(a, b) for a, b in zip(finite, reversed(finite))]
    if tensor.dtype.is_floating_point:
        return float_edges(tensor.dtype, domain, nan=nan)
    return integer_edges(tensor.dtype, domain, divisor=divisor)


def _large_finite(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value) \
        and abs(value) >= ACCUMULATING_LIMIT


def _filled(tensor: torch.Tensor, edges: list, start: int) -> torch.Tensor:
    """A copy of ``tensor`` (layout kept) holding ``edges`` cyclically from ``start``."""
    out = copy_preserving_layout(tensor)

    def cycle(n: int) -> torch.Tensor:
        flat = [edges[(start + i) % len(edges)] for i in range(n)]
        wide = torch.float64 if tensor.dtype.is_floating_point else None  # round once, to the tensor's dtype
        return torch.tensor(flat, dtype=wide).to(tensor.dtype)

    try:
        out.copy_(cycle(out.numel()).reshape(out.shape))
    except RuntimeError:  # an expanded view: elements share memory, so write its few distinct ones in the storage
        storage = storage_view(out)
        storage.copy_(cycle(storage.numel()))
    return out


def _data_tensors(call: Call, dtype: torch.dtype) -> list[tuple[str, torch.Tensor]]:
    """(argument name, tensor) for the call's data tensors, in order."""
    _, arguments = arguments_of_call(call)
    found: list[tuple[str, torch.Tensor]] = []
    named = dict(zip([a.name for a in arguments], call.args))
    named.update(call.kwargs)
    for name, value in named.items():
        items = value if isinstance(value, (list, tuple)) else [value]
        for item in items:
            if isinstance(item, torch.Tensor) and item.dtype == dtype and item.numel() > 0:
                found.append((name, item))
    return found


def arguments_of_call(call: Call):
    from opspec.bridge.torch_ops import all_aten_schemas

    return arguments_of(all_aten_schemas()[call.op])


def value_variants(call: Call, hints: TestingHints, dtype: torch.dtype) -> list[Call]:
    """The call with its data tensors holding every edge value of their domain (see the module doc)."""
    data = _data_tensors(call, dtype)
    if not data:
        return []
    edge_lists = [edges_for(t, hints.domain.get(name), INTEGER_DIVISOR.get(call.op) == name,
                            nan=NAN_UNDEFINED.get(call.op) != name) for name, t in data]
    if call.op in ACCUMULATES:
        edge_lists = [[v for v in edges if not _large_finite(v)] for edges in edge_lists]
    if call.op in SQUARES_INPUTS:  # torch's one-pass statistics of an infinity are NaN, the op's are not: rows say it
        edge_lists = [[v for v in edges if not (isinstance(v, float) and math.isinf(v))] for edges in edge_lists]
    smallest = min(t.numel() for _, t in data)
    longest = max(len(e) for e in edge_lists)
    count = min(MAX_VALUE_VARIANTS, max(1, math.ceil(longest / smallest)))
    rotations = (3, 0) if len(data) > 1 else (3,)  # rotated, then aligned: each edge meets itself
    variants = []
    for rotation in rotations:
        for k in range(count):
            replacements = {id(t): _filled(t, edges, k * smallest + rotation * i)
                            for i, ((_, t), edges) in enumerate(zip(data, edge_lists))}
            variants.append(_replace_tensors(call, replacements))
    ties = _tie_variants(call, data) if call.op in PICKS_ELEMENTS else []
    return variants + ties + _beyond_domain(call, data, hints, smallest)


def _tie_variants(call: Call, data: list[tuple[str, torch.Tensor]]) -> list[Call]:
    """The call with its data tensors holding ``TIE_FILLS``, each tensor one place on from the one before (so
    that -0 meets +0 across tensors too); fills that an integer or bool dtype makes equal are run once."""
    variants, seen = [], set()
    for fill in TIE_FILLS:
        replacements, key = {}, []
        for i, (_, tensor) in enumerate(data):
            values = [v if tensor.dtype.is_floating_point or tensor.dtype.is_complex
                      else bool(v) if tensor.dtype == torch.bool else int(v) for v in fill]
            replacements[id(tensor)] = _filled(tensor, values, i)
            key.append(tuple((v, math.copysign(1.0, v.real if isinstance(v, complex) else v)) for v in values))
        if tuple(key) not in seen:
            seen.add(tuple(key))
            variants.append(_replace_tensors(call, replacements))
    return variants


def _beyond_domain(call: Call, data: list[tuple[str, torch.Tensor]], hints: TestingHints, smallest: int) -> list[Call]:
    """The call with each domain-bounded tensor holding the edge values outside its domain (log of a
    negative, sqrt of -inf, a divisor of 0 or below 1), the other tensors at ordinary values. Torch defines
    a result there (NaN, +-inf or a number); where it raises instead, the caller drops the variant."""
    variants = []
    for name, tensor in data:
        domain = hints.domain.get(name)
        if domain is None or NAN_UNDEFINED.get(call.op) == name or tensor.dtype.is_complex:
            continue
        # an integer divisor of 0, or of -1 under a drawn minimum, traps (SIGFPE): that is no result
        divisor = INTEGER_DIVISOR.get(call.op) == name
        outside = [v for v in edges_for(tensor, None, divisor) if not (isinstance(v, float) and math.isnan(v))
                   and not contains(domain, float(v)) and not (divisor and v == -1 and isinstance(v, int))]
        for k in range(min(MAX_VALUE_VARIANTS, math.ceil(len(outside) / max(1, tensor.numel())))):
            variants.append(_replace_tensors(call, {id(tensor): _filled(tensor, outside, k * tensor.numel())}))
    return variants


def _replace_tensors(call: Call, replacements: dict[int, torch.Tensor]) -> Call:
    def swap(value: Any) -> Any:
        if isinstance(value, torch.Tensor):
            return replacements.get(id(value), value)
        if isinstance(value, (list, tuple)):
            return type(value)(swap(v) for v in value)
        return value

    return Call(call.op, swap(call.args), {k: swap(v) for k, v in call.kwargs.items()})


def branch_variants(call: Call) -> list[Call]:
    """The call with its constants set, in turn, to each of ``BRANCHES[op]`` (schema defaults filled in)."""
    settings = BRANCHES.get(call.op, ())
    if not settings:
        return []
    return [with_settings(call, setting) for setting in settings]
