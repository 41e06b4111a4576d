"""Measure a kernel's accuracy: run it on the inputs, compare with the correctly rounded results, summarise.

The parts, each a module: :mod:`~opspec.testing.ulp` orders a dtype's values by bit pattern and measures errors
in ULPs; :mod:`~opspec.testing.accuracy_functions` names each op's mathematical function;
:mod:`~opspec.testing.correct_rounding` rounds the exact result once to the result dtype;
:mod:`~opspec.testing.accuracy_inputs` enumerates 16-bit dtypes and samples wider ones by binade. The contracts
are data (``opset/accuracy.yaml``, :mod:`opspec.spec.accuracy`).

The summary of one op in one dtype is a histogram of errors in ULPs (buckets 0, 0.5, 1, 2, 4, ...: each counts
the errors above the bucket before it, up to its own bound; ``inf`` counts NaN or infinity mismatches), the
largest error, and the inputs where it was largest. A contract's subnormal latitude is applied before the
summary: a flushed input is judged against the result at zero as well, a flushed result counts as no error.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable, Mapping, Sequence

import numpy as np
import torch

from opspec.spec.accuracy import MAY_FLUSH, SubnormalPolicy
from opspec.spec.model import Interval
from opspec.testing import accuracy_inputs as drawn
from opspec.testing.accuracy_functions import Function
from opspec.testing.correct_rounding import correctly_rounded
from opspec.testing.ulp import format_of, ordinals, ulp_error

WORST_SHOWN = 3


class MeasurementError(Exception):
    """The kernel returned something that cannot be judged (another dtype or shape): one line."""


@dataclass(frozen=True)
class Worst:
    """One input where the error was largest, with both results."""

    inputs: Mapping[str, float]  # argument -> value
    got: float
    rounded: float  # the correctly rounded result
    ulp: float

    def to_dict(self) -> dict[str, Any]:
        return {"inputs": dict(self.inputs), "got": self.got, "rounded": self.rounded, "ulp": self.ulp}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "Worst":
        return cls(dict(data["inputs"]), float(data["got"]), float(data["rounded"]), float(data["ulp"]))

    def describe(self) -> str:
        where = ", ".join(f"{arg}={value!r}" for arg, value in self.inputs.items())
        return f"{where}: got {self.got!r}, correctly rounded {self.rounded!r}, {_ulps(self.ulp)}"


@dataclass(frozen=True)
class Measurement:
    op: str
    dtype: str
    inputs: int
    exhaustive: bool
    max_ulp: float
    worst: tuple[Worst, ...]
    histogram: Mapping[str, int]  # bucket -> count, empty buckets left out
    flushed: int = 0  # results the subnormal latitude accepted as zero
    refined: int = 0  # inputs whose rounding needed mpmath
    seed: int | None = None  # of the sample; None when exhaustive

    def to_dict(self) -> dict[str, Any]:
        return {"op": self.op, "dtype": self.dtype, "inputs": self.inputs, "exhaustive": self.exhaustive,
                "seed": self.seed, "max_ulp": self.max_ulp, "worst": [w.to_dict() for w in self.worst],
                "histogram": dict(self.histogram), "flushed": self.flushed, "refined": self.refined}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "Measurement":
        return cls(data["op"], data["dtype"], data["inputs"], data["exhaustive"], float(data["max_ulp"]),
                   tuple(Worst.from_dict(w) for w in data["worst"]), dict(data["histogram"]), data.get("flushed", 0),
                   data.get("refined", 0), data.get("seed"))


def rounded_up(error: float) -> float:
    """``error`` to 4 decimals, rounded up, so a result a little off correct rounding never reads as 0.5 ULP."""
    return math.ceil(error * 10_000) / 10_000 if error < 1e6 else float(f"{error:.4g}")


def _ulps(error: float) -> str:
    return "NaN or infinity mismatch" if math.isinf(error) else f"{rounded_up(error):g} ULP"


def inputs_for(dtype: torch.dtype, domain: Sequence[Interval], samples: int, seed: int) -> tuple[torch.Tensor, bool]:
    """Every value of a 16-bit dtype in the domain, else a stratified sample; and whether it is every value."""
    if format_of(dtype).bits == drawn.EXHAUSTIVE_BITS:
        every = drawn.exhaustive(dtype)
        return every[torch.from_numpy(drawn.within(every, domain))], True
    return drawn.stratified(dtype, domain, samples, seed), False


def all_inputs(function: Function, dtype: torch.dtype, domain: Mapping[str, Sequence[Interval]], samples: int,
               seed: int) -> tuple[list[torch.Tensor], bool]:
    """The op's tensor arguments in ``function.args`` order, and whether they are every value: one operand as
    :func:`inputs_for` gives it; several as pairs (or triples) stratified by binade; a mask alternating at random."""
    measured = [arg for arg in function.args if arg not in function.masks]
    if len(measured) == 1:
        x, exhaustive = inputs_for(dtype, domain[measured[0]], samples, seed)
        by_name = {measured[0]: x}
    else:
        by_name = dict(zip(measured, drawn.combined(dtype, [domain[arg] for arg in measured], samples, seed)))
        exhaustive = False
    length = len(next(iter(by_name.values())))
    generator = torch.Generator().manual_seed(seed)
    masks = {arg: torch.rand(length, generator=generator) < 0.5 for arg in function.masks}
    return [by_name[arg] if arg in by_name else masks[arg] for arg in function.args], exhaustive


def measure(kernel: Callable[..., torch.Tensor], function: Function, dtype: torch.dtype,
            domain: Mapping[str, Sequence[Interval]], policy: SubnormalPolicy = SubnormalPolicy(), *,
            samples: int = 1_000_000, seed: int = 0, device: str = "cpu",
            arguments: Mapping[str, Any] | None = None) -> Measurement:
    """The error of ``kernel`` (the op's tensor arguments in ``function.args`` order in, one tensor out) over its
    domain in ``dtype``; ``arguments``: the op's fixed non-tensor arguments, which the reference takes too (the
    kernel has them already)."""
    inputs, exhaustive = all_inputs(function, dtype, domain, samples, seed)
    got = kernel(*(x.to(device) for x in inputs))
    shape = inputs[0].shape
    if not isinstance(got, torch.Tensor) or got.dtype != dtype or got.shape != shape:
        what = f"{got.dtype} {tuple(got.shape)}" if isinstance(got, torch.Tensor) else type(got).__name__
        raise MeasurementError(f"{function.op}: expected {dtype} {tuple(shape)}, got {what}")
    found = errors_of(got, inputs, function, policy, arguments)
    return Measurement(function.op, format_of(dtype).name, len(found.errors), exhaustive,
                       float(found.errors.max(initial=0.0)), found.worst(), histogram(found.errors),
                       int(found.flushed.sum()), found.refined, None if exhaustive else seed)


@dataclass(frozen=True)
class Errors:
    """The error of each result, in ULPs, the subnormal latitude applied."""

    x: Mapping[str, torch.Tensor]  # argument -> its inputs, flat, on the CPU
    got: torch.Tensor  # the results, likewise
    rounded: torch.Tensor  # the correctly rounded results
    errors: np.ndarray
    flushed: np.ndarray  # results the latitude accepted as zero
    refined: int  # inputs whose rounding needed mpmath

    def worst(self) -> tuple[Worst, ...]:
        return _worst(self.errors, self.x, self.got, self.rounded)


def errors_of(got: torch.Tensor, inputs: torch.Tensor | Sequence[torch.Tensor], function: Function,
              policy: SubnormalPolicy = SubnormalPolicy(), arguments: Mapping[str, Any] | None = None) -> Errors:
    """The error of each element of ``got``, the op's results on ``inputs`` (its tensor arguments in
    ``function.args`` order, or the one tensor of a unary op; the result's dtype and shape)."""
    inputs = [inputs] if isinstance(inputs, torch.Tensor) else list(inputs)
    inputs = [x.detach().cpu().reshape(-1) for x in inputs]
    got = got.detach().cpu().reshape(-1)
    dtype = got.dtype
    reference = correctly_rounded(function, inputs, dtype, arguments)
    errors = ulp_error(got, reference.rounded, reference.residual)
    refined = reference.refined
    if policy.inputs == MAY_FLUSH:
        errors, more = _with_flushed_inputs(errors, inputs, got, function, dtype, arguments)
        refined += more
    flushed = np.zeros(len(errors), dtype=bool)
    if policy.results == MAY_FLUSH:
        flushed = _flushed_results(got, reference.rounded) & (errors > 0)
        errors = np.where(flushed, 0.0, errors)
    return Errors(dict(zip(function.args, inputs)), got, reference.rounded, errors, flushed, refined)


