"""Checks for ops whose outputs the inputs do not determine: properties instead of values.

Each checker takes the backend's output, the eager output and the example, and
returns a :class:`compare.Comparison` so reports read the same for every op.
Values that are determined (dropout's kept elements, the part of a resized
tensor that keeps its storage) still go through the shared comparison rule.
"""
from __future__ import annotations

from typing import Any, Callable

import torch

from opspec.conform.cases import Example
from opspec.testing import compare

Checker = Callable[[Any, Any, Example], compare.Comparison]


def _structure(candidate: Any, reference: torch.Tensor, where: str = "output", strides: bool = False) -> str | None:
    if not isinstance(candidate, torch.Tensor):
        return f"{where}: expected a tensor, got {type(candidate).__name__}"
    for what, got, want in (("dtype", candidate.dtype, reference.dtype),
                            ("shape", tuple(candidate.shape), tuple(reference.shape)),
                            ("device", candidate.device.type, reference.device.type)):
        if got != want:
            return f"{where}: {what} {got} != expected {want}"
    if strides and candidate.numel() > 1 and candidate.stride() != reference.stride():
        return f"{where}: strides {candidate.stride()} != expected {reference.stride()}"
    return None


def _verdict(problem: str | None, ok_message: str = "") -> compare.Comparison:
    return compare.Comparison(problem is None, problem or ok_message)


def uninitialized(candidate, reference, example) -> compare.Comparison:
    """empty: shape, dtype and device; the values are whatever memory held."""
    return _verdict(_structure(candidate, reference))


def uninitialized_strided(candidate, reference, example) -> compare.Comparison:
    return _verdict(_structure(candidate, reference, strides=True))


def uniform(candidate, reference, example) -> compare.Comparison:
    """rand: values in [0, 1)."""
    problem = _structure(candidate, reference)
    if problem is None and candidate.numel():
        low, high = float(candidate.min()), float(candidate.max())
        rounds_up = high == 1.0 and candidate.dtype in compare.LOW_PRECISION  # 1 - 2**-24 rounds to 1
        if low < 0.0 or (high >= 1.0 and not rounds_up):
            problem = f"output: values span [{low:g}, {high:g}], outside [0, 1)"
    return _verdict(problem)


def normal(candidate, reference, example) -> compare.Comparison:
    """randn: finite values."""
    problem = _structure(candidate, reference)
    if problem is None and candidate.numel() and not bool(torch.isfinite(candidate).all()):
        problem = "output: non-finite values from a normal distribution"
    return _verdict(problem)


def permutation(candidate, reference, example) -> compare.Comparison:
    """randperm(n): each of 0..n-1 exactly once."""
    problem = _structure(candidate, reference)
    if problem is None:
        want = torch.arange(reference.numel(), dtype=torch.int64)
        got = candidate.detach().cpu().to(torch.int64).sort().values
        if not torch.equal(got, want):
            problem = f"output: not a permutation of 0..{reference.numel() - 1}: {candidate.tolist()[:16]}"
    return _verdict(problem)


def _pair_problem(candidate, reference, names: str) -> str | None:
    """Why ``candidate`` is not a pair shaped like eager's two outputs (``names``: what the pair holds), or None."""
    if not isinstance(candidate, (tuple, list)) or len(candidate) != 2:
        return f"output: expected ({names}), got {type(candidate).__name__}"
    return _structure(candidate[0], reference[0], "output[0]") or _structure(candidate[1], reference[1], "output[1]")


def dropout(candidate, reference, example) -> compare.Comparison:
    """native_dropout: a bool mask of the input's shape; outputs are input * mask / (1 - p) in training."""
    problem = _pair_problem(candidate, reference, "output, mask")
    if problem:
        return _verdict(problem)
    out, mask = candidate
    call = example.call
    x, p = call.args[0], float(call.args[1])
    train = call.args[2] if len(call.args) > 2 else call.kwargs.get("train")
    if train is False:  # inference: identity and an all-true mask, fully determined
        return compare.compare(candidate, reference)
    kept = mask.detach().cpu()
    expected = torch.zeros_like(x) if p >= 1 else torch.where(kept, x * (1.0 / (1.0 - p)), torch.zeros_like(x))
    verdict = compare.compare(out.detach().cpu(), expected)
    if not verdict.ok:
        return compare.Comparison(False, f"output[0] is not input * mask / (1 - p): {verdict.message}",
                                  verdict.max_abs_error, verdict.max_rel_error, verdict.tolerance)
    return verdict


