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

from opspec.results.model import Report, Shard
from opspec.spec import load

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
    statuses = {record.case.name: record.status for record in Report.load(report).records}
    assert json.loads(entry.read_text(encoding="utf-8"))["cases"] == statuses
    done = without_torch("history", "changes", str(entry), str(report))
    assert done.returncode == 0, done.stderr
    assert "no case changed" in done.stdout


def split(report: Report, count: int, folder: Path) -> list[Path]:
    """The report as the parts of a run split ``count`` ways, each op's cases in one part."""
    ops = report.ops()
    paths = []
    for index in range(1, count + 1):
        records = [r for r in report.records if ops.index(r.op) % count == index - 1]
        shard = Shard(index=index, count=count, costs="0123456789abcdef", cases=len(records))
        part = report.replace(header=report.header.replace(shard=shard, spliced=None), records=tuple(records))
        paths.append(folder / f"part{index}.json")
        paths[-1].write_text(part.dumps(), encoding="utf-8")
    return paths


def test_report_merge_joins_parts_without_torch(without_torch, tmp_path):
    """Three parts cut from a published report merge back into its records, sections and lowering."""
    whole = Report.load(RESULTS / "inductor-cpu.json")
    parts = split(whole, 3, tmp_path)
    out = tmp_path / "merged.json"
    done = without_torch("report", "merge", *map(str, reversed(parts)), "--out", str(out), cwd=ROOT)
    assert done.returncode == (0 if all(r.clean for r in whole.records) else 1), done.stderr
    assert "merged 3 parts" in done.stdout
    merged = Report.load(out)
    assert [(r.case, r.status) for r in merged.records] == [(r.case, r.status) for r in whole.records]
    assert merged.records == tuple(r.replace(repro_file=str(out.with_suffix(".repros") / f"{r.case.id}.py"))
                                   if r.repro_file else r for r in whole.records)
    assert (merged.summary, merged.executed, merged.blame, merged.lowering) == \
        (whole.summary, whole.executed, whole.blame, whole.lowering)
    assert [p.shard for p in merged.header.parts] == ["3/3", "2/3", "1/3"] and merged.header.shard is None
    assert not load.schema_findings(merged.to_dict(), "conformance_report.schema.json", str(out))


def test_report_merge_refuses_a_missing_part_without_torch(without_torch, tmp_path):
    parts = split(Report.load(RESULTS / "aot_eager-cpu.json"), 3, tmp_path)
    done = without_torch("report", "merge", str(parts[0]), str(parts[2]), "--out", str(tmp_path / "m.json"), cwd=ROOT)
    assert done.returncode == 2 and "missing shard 2/3" in done.stderr and "Traceback" not in done.stderr


def test_report_publish_without_torch(without_torch, tmp_path):
    """A published report written out in full publishes back to the committed bytes."""
    full = tmp_path / "full.json"
    full.write_text(Report.load(RESULTS / "aot_eager-cpu.json").replace(shared=()).dumps(), encoding="utf-8")
    out = tmp_path / "aot_eager-cpu.json"
    done = without_torch("report", "publish", str(full), "--out", str(out), cwd=ROOT)
    assert done.returncode == 0, done.stderr
    assert out.read_bytes() == (RESULTS / "aot_eager-cpu.json").read_bytes()
    assert without_torch("report", "publish", str(out), "--check", cwd=ROOT).returncode == 0
