"""A case held to its op's accuracy contract: the backend's program of the op over the contract's inputs.

Where the op has a ULP contract in the case's dtype (``opset/accuracy.yaml``), a case whose drawn examples pass
also compiles the op over 1-D tensors of the contract's inputs (:mod:`.accuracy_programs`), its fixed non-tensor
arguments (the contract's ``arguments``) as literals. The inputs are those ``opspec accuracy`` measures
(:func:`opspec.testing.accuracy.all_inputs`): for an op of one tensor, every float16 or bfloat16 value of the
domain, or CASE_SAMPLES float32 or float64 values stratified by binade; for an op of several tensors,
CASE_SAMPLES pairs (or triples) of operands each stratified by binade, a mask alternating at random; seeded by
the case, so every run measures the same inputs. The backend builds it as it builds the case's own programs, one
compile more. Its largest error in ULPs against the correctly rounded results, the contract's subnormal latitude
applied, must be within the contract: a kernel a few ULP off on one binade passes any (rtol, atol) meant for
every op, and a sample this size finds it. A program that does not build or run is the case's compile-error or
run-error.

A backend that cannot run an input that large says so (``Declaration.largest_input``, or an
``opspec_largest_input`` attribute on its callable); its cases are judged on their drawn examples alone, and
the record says so.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable, Mapping

import torch

from opspec.checks import accuracy as checks_accuracy
from opspec.conform import accuracy_programs, cases
from opspec.conform.backends import CompileError
from opspec.spec.accuracy import PRESERVE, UlpContract
from opspec.spec.errors import one_line
from opspec.testing import accuracy as measure
from opspec.testing.accuracy_functions import FUNCTIONS
from opspec.testing.contract_compare import contract_for, place

CASE_SAMPLES = 16_384  # float32/float64 inputs per case: about 0.1 s to judge (erf in float64: 1 s, all mpmath)


class ProgramError(Exception):
    """The accuracy program did not build or did not run: the case's ``status`` with the backend's message."""

    def __init__(self, status: str, message: str):
        super().__init__(message)
        self.status = status


@dataclass
class Verdict:
    section: dict[str, Any]  # the record's ``accuracy``
    failed: dict[str, Any] | None = None  # status and message, where the case does not pass


def largest_input(backend) -> int | None:
    """The most elements one input tensor may hold for ``backend``, as it declares (None: no limit)."""
    declared = backend.declaration.largest_input if backend.declaration is not None else None
    return declared if declared is not None else getattr(backend.inner, "opspec_largest_input", None)


def planned_inputs(contract: UlpContract, seed: int, samples: int = CASE_SAMPLES) -> int:
    """The elements of each input tensor of the case's accuracy program."""
    function = FUNCTIONS[contract.op]
    measured = [arg for arg in function.args if arg not in function.masks]
    dtype = getattr(torch, contract.dtype)
    if len(measured) == 1:
        return len(measure.inputs_for(dtype, contract.domain[measured[0]], samples, seed)[0])
    return len(measure.all_inputs(function, dtype, contract.domain, samples, seed)[0][0])


def kernel(backend, op: str, program: Callable | None = None,
           arguments: Mapping[str, Any] | None = None) -> Callable[..., torch.Tensor]:
    """The backend's program of ``op`` on its tensor arguments (the reference function's order), ``arguments``
    fixed, built for the tensors it is given and run; an ``out=`` overload writes into a tensor the program is
    given last. A failure to build or run is a ProgramError with the status a drawn example's would have."""
    tensors = FUNCTIONS[op].args
    writes = accuracy_programs.writes(op)
    program = program or accuracy_programs.program(op, tensors + (("out",) if writes else ()), arguments)

    def run(*inputs: torch.Tensor) -> torch.Tensor:
        if writes:
            inputs = (*inputs, torch.empty_like(next(t for t in inputs if t.is_floating_point())))
        try:
            built = backend.compile(program, list(inputs))
        except Exception as err:  # noqa: BLE001 - the backend under test may fail any way
            raise ProgramError("compile-error", str(err) if isinstance(err, CompileError) else one_line(err)) from err
        try:
            result = built(*inputs)
        except CompileError as err:  # backends that compile lazily fail at the first call
            raise ProgramError("compile-error", str(err)) from err
        except Exception as err:  # noqa: BLE001
            raise ProgramError("run-error", one_line(err)) from err
        return result[0] if writes and isinstance(result, (tuple, list)) else result  # a repro returns (result, out)

    return run


