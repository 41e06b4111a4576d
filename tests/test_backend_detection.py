"""The faulty-backend benchmark: its committed figures hold the bar, and a small part of it runs here.

The whole corpus takes minutes (benchmarks/backend_detection.py, figures in
benchmarks/README.md); here two faults that only edge inputs expose (a sigmoid
flushed below -8, clamp with min > max) run at conform's defaults, and the control
on their ops.
"""
from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
BENCHMARKS = ROOT / "benchmarks"
COMMITTED = BENCHMARKS / "results" / "backend_detection.json"


@pytest.fixture(scope="module")
def detection():
    sys.path.insert(0, str(BENCHMARKS))
    try:
        spec = importlib.util.spec_from_file_location("backend_detection", BENCHMARKS / "backend_detection.py")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        yield module
    finally:
        sys.path.remove(str(BENCHMARKS))


def test_committed_figures_meet_the_bar(detection):
    figures = json.loads(COMMITTED.read_text())
    default = next(run for run in figures["runs"] if run["edges"])
    manifest = detection.load_manifest()
    faults = manifest["faults"] + manifest["held_out"]
    assert default["faults"] == len(faults) >= 16 and default["held_out"] == len(manifest["held_out"]) > 0
    assert default["caught"] >= 0.9 * default["faults"]
    passed = [c for c in default["control"] if c["status"] == "pass"]  # the control claims its ops: pass, not fallback
    assert default["control_cases"] == len(default["control"]) == len(passed) == default["control_passed"] > 0
    assert {r["backend"] for r in default["results"]} == {f["backend"] for f in faults}
    # backends that differ from eager only where the contract leaves the answer open all pass
    assert default["open_choices"] == len(manifest["open_choices"]) == default["open_choices_passed"] > 0


def test_an_answer_the_contract_leaves_open_is_not_a_failure(detection):
    measured = detection.measure(detection.load_manifest(), edges=True, seed=0, only=["sort_ties_reversed"])
    assert measured["open_choices"] == measured["open_choices_passed"] == 1, measured["open_choice_results"]


def test_defaults_catch_faults_only_edge_inputs_show(detection):
    manifest = detection.load_manifest()
    measured = detection.measure(manifest, edges=True, seed=0, only=["sigmoid_flush", "clamp_min_wins"])
    assert measured["caught"] == 2, measured["results"]
    assert measured["control_passed"] == measured["control_cases"] > 0, measured["control"]  # the hook: pass