def _with_flushed_inputs(errors: np.ndarray, inputs: list[torch.Tensor], got: torch.Tensor, function: Function,
                         dtype: torch.dtype, arguments: Mapping[str, Any] | None) -> tuple[np.ndarray, int]:
    """Where an input is subnormal the error is the smaller of the two: against the result at the inputs and at
    the inputs with every subnormal one read as zero of its sign."""
    floating = [x.is_floating_point() for x in inputs]
    subnormal = np.flatnonzero(np.logical_or.reduce([_subnormal(x) for x, f in zip(inputs, floating) if f]))
    if not len(subnormal):
        return errors, 0
    at = torch.from_numpy(subnormal)
    zeros = [torch.where(torch.from_numpy(_subnormal(x[at])), torch.zeros_like(x[at]).copysign(x[at]), x[at])
             if f else x[at] for x, f in zip(inputs, floating)]
    flushed = correctly_rounded(function, zeros, dtype, arguments)
    better = np.minimum(errors[subnormal], ulp_error(got[at], flushed.rounded, flushed.residual))
    errors = errors.copy()
    errors[subnormal] = better
    return errors, flushed.refined


def _subnormal(values: torch.Tensor) -> np.ndarray:
    magnitude = np.abs(ordinals(values))
    return (magnitude > 0) & (magnitude < format_of(values.dtype).normal_ordinal)


