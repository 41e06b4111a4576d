"""Commands that work on reports run where torch is not installed: a publishing machine, a CI job joining shards.

Each runs in a fresh interpreter whose ``import torch`` fails (a ``sitecustomize`` that
puts None in ``sys.modules['torch']``), as on a machine without it.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from opspec.results.model import Report

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "conformance" / "results"


@pytest.fixture
def without_torch(tmp_path):
    shim = tmp_path / "shim"
    shim.mkdir()
    (shim / "sitecustomize.py").write_text("import sys\nsys.modules['torch'] = None\n", encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(shim), os.environ.get("PYTHONPATH", "")])}

    def run(*args: str, cwd: Path = tmp_path) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "opspec", *args], cwd=cwd, env=env, capture_output=True,
                              text=True, timeout=120)
    return run


def test_the_shim_stops_torch(without_torch, tmp_path):
    """The check can fail: a command that needs torch does not get it."""
    done = without_torch("conform", "--backend", "eager", "--ops", "aten::abs", "--report", str(tmp_path / "r.json"))
    assert done.returncode != 0 and "torch" in done.stderr


def test_history_archives_and_compares_without_torch(without_torch, tmp_path):
    report = RESULTS / "aot_eager-cpu.json"
    done = without_torch("history", "archive", str(report), "--into", str(tmp_path / "history"),
                         "--date", "2026-12-01T00:00:00Z")
    assert done.returncode == 0, done.stderr
    entry = Path(done.stdout.strip())
    statuses = {str(record.case): record.status for record in Report.load(report).records}
    assert json.loads(entry.read_text(encoding="utf-8"))["cases"] == statuses
    done = without_torch("history", "changes", str(entry), str(report))
    assert done.returncode == 0, done.stderr
    assert "no case changed" in done.stdout
