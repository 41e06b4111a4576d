"""opspec.spec.model: entries read into frozen dataclasses, intervals that round-trip, version order."""
from __future__ import annotations

import dataclasses

import pytest

from opspec.spec import model
from opspec.spec.model import (
    CoreOp,
    DecompositionRule,
    Interval,
    Opset,
    VersionInfo,
    version_key,
)

OP = {
    "name": "aten::log.default", "schema": "aten::log(Tensor self) -> Tensor", "category": "pointwise-unary",
    "status": "deprecated", "since": "2026.11", "deprecated": "2026.12", "proposals": [3, 7],
    "rationale": "A rationale.", "equivalents": {"onnx": "Log"},
    "exceptions": [{"kind": "also-decomposed", "reason": "torch decomposes it too"}],
    "testing": {
        "dtypes": ["float32", "float64"], "domain": {"self": "(0, inf)"}, "shapes": {"self": ["n", 3]},
        "ranks": {"self": [1, 4]}, "choices": {"dim": [0, -1]}, "contiguous": True, "notes": "positive inputs",
        "tolerance": {"reason": "log near 0 is steep", "float32": {"rtol": 1e-4, "atol": 1e-5}},
    },
}
RULE = {
    "op": "aten::var_mean.correction", "kind": "default", "targets": ["aten::mean.dim", "aten::var.correction"],
    "formula": "(var(x), mean(x))", "rationale": "Two reductions.", "implementation": "torch", "origin": "review",
}


def test_an_op_entry_reads_every_field():
    op = CoreOp.from_dict(OP)
    assert (op.name, op.status, op.deprecated, op.removed, op.proposals) == ("aten::log.default", "deprecated", "2026.12", None, (3, 7))
    assert op.equivalents == {"onnx": "Log"} and op.has_exception("also-decomposed") and not op.has_exception("symbolic")
    hints = op.testing
    assert hints.dtypes == ("float32", "float64") and hints.domain == {"self": Interval(0.0, float("inf"), False, False)}
    assert hints.shapes == {"self": ("n", 3)} and hints.ranks == {"self": (1, 4)} and hints.choices == {"dim": (0, -1)}
    assert hints.contiguous and hints.notes == "positive inputs"
    assert hints.tolerance.reason == "log near 0 is steep" and hints.tolerance.per_dtype == {"float32": (1e-4, 1e-5)}
    assert op.raw is OP  # the entry as written, for tables and rewrites
    with pytest.raises(dataclasses.FrozenInstanceError):
        op.status = "active"


def test_optional_fields_have_empty_defaults():
    minimal = {k: OP[k] for k in ("name", "schema", "category", "status", "since", "rationale")}
    op = CoreOp.from_dict(minimal)
    assert (op.deprecated, op.proposals, op.equivalents, op.exceptions) == (None, (), {}, ())
    assert op.testing == model.TestingHints() and model.TestingHints.from_dict(None) == model.TestingHints()


def test_raw_does_not_take_part_in_equality():
    assert CoreOp.from_dict(OP) == CoreOp.from_dict(dict(OP))


def test_a_rule_entry():
    rule = DecompositionRule.from_dict(RULE)
    assert rule.targets == ("aten::mean.dim", "aten::var.correction") and rule.uses_torch
    assert (rule.since, rule.random, rule.unspecified_values) == (None, False, False)
    opspec_rule = DecompositionRule.from_dict(RULE | {"implementation": "opspec.decompositions.reductions:var_mean_correction",
                                                      "random": True, "since": "2026.11", "proposals": [1]})
    assert not opspec_rule.uses_torch and opspec_rule.random and opspec_rule.proposals == (1,)


def test_version_info_keeps_torch_as_text():
    info = VersionInfo.from_dict({"version": "2026.11", "status": "released", "torch": 2.13, "released": "2026-11-01"})
    assert info.torch == "2.13" and info.digest is None and info.notes == ""


def test_opset_views():
    active = CoreOp.from_dict(OP | {"name": "aten::a", "status": "active", "deprecated": None})
    deprecated = CoreOp.from_dict(OP | {"name": "aten::b"})
    removed = CoreOp.from_dict(OP | {"name": "aten::c", "status": "removed", "removed": "2026.12"})
    default = DecompositionRule.from_dict(RULE)
    optional = DecompositionRule.from_dict(RULE | {"op": "aten::d", "kind": "optional"})
    info = VersionInfo("2026.12", "draft", "2.13.0")
    opset = Opset("2026.12", info, (active, deprecated, removed), (default, optional))
    assert opset.active_ops() == (active, deprecated)  # deprecated ops still count
    assert opset.core_names() == {"aten::a", "aten::b"}
    assert opset.default_rules() == (default,)
    assert set(opset.ops_by_name) == {"aten::a", "aten::b", "aten::c"} and set(opset.rules_by_op) == {RULE["op"], "aten::d"}


@pytest.mark.parametrize("text, expected", [
    ("(0, inf)", Interval(0.0, float("inf"), False, False)),
    ("[-1, 1]", Interval(-1.0, 1.0, True, True)),
    ("[0.5, 2)", Interval(0.5, 2.0, True, False)),
    (" ( -inf , 0 ] ", Interval(float("-inf"), 0.0, False, True)),
    ("[1e-3, 1e3]", Interval(1e-3, 1e3, True, True)),
])
def test_intervals_parse_and_print_back(text, expected):
    interval = Interval.parse(text)
    assert interval == expected
    assert Interval.parse(str(interval)) == interval
    assert str(Interval.parse("[-1, 1]")) == "[-1, 1]" and str(Interval.parse("(0, inf)")) == "(0, inf)"


@pytest.mark.parametrize("text, message", [
    ("0, 1", "not an interval"),
    ("[0; 1]", "not an interval"),
    ("[1, 0]", "empty interval"),
    ("[a, 1]", "could not convert"),
])
def test_bad_intervals(text, message):
    with pytest.raises(ValueError, match=message):
        Interval.parse(text)


def test_versions_sort_by_year_then_month():
    versions = ["2027.01", "2026.11", "2026.2", "2026.12"]
    assert sorted(versions, key=version_key) == ["2026.2", "2026.11", "2026.12", "2027.01"]
