"""`opspec ops` and `opspec show`."""
from __future__ import annotations

import json
import re

from opspec.cli import main


def run(capsys, *argv):
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


def test_ops_table_filters_by_category(capsys):
    code, out, _ = run(capsys, "ops", "--category", "reduction", "--opset", "2026.11")
    assert code == 0
    assert "aten::sum.dim_IntList" in out and "aten::add.Tensor" not in out
    assert "core ops in opset 2026.11" in out


def test_ops_json_lists_all_193(capsys):
    code, out, _ = run(capsys, "ops", "--format", "json", "--opset", "2026.11")
    records = json.loads(out)
    assert code == 0 and len(records) == 193
    assert {"name", "schema", "category", "status", "since", "rationale"} <= set(records[0])


def test_show_accepts_every_spelling(capsys):
    for spelling in ("aten::add.Tensor", "add.Tensor", "aten.add.Tensor"):
        code, out, _ = run(capsys, "show", spelling)
        assert code == 0 and out.startswith("aten::add.Tensor")


def test_show_a_decomposed_op(capsys):
    code, out, _ = run(capsys, "show", "aten::addcmul")
    assert code == 0 and "decomposed (default)" in out and "targets:" in out


def test_show_unknown_op_suggests(capsys):
    code, _, err = run(capsys, "show", "aten::ad.Tensor")
    assert code == 2
    assert err.count("\n") == 1 and "did you mean" in err and "aten::add.Tensor" in err


def test_unknown_version_is_a_usage_error(capsys):
    code, _, err = run(capsys, "ops", "--opset", "1999.01")
    assert code == 2 and "unknown opset version '1999.01'" in err


def test_show_prints_what_the_op_computes_its_rows_and_its_accuracy(capsys):
    from opspec.spec.special_cases import load_special_cases

    assert main(["show", "aten::isinf"]) == 0
    out = capsys.readouterr().out
    assert "formula:    out_i = " in out and "checked as: " in out
    rows = load_special_cases()["aten::isinf"]
    assert f"special cases ({len(rows)}):" in out
    assert all(f"pointwise-unary.yaml#{row.id} [{row.klass}] {row.says}" in out for row in rows)
    assert main(["show", "aten::exp"]) == 0
    assert "bfloat16  0.5 ULP over self in [-inf, inf]" in capsys.readouterr().out


def test_show_json_carries_the_same(capsys):
    assert main(["show", "aten::isinf", "--format", "json"]) == 0
    record = json.loads(capsys.readouterr().out)
    assert record["description"]["formula_check"]
    assert all(re.search(r"special_cases/pointwise-unary\.yaml#[\w.-]+$", row["where"]) for row in record["special_cases"])
    assert record["special_cases"][0]["says"] and "expect" in record["special_cases"][0]
    assert main(["show", "aten::exp", "--format", "json"]) == 0
    assert {c["dtype"] for c in json.loads(capsys.readouterr().out)["accuracy"]} == {"float64", "float32", "float16", "bfloat16"}
