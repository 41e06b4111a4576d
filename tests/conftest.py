"""Shared fixtures for opspec's own tests."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import uuid
from pathlib import Path

import filelock
import pytest

from opspec.spec import resources


@pytest.fixture
def opset_copy(tmp_path: Path) -> Path:
    """A private copy of the bundled opset folder that a test may break."""
    target = tmp_path / "opset"
    shutil.copytree(resources.opset_root(), target, ignore=shutil.ignore_patterns("__pycache__"))
    return target


@pytest.fixture(autouse=True)
def private_result_cache(tmp_path_factory, monkeypatch) -> Path:
    """Each test starts with an empty result cache (made only when written): a result kept by another test, or by
    whoever runs the tests, is never what a test sees."""
    folder = tmp_path_factory.getbasetemp() / "opspec-cache" / uuid.uuid4().hex
    monkeypatch.setenv("OPSPEC_CACHE_DIR", str(folder))
    return folder


@pytest.fixture(scope="session")
def validate_parts_seed(tmp_path_factory) -> Path:
    """The parts `opspec validate` keeps (with torch and without) after checking the bundled opset, computed once a
    session: xdist workers share one folder, and the first to take its lock computes them."""
    worker = os.environ.get("PYTEST_XDIST_WORKER")
    shared = tmp_path_factory.getbasetemp().parent if worker else tmp_path_factory.getbasetemp()
    seed = shared / "validate-parts-seed"
    with filelock.FileLock(str(shared / "validate-parts-seed.lock")):
        if not (seed / "done").exists():
            seed.mkdir(exist_ok=True)  # there even if validate dies before keeping anything
            env = {**os.environ, "OPSPEC_CACHE_DIR": str(seed)}
            # Both at once (each keeps its own parts file): the other xdist worker is waiting for them anyway.
            # Their findings, if any, are the tests' to report.
            runs = [subprocess.Popen([sys.executable, "-m", "opspec", "validate", *torch_use], env=env,
                                     stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
                    for torch_use in ([], ["--no-torch"])]
            outputs = [run.communicate()[0] for run in runs]
            # the run with torch from an empty cache: every check ran, as in a newcomer's first validate
            (seed / "first-run.json").write_text(json.dumps({"returncode": runs[0].returncode, "output": outputs[0]}))
            (seed / "done").touch()
    return seed / "validate-parts"


@pytest.fixture(scope="session")
def first_validate(validate_parts_seed) -> dict:
    """What `opspec validate` printed, and its exit code, run in a fresh process from an empty cache (the run that
    made the parts seed): {"returncode": int, "output": stdout and stderr}."""
    return json.loads((validate_parts_seed.parent / "first-run.json").read_text())


@pytest.fixture
def warm_validate_parts(validate_parts_seed, private_result_cache) -> None:
    """The test's own cache starts with the parts a validate of the bundled opset kept, as a user's does after
    `make run`: an opset the test changed re-runs the parts its change touched (each part's key names what it
    reads), and everything it reports comes from this run. The parts are linked, not copied: the cache replaces
    a file it saves, so the seed is never written through."""
    parts = private_result_cache / "validate-parts"
    parts.mkdir(parents=True)
    for kept in validate_parts_seed.glob("*.pickle"):
        (parts / kept.name).symlink_to(kept)


@pytest.fixture
def steady_source(tmp_path, monkeypatch) -> Path:
    """opspec's source as the result cache's keys see it, held still: a checkout being edited beside the tests
    changes no key (a test that edits it sees its own change)."""
    from opspec.checks import result_cache

    source = tmp_path / "source"
    source.mkdir()
    (source / "module.py").write_text("VALUE = 1\n")
    monkeypatch.setattr(result_cache, "SOURCE", source)
    return source

