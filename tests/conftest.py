"""Shared fixtures for opspec's own tests."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from opspec.spec import resources


@pytest.fixture
def opset_copy(tmp_path: Path) -> Path:
    """A private copy of the bundled opset folder that a test may break."""
    target = tmp_path / "opset"
    shutil.copytree(resources.opset_root(), target, ignore=shutil.ignore_patterns("__pycache__"))
    return target
