"""Re-judging a report from what it recorded: legacy evidence read in today's levels, bad files one line each."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from opspec.conform import rejudge
from opspec.conform.backends import registry
from opspec.results.model import CaseRecord

ROOT = Path(__file__).resolve().parents[1]


def test_a_legacy_delegate_record_is_split_into_target_and_runtime():
    legacy = CaseRecord.from_dict({
        "op": "aten::abs", "dtype": "float32", "device": "cpu", "status": "pass", "outcome": "pass", "message": "",
        "executed": "backend", "delegated_ops": [],
        "evidence": {"executed": "backend", "source": "hook", "backend_ops": ["aten::abs"]}})
    found = rejudge.record(legacy, registry.lookup("executorch-xnnpack"))
    assert (found.status, found.executed) == ("undelegated", "runtime")
    assert found.evidence.runtime_ops == ("aten::abs",) and found.blame == "backend"
    delegated = legacy.replace(delegated_ops=("aten::abs",))
    assert rejudge.record(delegated, registry.lookup("executorch-xnnpack")).status == "pass"


def test_a_recorded_level_is_kept_as_the_run_judged_it():
    record = CaseRecord.from_dict({
        "op": "aten::view", "dtype": "float32", "device": "cpu", "status": "pass", "outcome": "pass", "message": "",
        "executed": "target",
        "evidence": {"executed": "target", "source": "partition", "note": "the backend returned the graph"}})
    assert rejudge.record(record, registry.lookup("inductor")).status == "pass"


def test_a_bad_report_is_one_line_exit_2_and_left_as_it_was(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text('{"backend": {"name": "inductor"}}')
    done = subprocess.run([sys.executable, str(ROOT / "tools" / "rejudge_reports.py"), str(bad)],
                          capture_output=True, text=True)
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        f"{bad}: not re-judged: ReportFormatError: {bad}: not a conformance report (no results list)"]
    assert bad.read_text() == '{"backend": {"name": "inductor"}}'
