"""A pointwise row again at the kernel's other paths: long enough to vectorise, and broadcast.

A row states a few elements, and at a few elements torch's CPU kernels take their
scalar loop. Past the vector width they take the vectorised body and a scalar tail
for the rest, and an input whose inner stride is 0 (a broadcast one) takes the body
that holds it in a register: at special values these paths have disagreed (``gelu``
of +inf is NaN inside a vector). So a row of an op torch tags pointwise, whose
tensor inputs are 1-d of one length L (or all 0-d), is run twice more:

- ``long``: each such input repeated cyclically to LONG elements (odd, past two vectors of
  one-byte lanes on AVX-512, so body and tail both run in every dtype); the result is the
  row's, repeated the same way;
- ``broadcast``: for each such input in turn (when there are two or more), that input as a
  column ``[L, 1]`` against the others ``[L, LONG]``; row j of the result is element j of
  the row's.

Each variant is the row as a ``SpecialCase`` with its result literals rewritten, so it is
judged like the row itself. A row whose answer depends on the path says so with
``stated_shape`` (the paths, and the measured reason): there the row's latitude holds for
torch too, element by element (a vectorised body and its scalar tail may answer
differently in one tensor), and a path it names without a latitude is not run.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import torch

from opspec.spec.special_cases import Latitude, SpecialCase
from opspec.testing import special_cases as rows

LONG = 131  # 2 x 64 int8 lanes (AVX-512, the loop unrolls two vectors) + a tail of 3


PATHS = ("long", "broadcast")


@dataclass(frozen=True)
class Variant:
    path: str  # "long" or "broadcast of ARG"
    case: SpecialCase  # the row with its result literals rewritten for the variant's shape
    args: tuple
    kwargs: dict


def _length(tensors: list[torch.Tensor]) -> int | None:
    """L when every tensor is 1-d of length L >= 1 or 0-d (0 when all are 0-d); None otherwise."""
    lengths = {t.shape[0] for t in tensors if t.dim() == 1}
    if any(t.dim() > 1 for t in tensors) or len(lengths) > 1 or 0 in lengths:
        return None
    return lengths.pop() if lengths else 0


def _rewrite(literal: Any, length: int, positions: list[int], shape: list[int]) -> Any:
    """The literal of a result whose flat element i is the row result's element ``positions[i]``; None when the
    literal is not a result of ``length`` elements (then the row is not varied)."""
    spec = dict(literal) if isinstance(literal, dict) else {"values": literal}
    if "fill" in spec or "values" not in spec:
        if list(spec.get("shape", ())) != ([length] if length else []):
            return None
        return {**spec, "shape": shape}
    values = spec["values"]
    if "shape" in spec and list(spec["shape"]) != ([length] if length else []):
        return None
    if length == 0:
        if isinstance(values, list):
            return None
        flat = [values] * len(positions)
    else:
        if not isinstance(values, list) or len(values) != length or any(isinstance(v, list) for v in values):
            return None
        flat = [values[p] for p in positions]
    return {**spec, "values": flat, "shape": shape}


def _rewritten_case(case: SpecialCase, length: int, positions: list[int], shape: list[int]) -> SpecialCase | None:
    def each(literal):
        return None if literal is None else _rewrite(literal, length, positions, shape)

    if case.raises:
        return case
    if case.expect_each is not None:
        outputs = [each(e) for e in case.expect_each]
        if any(new is None and old is not None for new, old in zip(outputs, case.expect_each)):
            return None
        changed = replace(case, expect_each=tuple(outputs))
    else:
        expect = each(case.expect)
        if expect is None:
            return None
        changed = replace(case, expect=expect)
    if case.latitude:
        allowed = [each(a) for a in case.latitude.allowed]
        if any(a is None for a in allowed):
            return None
        changed = replace(changed, latitude=Latitude(tuple(allowed), case.latitude.reason, case.latitude.torch_too,
                                                     case.latitude.policy))
    return changed


def _tensor_places(args: tuple, kwargs: dict) -> list[tuple[str | int, torch.Tensor]]:
    return [(i, a) for i, a in enumerate(args) if isinstance(a, torch.Tensor)] + \
           [(k, v) for k, v in kwargs.items() if isinstance(v, torch.Tensor)]


def _with(args: tuple, kwargs: dict, new: dict) -> tuple[tuple, dict]:
    return (tuple(new.get(i, a) for i, a in enumerate(args)), {k: new.get(k, v) for k, v in kwargs.items()})


def variants(case: SpecialCase, op: Any, args: tuple, kwargs: dict) -> list[Variant]:
    """The row's long and broadcast variants (none for an op torch does not tag pointwise or inputs that are not
    1-d of one length; none at a path the row's ``stated_shape`` names when the row has no latitude)."""
    if torch.Tag.pointwise not in op.tags:
        return []
    return [v for v in _variants(case, op, args, kwargs) if case.latitude or not _bound(case, v)]


