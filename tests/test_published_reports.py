"""The published reports (conformance/results/*.json): each in its published form, within the size budget, and the
published form keeps every verdict while leaving out what a run changes (test_results_model holds each committed
report to the schema)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from opspec.cli import main
from opspec.results import publish
from opspec.results.model import Report, ReportFormatError, expanded

ROOT = Path(__file__).resolve().parents[1]
REPORTS = sorted((ROOT / "conformance" / "results").glob("*.json"))


@pytest.mark.parametrize("path", REPORTS, ids=lambda p: p.stem)
def test_every_committed_report_is_published_and_within_the_budget(path):
    text = path.read_text(encoding="utf-8")
    assert publish.is_published(Report.load(path), text), f"publish it: opspec report publish {path.relative_to(ROOT)}"
    assert len(text.encode("utf-8")) <= publish.BUDGET_BYTES, f"{path.name}: {len(text.encode()):,} bytes"


def _full(duration: float, folder: str) -> dict:
    """A full report as a run writes it: durations, repro files, the same evidence and expectation in each record."""
    evidence = {"executed": "pytorch", "source": "hook", "pytorch_ops": ["aten::abs"]}
    expectation = {"status": "xfail", "reason": "a known bug", "where": "conformance/expectations/b.yaml:3",
                   "attribution": "backend"}
    records = [
        {"op": "aten::abs", "dtype": "float32", "device": "cpu", "status": "pass", "message": "", "outcome": "pass",
         "kernel_error": None, "property_checked": False, "executed": "target",
         "evidence": {"executed": "target", "source": "hook"}, "duration_s": duration},
        *({"op": "aten::neg", "dtype": dtype, "device": "cpu", "status": "fallback", "message": "right answer",
           "outcome": "fallback", "executed": "pytorch", "evidence": evidence, "repro": f"# neg {dtype}\n",
           "repro_file": f"{folder}/neg-{dtype}-cpu.py", "duration_s": duration} for dtype in ("float32", "float64")),
        *({"op": "aten::sin", "dtype": dtype, "device": "cpu", "status": "xfail", "message": "values differ",
           "outcome": "fail", "executed": "target", "evidence": {"executed": "target", "source": "hook"},
           "expectation": expectation, "repro": f"# sin {dtype}\n", "repro_file": f"{folder}/sin-{dtype}-cpu.py",
           "duration_s": duration} for dtype in ("float32", "float64")),
    ]
    return {"backend": {"name": "b", "version": "1"}, "device": "cpu", "opset": "2026.12", "duration_s": duration,
            "summary": {}, "warnings": [], "results": records}


def test_the_published_form_keeps_every_verdict_and_leaves_out_what_a_run_changes():
    full = Report.from_dict(_full(12.5, "/here/r.repros"))
    text = publish.text(full)
    data = json.loads(text)
    records = data["results"]
    assert not any(key in r for r in records for key in ("duration_s", "repro_file", "kernel_error", "property_checked"))
    assert [r.get("repro") for r in records] == [None, "# neg float32\n", None, "# sin float32\n", "# sin float64\n"]
    assert len(data["shared"]["evidence"]) == 2 and len(data["shared"]["expectation"]) == 1
    assert all(isinstance(r["evidence"], str) for r in records)
    again = Report.from_dict(data)
    assert again.statuses() == full.statuses()
    assert [(r.outcome, r.message, r.executed, r.evidence, r.expectation) for r in again.records] == \
        [(r.outcome, r.message, r.executed, r.evidence, r.expectation) for r in full.records]
    assert again.dumps() == text and publish.text(again) == text  # read back and published again: the same bytes
    assert expanded(data)["results"][3]["expectation"]["reason"] == "a known bug"
    # another run, the same verdicts: the same records; the header keeps its own duration
    other = json.loads(publish.text(Report.from_dict(_full(99.0, "/elsewhere/r.repros"))))
    assert other["results"] == records and other["shared"] == data["shared"] and other["duration_s"] == 99.0
    assert (data["op_seconds"], other["op_seconds"]) == ({"aten::abs": 12.5, "aten::neg": 12.5, "aten::sin": 12.5},
                                                         {"aten::abs": 99.0, "aten::neg": 99.0, "aten::sin": 99.0})


def test_a_key_the_shared_section_does_not_hold_is_refused():
    data = json.loads(publish.text(Report.from_dict(_full(1.0, "r.repros"))))
    data["results"][0]["evidence"] = "00000000"
    with pytest.raises(ReportFormatError, match="evidence '00000000' is not in the shared section"):
        Report.from_dict(data)


def test_report_publish_writes_the_published_form_and_checks_it(tmp_path, capsys):
    full, out = tmp_path / "full.json", tmp_path / "b-cpu.json"
    full.write_text(Report.from_dict(_full(3.0, "r.repros")).dumps(), encoding="utf-8")
    assert main(["report", "publish", str(full), "--out", str(out)]) == 0
    assert "published 5 cases" in capsys.readouterr().out
    assert out.read_text(encoding="utf-8") == publish.text(Report.load(full))
    assert main(["report", "publish", str(out), "--check"]) == 0
    assert main(["report", "publish", str(full), "--check"]) == 1
    assert "not in its published form" in capsys.readouterr().out
    assert main(["report", "publish", str(full)]) == 0  # in place
    assert full.read_text(encoding="utf-8") == out.read_text(encoding="utf-8")
