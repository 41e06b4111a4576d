"""tools/triage_report.py: a run in more dtypes than its expectations were written for, triaged in the file."""
from __future__ import annotations

import importlib.util
import json
from pathlib import Path

from opspec.conform import expectations as expectations_mod
from opspec.conform.cases import Case
from opspec.conform.runner import cached_opset

TOOL = Path(__file__).resolve().parents[1] / "tools" / "triage_report.py"
EXPECTATIONS = """\
backend: demo
opset: '2026.12'
expectations:
  - op: aten::abs
    status: xfail
    attribution: backend
    reason: 'NaN lost, measured in float32'
"""


def _tool():
    spec = importlib.util.spec_from_file_location("triage_report", TOOL)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _record(op, dtype, status, outcome, message="", where=None, blame="backend"):
    record = {"op": op, "dtype": dtype, "device": "cpu", "status": status, "outcome": outcome, "message": message,
              "blame": blame, "blame_reason": "the front end with eager kernels passes (dynamo)"}
    if where:
        record["expectation"] = {"status": "xfail", "reason": "NaN lost, measured in float32", "where": where}
    return record


def test_entries_are_limited_to_the_dtypes_they_hold_for_and_new_failures_get_their_own(tmp_path, capsys):
    path = tmp_path / "demo.yaml"
    path.write_text(EXPECTATIONS)
    where = f"{path}:4"
    nan = "output: NaN at different positions: 1 of 2 elements, at (0,) got 0.0 expected nan"
    report = tmp_path / "demo-cpu.json"
    report.write_text(json.dumps({"backend": {"name": "demo"}, "opset": "2026.12", "torch": "2.13.0",
                                  "expectations": str(path), "results": [
        _record("aten::abs", "float32", "xfail", "fail", nan, where),
        _record("aten::abs", "float64", "xpass", "pass", "stale expectation", where),
        _record("aten::abs", "int64", "xfail", "fail", "output: torch.int64 values differ (max abs error 4)", where),
        _record("aten::neg", "float16", "fail", "fail", nan.replace("0.0", "1.0")),
        _record("aten::neg", "bfloat16", "fail", "fail", nan),
        _record("aten::sin", "float32", "pass", "pass"),
    ]}))
    assert _tool().main([str(report)]) == 0
    printed = capsys.readouterr().out
    assert f"{where}: limited to float32" in printed and "2 entries added" not in printed
    loaded = expectations_mod.read(path, cached_opset("2026.12"), "2.13.0")
    judged = {dtype: loaded.lookup(Case(op, dtype, "cpu"))
              for op, dtype in [("aten::abs", "float32"), ("aten::abs", "float64"), ("aten::abs", "int64")]}
    assert judged["float32"].reason == "NaN lost, measured in float32" and judged["float64"] is None
    assert "measured fail in 1 case(s)" in judged["int64"].reason and "int64 values differ" in judged["int64"].reason
    neg = loaded.lookup(Case("aten::neg", "float16", "cpu"))
    assert neg is loaded.lookup(Case("aten::neg", "bfloat16", "cpu")), "one kind of failure, one entry for its dtypes"
    assert neg.dtypes == ("bfloat16", "float16") and neg.attribution == "backend"
    assert loaded.lookup(Case("aten::sin", "float32", "cpu")) is None


def test_a_report_that_cannot_be_triaged_is_one_line_and_nothing_is_written(tmp_path, capsys):
    path = tmp_path / "demo.yaml"
    path.write_text(EXPECTATIONS)
    report = tmp_path / "demo-cpu.json"
    for body in ("{not json", json.dumps({"opset": "2026.12", "torch": "2.13.0", "results": []}),
                 json.dumps({"opset": "2026.12", "torch": "2.13.0", "expectations": str(tmp_path / "none.yaml"),
                             "results": []})):
        report.write_text(body)
        assert _tool().main([str(report)]) == 2
        err = capsys.readouterr().err
        assert err.startswith(f"{report}: not triaged: ") and err.count("\n") == 1
    assert path.read_text() == EXPECTATIONS
