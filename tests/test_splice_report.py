"""tools/splice_report.py: a partial re-run's cases replace a published report's, and the report is judged again."""
from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest
from test_conform import validate

from opspec.results import publish
from opspec.results.model import Report, expanded

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))
import splice_report  # noqa: E402

PUBLISHED = ROOT / "conformance" / "results" / "aot_eager-cpu.json"


@pytest.fixture
def published(tmp_path) -> Path:
    path = tmp_path / "aot_eager-cpu.json"
    shutil.copy(PUBLISHED, path)
    return path


@pytest.fixture
def full(tmp_path) -> Path:
    """The published report in the full form a run writes, its repros named where another machine wrote them."""
    report = Report.load(PUBLISHED)
    records = [r.replace(repro_file=f"/scratch/elsewhere.repros/{r.case.id}.py") if r.repro else r
               for r in report.records]
    path = tmp_path / "aot_eager-cpu.json"
    path.write_text(report.replace(shared=(), records=tuple(records)).dumps())
    return path


def rerun_of(tmp_path: Path, ops: set[str], **header) -> tuple[Path, dict]:
    """A re-run of ``ops`` as the published run recorded them, with ``header`` keys changed."""
    whole = json.loads(PUBLISHED.read_text())
    rerun = {**whole, **header, "ops": sorted(ops), "results": [r for r in whole["results"] if r["op"] in ops]}
    path = tmp_path / "rerun.json"
    path.write_text(json.dumps(rerun))
    return path, rerun


def test_a_rerun_that_found_the_same_changes_no_status(tmp_path, published, capsys):
    path, rerun = rerun_of(tmp_path, {"aten::argmin", "aten::argmax"})
    assert splice_report.main([str(published), str(path)]) == 0
    after = json.loads(published.read_text())
    validate(after)
    assert [r["status"] for r in after["results"]] == [r["status"] for r in json.loads(PUBLISHED.read_text())["results"]]
    assert f"{len(rerun['results'])} cases spliced, 0 changed status" in capsys.readouterr().out


def rerun_with_repro_files(tmp_path: Path, ops: set[str]) -> Path:
    path, rerun = rerun_of(tmp_path, ops)
    rerun = expanded(rerun)
    for record in rerun["results"]:
        if record.get("repro"):
            record["repro_file"] = f"/elsewhere/rerun.repros/{record['op']}.py"  # where the re-run's machine wrote it
    path.write_text(json.dumps(rerun))
    return path


def test_spliced_repros_are_written_beside_the_report_and_named_there(tmp_path, full):
    path = rerun_with_repro_files(tmp_path, {"aten::atan2.out", "aten::native_dropout"})
    assert splice_report.main([str(full), str(path)]) == 0
    spliced = [r for r in json.loads(full.read_text())["results"]
               if r["op"] in ("aten::atan2.out", "aten::native_dropout") and r.get("repro")]
    assert spliced and all(Path(r["repro_file"]).parent == full.with_suffix(".repros")
                           and Path(r["repro_file"]).read_text() == r["repro"] for r in spliced)


def test_a_published_report_stays_published_its_records_carrying_the_spliced_repros(tmp_path, published):
    path = rerun_with_repro_files(tmp_path, {"aten::atan2.out", "aten::native_dropout"})
    assert splice_report.main([str(published), str(path)]) == 0
    text = published.read_text()
    spliced = [r for r in Report.load(published).records
               if r.op in ("aten::atan2.out", "aten::native_dropout") and r.repro]
    assert spliced and not any(r.repro_file for r in spliced)
    assert publish.is_published(Report.load(published), text)
    assert not published.with_suffix(".repros").exists()


def test_without_a_rerun_the_report_is_judged_again_and_its_repros_brought_beside_it(tmp_path, full, capsys):
    before = json.loads(full.read_text())
    assert splice_report.main([str(full)]) == 0
    after = json.loads(full.read_text())
    assert [r["status"] for r in after["results"]] == [r["status"] for r in before["results"]]
    assert after.get("spliced") == before.get("spliced")  # nothing spliced, nothing named
    moved = [r for r in after["results"] if r.get("repro_file")]
    assert moved and all(Path(r["repro_file"]).parent == full.with_suffix(".repros")
                         and Path(r["repro_file"]).read_text() == r["repro"] for r in moved)
    assert "0 cases spliced, 0 changed status" in capsys.readouterr().out


