"""`opspec ops` and `opspec show`."""
from __future__ import annotations

import json

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
