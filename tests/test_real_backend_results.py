"""The committed reports of the real third-party backends agree with their expectation files and findings pages.

The runs need the optional extras (see conformance/results/README.md); these
tests read only the committed data, so they run everywhere:
- every report is valid against its schema and names the backend's package and version;
- every case that did not pass is triaged (xfail, or skip), and is blamed on the backend
  or the torch front end, never on opspec; its expectation says the same party;
- every expectation matches a case of the report, and no xfail is stale;
- the site's findings page, generated from the expectation file, shows every op the backend gets wrong
  (right answers computed outside the backend's target are counted, not listed).
"""
from __future__ import annotations

import functools
import json
from pathlib import Path

import pytest
from test_conform import validate

from opspec.conform import expectations as expectations_mod
from opspec.conform.cases import Case, cases_for
from opspec.conform.runner import cached_opset
from opspec.results.model import expanded

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "conformance" / "results"
EXPECTATIONS = ROOT / "conformance" / "expectations"
REAL = {"openvino": "openvino", "openvino-single-op": "openvino", "executorch": "executorch", "executorch-xnnpack": "executorch",
        "xla": "torch-xla", "openxla": "torch-xla"}
BUGS = ("fail", "compile-error", "run-error", "crash", "timeout")
RIGHT_ANSWERS = ("undelegated", "fallback", "unverified")  # not the backend's target's work, or nobody can tell
NOT_PASSING_OUTCOMES = (*BUGS, *RIGHT_ANSWERS)


def report_of(backend: str) -> dict:
    return expanded(json.loads((RESULTS / f"{backend}-cpu.json").read_text()))


@functools.cache
def findings_pages():
    from opspec.reports.site import findings, results

    return findings.read(EXPECTATIONS, ROOT, results.read(RESULTS))[0]


@pytest.fixture(scope="module", params=sorted(REAL))
def backend(request) -> str:
    return request.param


def test_report_is_valid_and_names_the_package(backend):
    report = report_of(backend)
    validate(report)
    assert report["backend"]["name"] == backend
    assert REAL[backend] in report["backend"]["version"] and report["torch"] in report["backend"]["version"]
    planned = cases_for(cached_opset(report["opset"]).active_ops(), report["dtypes"], [report["device"]])
    assert sorted((r["op"], r["dtype"]) for r in report["results"]) == sorted((c.op, c.dtype) for c in planned)


def test_every_case_that_does_not_pass_is_triaged_and_blamed_outside_opspec(backend):
    report = report_of(backend)
    for record in report["results"]:
        where = f"{backend}: {record['op']} {record['dtype']}"
        assert record["status"] in ("pass", "xfail", "skip", *RIGHT_ANSWERS), f"{where} is {record['status']}, untriaged"
        if record.get("outcome", record["status"]) in NOT_PASSING_OUTCOMES:
            assert record.get("blame") in ("backend", "frontend"), f"{where}: blamed on {record.get('blame')}"
        if record["status"] == "xfail":
            said = record["expectation"].get("attribution")
            assert said == record["blame"], f"{where}: expectation says {said}, the run says {record['blame']}"


def test_every_expectation_matches_a_failing_case(backend):
    report = report_of(backend)
    path = EXPECTATIONS / f"{backend}.yaml"
    loaded = expectations_mod.read(path, cached_opset(report["opset"]), report["torch"], report["device_name"])
    assert not loaded.warnings
    cases = {Case(r["op"], r["dtype"], r["device"]): r for r in report["results"]}
    for entry in loaded.entries:
        matched = [record for case, record in cases.items() if entry.matches(case, report["torch"], report["device_name"])]
        assert matched, f"{entry.where}: matches no case of the report"
        assert entry.attribution in ("backend", "frontend"), f"{entry.where}: attribution {entry.attribution!r}"
        if entry.status == "xfail":
            assert any(r["status"] == "xfail" for r in matched), f"{entry.where}: stale, every case it matches passes"


def test_the_findings_page_shows_every_op_the_backend_gets_wrong(backend):
    """What a backend gets wrong is data: each op it fails is an expectation entry with its reason, and the site's
    findings page, generated from those entries, lists it with the cases it covers."""
    [page] = [item for item in findings_pages() if item.backend == backend]
    covered = {(case.op, case.dtype) for finding in page.findings for case in finding.cases}
    failing = {(r["op"], r["dtype"]) for r in report_of(backend)["results"]
               if r.get("outcome") in BUGS and r.get("blame") == "backend"}
    assert failing and not failing - covered, f"{backend}: not on its findings page: {sorted(failing - covered)[:5]}"
    assert all(finding.reason for finding in page.findings)
