"""``opspec strategies --report``: the strategy source of every core op, and the --check run."""
from __future__ import annotations

import dataclasses
import json
from collections import Counter

import pytest

from opspec.checks import strategy_report
from opspec.cli import main
from opspec.spec import load, model
from opspec.testing import strategies

FEW = ["aten::sin", "aten::mm", "aten::gather"]


@pytest.fixture(scope="module")
def opset():
    return load.load_opset()


def test_report_lists_every_core_op_with_a_source(opset):
    result = strategy_report.report(opset)
    assert [e.op for e in result.entries] == sorted(opset.core_names())
    assert len(result.entries) == len(opset.ops) >= 193
    expected = Counter(strategies.strategy_source(op.name, op.testing) for op in opset.ops)
    assert result.counts() == {s: expected.get(s, 0) for s in strategy_report.SOURCES}
    assert sum(result.counts().values()) == len(opset.ops)
    sources = {e.op: e.source for e in result.entries}
    assert (sources["aten::sin"], sources["aten::mm"], sources["aten::gather"]) == ("generic", "hints", "custom")
    assert result.exit_code == 0 and all(e.drawn is None for e in result.entries)


def test_check_runs_drawn_calls(opset):
    result = strategy_report.report(opset, FEW, check=2)
    assert [(e.op, e.drawn, e.valid) for e in result.entries] == [(op, 2, 2) for op in FEW]
    assert result.entries[0].dtype == str(strategies.dtypes_under_test("aten::sin", opset.ops_by_name["aten::sin"].testing)[0]).removeprefix("torch.")
    assert result.exit_code == 0


def test_op_without_valid_calls_fails_the_check(opset):
    # hints that contradict the kernel: mm of [2, 3] by [4, 5] never runs
    broken = model.TestingHints(dtypes=("float32",), shapes={"self": (2, 3), "mat2": (4, 5)})
    ops = tuple(dataclasses.replace(op, testing=broken) if op.name == "aten::mm" else op for op in opset.ops)
    result = strategy_report.report(dataclasses.replace(opset, ops=ops), ["aten::sin", "aten::mm"], check=2)
    assert [e.op for e in result.failures()] == ["aten::mm"]
    assert "RuntimeError" in result.failures()[0].error
    assert result.exit_code == 1
    assert "no valid call: aten::mm" in strategy_report.render_table(result)


def test_cli_table_prints_counts(capsys, opset):
    assert main(["strategies", "--report"]) == 0
    out = capsys.readouterr().out
    counts = strategy_report.report(opset).counts()
    assert f"{len(opset.ops)} core ops (opset {opset.version}): {counts['generic']} generic, {counts['hints']} hints, {counts['custom']} custom" in out


def test_cli_json_with_check(capsys):
    assert main(["strategies", "--report", "--format", "json", "--check", "2", "--op", "sin", "--op", "aten.mm.default"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["ops"] == 2 and data["yielding_valid_calls"] == 2
    assert [(e["op"], e["valid"]) for e in data["entries"]] == [("aten::sin", 2), ("aten::mm", 2)]


@pytest.mark.parametrize("argv, message", [
    (["strategies"], "pass --report"),
    (["strategies", "--report", "--check", "-1"], "--check must be 0 or more"),
    (["strategies", "--report", "--op", "aten::linear"], "not a core op"),
])
def test_cli_usage_errors(capsys, argv, message):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1
