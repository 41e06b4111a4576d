"""The workers' forkserver preloads the opset version the run uses, not always the newest."""
from __future__ import annotations

import importlib
import os
import sys

from opspec.conform import isolation, runner


def test_the_forkserver_is_told_the_runs_opset(monkeypatch):
    monkeypatch.setattr(isolation, "_context", None)  # as before the first worker of a run
    monkeypatch.setenv(runner.WARM_OPSET, "stale")
    isolation._mp_context("2026.11")
    assert os.environ[runner.WARM_OPSET] == "2026.11"
    monkeypatch.setattr(isolation, "_context", None)
    isolation._mp_context(None)
    assert os.environ[runner.WARM_OPSET] == ""  # the newest, as load_opset(None) gives


def test_warm_loads_the_version_it_is_told(monkeypatch):
    loaded = []
    monkeypatch.setattr(runner, "cached_opset", loaded.append)
    monkeypatch.delitem(sys.modules, "opspec.conform.warm", raising=False)
    monkeypatch.setenv(runner.WARM_OPSET, "2026.11")
    importlib.import_module("opspec.conform.warm")
    monkeypatch.delitem(sys.modules, "opspec.conform.warm")
    monkeypatch.setenv(runner.WARM_OPSET, "")
    importlib.import_module("opspec.conform.warm")
    assert loaded == ["2026.11", None]
