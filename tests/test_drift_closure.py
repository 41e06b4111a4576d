"""`opspec drift --closure` probes: a hung, crashed or noisy probe costs one entry, recorded in one
line, and the run goes on with a fresh probe process; torch's output stays out of the terminal. Gaps
name the entries that leave them, the open proposals that cover them and the version's out-of-scope
decisions; in-place ops are listed apart with what emits them."""
from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from opspec.checks import closure, drift
from opspec.cli.drift import Progress
from opspec.spec import load
from opspec.spec.model import OutOfScopeOp

HERE = Path(__file__).parent
NAMES = ["aten::before", "aten::hang", "aten::after_hang", "aten::crash", "aten::leaky", "aten::slow",
         "aten::noisy", "aten::mutating", "aten::last"]


@pytest.fixture(autouse=True)
def importable_faults(monkeypatch):
    monkeypatch.syspath_prepend(str(HERE))  # the probe process inherits sys.path
    monkeypatch.setattr(closure, "PROBE_GRACE_S", 2.0)


def test_every_probe_fault_costs_one_entry_and_the_run_goes_on(capfd):
    from drift_faults import faulty_probe

    opset = dataclasses.replace(load.load_opset("2026.12"), out_of_scope=(
        OutOfScopeOp("aten::decided", "tests", "decided out of scope for this test", "2026.12", (9,)),))
    seen: list[str] = []
    found = closure.run(opset, seen.append, covered={"aten::not_core": [7]}, names=NAMES, probe=faulty_probe,
                        timeout=2.0, workers=2)

    failures = {f["op"]: f["kind"] for f in found.failures}
    assert failures == {"aten::hang": "timeout", "aten::crash": "crash", "aten::slow": "timeout",
                        "aten::noisy": "untraceable"}
    assert found.probed == len(NAMES)
    assert [(gap.op, gap.produced_by, gap.proposals, gap.open) for gap in found.gaps] == [
        ("aten::decided", ["aten::leaky"], [], False), ("aten::not_core", ["aten::leaky"], [7], True)]
    assert found.gaps[0].decision == "out of scope by decision (proposal 0009): decided out of scope for this test"
    assert [(f.op, f.produced_by, f.upstream) for f in found.functionalized] == [
        ("aten::add_.Scalar", ["aten::mutating"], ["aten::mutating (torch's composite kernel)"])]
    # the entries after each fault were probed, by a fresh process; progress counts every entry once
    assert sorted(int(line.split()[1].split("/")[0]) for line in seen) == list(range(1, len(NAMES) + 1))
    assert any(line.endswith("aten::after_hang") for line in seen) and any(line.endswith("aten::last") for line in seen)
    by_op = {f["op"]: f["message"] for f in found.failures}
    assert "killed" in by_op["aten::hang"] and "signal 11" in by_op["aten::crash"]
    assert all("\n" not in message for message in by_op.values())

    out, err = capfd.readouterr()
    assert "deep frame" not in out + err  # the probe's traceback went to the log file
    assert "deep frame" in Path(found.log).read_text()
    report = drift.DriftReport("test", "2026.12")
    report.take_closure(found)
    text = drift.render_text(report)
    assert "aten::crash: crash: probe process died" in text and found.log in text
    assert "aten::not_core  <- aten::leaky; proposal 0007 covers it" in text
    assert "aten::decided  <- aten::leaky; out of scope by decision (proposal 0009)" in text
    assert "aten::add_.Scalar  emitted by aten::mutating (torch's composite kernel)" in text
    assert report.to_json()["closure_open"] == 1
    Path(found.log).unlink()


def test_progress_outside_a_terminal_is_a_line_per_tenth(capsys):
    import sys

    progress = Progress(sys.stderr)
    for index in range(1, 101):
        progress(f"closure {index}/100 aten::x{index}")
    progress.finish()
    lines = capsys.readouterr().err.splitlines()
    assert lines[0] == "drift: closure 1/100" and lines[-1] == "drift: closure 100/100" and len(lines) == 11


def test_a_gap_a_later_release_closed_is_decided_and_names_that_release():
    """torch 2.15 leaves nonzero_static and _histogramdd_from_bin_tensors outside 2027.01; 2027.02 decided both."""
    later = closure.later_decisions(load.load_opset("2027.01"))
    assert later["aten::nonzero_static"] == "decided in 2027.02 (proposal 0014): decomposed by a default rule"
    assert later["aten::_histogramdd_from_bin_tensors"].startswith("decided in 2027.02 (proposal 0014): out of scope: ")
    assert "aten::abs" not in later  # core in both: not a gap of 2027.01
    # what a version covers itself is not reported from later ones; the newest has nothing later
    assert "aten::masked_select" not in later and closure.later_decisions(load.load_opset("2027.02")) == {}