def _bound(case: SpecialCase, variant: Variant) -> bool:
    """Whether the row says its answer differs at the variant's path."""
    return bool(case.stated_shape) and variant.path.split()[0] in case.stated_shape.paths


def _variants(case: SpecialCase, op: Any, args: tuple, kwargs: dict) -> list[Variant]:
    if any(isinstance(a, (list, tuple)) and any(isinstance(x, torch.Tensor) for x in a)
           for a in (*args, *kwargs.values())):
        return []
    places = _tensor_places(args, kwargs)
    length = _length([t for _, t in places])
    if not places or length is None:
        return []
    found = []
    index = torch.arange(LONG) % max(length, 1)
    positions = index.tolist() if length else [0] * LONG
    long_case = _rewritten_case(case, length, positions, [LONG])
    if long_case is not None:
        grown = {place: (t[index.to(t.device)] if length else t.reshape(1).expand(LONG).clone())
                 for place, t in places if t.dim() == 1 or not length}
        found.append(Variant("long", long_case, *_with(args, kwargs, grown)))
    vectors = [(place, t) for place, t in places if t.dim() == 1]
    written = {place for place, _ in vectors if _writes(op, place)}  # an out= tensor takes the result's shape
    if len(vectors) - len(written) >= 2:
        wide_case = _rewritten_case(case, length, [j for j in range(length) for _ in range(LONG)], [length, LONG])
        for place, column in vectors if wide_case is not None else ():
            if place in written:
                continue
            new = {p: t.reshape(length, 1).expand(length, LONG).clone() for p, t in vectors}
            new[place] = column.reshape(length, 1)
            found.append(Variant(f"broadcast of {_argument(op, place).name}", wide_case, *_with(args, kwargs, new)))
    return found


def _argument(op: Any, place: "int | str"):
    """The schema argument at a positional place or of a keyword."""
    if isinstance(place, str):
        return next(a for a in op._schema.arguments if a.name == place)
    return [a for a in op._schema.arguments if not a.kwarg_only][place]


def _writes(op: Any, place: "int | str") -> bool:
    alias = _argument(op, place).alias_info
    return bool(alias and alias.is_write)


def judge(variant: Variant, row: SpecialCase, dtype: str, outcome: Any) -> rows.Judgement:
    """The variant's outcome judged as torch's answer to the row: exactly, unless the row's latitude holds for torch
    at this path (``torch_too``, or a path its ``stated_shape`` names); then each element may be the expected
    one or an allowed one at its place."""
    case = variant.case
    exact = rows.judge(case, dtype, outcome, latitude=False)
    lenient = case.latitude and (case.latitude.torch_too or _bound(row, variant))
    if exact.ok or not lenient or case.raises or isinstance(outcome, BaseException):
        return exact
    options = [case.expect_each] if case.expect_each is not None else [(case.expect,)]
    options += [tuple(a) if case.expect_each is not None else (a,) for a in case.latitude.allowed]
    outputs = rows.outputs_of(outcome)
    for position, got in enumerate(outputs):
        masks = []
        for option in options:
            if len(option) != len(outputs):
                continue
            if option[position] is None:
                break  # the row says nothing of this output
            agreement = rows.element_agreement(option[position], got, case.rtol)
            masks += [agreement] if isinstance(agreement, torch.Tensor) else []
        else:
            if not masks or not bool(torch.stack(masks).any(0).all()):
                return exact
    used = f"allowed results, element by element ({case.latitude.reason})"
    return rows.Judgement(True, latitude=used, expected=exact.expected, got=exact.got)
