"""The core-opset review's proposed decompositions, checked: expm1, atan2 and elu as
written there are wrong, and the checker says so with a repro that fails on its own."""
from __future__ import annotations

import math

import pytest
import torch

from opspec.checks import decomp_check
from opspec.spec.load import load_opset

MAX_EXAMPLES = 30


# ---- the formulas as the review wrote them ----

def expm1_review(self):
    """aten::expm1 -> exp(x+1)"""
    return torch.exp(self + 1)


def atan2_review(self, other):
    """aten::atan2 -> atan(input / other)"""
    return torch.atan(self / other)


def elu_review(self, alpha=1, scale=1, input_scale=1):
    """aten::elu -> min(alpha * exp(x) - 1, 0) + max(x, 0)"""
    return torch.clamp_max(alpha * torch.exp(self) - 1, 0) + torch.clamp_min(self, 0)


def elu_correct(self, alpha=1, scale=1, input_scale=1):
    """What elu means: scale * x above 0, scale * alpha * (exp(input_scale * x) - 1) below; a zero keeps its sign
    whatever alpha's (pointwise-unary.yaml#elu-signed-zero-negative-alpha)."""
    return torch.where(self >= 0, self * scale, torch.expm1(self * input_scale) * alpha * scale)


@pytest.fixture(scope="module")
def opset():
    return load_opset()


def check(opset, op: str, function: str, dtype=torch.float64) -> decomp_check.Outcome:
    subject = decomp_check.subject_for_candidate(opset, op, f"{__name__}:{function}")
    return decomp_check.run(subject, dtypes=(dtype,), max_examples=MAX_EXAMPLES, seed=0, closure=False)


@pytest.mark.parametrize("op, function", [
    ("aten::expm1", "expm1_review"),
    ("aten::atan2", "atan2_review"),
    ("aten::elu", "elu_review"),
])
def test_review_formula_fails_with_a_runnable_counterexample(opset, op, function):
    outcome = check(opset, op, function)
    assert not outcome.ok
    counterexample = outcome.counterexample
    assert counterexample is not None and not outcome.error
    rendered = counterexample.render()
    assert op in rendered and function in rendered and "repro:" in rendered
    with pytest.raises(AssertionError):  # the repro stands alone and fails the same way
        exec(counterexample.repro(), {})


def test_atan2_counterexample_has_a_negative_denominator(opset):
    call = check(opset, "aten::atan2", "atan2_review").counterexample.call
    self, other = call.args
    y, x = torch.broadcast_tensors(self, other)
    differs = ~torch.isclose(torch.atan2(y, x), torch.atan(y / x), equal_nan=True)
    assert bool((x[differs] < 0).any() or x[differs].isnan().any() or (x[differs] == 0).any())


def test_elu_review_is_right_only_for_alpha_one():
    x = torch.linspace(-3, 3, 13, dtype=torch.float64)
    torch.testing.assert_close(elu_review(x), torch.nn.functional.elu(x))
    assert not torch.allclose(elu_review(x, 2.0), torch.nn.functional.elu(x, 2.0))
    assert math.isclose(float(elu_review(torch.tensor(-1.0, dtype=torch.float64), 2.0)), 2 * math.exp(-1) - 1)


def test_correct_elu_passes(opset):
    outcome = check(opset, "aten::elu", "elu_correct", dtype=torch.float32)
    assert outcome.ok, outcome.counterexample.render() if outcome.counterexample else outcome.error
    assert outcome.examples >= MAX_EXAMPLES
