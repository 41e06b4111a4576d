"""The report model: every committed report reads and writes back unchanged, and what it writes obeys the schema."""
from __future__ import annotations

import ast
import json
import sys
from pathlib import Path

import pytest

from opspec.results import tally, vocabulary
from opspec.results.model import Case, CaseRecord, Header, Report, ReportFormatError
from opspec.spec import load

ROOT = Path(__file__).resolve().parents[1]
REPORTS = sorted((ROOT / "conformance" / "results").glob("*.json"))
SCHEMA = json.loads((ROOT / "opset" / "schema" / "conformance_report.schema.json").read_text(encoding="utf-8"))


@pytest.mark.parametrize("path", REPORTS, ids=lambda p: p.stem)
def test_every_committed_report_round_trips_and_obeys_the_schema(path):
    text = path.read_text(encoding="utf-8")
    data = json.loads(text)
    report = Report.from_dict(data)
    again = report.to_dict()
    assert again == data
    assert report.dumps(as_read=True) == text  # written back in the order it was read: the same bytes
    assert [r.status for r in report.records] == [r["status"] for r in data["results"]]
    assert not load.schema_findings(again, "conformance_report.schema.json", str(path))


def test_the_vocabulary_is_the_schemas():
    defs = SCHEMA["$defs"]
    assert vocabulary.STATUSES == tuple(defs["status"]["enum"])
    assert vocabulary.EXECUTED == tuple(defs["executed"]["enum"])
    assert vocabulary.BLAME == tuple(defs["blame"]["enum"])
    assert vocabulary.LOWERING == tuple(defs["lowering_status"]["enum"])
    assert vocabulary.FUNCTIONALIZATION == tuple(defs["functionalization_status"]["enum"])
    assert vocabulary.EVIDENCE_SOURCES == tuple(defs["evidence"]["properties"]["source"]["enum"])
    assert set(vocabulary.CLEAN) <= set(vocabulary.STATUSES) and set(vocabulary.PASSING_STATUS) == set(vocabulary.EXECUTED)
    assert set(SCHEMA["properties"]["summary"]["required"]) == {*vocabulary.STATUSES, "cases", "compiles"}


def _report(**record) -> dict:
    return {"backend": {"name": "b", "version": "1"}, "device": "cpu", "opset": "2026.12", "summary": {},
            "warnings": [], "results": [{"op": "aten::abs", "dtype": "float32", "device": "cpu", "status": "pass",
                                         "message": "", **record}]}


def test_keys_the_model_does_not_type_and_nulls_survive():
    data = _report(max_abs_error=None, tolerance=[1e-5, 1e-6], vendor={"lanes": [1, 2]},
                   expectation={"status": "xfail", "reason": "r", "ticket": 7})
    data["shuffle"] = None
    data["vendor_header"] = [1]
    report = Report.from_dict(data)
    record = report.records[0]
    assert record.max_abs_error is None and "max_abs_error" in record.nulls
    assert record.tolerance == (1e-5, 1e-6) and record.extra == {"vendor": {"lanes": [1, 2]}}
    assert record.expectation.status == "xfail" and record.expectation.extra == {"ticket": 7}
    assert report.header.shuffle is None and report.header.extra == {"vendor_header": [1]}
    assert report.to_dict() == data
    # a null written is kept apart from a key left out
    data.pop("shuffle")
    assert "shuffle" not in Report.from_dict(data).to_dict()


def test_keys_are_written_in_the_model_order_or_as_read():
    data = _report()
    data["results"][0] = {"status": "pass", "message": "", "op": "aten::abs", "device": "cpu", "dtype": "float32"}
    record = Report.from_dict(data).records[0]
    assert list(record.to_dict()) == ["op", "dtype", "device", "status", "message"]
    assert list(record.to_dict(as_read=True)) == ["status", "message", "op", "device", "dtype"]
    # a key the record did not hold when read comes last, as when a JSON object is updated
    changed = record.replace(lowering="lowered", message="m")
    assert list(changed.to_dict(as_read=True)) == ["status", "message", "op", "device", "dtype", "lowering"]
    assert changed == Report.from_dict(data).records[0].replace(lowering="lowered", message="m")  # order is not data


