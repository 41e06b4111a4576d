"""What a conform run prints: who failed, in words a backend author reads once."""
from __future__ import annotations

from opspec.conform import report
from opspec.results.model import CaseRecord, Header

EAGER = Header.from_dict({"backend": {"name": "eager"}, "device": "cpu", "opset": "2026.12"})


def _record(**fields) -> CaseRecord:
    return CaseRecord.from_dict({"op": "aten::sin", "dtype": "float32", "device": "cpu", "examples": 1, "compiles": 1,
                                 "duration_s": 0.1, "message": "", "executed": "unknown",
                                 "evidence": {"executed": "unknown", "source": "none"}, **fields})


def test_a_party_is_named_once_where_its_stage_says_no_more():
    line = report.progress_line(1, 2, _record(status="fail", message="wrong", blame="backend", blame_stage="backend"))
    assert "[backend] wrong" in line and "[backend: backend]" not in line
    line = report.progress_line(1, 2, _record(status="fail", message="wrong", blame="frontend", blame_stage="dynamo"))
    assert "[frontend: dynamo] wrong" in line


def test_a_long_message_keeps_its_end_where_the_failing_input_is_named():
    message = "special case opset/special_cases/pointwise-unary.yaml#sin-nan (float32): " + "x" * 300 + \
        " at (0,) got 1.0 expected nan"
    line = report.progress_line(1, 1, _record(status="fail", message=message, blame="backend", blame_stage="backend"))
    assert "special case opset/special_cases" in line and line.endswith("got 1.0 expected nan")


def test_right_answers_are_not_counted_as_failures():
    results = [_record(status="unverified", blame="backend", blame_stage="evidence"),
               _record(op="aten::cos", status="fallback", blame="backend", blame_stage="execution"),
               _record(op="aten::tan", status="fail", blame="frontend", blame_stage="dynamo", message="wrong")]
    final = report.final(EAGER, results, order=[], warnings=[], duration_s=1.0)
    table = report.summary_table(final)
    assert "who failed (cases failing): 1 frontend" in table
    assert "right answers the backend's target did not compute: 1 fallback, 1 unverified" in table


def test_the_summary_says_how_much_of_the_log_was_cut():
    results = [_record(status="pass", log={"bytes": 3 * 2**20, "cut_bytes": 2**20 + 2**19, "repeated_lines": 9})]
    final = report.final(EAGER, results, order=[], warnings=[], duration_s=1.0)
    assert "log: the cases printed 3.0 MB, 1.5 MB of it cut" in report.summary_table(final)
