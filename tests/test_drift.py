"""`opspec drift`: no drift on the torch the opset was validated against, and drift found when planted."""
from __future__ import annotations

import dataclasses
import json
import os

import pytest
from opspec_fixtures import TESTED_TORCH, on_tested_torch

from opspec.checks import drift
from opspec.cli import main
from opspec.spec import load

ON_TESTED_TORCH = on_tested_torch()


@pytest.fixture(scope="module")
def opset():
    return load.load_opset("2026.11")


@pytest.mark.skipif(not ON_TESTED_TORCH, reason=f"the opset was validated against torch {TESTED_TORCH}")
def test_no_core_tag_or_schema_drift_on_the_tested_torch(opset):
    report = drift.compute(dataclasses.replace(opset, rules=()), closure=False)
    assert report.core_added == {} and report.core_removed == [] and report.schema_changed == []


def test_planted_drift_is_reported(opset):
    ops = list(opset.ops)
    removed = ops.pop(0)  # torch still tags it core: an addition from torch's side
    changed = next(i for i, op in enumerate(ops) if op.name == "aten::abs")
    ops[changed] = dataclasses.replace(ops[changed], schema="aten::abs(Tensor self, int extra) -> Tensor")
    ops.append(dataclasses.replace(ops[changed], name="aten::no_such_op", schema="aten::no_such_op(Tensor self) -> Tensor"))
    rule = dataclasses.replace(opset.rules_by_op["aten::addcmul"], targets=("aten::add.Tensor",))
    planted = dataclasses.replace(opset, ops=tuple(ops), rules=(rule,))

    report = drift.compute(planted, closure=False)
    assert removed.name in report.core_added
    assert "aten::no_such_op" in report.core_removed
    assert [c["op"] for c in report.schema_changed] == ["aten::abs"]
    [traced] = report.rules
    assert traced.traced_samples > 0 and "aten::mul.Tensor" in traced.undeclared
    assert report.drifted
    text = drift.render_text(report)
    assert "aten::abs" in text and "produces undeclared" in text


def test_rules_trace_to_their_declared_targets(opset):
    sample = [opset.rules_by_op[name] for name in ("aten::addcmul", "aten::hardswish", "aten::std.correction")]
    report = drift.compute(dataclasses.replace(opset, rules=tuple(sample)), closure=False)
    assert [(r.op, r.undeclared, r.problem) for r in report.rules if r.drifted] == []


def test_json_output(capsys, monkeypatch):
    monkeypatch.setattr(drift, "SAMPLES_PER_RULE", 1)
    monkeypatch.setattr(drift, "SAMPLES_PER_OTHER_DTYPE", 0)
    code = main(["drift", "--format", "json"])
    report = json.loads(capsys.readouterr().out)
    assert report["opset_version"] == load.latest_version()
    assert code == (1 if report["drifted"] else 0)
    if ON_TESTED_TORCH:
        assert report["core_added"] == {} and report["schema_changed"] == []


SAMPLE = ("aten::addcmul", "aten::hardswish", "aten::std.correction", "aten::logaddexp")


def test_rules_traced_in_two_processes_are_what_one_process_traces(opset, monkeypatch):
    sample = dataclasses.replace(opset, rules=tuple(opset.rules_by_op[name] for name in SAMPLE))
    both = drift.compute(sample).rules
    monkeypatch.setattr(drift, "can_fork", lambda: False)
    assert [r.op for r in both] == list(SAMPLE)
    assert both == drift.compute(sample).rules


def test_a_rule_the_child_took_and_never_answered_is_traced_here(opset, monkeypatch):
    sample = dataclasses.replace(opset, rules=tuple(opset.rules_by_op[name] for name in SAMPLE))
    alone = drift.compute(sample, progress=None)
    parent, trace = os.getpid(), drift.trace_rule

    def dying_in_the_child(*args, **kwargs):
        if os.getpid() != parent:
            os._exit(3)
        return trace(*args, **kwargs)

    monkeypatch.setattr(drift, "trace_rule", dying_in_the_child)
    assert drift.compute(sample).rules == alone.rules


READS_A_VALUE = RuntimeError("It appears that you're trying to get value out of a tracing tensor with "
                             "aten._local_scalar_dense.default - erroring out!")


def traced_with(monkeypatch, opset, failure: Exception, reads_none_from: str, *, every_call: bool = False):
    """addcmul's rule traced on a torch whose tracing of its first call (``every_call``: of each) fails with
    ``failure``, with a recorded value read for the torches outside ``reads_none_from``."""
    from opspec.bridge import versions
    from opspec.spec.model import TorchRange

    monkeypatch.setitem(versions.HOST_READS, "aten::addcmul",
                        TorchRange.from_dict({"versions": reads_none_from, "reason": "indexes with a tensor"}))
    trace, calls = drift.torch_ops.trace_ops, []

    def failing(*args, **kwargs):
        calls.append(1)
        if every_call or len(calls) == 1:
            raise failure
        return trace(*args, **kwargs)

    monkeypatch.setattr(drift.torch_ops, "trace_ops", failing)
    monkeypatch.setattr(drift, "can_fork", lambda: False)
    return drift.compute(dataclasses.replace(opset, rules=(opset.rules_by_op["aten::addcmul"],)))


def test_a_recorded_value_read_is_listed_and_is_not_drift(opset, monkeypatch):
    report = traced_with(monkeypatch, opset, READS_A_VALUE, ">=99")
    [rule] = report.rules
    assert "reads a tensor's value" in rule.recorded and "indexes with a tensor" in rule.recorded
    assert not report.drifted and rule.problem == ""
    assert f"aten::addcmul: {rule.recorded}" in drift.render_text(report)


def test_a_rule_whose_every_call_reads_a_value_is_drift(opset, monkeypatch):
    """A recorded value read excuses a call that cannot be traced, not a rule nothing of which was traced."""
    report = traced_with(monkeypatch, opset, READS_A_VALUE, ">=99", every_call=True)
    assert report.drifted and report.rules[0].traced_samples == 0
    assert report.rules[0].problem == "no drawn call could be traced: each read a value, as recorded"


def test_a_value_read_the_opset_does_not_record_for_this_torch_is_drift(opset, monkeypatch):
    report = traced_with(monkeypatch, opset, READS_A_VALUE, ">=2.0")  # recorded for older torches only
    assert report.drifted and report.rules[0].problem.startswith("tracing failed")


def test_another_tracing_failure_of_a_recorded_rule_is_drift(opset, monkeypatch):
    report = traced_with(monkeypatch, opset, RuntimeError("unsupported layout"), ">=99")
    assert report.drifted and report.rules[0].recorded == ""
