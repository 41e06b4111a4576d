"""The committed conformance reports (conformance/results/*.json): valid, judged, and every repro replays its verdict."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_conform import validate

from opspec.conform import backends, replay

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
        assert record["executed"] in ("backend", "pytorch", "partial", "unknown"), record["op"]
        if record.get("outcome", record["status"]) != "pass":
            assert record.get("blame") in ("frontend", "backend", "opspec"), record["op"]
    assert sum(report["executed"].values()) == sum(1 for r in report["results"] if r.get("outcome") != "skip")


@pytest.mark.parametrize("stem, record", repros())
def test_every_committed_repro_replays_its_verdict(tmp_path, stem, record):
    if record["outcome"] in ("crash", "timeout"):
        pytest.skip("a crash or hang is not replayed in the test process")
    path = tmp_path / "repro.py"
    path.write_text(record["repro"])
    loaded = replay.load_repro(str(path))
    try:
        got = replay.verdict(loaded["CASE"], loaded["program"], loaded["args"], loaded["kwargs"])
    except backends.MissingExtra as err:
        pytest.skip(str(err))
    assert got["status"] == record["outcome"], got["message"]
