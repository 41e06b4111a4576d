"""The opset's subnormal policy applied to a verdict: a result that differs from eager's only as a flushing backend's
would still conforms.

``opset/accuracy.yaml`` states per dtype (its top-level ``subnormals``, proposal 0008) whether a backend may read a
subnormal input as zero of its sign (``inputs: may-flush``) and return zero where a result is subnormal
(``results: may-flush``). ULP contracts carry the policy themselves; this module gives it to every other output
(comparisons, rounding, matrix products, reductions): when the strict verdict fails and a subnormal of a flushing
dtype is in play, the eager kernel is run again on the inputs so flushed, each subnormal of both outputs is read
as zero, and the same comparison judges again. The verdict then counts the subnormals the latitude flushed, so a
report tells a backend that flushes from one that keeps them.
"""
from __future__ import annotations

import dataclasses
from typing import Any, Callable

import torch

from opspec.spec import accuracy as spec_accuracy
from opspec.spec.accuracy import MAY_FLUSH, SubnormalPolicy
from opspec.testing.compare import Comparison

FLOATS = (torch.float64, torch.float32, torch.float16, torch.bfloat16)


def _opset_policy() -> Callable[[str], SubnormalPolicy]:
    return spec_accuracy.bundled_contracts().policy_of


def policy_of(dtype: str) -> SubnormalPolicy:
    """The opset's subnormal policy in ``dtype`` (``opset/accuracy.yaml``, read once)."""
    return _opset_policy()(dtype)


def flushing(side: str, policy_of: Callable[[str], SubnormalPolicy] | None = None) -> frozenset[torch.dtype]:
    """The dtypes whose ``side`` (``inputs`` or ``results``) the policy lets a backend flush."""
    policy_of = policy_of or _opset_policy()
    return frozenset(d for d in FLOATS if getattr(policy_of(str(d).removeprefix("torch.")), side) == MAY_FLUSH)


def _subnormal(tensor: torch.Tensor) -> torch.Tensor:
    return (tensor != 0) & (tensor.abs() < torch.finfo(tensor.dtype).tiny)


def count(value: Any, dtypes: frozenset[torch.dtype]) -> int:
    """How many subnormal elements the tensors of ``value`` (nested in lists and tuples) hold in ``dtypes``."""
    if isinstance(value, torch.Tensor):
        return int(_subnormal(value).sum()) if value.dtype in dtypes and value.numel() and not value.is_sparse else 0
    if isinstance(value, (list, tuple)):
        return sum(count(v, dtypes) for v in value)
    return 0


def flushed(value: Any, dtypes: frozenset[torch.dtype]) -> Any:
    """``value`` with each subnormal of a tensor in ``dtypes`` made zero of its sign (x * 0 keeps the sign; every
    other element is multiplied by 1, exactly), strides kept; anything else as it is."""
    if isinstance(value, torch.Tensor):
        if value.dtype not in dtypes or not value.numel() or value.is_sparse:
            return value
        keep = ~_subnormal(value)
        if bool(keep.all()):
            return value
        out = value.detach().clone()
        out.mul_(keep)
        return out
    if isinstance(value, (list, tuple)):
        return type(value)(flushed(v, dtypes) for v in value) if not hasattr(value, "_fields") else \
            type(value)(*(flushed(v, dtypes) for v in value))
    return value


def exactly(candidate: Any, reference: Any, on: list | None = None) -> Comparison:
    """Bit for bit as a row is judged: the same dtype and shape, equal values with the same sign, NaN where NaN."""
    if isinstance(candidate, (list, tuple)) and isinstance(reference, (list, tuple)):
        same = len(candidate) == len(reference) and all(exactly(c, r).ok for c, r in zip(candidate, reference))
        return Comparison(same, "" if same else "outputs differ")
    if not isinstance(candidate, torch.Tensor) or not isinstance(reference, torch.Tensor):
        return Comparison(candidate == reference, "" if candidate == reference else "values differ")
    if (candidate.dtype, candidate.shape) != (reference.dtype, reference.shape):
        return Comparison(False, "dtype or shape differs")
    if not candidate.is_floating_point():
        same = torch.equal(candidate.cpu(), reference.cpu())
    else:
        a, b = candidate.cpu(), reference.cpu()
        same = bool((((a == b) & (torch.signbit(a) == torch.signbit(b))) | (torch.isnan(a) & torch.isnan(b))).all())
    return Comparison(same, "" if same else "values differ")


def rejudge(candidate: Any, reference: Any, inputs: list, rerun: Callable[[list], Any],
            again: Callable[[Any, Any, list | None], Comparison],
            policy_of: Callable[[str], SubnormalPolicy] | None = None) -> Comparison | None:
    """The passing verdict the policy gives a candidate the strict comparison failed, or None.

    ``rerun(inputs)`` runs the eager program on other inputs; ``again(candidate, reference, inputs)`` is the
    comparison that failed (``inputs``: the flushed inputs its float64 reference is to be run on, None for the
    original ones). Tried: the results flushed; then the inputs flushed, and the results of both runs flushed.
    The verdict's ``flushed`` counts the subnormals read as zero: inputs, then elements of either result."""
    policy_of = policy_of or _opset_policy()
    on_inputs, on_results = flushing("inputs", policy_of), flushing("results", policy_of)
    read_as_zero = count(inputs, on_inputs)
    tries: list[tuple[Any, list | None, int]] = []
    if on_results and (count(candidate, on_results) or count(reference, on_results)):
        tries.append((reference, None, 0))
    if read_as_zero:
        zeroed = [flushed(t, on_inputs) for t in inputs]
        try:
            tries.append((rerun(zeroed), zeroed, read_as_zero))
        except Exception:  # noqa: BLE001 - eager refuses the flushed inputs: no latitude to give
            pass
    for other, on, inputs_flushed in tries:
        verdict = again(flushed(candidate, on_results), flushed(other, on_results), on)
        if verdict.ok:
            results_flushed = count(candidate, on_results) + count(other, on_results)
            return dataclasses.replace(verdict, flushed=inputs_flushed + results_flushed)
    return None
