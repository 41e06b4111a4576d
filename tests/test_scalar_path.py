"""Where torch's vectorised pointwise kernel and its own scalar path disagree, either answer passes; elsewhere
nothing changes."""
from __future__ import annotations

import math

import pytest
import torch

from opspec.checks import decomp_check
from opspec.spec.load import load_opset
from opspec.testing import scalar_path
from opspec.testing.strategies import Call

inf = math.inf


def gelu_erf(self, approximate="none"):
    """The erf form, exactly as written: +inf at +inf, where torch's vectorised float32 kernel gives NaN."""
    if approximate == "tanh":
        return torch.ops.aten.gelu(self, approximate="tanh")
    return self * 0.5 * (1 + torch.erf(self / math.sqrt(2)))


def gelu_zero_at_inf(self, approximate="none"):
    """Wrong at +inf: 0, which neither of torch's paths gives."""
    out = gelu_erf(self, approximate)
    return torch.where(self == inf, torch.zeros_like(out), out)


def test_the_scalar_path_runs_each_element_alone():
    x = torch.tensor([inf, 1.0, -1.0, 2.0] * 4)
    vectorised = torch.ops.aten.gelu(x)
    alone = scalar_path.elementwise(Call("aten::gelu.default", (x,)))
    assert vectorised[0].isnan() and alone[0] == inf  # the disagreement this is for
    torch.testing.assert_close(alone[1:4], vectorised[1:4], rtol=1e-5, atol=1e-6)  # the paths round apart


def test_no_scalar_path_for_ops_that_are_not_pointwise_over_one_tensor():
    x = torch.ones(4)
    assert scalar_path.elementwise(Call("aten::sum.default", (x,))) is None
    assert scalar_path.elementwise(Call("aten::add.Tensor", (x, x))) is None


def test_accepting_takes_the_scalar_answer_only_where_the_candidate_matches_it():
    reference = torch.tensor([math.nan, 1.0])
    scalar = torch.tensor([inf, 1.0])
    merged = scalar_path.accepting(torch.tensor([inf, 5.0]), reference, scalar, 1e-6, 1e-5)
    assert merged[0] == inf and merged[1] == 1.0


@pytest.fixture(scope="module")
def opset():
    return load_opset()


def _check(opset, function):
    subject = decomp_check.subject_for_candidate(opset, "aten::gelu", f"{__name__}:{function}")
    return decomp_check.run(subject, dtypes=(torch.float32,), max_examples=60, seed=0, closure=False)


def test_a_formula_matching_the_scalar_path_passes_and_one_matching_neither_fails(opset):
    assert _check(opset, "gelu_erf").ok
    wrong = _check(opset, "gelu_zero_at_inf")
    found = wrong.counterexample.render() if wrong.counterexample else " ".join(wrong.broken_rows)
    assert not wrong.ok and "inf" in found
