"""Shared fixtures for opspec's own tests."""
from __future__ import annotations

import shutil
import uuid
from pathlib import Path

import pytest

from opspec.spec import resources


@pytest.fixture
def opset_copy(tmp_path: Path) -> Path:
    """A private copy of the bundled opset folder that a test may break."""
    target = tmp_path / "opset"
    shutil.copytree(resources.opset_root(), target, ignore=shutil.ignore_patterns("__pycache__"))
    return target


@pytest.fixture(autouse=True)
def private_result_cache(tmp_path_factory, monkeypatch):
    """Each test starts with an empty result cache (made only when written): a result kept by another test, or by
    whoever runs the tests, is never what a test sees."""
    monkeypatch.setenv("OPSPEC_CACHE_DIR", str(tmp_path_factory.getbasetemp() / "opspec-cache" / uuid.uuid4().hex))


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
