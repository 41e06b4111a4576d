"""The committed PyTorch/XLA reports hold every record to its evidence: XLA's own counters.

``conformance/results/xla-cpu.json`` and ``openxla-cpu.json`` were run with the
xla extra (torch 2.9, ``PJRT_DEVICE=CPU``). Each record carries what
``torch_xla.debug.metrics`` counted while its programs ran: the ops XLA lowered
(``backend_ops``) and those it handed to the ATen CPU kernel
(``executed_fallback_ops()``, ``pytorch_ops``). These tests read only the data:
- no case is a ``pass`` where the counters show the op fell back;
- every case whose op the counters show fell back is a ``fallback`` (or an
  expected failure of one), and judging the recorded counters again gives the
  recorded ``executed``;
- every pass said to run in XLA is backed by its counters (XLA's lowerings ran); a pass whose op the
  counters name neither way (a transfer, a tensor made off the device) says ``executed: unknown``.
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from opspec.conform import evidence
from opspec.results.model import expanded

RESULTS = Path(__file__).resolve().parent.parent / "conformance" / "results"
REPORTS = ("xla", "openxla")


def records(backend: str) -> list[dict]:
    return expanded(json.loads((RESULTS / f"{backend}-cpu.json").read_text()))["results"]


def fell_back(record: dict) -> bool:
    """The counters name the op under test (by operator: they may leave out the overload)."""
    packet = record["op"].split(".")[0]
    return any(op.split(".")[0] == packet for op in record.get("evidence", {}).get("pytorch_ops", []))


def executed(record: dict) -> str:
    """Who executed the op, in today's words (the reports were written when XLA was called ``backend``)."""
    return evidence.LEGACY_EXECUTED.get(record["executed"], record["executed"])


@pytest.mark.parametrize("backend", REPORTS)
def test_no_pass_where_the_counters_show_a_fallback(backend):
    # unknown: the counters name neither a lowering nor a fallback of it (a transfer, or a tensor made off the device)
    wrong = [r["op"] for r in records(backend) if r["status"] == "pass" and (fell_back(r) or executed(r) not in
                                                                            ("target", "unknown"))]
    assert not wrong, f"{backend}: pass despite XLA's fallback counters: {wrong}"


@pytest.mark.parametrize("backend", REPORTS)
def test_every_counted_fallback_is_a_fallback(backend):
    for record in records(backend):
        if not fell_back(record):
            continue
        outcome = record.get("outcome", record["status"])
        where = f"{backend}: {record['op']}"
        # a right answer is fallback; a wrong one stays a failure (its fallback shows in executed)
        assert outcome != "pass", f"{where}: the counters show a fallback"
        assert record["executed"] == "pytorch", f"{where}: executed {record['executed']}"
        if outcome == "fallback":
            assert record["blame"] == "backend" and "ran outside the backend" in record["message"]


@pytest.mark.parametrize("backend", REPORTS)
def test_recorded_counters_judge_again_to_the_recorded_verdict(backend):
    for record in records(backend):
        found = record["evidence"]
        if found["source"] == "none":
            continue
        assert found["source"] == "hook" and "torch_xla.debug.metrics" in found.get("note", ""), record["op"]
        seen = evidence.Seen("hook", set(found.get("target_ops", found.get("backend_ops", []))), set(found.get("pytorch_ops", [])))
        assert evidence.judge(record["op"], [seen]).executed == executed(record), record["op"]


@pytest.mark.parametrize("backend", REPORTS)
def test_every_pass_said_to_run_in_xla_has_xla_counters(backend):
    for record in records(backend):
        if record["status"] == "pass" and executed(record) == "target":
            assert record["evidence"].get("target_ops"), f"{backend}: {record['op']} passes with no XLA counter"


def test_the_xla_developer_page_lists_every_core_op_not_lowered_most_used_first():
    import html
    import re

    from opspec.conform.runner import cached_opset
    from opspec.conform.backends import registry
    from opspec.reports.site import backend_pages, sanitize
    from opspec.reports.site.generate import op_slugs
    from opspec.spec import manifests

    root = RESULTS.parent.parent
    opset = cached_opset(None)
    core = set(opset.core_names())
    xla = registry.BUILT_IN["xla"]
    page = backend_pages.pages(root, op_slugs(sorted(core)), core)[xla.site_page.page]
    manifest = manifests.load_manifest(backend_pages.manifest_of(root, xla))
    ranked, _, at_defaults = page.partition("## Lowered at the default arguments only")
    rows = [line for line in ranked.splitlines() if line.startswith("| [<code>aten::")]
    listed = [html.unescape(re.match(r"\| \[<code>([^<]+)</code>\]\(ops/[^)]+\.md\)", row).group(1)) for row in rows]
    assert sorted(listed) == sorted(op for op in manifest.fallback if op in core)
    users = [int(row.split("|")[2].strip().split(":")[0]) for row in rows]
    assert users == sorted(users, reverse=True)
    # the ops lowered at their defaults only, each with the arguments that make it fall back
    rows = [line for line in at_defaults.split("## Repros")[0].splitlines() if line.startswith("| [<code>aten::")]
    listed = {html.unescape(re.match(r"\| \[<code>([^<]+)</code>\]", row).group(1)): row for row in rows}
    assert set(listed) == {op for op in manifest.fallback_args if op in core}
    for op, row in listed.items():
        assert row.split("|")[2].strip() == ", ".join(sanitize.code(a) for a in manifest.fallback_args[op])
