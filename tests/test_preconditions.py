"""Calls whose result torch leaves undefined are not drawn: comparing with eager there would be chance."""
from __future__ import annotations

import pytest
import torch

from opspec.conform import cases, preconditions
from opspec.conform.cases import Case
from opspec.spec import load
from opspec.testing.strategies.call import Call

SELF = torch.zeros(2, 3)


@pytest.mark.parametrize("indices, accumulate, defined", [
    ([None, torch.tensor([0, 1])], False, True),
    ([None, torch.tensor([0, 0])], False, False),  # column 0 written twice: either value may win
    ([None, torch.tensor([0, 0])], True, True),  # accumulated: the sum is defined
    ([torch.tensor([True, False])], False, True),
    ([torch.tensor([1, 1]), torch.tensor([2, 2])], False, False),
    ([torch.tensor([5])], False, True),  # out of range: the kernel refuses it, not the precondition
])
def test_index_put_without_accumulate_needs_each_position_once(indices, accumulate, defined):
    call = Call("aten::index_put", (SELF, indices, torch.tensor(1.0), accumulate))
    assert preconditions.defined(call) is defined


def test_scatter_src_needs_each_position_once():
    src = torch.arange(4.0).reshape(2, 2)
    assert preconditions.defined(Call("aten::scatter.src", (SELF, 1, torch.tensor([[0, 1], [2, 0]]), src)))
    assert not preconditions.defined(Call("aten::scatter.src", (SELF, 1, torch.tensor([[0, 0], [2, 0]]), src)))


def test_topk_of_a_0d_tensor_with_k_0_is_undefined():
    assert not preconditions.defined(Call("aten::topk", (torch.tensor(5.0), 0)))
    assert preconditions.defined(Call("aten::topk", (torch.tensor(5.0), 1)))
    assert preconditions.defined(Call("aten::topk", (torch.tensor([5.0]), 0)))


# cases whose draws held undefined calls before they were screened out (the case's seed decides the draws)
@pytest.mark.parametrize("op, dtype, device", [("aten::index_put", "complex128", "cuda"), ("aten::scatter.src", "float32", "cpu"),
                                               ("aten::topk", "int64", "cuda")])
def test_no_drawn_call_is_undefined(op, dtype, device):
    core = load.load_opset().ops_by_name[op]
    drawn = cases.draw(core, dtype, "cpu", max_examples=4, max_compiles=2, seed=Case(op, dtype, device).seed(0))
    assert drawn and all(preconditions.defined(example.call) for example in drawn)
