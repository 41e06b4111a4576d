"""The conformance report's ``lowering`` section: what the backend's manifest says about each op run."""
from __future__ import annotations

import json
from pathlib import Path

from opspec_fixtures import TESTED_TORCH
from test_conform import validate

from opspec.cli import main
from opspec.conform import lowering, report
from opspec.results.model import CaseRecord, Header
from opspec.spec import manifests

MANIFEST = """\
opset: '{opset}'
backend: toy
measured_with: torch {torch}, by hand for this test
lowered:
  - aten::abs
  - op: aten::neg
    note: through a negation kernel
fallback:
  - op: aten::sin
    reason: no sine unit
"""


def write_manifest(folder: Path, opset: str = "2026.11") -> Path:
    path = folder / "toy.yaml"
    path.write_text(MANIFEST.format(opset=opset, torch=TESTED_TORCH))
    return path


def head(backend: str = "toy", opset: str = "2026.11", **fields) -> Header:
    return Header.from_dict({"backend": {"name": backend, "version": "1"}, "opset": opset, **fields})


def test_section_counts_each_distinct_op_once_and_flags_undeclared(tmp_path):
    manifest = manifests.load_manifest(write_manifest(tmp_path))
    section = lowering.section(manifest, "toy.yaml", ["aten::abs", "aten::abs", "aten::neg", "aten::sin", "aten::cos"])
    assert (section.ops_run, section.lowered, section.fallback, section.undeclared) == (4, 2, 1, 1)
    assert section.coverage_percent == 50.0
    assert section.ops["aten::neg"].to_dict() == {"status": "lowered", "note": "through a negation kernel"}
    assert section.ops["aten::sin"].to_dict() == {"status": "fallback", "note": "no sine unit"}
    assert section.ops["aten::cos"].status == "undeclared"


def test_no_section_without_a_manifest_or_for_another_opset(tmp_path):
    assert lowering.for_run(head("pkg.module:backend"), ["aten::abs"], tmp_path) == (None, [])
    assert lowering.for_run(head("nothing_here"), ["aten::abs"], tmp_path) == (None, [])
    write_manifest(tmp_path, opset="2025.06")
    section, warnings = lowering.for_run(head(), ["aten::abs"], tmp_path)
    assert section is None
    assert len(warnings) == 1 and "describes opset 2025.06, not 2026.11" in warnings[0]


def test_a_broken_manifest_is_a_warning_naming_it_not_a_crash(tmp_path):
    (tmp_path / "toy.yaml").write_text("opset: '2026.11'\nbackend: toy\nlowered: [aten::abs\n")
    section, warnings = lowering.for_run(head(), ["aten::abs"], tmp_path)
    assert section is None
    assert len(warnings) == 1 and "toy.yaml" in warnings[0]


def test_final_report_marks_records_and_summary_lists_fallbacks(tmp_path):
    write_manifest(tmp_path)
    records = [CaseRecord(op=op, dtype="float32", device="cpu", status="pass", compiles=1)
               for op in ("aten::abs", "aten::sin")]
    final = report.final(head(device="cpu"), records, order=[], warnings=[], duration_s=1.0, manifests_dir=tmp_path)
    assert [r.lowering for r in final.records] == ["lowered", "fallback"]
    assert final.lowering.coverage_percent == 50.0
    table = report.summary_table(final)
    assert "1 of 2 ops lowered (50.0%), 1 fall back" in table
    assert "fall back: sin" in table


def manifested(backend: str) -> str:
    """The opset version the bundled manifest of ``backend`` describes: a run of that version gets its section."""
    return manifests.load_manifest(manifests.manifest_path(backend)).opset


def test_a_run_on_a_bundled_backend_reports_its_lowering(tmp_path, capsys):
    out = tmp_path / "eager.json"
    code = main(["conform", "--backend", "eager", "--ops", "aten::abs,aten::nonzero", "--report", str(out),
                 "--max-examples", "1", "--max-compiles", "1", "--opset", manifested("eager")])
    assert code == 0, capsys.readouterr()
    final = json.loads(out.read_text())
    validate(final)
    eager = manifests.load_manifest(manifests.manifest_path("eager"))
    assert final["lowering"]["manifest"].endswith("eager.yaml")
    assert final["lowering"]["measured_with"] == eager.measured_with
    for record in final["results"]:
        assert record["lowering"] == eager.status(record["op"])[0]
    assert "ops lowered" in capsys.readouterr().out


def test_resuming_a_report_recomputes_its_section(tmp_path):
    out = tmp_path / "eager.json"
    args = ["conform", "--backend", "eager", "--ops", "aten::abs", "--report", str(out),
            "--max-examples", "1", "--max-compiles", "1", "--opset", manifested("eager")]
    assert main(args) == 0
    stale = json.loads(out.read_text())
    stale["lowering"]["coverage_percent"] = 0.0
    out.write_text(json.dumps(stale))
    assert main([*args, "--resume", str(out)]) == 0
    assert json.loads(out.read_text())["lowering"]["coverage_percent"] == 100.0
