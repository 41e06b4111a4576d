"""`opspec drift --closure` probes: a hung, crashed or noisy probe costs one entry, recorded in one
line, and the run goes on with a fresh probe process; torch's output stays out of the terminal."""
from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from opspec.checks import drift
from opspec.cli.drift import Progress

HERE = Path(__file__).parent
NAMES = ["aten::before", "aten::hang", "aten::after_hang", "aten::crash", "aten::leaky", "aten::slow",
         "aten::noisy", "aten::last"]


@pytest.fixture(autouse=True)
def importable_faults(monkeypatch):
    monkeypatch.syspath_prepend(str(HERE))  # the probe process inherits sys.path
    monkeypatch.setattr(drift, "PROBE_GRACE_S", 2.0)


def test_every_probe_fault_costs_one_entry_and_the_run_goes_on(capfd):
    from drift_faults import faulty_probe

    report = drift.DriftReport("test", "test")
    seen: list[str] = []
    drift._closure_gaps(report, set(), seen.append, names=NAMES, probe=faulty_probe, timeout=2.0)

    failures = {f["op"]: f["kind"] for f in report.closure_failures}
    assert failures == {"aten::hang": "timeout", "aten::crash": "crash", "aten::slow": "timeout",
                        "aten::noisy": "untraceable"}
    assert report.closure_probed == len(NAMES) and report.closure_untraced == 4
    assert [(gap.op, gap.produced_by) for gap in report.closure_gaps] == [("aten::not_core", ["aten::leaky"])]
    # the entries after each fault were probed, by a fresh process
    assert "closure 3/8 aten::after_hang" in seen and "closure 8/8 aten::last" in seen
    by_op = {f["op"]: f["message"] for f in report.closure_failures}
    assert "killed" in by_op["aten::hang"] and "signal 11" in by_op["aten::crash"]
    assert all("\n" not in message for message in by_op.values())

    out, err = capfd.readouterr()
    assert "deep frame" not in out + err  # the probe's traceback went to the log file
    assert "deep frame" in Path(report.closure_log).read_text()
    text = drift.render_text(dataclasses.replace(report))
    assert "aten::crash: crash: probe process died" in text and report.closure_log in text
    Path(report.closure_log).unlink()


def test_progress_outside_a_terminal_is_a_line_per_tenth(capsys):
    import sys

    progress = Progress(sys.stderr)
    for index in range(1, 101):
        progress(f"closure {index}/100 aten::x{index}")
    progress.finish()
    lines = capsys.readouterr().err.splitlines()
    assert lines[0] == "drift: closure 1/100" and lines[-1] == "drift: closure 100/100" and len(lines) == 11
