"""An elementwise output judged by its op's accuracy contract: ULPs against the correctly rounded result.

Where an op has a ULP contract in a dtype (``opset/accuracy.yaml``, :mod:`opspec.spec.accuracy`), each element
whose input lies in the contract's domain is held to the contract's bound, its subnormal latitude applied, in
place of (rtol, atol) against the eager kernel: a result 4 ULP off passes any tolerance meant for every op, and
fails a contract of 1. An element whose input lies outside the domain (the log of a negative), where the
contract promises nothing, must match the eager kernel by the comparison rule (:mod:`.compare`).
"""
from __future__ import annotations

import dataclasses
from pathlib import Path

import torch

from opspec.spec.accuracy import UlpContract
from opspec.spec.model import Tolerance
from opspec.testing import compare
from opspec.testing.accuracy import errors_of
from opspec.testing.accuracy_functions import FUNCTIONS
from opspec.testing.accuracy_inputs import within


def place(contract: UlpContract) -> str:
    """The contract's place as the repository spells it, whichever copy of the data (checkout or wheel) was read."""
    return f"opset/{Path(contract.mark.path).name}:{contract.mark.line}"


def applies(contract: UlpContract | None, inputs: list[torch.Tensor], written: tuple[int, ...] = ()) -> bool:
    """Whether a call of the contract's op on ``inputs`` can be judged by it: one tensor in, nothing written."""
    return contract is not None and contract.op in FUNCTIONS and FUNCTIONS[contract.op].args == ("self",) \
        and not contract.arguments and len(inputs) == 1 and not written \
        and inputs[0].dtype == getattr(torch, contract.dtype)


def compare_with_contract(candidate, reference: torch.Tensor, x: torch.Tensor, contract: UlpContract, *,
                          tolerance: Tolerance | None = None, near_zero: bool = False) -> compare.Comparison:
    """``candidate``, the backend's result of the op on ``x``, against the contract inside its domain and against
    the eager kernel's ``reference`` outside it."""
    whole = compare.compare(candidate, reference, tolerance=tolerance, near_zero=near_zero)
    if not (isinstance(candidate, torch.Tensor) and candidate.dtype == reference.dtype
            and candidate.shape == reference.shape and x.shape == reference.shape):
        return whole  # its message says what does not match
    (argument, intervals), = contract.domain.items()
    flat_x, got, eager = (t.detach().cpu().reshape(-1) for t in (x, candidate, reference))
    inside = torch.from_numpy(within(flat_x, intervals))
    found = errors_of(got[inside], flat_x[inside], FUNCTIONS[contract.op], contract.subnormals)
    max_ulp = float(found.errors.max(initial=0.0))
    numbers = {"max_abs_error": whole.max_abs_error, "max_rel_error": whole.max_rel_error, "max_ulp": max_ulp}
    if max_ulp > contract.max_ulp:
        worst = found.worst()[0]
        return compare.Comparison(False, f"output: {contract.op} {contract.dtype}: {worst.describe()}; the contract "
                                         f"allows {contract.max_ulp:g} ULP ({place(contract)})", **numbers)
    outside = compare.compare(got[~inside], eager[~inside], tolerance=tolerance, near_zero=near_zero)
    if not outside.ok:
        return dataclasses.replace(outside, message=f"outside the contract's domain: {outside.message}", **numbers)
    return compare.Comparison(True, "", **numbers)
