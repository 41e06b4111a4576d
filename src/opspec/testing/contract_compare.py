"""An elementwise output judged by its op's accuracy contract: ULPs against the correctly rounded result.

Where an op has a ULP contract in a dtype (``opset/accuracy.yaml``, :mod:`opspec.spec.accuracy`), each element
whose input lies in the contract's domain is held to the contract's bound, its subnormal latitude applied, in
place of (rtol, atol) against the eager kernel: a result 4 ULP off passes any tolerance meant for every op, and
fails a contract of 1. An element whose input lies outside the domain (the log of a negative), where the
contract promises nothing, must match the eager kernel by the comparison rule (:mod:`.compare`).

An op of several tensors is judged so where the call gives each of the reference function's tensor arguments as a
tensor of the contract's dtype (a mask as bool), broadcast element by element, and its other arguments are the
contract's fixed ones or their defaults: ``add.Tensor`` with an alpha, or ``clamp`` at bounds the contract was not
measured at, keeps the comparison rule. An element is inside the domain where every operand is inside its own.
"""
from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any, Mapping, Sequence

import torch

from opspec.spec import accuracy as spec_accuracy
from opspec.spec.accuracy import UlpContract
from opspec.spec.model import Tolerance
from opspec.testing import compare
from opspec.testing.accuracy import errors_of
from opspec.testing.accuracy_functions import FUNCTIONS
from opspec.testing.accuracy_inputs import within
from opspec.testing.slots import Slot, split_tensors


def place(contract: UlpContract) -> str:
    """How a report cites the contract: by op and dtype, which stay put when lines are added above them (a line
    number would go stale with the next contract), and the same whichever copy of the data was read."""
    return f"opset/{Path(contract.mark.path).name}#{contract.op}/{contract.dtype}"


def contract_for(op: str, dtype: str) -> UlpContract | None:
    """The op's ULP contract in ``dtype`` where a reference function measures it: of one tensor or several, with
    the contract's fixed arguments. Ops with an error model or a bool result have none, and keep their judging."""
    return spec_accuracy.bundled_contracts().ulp_of(op, dtype) if op in FUNCTIONS else None


def operands_of_call(contract: UlpContract | None, args: Sequence[Any],
                     kwargs: Mapping[str, Any]) -> dict[str, torch.Tensor] | None:
    """:func:`operands` for a call given with its tensors in place (not as a skeleton and its inputs)."""
    skeleton_args, skeleton_kwargs, inputs = split_tensors(tuple(args), dict(kwargs))
    return operands(contract, skeleton_args, skeleton_kwargs, inputs)


def applies(contract: UlpContract | None, inputs: list[torch.Tensor], written: tuple[int, ...] = ()) -> bool:
    """Whether a call of the contract's op on ``inputs`` alone (positionally) can be judged by it."""
    return operands(contract, tuple(Slot(i) for i in range(len(inputs))), {}, inputs, written) is not None


_MISSING = object()


def operands(contract: UlpContract | None, args: Sequence[Any], kwargs: Mapping[str, Any],
             inputs: Sequence[torch.Tensor], written: Sequence[int] = ()) -> dict[str, torch.Tensor] | None:
    """The call's tensors by the reference function's argument names, where the contract can judge the call
    (``args``, ``kwargs``: its skeleton, a tensor as a ``Slot`` into ``inputs``); None where it cannot: a tensor
    of another dtype, another tensor, a written one, an argument neither the contract's nor its default."""
    from opspec.bridge import torch_ops

    if contract is None or contract.op not in FUNCTIONS or written:
        return None
    function = FUNCTIONS[contract.op]
    try:
        schema = torch_ops.resolve(contract.op)._schema.arguments
    except Exception:  # noqa: BLE001 - an op the installed torch lacks is not judged by the contract
        return None
    if len(args) > len(schema) or set(kwargs) - {a.name for a in schema}:
        return None
    bound = {**{a.name: value for a, value in zip(schema, args)}, **kwargs}
    found: dict[str, torch.Tensor] = {}
    for argument in schema:
        value = bound.get(argument.name, _MISSING)
        if argument.name in function.args:
            if not isinstance(value, Slot):
                return None
            tensor = inputs[value.index]
            wanted = torch.bool if argument.name in function.masks else getattr(torch, contract.dtype)
            if tensor.dtype != wanted:
                return None
            found[argument.name] = tensor
            continue
        if isinstance(value, Slot) or _has_slot(value):
            return None
        expected = contract.arguments.get(argument.name, _MISSING)
        if expected is _MISSING:  # not fixed by the contract: given as its default, or left out
            if value is not _MISSING and not (argument.has_default_value() and _same(value, argument.default_value)):
                return None
        elif not _same(argument.default_value if value is _MISSING and argument.has_default_value() else value,
                       expected):
            return None
    return found if set(found) == set(function.args) else None


def _has_slot(value: Any) -> bool:
    if isinstance(value, (list, tuple)):
        return any(isinstance(v, Slot) or _has_slot(v) for v in value)
    return False


def _same(value: Any, expected: Any) -> bool:
    if isinstance(value, bool) or isinstance(expected, bool):
        return value is expected
    if isinstance(value, (int, float)) and isinstance(expected, (int, float)):
        return float(value) == float(expected) or (value != value and expected != expected)
    return value == expected


def compare_with_contract(candidate, reference: torch.Tensor, x: torch.Tensor | Mapping[str, torch.Tensor],
                          contract: UlpContract, *, tolerance: Tolerance | None = None,
                          near_zero: bool = False) -> compare.Comparison:
    """``candidate``, the backend's result of the op on ``x`` (its one tensor, or its tensors by the reference
    function's argument names, as :func:`operands` gives them), against the contract inside its domain and
    against the eager kernel's ``reference`` outside it."""
    whole = compare.compare(candidate, reference, tolerance=tolerance, near_zero=near_zero)
    function = FUNCTIONS[contract.op]
    named = dict(x) if isinstance(x, Mapping) else {function.args[0]: x}
    try:
        spread = dict(zip(named, torch.broadcast_tensors(*named.values())))
    except RuntimeError:
        return whole
    if not (isinstance(candidate, torch.Tensor) and candidate.dtype == reference.dtype
            and candidate.shape == reference.shape
            and all(t.shape == reference.shape for t in spread.values())):
        return whole  # its message says what does not match
    got, eager = (t.detach().cpu().reshape(-1) for t in (candidate, reference))
    flat = {name: t.detach().cpu().reshape(-1) for name, t in spread.items()}
    inside = torch.ones(len(got), dtype=torch.bool)
    for name, intervals in contract.domain.items():
        inside &= torch.from_numpy(within(flat[name], intervals))
    found = errors_of(got[inside], [flat[name][inside] for name in function.args], function, contract.subnormals,
                      contract.arguments)
    max_ulp = float(found.errors.max(initial=0.0))
    numbers = {"max_abs_error": whole.max_abs_error, "max_rel_error": whole.max_rel_error, "max_ulp": max_ulp}
    if max_ulp > contract.max_ulp:
        worst = found.worst()[0]
        return compare.Comparison(False, f"output: {contract.op} {contract.dtype}: {worst.describe()}; the contract "
                                         f"allows {contract.max_ulp:g} ULP ({place(contract)})", **numbers)
    outside = compare.compare(got[~inside], eager[~inside], tolerance=tolerance, near_zero=near_zero)
    if not outside.ok:
        return dataclasses.replace(outside, message=f"outside the contract's domain: {outside.message}",
                                   outside=True, **numbers)
    return compare.Comparison(True, "", **numbers)
