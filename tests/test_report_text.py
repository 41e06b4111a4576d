"""A report file's text: the header indented, one line per case, the same JSON as before."""
from __future__ import annotations

import json
from pathlib import Path

from opspec.results.json_text import report_text

RESULTS = Path(__file__).resolve().parents[1] / "conformance" / "results"


def test_one_line_per_case_and_the_same_data():
    report = {"format": 1, "backend": {"name": "demo", "version": "1"}, "warnings": [],
              "results": [{"op": "aten::abs", "status": "pass", "message": "line\nbreak \"quoted\""},
                          {"op": "aten::neg", "status": "fail", "message": "", "evidence": {"kernels": ["a", "b"]}}]}
    text = report_text(report)
    assert json.loads(text) == report and list(json.loads(text)) == list(report)
    lines = text.splitlines()
    assert [line.strip().rstrip(",") for line in lines if '"op"' in line] == [
        json.dumps(r, separators=(", ", ": ")) for r in report["results"]]
    assert lines[0] == "{" and lines[-1] == "}" and text.endswith("}\n")


def test_a_report_without_cases_is_plain_indented_json():
    assert report_text({"format": 1, "results": []}) == json.dumps({"format": 1, "results": []}, indent=1) + "\n"


def test_committed_reports_are_written_so():
    """A re-run's diff is then the cases whose record changed, not every line of the file."""
    for path in sorted(RESULTS.glob("*.json")):
        text = path.read_text(encoding="utf-8")
        assert text == report_text(json.loads(text)), f"{path.name}: not in the report file's form"