def judge(backend, contract: UlpContract, device: str, seed: int, examples_max_ulp: float | None = None, *,
          samples: int = CASE_SAMPLES, program: Callable | None = None) -> Verdict:
    """The accuracy program of the contract's op and dtype through ``backend``, judged against the contract.
    ``examples_max_ulp``: the drawn examples' largest error, recorded beside the program's."""
    planned = planned_inputs(contract, seed, samples)
    limit = largest_input(backend)
    if limit is not None and planned > limit:
        return Verdict(section(contract, None, examples_max_ulp,
                               f"not run: {backend.name} takes inputs of at most {limit} elements and the program "
                               f"has {planned}; the drawn examples alone were judged"))
    try:
        found = measure.measure(kernel(backend, contract.op, program, contract.arguments), FUNCTIONS[contract.op],
                                getattr(torch, contract.dtype), contract.domain, contract.subnormals,
                                samples=samples, seed=seed, device=device, arguments=contract.arguments)
    except ProgramError as err:
        return Verdict(section(contract, None, examples_max_ulp, "did not build or run"),
                       {"status": err.status, "message": f"the accuracy program ({contract.op} over {planned} "
                                                         f"values): {err}"})
    except measure.MeasurementError as err:
        return Verdict(section(contract, None, examples_max_ulp, "returned no result to judge"),
                       {"status": "fail", "message": f"the accuracy program: {err}"})
    judged = section(contract, found, examples_max_ulp)
    if found.max_ulp <= contract.max_ulp:
        return Verdict(judged)
    return Verdict(judged, {"status": "fail", "message": broken(contract, found)})


def broken(contract: UlpContract, found: measure.Measurement) -> str:
    """Op, dtype, worst input, both results and the distance, the contract and the inputs measured."""
    finding = checks_accuracy.judge(checks_accuracy.Judged(contract, found))
    over = "every value of the domain" if found.exhaustive else f"a sample stratified by binade, seed {found.seed}"
    return f"{finding.message} ({place(contract)}); measured over {found.inputs} inputs ({over})"


def section(contract: UlpContract, found: measure.Measurement | None, examples_max_ulp: float | None,
            program: str = "") -> dict[str, Any]:
    """The record's ``accuracy``: the contract, the largest error measured and where, and how."""
    measured = [u for u in (found.max_ulp if found else None, examples_max_ulp) if u is not None]
    entry: dict[str, Any] = {
        "contract": _contract(contract),
        "max_ulp": _ulp(max(measured)) if measured else None,
        "inputs": found.inputs if found else 0,
        "worst": [_finite(w.to_dict()) for w in found.worst] if found else [],
        "examples_max_ulp": _ulp(examples_max_ulp) if examples_max_ulp is not None else None,
    }
    if found is not None:
        entry.update(exhaustive=found.exhaustive, seed=found.seed)
        if found.flushed:
            entry["flushed"] = found.flushed
    if program:
        entry["program"] = program
    return entry


def _contract(contract: UlpContract) -> dict[str, Any]:
    described: dict[str, Any] = {"max_ulp": contract.max_ulp, "where": place(contract)}
    latitude = contract.subnormals
    if (latitude.inputs, latitude.results) != (PRESERVE, PRESERVE):
        described["subnormals"] = {"inputs": latitude.inputs, "results": latitude.results}
    return described


def _ulp(error: float) -> float | str:
    return _finite(measure.rounded_up(error))


def _finite(value: Any) -> Any:
    """JSON has no infinity or NaN: such a number is written as the string 'inf', '-inf' or 'nan'."""
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if isinstance(value, dict):
        return {key: _finite(item) for key, item in value.items()}
    return value


def reproduces(reference, contract: UlpContract, device: str, seed: int) -> str | None:
    """The status a reference layer gets on the case's accuracy program; None where it holds the contract."""
    try:
        failed = judge(reference, contract, device, seed).failed
    except Exception as err:  # noqa: BLE001 - the reference itself broke: it reproduces
        return type(err).__name__
    return failed["status"] if failed is not None else None


def worst_inputs(section: dict[str, Any], dtype: str, argument: str | None = None) -> torch.Tensor:
    """The worst inputs a section names, as the tensor a repro shows (empty before the program has run): every
    argument's, or ``argument``'s alone."""
    values = [float(w["inputs"][name]) for w in section.get("worst", []) for name in w["inputs"]
              if argument is None or name == argument]
    return torch.tensor(values, dtype=getattr(torch, dtype))


def repro_example(op: str, section: dict[str, Any] | None, dtype: str) -> cases.Example:
    """The call a repro of the accuracy program shows: the program the case measured, its worst inputs."""
    from opspec.testing.strategies import Call

    contract = contract_for(op, dtype)
    function = FUNCTIONS.get(op)
    if contract is None or (function.args == ("self",) and not contract.arguments
                            and not accuracy_programs.writes(op)):
        return cases.Example.of(Call(op, (worst_inputs(section or {}, dtype),), {}))
    kwargs: dict[str, Any] = {name: worst_inputs(section or {}, "bool" if name in function.masks else dtype, name)
                              for name in function.args}
    kwargs.update(contract.arguments)
    if accuracy_programs.writes(op):
        kwargs["out"] = torch.empty_like(kwargs[next(a for a in function.args if a not in function.masks)])
    return cases.Example.of(Call(op, (), kwargs))