def test_a_lenient_read_keeps_what_fits_the_schema():
    """The site reads reports of other tools so: a part not of its shape left out, a required field missing None."""
    from opspec.results import lenient

    found = lenient.read({"name": "third", "cases": [
        {"operator": "aten::sin", "result": "fail", "expectation": {"reason": "known"}, "evidence": "none"},
        {"dtype": "float16"}]}, "stem")
    (record,) = found.report.records
    assert (record.op, record.status, record.dtype, record.device) == ("aten::sin", "fail", "", "")
    assert record.expectation.reason == "known" and record.expectation.status is None and record.evidence is None
    assert found.report.backend_name == "third" and found.left_out == 1
    with pytest.raises(ReportFormatError, match="CaseRecord.expectation"):
        CaseRecord.from_dict({**record.to_dict(), "expectation": "xfail"})  # strict reads refuse it still
    with pytest.raises(ReportFormatError, match="no list of results"):
        lenient.read({"backend": "x"})


def test_a_required_field_written_null_reads_none():
    """An accuracy program that did not run measured nothing: its max_ulp is null, and the record still reads."""
    accuracy = {"contract": {"max_ulp": 1}, "max_ulp": None, "inputs": 0, "worst": []}
    data = _report(status="fail", accuracy=accuracy)
    record = Report.from_dict(data).records[0]
    assert record.accuracy.max_ulp is None and record.to_dict()["accuracy"] == accuracy


def test_an_unknown_status_is_read_not_refused():
    report = Report.from_dict(_report(status="segfault", outcome="segfault"))
    assert report.records[0].status == "segfault" and not report.records[0].clean
    assert vocabulary.status_key("segfault") > vocabulary.status_key("skip")


def test_a_record_knows_its_case():
    record = CaseRecord.from_dict({"op": "aten::add.Tensor", "dtype": "float16", "device": "cuda", "status": "xfail"})
    assert record.case == Case("aten::add.Tensor", "float16", "cuda")
    assert record.case.id == "add.Tensor-float16-cuda" and record.case.name == "aten::add.Tensor float16 cuda"
    assert record.final_outcome == "xfail" and record.clean and not record.passed
    assert record.replace(outcome="fail").final_outcome == "fail"


def test_a_name_only_backend_of_older_reports_round_trips():
    data = _report()
    data["backend"] = "inductor"
    report = Report.from_dict(data)
    assert report.backend_name == "inductor" and report.to_dict() == data


@pytest.mark.parametrize("bad, says", [
    ({"results": {}}, "no results list"),
    ({**_report(), "backend": 3}, "no backend"),
    (_report(status=3), "must be strings"),
    ({**_report(), "results": [{"op": "aten::abs", "dtype": "float32", "device": "cpu"}]}, "status"),
    (_report(expectation="xfail"), "CaseRecord.expectation"),
])
def test_what_is_not_a_report_is_refused_with_one_line(bad, says):
    with pytest.raises(ReportFormatError, match=says):
        Report.from_dict(bad)


def test_load_names_the_file(tmp_path):
    path = tmp_path / "r.json"
    path.write_text("{", encoding="utf-8")
    with pytest.raises(ReportFormatError, match=r"r\.json:1: not valid JSON"):
        Report.load(path)
    path.write_text(json.dumps(_report()), encoding="utf-8")
    assert Report.load(path).header == Header.from_dict({k: v for k, v in _report().items()
                                                         if k not in Report.SECTIONS})


def test_the_model_imports_the_standard_library_and_the_spec_alone():
    """So a machine without torch, numpy or yaml's C parts can merge, chart and publish reports."""
    source = ROOT / "src" / "opspec" / "results"
    found = set()
    for path in source.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                found |= {alias.name for alias in node.names}
            elif isinstance(node, ast.ImportFrom) and not node.level:
                found.add(node.module)
    outside = {m for m in found if m.split(".")[0] not in sys.stdlib_module_names
               and not m.startswith(("opspec.spec", "opspec.results"))}
    assert found and outside == set()


@pytest.mark.parametrize("path", REPORTS, ids=lambda p: p.stem)
def test_the_sections_computed_again_are_the_reports_own(path):
    """A merge or a splice computes the sections again: over a report's own records they come out as written
    (root causes by the cases they hold: committed messages were reworded since, which regroups some causes)."""
    report = Report.load(path)
    assert tally.summary(report.records) == report.summary
    assert tally.executed_counts(report.records) == report.executed
    assert tally.blame_counts(report.records) == report.blame
    def held(causes):
        return sorted((case, c.blame, c.stage, c.outcome) for c in causes for case in c.cases)
    assert held(tally.root_causes(report.records)) == held(report.root_causes)
    assert tally.stale_expectations(report.records) == [w for w in report.warnings if ": stale expectation on " in w]