def _flushed_results(got: torch.Tensor, rounded: torch.Tensor) -> np.ndarray:
    """A zero where the correctly rounded result is subnormal."""
    return (ordinals(got) == 0) & _subnormal(rounded)


def _worst(errors: np.ndarray, x: Mapping[str, torch.Tensor], got: torch.Tensor,
           rounded: torch.Tensor) -> tuple[Worst, ...]:
    if not len(errors) or errors.max() == 0:
        return ()
    order = np.argsort(-errors, kind="stable")[:WORST_SHOWN]
    return tuple(Worst({argument: _float(values[i]) for argument, values in x.items()}, _float(got[i]),
                       _float(rounded[i]), float(errors[i]))
                 for i in order if errors[i] > 0)


def _float(value: torch.Tensor) -> float:
    return float(value.to(torch.float64))


def histogram(errors: np.ndarray) -> dict[str, int]:
    """bucket -> count, in rising order, empty buckets left out."""
    exponents = np.ceil(np.log2(np.where((errors > 0.5) & np.isfinite(errors), errors, 1.0))).astype(np.int64)
    counts = {"0": int((errors == 0).sum()), "0.5": int(((errors > 0) & (errors <= 0.5)).sum())}
    middle = (errors > 0.5) & np.isfinite(errors)
    for exponent, count in zip(*np.unique(exponents[middle], return_counts=True)):
        counts[str(2 ** int(exponent))] = int(count)
    counts["inf"] = int(np.isinf(errors).sum())
    return {key: count for key, count in counts.items() if count}
