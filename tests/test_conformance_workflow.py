"""The conformance fleet's workflow (.github/workflows/conformance.yml), run through tools/conformance_matrix.py."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from packaging.specifiers import SpecifierSet

from opspec.conform import shards
from opspec.conform.backends import registry

ROOT = Path(__file__).resolve().parents[1]
WORKFLOW = ROOT / ".github" / "workflows" / "conformance.yml"
SCRIPT = ROOT / "tools" / "conformance_matrix.py"


def local(*args: str, timeout: float = 1800, tmp: Path | None = None) -> subprocess.CompletedProcess:
    env = {"PATH": "/usr/bin:/bin", "HOME": str(ROOT), **({"TMPDIR": str(tmp)} if tmp else {})}
    return subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True, timeout=timeout,
                          env=env, cwd=ROOT)


def workflow() -> dict:
    data = yaml.safe_load(WORKFLOW.read_text())
    data["on"] = data.pop(True, data.get("on"))  # YAML 1.1 reads `on` as True
    return data


def test_the_matrix_is_backend_by_torch_by_device_by_shard_on_any_runner():
    jobs = workflow()["jobs"]
    matrix = jobs["shard"]["strategy"]["matrix"]
    assert {"backend", "torch", "device", "shard"} <= set(matrix)
    assert "matrix.device" in jobs["shard"]["runs-on"] and "inputs.gpu_runner" in jobs["shard"]["runs-on"]
    splits = [shards.Shard.parse(text) for text in matrix["shard"]]
    assert sorted(s.index for s in splits) == list(range(1, splits[0].count + 1)) and {s.count for s in splits} == {splits[0].count}
    extras = {entry["backend"]: entry.get("extra", "") for entry in matrix["include"]}
    for backend in matrix["backend"]:  # each a declared backend, installed with the extra it declares
        assert backend in registry.BUILT_IN, backend
        assert extras.get(backend, "") == registry.BUILT_IN[backend].extra, backend
    tomllib = pytest.importorskip("tomllib", reason="reading pyproject.toml needs Python 3.11's tomllib")
    dependencies = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    supported = SpecifierSet(next(d for d in dependencies if d.startswith("torch")).removeprefix("torch"))
    assert all(version in supported for version in matrix["torch"])  # torch versions the package supports
    assert jobs["merge"]["needs"] == "shard" and jobs["publish"]["needs"] == "merge"


def test_every_job_and_step_has_a_local_stand_in():
    done = local("--dry-run", "--input", 'devices=["cpu", "cuda"]')
    assert done.returncode == 0, done.stderr
    matrix = workflow()["jobs"]["shard"]["strategy"]["matrix"]
    cpu_only = len(matrix["exclude"])
    runs = len(matrix["backend"]) * len(matrix["torch"]) * len(matrix["shard"])
    shard_lines = [line for line in done.stdout.splitlines() if line.startswith("== shard [")]
    assert len(shard_lines) == 2 * runs - cpu_only * len(matrix["torch"]) * len(matrix["shard"])
    assert sum('runs-on ["self-hosted", "linux", "gpu"]' in line for line in shard_lines) == \
        (len(matrix["backend"]) - cpu_only) * len(matrix["torch"]) * len(matrix["shard"])
    assert "--shard \"4/4\"" in done.stdout and "opspec report merge" in done.stdout and "opspec site build" in done.stdout


@pytest.mark.parametrize("args, message", [
    (["--matrix", "backnd=eager"], "--matrix backnd: the matrix has no such axis"),
    (["--env", "CONFORM_OPZ=abs"], "--env CONFORM_OPZ: the workflow sets no such variable"),
    (["--jobs", "deploy"], "--jobs deploy: the workflow has no such job"),
])
def test_the_local_runner_refuses_what_the_workflow_lacks(args, message, tmp_path):
    done = local(*args, tmp=tmp_path, timeout=300)  # refused before any job runs
    assert done.returncode == 2 and message in done.stderr
    assert not any(tmp_path.iterdir())  # the work folder it made for the run is gone with the run


def test_a_dry_run_leaves_no_work_folder(tmp_path):
    done = local("--dry-run", "--jobs", "merge", tmp=tmp_path)
    assert done.returncode == 0 and "opspec report merge" in done.stdout, done.stderr
    assert "artifacts:" not in done.stdout and not any(tmp_path.iterdir())


def test_an_action_without_a_stand_in_is_refused(tmp_path):
    changed = WORKFLOW.read_text().replace("uses: actions/configure-pages@v5", "uses: someone/else@v1")
    (tmp_path / "conformance.yml").write_text(changed)
    done = local("--dry-run", "--workflow", str(tmp_path / "conformance.yml"))
    assert done.returncode == 2 and "someone/else@v1: no local stand-in" in done.stderr


@pytest.mark.sweep  # the whole workflow on a small matrix, the better part of a minute: `make sweep` (CI)
def test_the_workflow_runs_here_on_a_small_matrix(tmp_path):
    """The shard and merge jobs, their steps as written, on one backend split in two, four ops."""
    import torch
    from packaging.version import Version

    installed = Version(torch.__version__).public
    done = local("--work", str(tmp_path), "--jobs", "shard", "merge", "--matrix", "backend=eager", "--matrix", f"torch={installed}",
                 "--matrix", "shard=1/2,2/2", "--env", "CONFORM_OPS=abs,relu,cumsum,sort", "--env", "CONFORM_DTYPES=float32",
                 "--env", "CONFORM_ARGS=--max-examples 1 --max-compiles 1 --no-special-cases -j 1")
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    parts = sorted((tmp_path / "artifacts").glob("part-*/*.json"))
    assert [p.name for p in parts] == [f"eager-torch{installed}-cpu-shard1-2.json", f"eager-torch{installed}-cpu-shard2-2.json"]
    merged = json.loads((tmp_path / "artifacts" / "merged" / f"eager-torch{installed}-cpu.json").read_text())
    assert sorted(r["op"] for r in merged["results"]) == ["aten::abs", "aten::cumsum", "aten::relu", "aten::sort"]
    assert [p["shard"] for p in merged["parts"]] == ["1/2", "2/2"] and merged["special_cases"] is False
    assert all(r["status"] in ("pass", "skip") for r in merged["results"])