def resized(candidate, reference, example) -> compare.Comparison:
    """resize_: the new shape; elements that keep their storage keep their values, new ones are uninitialized."""
    result, written = candidate
    problem = _structure(result, reference[0], "output") or _structure(written, reference[1], "self")
    if problem:
        return _verdict(problem)
    kept = min(example.inputs[0].numel(), reference[0].numel())
    if not example.inputs[0].is_contiguous():
        return _verdict(None)  # a strided input's surviving elements are not a prefix
    return compare.compare(result.detach().reshape(-1)[:kept].cpu(), reference[0].detach().reshape(-1)[:kept].cpu())


def _same(a: torch.Tensor, b: torch.Tensor) -> bool:
    """Equal element for element, NaN equal to NaN."""
    return bool(((a == b) | (torch.isnan(a) & torch.isnan(b)) if a.is_floating_point() or a.is_complex()
                 else (a == b)).all())


def _picked(candidate, reference, example: Example, dim: int, ordered: bool, distinct: str) -> compare.Comparison:
    """(values, indices) of a selection whose order among equal values the contract leaves open: the values as
    eager's (sorted first where their order is open too), and each index pointing at its value, no index twice."""
    problem = _pair_problem(candidate, reference, "values, indices")
    if problem:
        return _verdict(problem)
    values, indices = candidate
    values, indices = values.detach().cpu(), indices.detach().cpu()
    want = reference[0].detach().cpu()
    if not ordered and values.dim():
        values_sorted, want = values.sort(dim).values, want.sort(dim).values
    else:
        values_sorted = values
    verdict = compare.compare(values_sorted, want)
    if not verdict.ok:
        return compare.Comparison(False, f"output[0]: {verdict.message}", verdict.max_abs_error,
                                  verdict.max_rel_error, verdict.tolerance, path="[0]")
    source = example.inputs[0].detach().cpu()
    if source.dim() == 0 or values.numel() == 0:
        return compare.compare(indices, reference[1].detach().cpu())
    if bool(((indices < 0) | (indices >= source.size(dim))).any()):
        return _verdict("output[1]: an index outside the sorted dimension")
    if not _same(source.gather(dim, indices), values):
        return _verdict("output[1]: the indices do not point at the values returned")
    ranked = indices.sort(dim).values
    if bool((ranked.narrow(dim, 1, ranked.size(dim) - 1) == ranked.narrow(dim, 0, ranked.size(dim) - 1)).any()):
        return _verdict(f"output[1]: an index {distinct}")
    return verdict


def sorted_any_tie_order(candidate, reference, example) -> compare.Comparison:
    """sort: the sorted values, and indices that point at them, each once; the order of equal values' indices is
    not part of the contract (stable=True, another overload, is what promises it)."""
    return _picked(candidate, reference, example, example.call.argument(1, "dim", -1), True, "appears twice")


def top_k_any_tie_order(candidate, reference, example) -> compare.Comparison:
    """topk: the k values eager picks (in its order when sorted=True), and indices that point at them, each once;
    which of several equal values are picked is not part of the contract."""
    return _picked(candidate, reference, example, example.call.argument(2, "dim", -1),
                   bool(example.call.argument(4, "sorted", True)), "is picked twice")


# Ops whose checker only leaves open what the contract does (which of equal values comes first): their
# outputs are otherwise determined, so their special-case rows still run, judged exactly.
DETERMINED = frozenset({"aten::sort", "aten::topk"})

CHECKERS: dict[str, Checker] = {
    "aten::empty.memory_format": uninitialized,
    "aten::empty_strided": uninitialized_strided,
    "aten::native_dropout": dropout,
    "aten::rand": uniform,
    "aten::randn": normal,
    "aten::randperm": permutation,
    "aten::resize_": resized,
    "aten::sort": sorted_any_tie_order,
    "aten::topk": top_k_any_tie_order,
}
