"""The committed conformance reports (conformance/results/*.json): valid, judged, and every repro replays its verdict."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch
from test_conform import validate

from opspec.conform import backends, evidence, replay
from opspec.conform.backends import registry

ROOT = Path(__file__).resolve().parents[1]
REPORTS = sorted((ROOT / "conformance" / "results").glob("*.json"))


def committed() -> list[tuple[str, dict]]:
    return [(path.stem, json.loads(path.read_text())) for path in REPORTS]


def repros() -> list:
    found = []
    for stem, report in committed():
        for record in report["results"]:
            if record.get("repro"):
                found.append(pytest.param(stem, record, id=f"{stem}:{record['op']}-{record['dtype']}"))
    return found


@pytest.mark.parametrize("stem, report", committed(), ids=[stem for stem, _ in committed()])
def test_committed_reports_carry_evidence_and_blame(stem, report):
    validate(report)
    assert report["backend"].get("package") and report.get("device_name")
    for record in report["results"]:
        if record.get("outcome") == "skip":  # not run (an expectation says why): nothing executed, nobody failed
            assert record["message"], record["op"]
            continue
        assert record["executed"] in ("target", "runtime", "pytorch", "partial", "unknown"), record["op"]
        if record.get("outcome", record["status"]) != "pass":
            assert record.get("blame") in ("frontend", "backend", "opspec"), record["op"]
    assert sum(report["executed"].values()) == sum(1 for r in report["results"] if r.get("outcome") != "skip")


@pytest.mark.parametrize("stem, record", repros())
def test_every_committed_repro_replays_its_verdict(tmp_path, stem, record):
    if record["outcome"] in ("crash", "timeout"):
        pytest.skip("a crash or hang is not replayed in the test process")
    if record["device"] == "cuda" and not torch.cuda.is_available():
        pytest.skip("a CUDA record replays only where CUDA is available")
    path = tmp_path / "repro.py"
    path.write_text(record["repro"])
    loaded = replay.load_repro(str(path))
    try:
        got = replay.verdict(loaded["CASE"], loaded["program"], loaded["args"], loaded["kwargs"])
    except backends.MissingExtra as err:
        pytest.skip(str(err))
    if record["outcome"] == "unverified":  # nothing told who computed it: one program's replay may tell more
        assert got["status"] in ("unverified", *evidence.PASSING_STATUS.values()), got["message"]
        return
    assert got["status"] == record["outcome"], got["message"]


@pytest.mark.parametrize("stem, report", committed(), ids=[stem for stem, _ in committed()])
def test_every_committed_status_follows_who_computed_the_op(stem, report):
    """A pass is the backend's target's work; a right answer from its runtime, PyTorch or nobody known is not."""
    declared = registry.lookup(report["backend"]["name"])
    for record in report["results"]:
        outcome, where = record.get("outcome", record["status"]), f"{stem}: {record['op']} {record['dtype']}"
        if outcome in evidence.PASSING_STATUS.values():
            assert outcome == evidence.PASSING_STATUS[record["executed"]], f"{where}: {outcome} computed by {record['executed']}"
        if record["status"] == "pass":
            assert record["executed"] == "target", where
        if record.get("executed") == "unknown" and outcome == "unverified":  # only where nothing can tell, or said why
            assert declared.evidence == "none" or record["message"].startswith("right answer, unverified: "), where


def test_the_xnnpack_report_credits_the_delegate_only_with_what_it_computed():
    report = json.loads((ROOT / "conformance" / "results" / "executorch-xnnpack-cpu.json").read_text())
    assert report["backend"]["target"] == "the XNNPACK delegate"
    for record in report["results"]:
        if record["status"] == "pass":  # the delegate ran the op: it is among the ops it was handed
            assert record["evidence"]["target_ops"], record["op"]
        if record["status"] == "undelegated":
            assert record["evidence"]["runtime_ops"], record["op"]
    assert report["summary"]["undelegated"] > report["summary"]["pass"] > 0
