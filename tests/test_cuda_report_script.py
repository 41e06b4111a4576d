"""benchmarks/cuda_report.sh, tried where there is no GPU (OPSPEC_LEG_DEVICE=cpu): the report it leaves, and a
journal it resumes."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

# one worker runs both tests, so the shared run is made once; an Inductor compile per dtype: `make sweep` (CI)
pytestmark = [pytest.mark.xdist_group("cuda_report"), pytest.mark.sweep]

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "benchmarks" / "cuda_report.sh"


def run(out: Path, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run(["bash", str(SCRIPT), str(out)], capture_output=True, text=True, timeout=600,
                          env={**os.environ, "PYTHON": sys.executable, "OPSPEC_LEG_DEVICE": "cpu",
                               "OPSPEC_REPORT_OPS": "aten::abs", "OPSPEC_REPORT_JOBS": "1", **env})


@pytest.fixture(scope="module")
def first(tmp_path_factory) -> tuple[subprocess.CompletedProcess, Path]:
    """One whole run of the script (an inductor compile per dtype), shared by the tests that read it."""
    out = tmp_path_factory.mktemp("first")
    return run(out), out


def test_the_script_leaves_the_report_of_every_dtype(first):
    done, out = first
    assert done.returncode == 0, done.stdout + done.stderr
    report = json.loads((out / "inductor-cpu.json").read_text())
    assert {r["op"] for r in report["results"]} == {"aten::abs"} and len(report["results"]) > 1  # every dtype
    assert (out / "inductor-cpu.log").is_file()


def test_a_journal_from_a_stopped_call_is_resumed(first, tmp_path):
    done, out = first
    report = json.loads((out / "inductor-cpu.json").read_text())
    # what a stopped call leaves: the header and the cases finished so far, one JSON line each
    journal = tmp_path / "inductor-cpu.jsonl"
    head = {k: v for k, v in report.items() if k not in ("results", "summary", "executed", "blame", "root_causes",
                                                           "lowering", "warnings", "duration_s")}
    kept = report["results"][:2]
    journal.write_text("\n".join(json.dumps(line) for line in [{"header": head}, *kept]) + "\n")
    resumed = run(tmp_path / "second", OPSPEC_REPORT_RESUME=str(journal))
    assert done.returncode == resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert f"resuming: {len(kept)} cases already recorded" in (tmp_path / "second" / "inductor-cpu.log").read_text()
    again = json.loads((tmp_path / "second" / "inductor-cpu.json").read_text())
    assert [r["dtype"] for r in again["results"]] == [r["dtype"] for r in report["results"]]
