"""Findings pages: each backend's expectation entries as a table, grouped by who failed, with the cases they cover."""
from __future__ import annotations

import json

from opspec_fixtures import write_workspace

from opspec.reports.site.generate import generate
from opspec.spec.workspace import Workspace

EXPECTATIONS = """\
backend: vendor
measured_with: vendor 1.0, torch 2.13.0
description: >-
  A vendor compiler's known failures.
expectations:
  - op: aten::abs
    dtypes: [float16]
    status: xfail
    attribution: backend
    reason: 'vendor bug: abs of a float16 subnormal comes back as <b>zero</b>'
  - op: aten::add.*
    status: skip
    attribution: frontend
    reason: 'dynamo crashes tracing add with an alpha of a | b'
"""


def _workspace(tmp_path):
    root = write_workspace(tmp_path / "repo")
    (root / "conformance" / "expectations").mkdir(parents=True, exist_ok=True)
    (root / "conformance" / "expectations" / "vendor.yaml").write_text(EXPECTATIONS)
    (root / "conformance" / "expectations" / "broken.yaml").write_text("not: [an expectation file\n")
    results = root / "conformance" / "results"
    results.mkdir(parents=True, exist_ok=True)
    (results / "vendor-cpu.json").write_text(json.dumps({"backend": {"name": "vendor"}, "device": "cpu", "results": [
        {"op": "aten::abs", "dtype": "float16", "device": "cpu", "status": "xfail",
         "expectation": {"reason": "vendor bug: abs of a float16 subnormal comes back as <b>zero</b>"}},
        {"op": "aten::abs", "dtype": "float32", "device": "cpu", "status": "pass"}]}))
    return root


def test_each_backend_gets_a_page_grouped_by_who_failed(tmp_path):
    root = _workspace(tmp_path)
    (root / "conformance" / "expectations" / "broken.yaml").unlink()
    generated = generate(Workspace(root), run_examples=False)
    page = generated.pages["findings/vendor.md"]
    backend, frontend = page.index("## The backend (1)"), page.index("## The torch front end (1)")
    assert backend < frontend
    abs_row = next(line for line in page.splitlines() if "subnormal" in line)
    assert "dtypes: float16" in abs_row and "xfail" in abs_row
    assert "<b>" not in page  # the reason is text, never markup
    # the published case the entry covers links to its place in the report
    assert 'href="../../reports/vendor-cpu/#case-vendor-cpu-aten-abs-float16"' in abs_row
    add_row = next(line for line in page.splitlines() if "alpha" in line)
    assert "<code>aten::add.&#42;</code>" in add_row and "<td>—</td>" in add_row and "a | b" in add_row
    index = generated.pages["findings/index.md"]
    assert "| [vendor](vendor.md) | 2 | 1 | 1 | 0 | 1 |" in index


def test_an_unreadable_expectation_file_is_named(tmp_path):
    root = _workspace(tmp_path)
    generated = generate(Workspace(root), run_examples=False)
    assert any(p.startswith(f"{root / 'conformance' / 'expectations' / 'broken.yaml'}: not readable as YAML")
               for p in generated.problems)
