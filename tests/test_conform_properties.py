"""Checkers for outputs the contract leaves partly open: sort's and topk's order among equal values."""
import torch

from opspec.conform import cases, properties
from opspec.testing.strategies import Call


def _example(op: str, *args, **kwargs) -> cases.Example:
    return cases.Example.of(Call(op, args, kwargs))


X = torch.tensor([[2.0, 1.0, 2.0, 1.0, float("nan")], [0.0, -0.0, 3.0, 3.0, 3.0]])


def _sort(x, dim=-1, descending=False):
    return torch.ops.aten.sort.default(x, dim, descending)


def test_sort_passes_any_order_of_tied_indices_and_holds_values_and_indices_exactly():
    example = _example("aten::sort", X, 1, False)
    reference = _sort(X, 1)
    values, indices = reference
    reversed_ties = torch.sort(X.flip(1), dim=1, stable=True)
    reversed_ties = (reversed_ties.values, X.size(1) - 1 - reversed_ties.indices)
    assert not torch.equal(reversed_ties[1], indices)  # the tie order differs from eager's
    assert properties.sorted_any_tie_order(reversed_ties, reference, example).ok
    assert properties.sorted_any_tie_order(reference, reference, example).ok
    # an index pointing at another value, an index twice, NaN sorted first: each is a failure
    wrong = indices.clone()
    wrong[0, 0] = 0
    assert not properties.sorted_any_tie_order((values, wrong), reference, example).ok
    twice = indices.clone()
    twice[1, 3] = twice[1, 2]
    assert not properties.sorted_any_tie_order((values, twice), reference, example).ok
    nan_first = (values.roll(1, 1), indices.roll(1, 1))
    assert not properties.sorted_any_tie_order(nan_first, reference, example).ok
    assert not properties.sorted_any_tie_order((values, indices.to(torch.int32)), reference, example).ok


def test_topk_passes_any_of_the_tied_values_but_not_a_smaller_one():
    x = torch.tensor([3.0, 1.0, 3.0, 3.0])
    example = _example("aten::topk", x, 2)
    reference = torch.ops.aten.topk.default(x, 2)
    other_ties = (torch.tensor([3.0, 3.0]), torch.tensor([0, 3]))
    assert properties.top_k_any_tie_order(other_ties, reference, example).ok
    assert not properties.top_k_any_tie_order((torch.tensor([3.0, 3.0]), torch.tensor([0, 1])), reference, example).ok
    assert not properties.top_k_any_tie_order((torch.tensor([3.0, 1.0]), torch.tensor([0, 1])), reference, example).ok
    unsorted = _example("aten::topk", x, 3, -1, True, False)
    picked = torch.ops.aten.topk.default(x, 3, -1, True, False)
    shuffled = (picked[0].flip(0), picked[1].flip(0))
    assert properties.top_k_any_tie_order(shuffled, picked, unsorted).ok


def test_sort_and_topk_keep_their_special_case_rows():
    assert {"aten::sort", "aten::topk"} <= properties.DETERMINED <= set(properties.CHECKERS)
    assert "aten::rand" not in properties.DETERMINED