def test_a_rerun_that_fails_a_case_changes_that_case_and_the_counts(tmp_path, published, capsys):
    path, rerun = rerun_of(tmp_path, {"aten::argmin"})
    record = next(r for r in rerun["results"] if r["status"] == "pass")
    record.update(status="fail", outcome="fail", message="[0]: torch.int64 values differ", blame="backend",
                  blame_stage="backend", blame_reason="the front end with eager kernels passes")
    path.write_text(json.dumps(rerun))
    before = json.loads(published.read_text())["summary"]
    assert splice_report.main([str(published), str(path)]) == 0
    after = json.loads(published.read_text())
    validate(after)
    (changed,) = [r for r in after["results"] if r["op"] == "aten::argmin" and r["dtype"] == record["dtype"]]
    assert changed["status"] == "fail"
    assert (after["summary"]["fail"], after["summary"]["pass"]) == (before["fail"] + 1, before["pass"] - 1)
    assert f"aten::argmin {record['dtype']} cpu: pass -> fail" in capsys.readouterr().out


@pytest.mark.parametrize("header, problem", [
    ({"torch": "2.99.0"}, "differs from the report in torch: '2.99.0'"),
    ({"seed": 7}, "differs from the report in seed: 7"),
])
def test_a_rerun_of_another_setting_is_refused_and_nothing_is_written(tmp_path, published, capsys, header, problem):
    path, _ = rerun_of(tmp_path, {"aten::argmin"}, **header)
    before = published.read_bytes()
    assert splice_report.main([str(published), str(path)]) == 2
    err = capsys.readouterr().err
    assert problem in err and len(err.strip().splitlines()) == 1
    assert published.read_bytes() == before


def test_a_case_the_report_does_not_hold_is_refused(tmp_path, published, capsys):
    path, rerun = rerun_of(tmp_path, {"aten::argmin"})
    rerun["results"][0]["device"] = "cuda"
    path.write_text(json.dumps(rerun))
    before = published.read_bytes()
    assert splice_report.main([str(published), str(path)]) == 2
    assert "aten::argmin float64 cuda is not a case of the report" in capsys.readouterr().err
    assert published.read_bytes() == before


def test_the_report_names_each_rerun_spliced_into_it(tmp_path, published):
    path, rerun = rerun_of(tmp_path, {"aten::argmin", "aten::argmax"}, duration_s=12.5, device_name="Another CPU")
    assert splice_report.main([str(published), str(path)]) == 0
    assert splice_report.main([str(published), str(path)]) == 0
    after = json.loads(published.read_text())
    validate(after)
    earlier = json.loads(PUBLISHED.read_text()).get("spliced", [])  # the published report's own splices stay first
    assert after["spliced"][:len(earlier)] == earlier and len(after["spliced"]) == len(earlier) + 2
    first, second = after["spliced"][len(earlier):]
    assert first["ops"] == ["aten::argmax", "aten::argmin"] and first["cases"] == len(rerun["results"])
    assert first["duration_s"] == 12.5 and first["device_name"] == "Another CPU" and first["measured"].endswith("Z")
    assert second["cases"] == first["cases"]
    # the header's own machine and duration stay the first run's
    assert after["duration_s"] == json.loads(PUBLISHED.read_text())["duration_s"]


def test_a_spliced_report_is_another_run_in_the_history(tmp_path, published):
    from opspec.reports import history

    before = history.from_report(json.loads(published.read_text()), str(published), "2026-11-28T00:00:00Z")
    path, _ = rerun_of(tmp_path, {"aten::argmin"})
    assert splice_report.main([str(published), str(path)]) == 0
    after = history.from_report(json.loads(published.read_text()), str(published), "2026-11-28T01:00:00Z")
    assert after.spliced == before.spliced + 1
    assert history.identity(after) != history.identity(before)
    assert history.Run.from_dict(after.to_dict()).spliced == after.spliced


def test_a_case_run_on_another_machine_names_it(tmp_path, published):
    header_machine = json.loads(PUBLISHED.read_text()).get("device_name")
    path, rerun = rerun_of(tmp_path, {"aten::argmin"}, device_name="Another CPU")
    assert splice_report.main([str(published), str(path)]) == 0
    after = json.loads(published.read_text())
    validate(after)
    assert after.get("device_name") == header_machine  # the header stays the first run's
    named = {(r["op"], r["dtype"]): r.get("device_name") for r in after["results"]}
    assert {named[(r["op"], r["dtype"])] for r in rerun["results"]} == {"Another CPU"}
    before = {(r["op"], r["dtype"]): r.get("device_name") for r in json.loads(PUBLISHED.read_text())["results"]}
    assert all(named[case] == before[case] for case in named if case[0] != "aten::argmin")  # the rest as they were
    # spliced again from the header's own machine, the cases stop naming another
    path, _ = rerun_of(tmp_path, {"aten::argmin"}, device_name=header_machine)
    assert splice_report.main([str(published), str(path)]) == 0
    assert not any("device_name" in r for r in json.loads(published.read_text())["results"] if r["op"] == "aten::argmin")
