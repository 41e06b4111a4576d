"""Expectations limited to the hardware a case runs on (``hardware:``), matched against this machine or a report's."""
from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from opspec.conform import expectations, hardware, rejudge
from opspec.conform.backends import registry
from opspec.conform.cases import Case
from opspec.conform.runner import cached_opset
from opspec.results.model import Report
from opspec.spec import load
from opspec.spec.load import OpsetError

ROOT = Path(__file__).resolve().parents[1]
XNNPACK = ROOT / "conformance" / "results" / "executorch-xnnpack-cpu.json"
XEON, EPYC = "Intel(R) Xeon(R) Processor", "AMD EPYC 9B14"
RSQRT = Case("aten::rsqrt", "float16", "cpu")


def written(tmp_path: Path, entries: str) -> Path:
    path = tmp_path / "backend.yaml"
    path.write_text("backend: somebackend\nexpectations:\n" + textwrap.dedent(entries))
    return path


ENTRIES = """\
  - op: aten::rsqrt
    dtypes: [float16]
    hardware: ['Intel(R) Xeon(R)*']
    status: xfail
    reason: one float16 step off on this CPU's kernels
  - op: aten::rsqrt
    status: xfail
    reason: on every machine
"""


def test_an_entry_limited_to_hardware_applies_only_there(tmp_path):
    opset = cached_opset(load.latest_version())
    on_xeon = expectations.read(written(tmp_path, ENTRIES), opset, hardware_name=XEON)
    on_epyc = expectations.read(written(tmp_path, ENTRIES), opset, hardware_name=EPYC)
    assert on_xeon.lookup(RSQRT).reason.startswith("one float16 step")
    assert on_xeon.lookup(RSQRT).as_record().hardware == ("Intel(R) Xeon(R)*",)
    assert on_epyc.lookup(RSQRT).reason == "on every machine"  # the next entry that matches
    assert on_xeon.lookup(Case("aten::rsqrt", "float32", "cpu")).reason == "on every machine"
    merged = expectations.read(written(tmp_path, ENTRIES), opset, hardware_name=hardware.JOINED.join([EPYC, XEON]))
    assert merged.lookup(RSQRT).reason.startswith("one float16 step")  # parts from both machines


def test_a_live_run_matches_this_machines_hardware(tmp_path, monkeypatch):
    monkeypatch.setattr(hardware, "name", lambda device: {"cpu": XEON}.get(device, "NVIDIA H200"))
    read = expectations.read(written(tmp_path, ENTRIES), cached_opset(load.latest_version()))
    assert read.lookup(RSQRT).reason.startswith("one float16 step")
    monkeypatch.setattr(hardware, "name", lambda device: EPYC)
    assert read.lookup(RSQRT).reason == "on every machine"


def test_an_empty_hardware_list_is_refused_with_its_file(tmp_path):
    path = written(tmp_path, "  - op: aten::rsqrt\n    hardware: []\n    status: xfail\n    reason: nothing to limit to\n")
    with pytest.raises(OpsetError, match="backend.yaml"):
        expectations.read(path, cached_opset(load.latest_version()))


@pytest.mark.parametrize("machine, status", [(None, "xfail"), (EPYC, "fail")])
def test_a_report_is_judged_against_the_hardware_it_ran_on(machine, status):
    """The published XNNPACK failure of rsqrt in float16 was measured on a Xeon: judged as a report from another CPU,
    no expectation excuses it."""
    report = json.loads(XNNPACK.read_text())
    assert report["device_name"].startswith("Intel(R) Xeon(R)")
    if machine:
        report["device_name"] = machine
    declaration = registry.lookup("executorch-xnnpack")
    judged = rejudge.rejudge(Report.from_dict(report), declaration, ROOT / report["expectations"],
                             cached_opset(report["opset"]))
    (record,) = [r for r in judged.records if (r.op, r.dtype) == ("aten::rsqrt", "float16")]
    assert record.outcome == "fail" and record.status == status


@pytest.mark.parametrize("header, case_machine, status", [(XEON, EPYC, "fail"), (EPYC, XEON, "xfail")])
def test_a_case_that_names_its_machine_is_judged_against_it(header, case_machine, status):
    """A case spliced in from another machine, or merged from a part run on one, names it: the header's machine
    does not decide whether an expectation limited to hardware excuses it."""
    report = json.loads(XNNPACK.read_text())
    report["device_name"] = header
    for r in report["results"]:
        if (r["op"], r["dtype"]) == ("aten::rsqrt", "float16"):
            r["device_name"] = case_machine
    declaration = registry.lookup("executorch-xnnpack")
    judged = rejudge.rejudge(Report.from_dict(report), declaration, ROOT / report["expectations"],
                             cached_opset(report["opset"]))
    (record,) = [r for r in judged.records if (r.op, r.dtype) == ("aten::rsqrt", "float16")]
    assert record.outcome == "fail" and record.status == status and record.device_name == case_machine
