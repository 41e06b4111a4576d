"""Drift and proposals: decided differences from torch's tag are not drift, and torch's changes become drafts."""
from __future__ import annotations

import dataclasses

import pytest
from opspec_fixtures import write_workspace

from opspec.bridge import torch_ops
from opspec.checks import drift
from opspec.cli import main
from opspec.proposals import check as checking
from opspec.proposals import from_drift
from opspec.spec import load, resources

NEW_ABS = "aten::abs(Tensor self, *, bool exact=False) -> Tensor"


@pytest.fixture(scope="module")
def opset():
    return load.load_opset("2026.11")


def test_ops_a_proposal_moved_are_decisions_not_drift(opset):
    ops = {op.name: op for op in opset.ops}
    schema = torch_ops.all_aten_schemas()["aten::bucketize.Tensor"]
    ops["aten::bucketize.Tensor"] = dataclasses.replace(
        ops["aten::abs"], name="aten::bucketize.Tensor", schema=schema, since="2026.12", proposals=(4,))
    ops["aten::abs"] = dataclasses.replace(ops["aten::abs"], status="removed", removed="2026.12", proposals=(1, 7))
    decided = dataclasses.replace(opset, ops=tuple(ops[name] for name in sorted(ops)), rules=())

    report = drift.compute(decided)
    assert report.core_added == {} and report.core_removed == [] and not report.drifted
    assert report.decisions == [
        {"op": "aten::abs", "decision": "removed from the core set", "since": "2026.12", "proposals": [7]},
        {"op": "aten::bucketize.Tensor", "decision": "core", "since": "2026.12", "proposals": [4]},
    ]
    text = drift.render_text(report)
    assert "aten::bucketize.Tensor: core by opspec decision, proposal 0004 (opset 2026.12)" in text
    assert "aten::abs: removed from the core set by opspec decision, proposal 0007 (opset 2026.12)" in text


@pytest.fixture
def changed_torch(monkeypatch):
    """A torch that tags a new op core, untags sigmoid, prints a new schema for abs and drops a decomposition."""
    tagged = dict(torch_ops.core_tagged())
    tagged.pop("aten::sigmoid")
    tagged["aten::searchsorted.Tensor"] = torch_ops.all_aten_schemas()["aten::searchsorted.Tensor"]
    tagged["aten::abs"] = NEW_ABS
    schemas = dict(torch_ops.all_aten_schemas(), **{"aten::abs": NEW_ABS})
    table = {k: v for k, v in torch_ops.core_decomposition_table().items() if k != "aten::hardswish"}
    registered = {k: v for k, v in torch_ops.registered_decompositions().items() if k != "aten::hardswish"}
    monkeypatch.setattr(torch_ops, "core_tagged", lambda: tagged)
    monkeypatch.setattr(torch_ops, "all_aten_schemas", lambda: schemas)
    monkeypatch.setattr(torch_ops, "core_decomposition_table", lambda: table)
    monkeypatch.setattr(torch_ops, "registered_decompositions", lambda: registered)


def test_drift_drafts_the_proposals_torch_implies(opset, changed_torch, tmp_path, capsys, monkeypatch):
    root = write_workspace(tmp_path / "repo")
    hardswish = opset.rules_by_op["aten::hardswish"]
    assert hardswish.implementation == "torch"
    small = dataclasses.replace(opset, rules=(hardswish,))
    monkeypatch.setattr(load, "load_opset", lambda version=None, root=None: small)

    assert main(["drift", "--propose", str(root / "proposals")]) == 1
    out, err = capsys.readouterr()
    assert "aten::searchsorted.Tensor" in out and "drafted add-op proposal for aten::searchsorted.Tensor" in err
    drafts = {p.proposal.touched_ops()[0]: p for p in checking.load_all(root / "proposals") if p.proposal.id > 1}
    assert {op: p.proposal.type for op, p in drafts.items()} == {
        "aten::searchsorted.Tensor": "add-op",
        "aten::abs": "schema-change",
        "aten::sigmoid": "deprecate-op",
        "aten::hardswish": "decompose-op",
    }
    for p in drafts.values():
        assert p.findings == [] and p.proposal.status == "draft"  # schema-valid drafts
    add = drafts["aten::searchsorted.Tensor"].proposal.changes[0]
    assert add["schema"] == torch_ops.all_aten_schemas()["aten::searchsorted.Tensor"]
    assert drafts["aten::abs"].proposal.changes[0]["schema"] == NEW_ABS
    rule = drafts["aten::hardswish"].proposal.changes[0]
    assert rule["action"] == "change-rule" and rule["rule"]["targets"] == list(hardswish.targets)
    assert "no longer registers a decomposition" in drafts["aten::hardswish"].proposal.body
    # a draft is not done: `proposal check` names what the author still has to write
    result = checking.check(root / "proposals", resources.opset_root(), use_torch=False)
    unwritten = ("placeholder `TODO`", "still holds the template's text", "cannot import opspec.decompositions.TODO")
    assert result.findings and [str(f) for f in result.findings if not any(u in f.message for u in unwritten)] == []
    assert {f.mark.path.rsplit("/", 1)[1][:4] for f in result.findings} == {"0002", "0003", "0004", "0005"}

    # a second run drafts nothing new: open proposals already cover every item
    report = drift.compute(small)
    assert from_drift.draft_all(report, root / "proposals", {}) == []
