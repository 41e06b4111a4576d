"""Backend fused ops (opspec.examples.demo_backend) against the core-op patterns they replace."""
from __future__ import annotations

import dataclasses
import warnings

import pytest
import torch

from opspec.checks import fused
from opspec.examples import demo_backend
from opspec.spec import load

MAX_EXAMPLES = 20


@pytest.fixture(scope="module")
def opset():
    return load.load_opset()


@pytest.fixture(autouse=True)
def _quiet():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)  # torch.export's own deprecation noise
        yield


@pytest.mark.parametrize("fused_op", demo_backend.FUSED_OPS, ids=lambda f: f.op)
def test_fused_op_matches_its_pattern(opset, fused_op):
    outcome = fused.check_equivalence(opset, fused_op, max_examples=MAX_EXAMPLES)
    assert outcome.ok, outcome.error or outcome.counterexample.render()
    assert outcome.examples >= MAX_EXAMPLES


def test_linear_relu_draws_calls_with_and_without_bias(opset):
    from opspec.checks import decomp_check
    from opspec.testing import strategies

    f = demo_backend.FUSED_OPS[1]
    subject = decomp_check.subject_for_candidate(opset, f.op, f.pattern, f.hints)
    drawn = strategies.draw_examples(decomp_check.draw_calls(subject, torch.float32, "cpu"), 20)
    with_bias = [c for c in drawn if len(c.args) == 3 and c.args[2] is not None]
    assert with_bias and len(with_bias) < len(drawn)
    for call in with_bias:
        x, w, b = call.args
        assert x.shape[1] == w.shape[1] and b.shape == (w.shape[0],)


def test_wrong_fused_kernel_is_caught_with_a_counterexample(opset):
    outcome = fused.check_equivalence(opset, demo_backend.WRONG, max_examples=MAX_EXAMPLES)
    assert not outcome.ok and outcome.counterexample is not None
    rendered = outcome.counterexample.render()
    assert "demo::add_relu_wrong" in rendered and "not close" in rendered
    repro = outcome.counterexample.repro()
    with pytest.raises(AssertionError):
        exec(repro, {})  # the repro replays the mismatch on its own


def linear_relu_via_addmm_activation(input, weight, bias=None):
    """Numerically right, but aten's own fused addmm + relu is neither core nor decomposed."""
    if bias is None:
        return demo_backend.linear_nobias_relu_pattern(input, weight)
    return torch.ops.aten._addmm_activation.default(bias, input, weight.t())


def test_pattern_outside_core_ops_fails_closure(opset):
    bad = dataclasses.replace(demo_backend.FUSED_OPS[1], pattern="test_fused:linear_relu_via_addmm_activation")
    outcome = fused.check_equivalence(opset, bad, max_examples=10, dtypes=(torch.float32,))
    assert not outcome.ok
    assert "non-core ops aten::_addmm_activation" in outcome.counterexample.problem


def test_rewrite_swaps_every_pattern_and_keeps_outputs(opset):
    model, inputs = demo_backend.model()
    check = fused.check_rewrite(opset, demo_backend.FUSED_OPS, model, inputs)
    assert check.ok, check.problems
    assert set(check.before) <= opset.core_names()  # the portable graph: core ops only
    assert check.after == {"demo::add_relu": 1, "demo::linear_relu": 2}  # everything fused, nothing else left
    assert check.matched == {"demo::add_relu": {0: 1}, "demo::linear_relu": {0: 1, 1: 1}}
    assert check.comparison.ok


def test_rewrite_leaves_unmatched_ops_alone(opset):
    class AddOnly(torch.nn.Module):
        def forward(self, x, y):
            return torch.sigmoid(x + y) + torch.relu(x)  # an add and a relu, but not add -> relu

    check = fused.check_rewrite(opset, demo_backend.FUSED_OPS, AddOnly(), (torch.randn(3), torch.randn(3)))
    assert check.ok, check.problems
    assert check.after == check.before and not any(op.startswith("demo::") for op in check.after)


def test_rewrite_with_wrong_kernel_changes_outputs(opset):
    model, inputs = demo_backend.model()
    inputs = (inputs[0], -inputs[0] + 0.5)  # x + y = 0.5 > 0 everywhere, while relu(x) + y differs where x < 0
    check = fused.check_rewrite(opset, (demo_backend.WRONG,), model, inputs)
    assert not check.ok
    assert any("outputs changed" in p for p in check.problems)


def test_backend_ops_stay_out_of_the_portable_set(opset):
    assert fused.isolation_problems(opset, demo_backend.FUSED_OPS) == []
    for f in demo_backend.FUSED_OPS:
        assert f.op not in opset.core_names() and f.op not in opset.rules_by_op

    leaked = dataclasses.replace(opset, ops=opset.ops + (dataclasses.replace(opset.ops[0], name="demo::add_relu"),))
    assert fused.isolation_problems(leaked, demo_backend.FUSED_OPS) == ["core op demo::add_relu is in the backend namespace demo"]
    in_aten = dataclasses.replace(demo_backend.FUSED_OPS[0], op="aten::relu")
    assert fused.isolation_problems(opset, (in_aten,)) == ["fused ops must live in the backend's own namespace, not aten"]


def test_check_backend_reports_all_three(opset):
    model, inputs = demo_backend.model()
    ops = fused.load_backend("opspec.examples.demo_backend")
    report = fused.check_backend(opset, ops, model, inputs, max_examples=5)
    assert report.ok, report.render()
    text = report.render()
    assert "demo::add_relu matches its pattern" in text and "rewrite keeps outputs" in text
    with pytest.raises(LookupError):
        fused.load_backend("opspec.examples.models")
