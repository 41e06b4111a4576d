"""The compatibility policy (opset/compatibility.yaml): release and validate refuse what it forbids, naming the rule."""
from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pytest
from opspec_fixtures import SCHEMAS, process_proposal, write_workspace

from opspec.bridge import schemas, torch_ops
from opspec.checks import compatibility, validate
from opspec.cli import main
from opspec.proposals import check as checking
from opspec.spec import compatibility as policy_data
from opspec.spec import load, resources, yamlio

UPGRADE_MUL = "    upgrader:\n      op: aten::mul.Tensor\n      arguments: {self: self, other: other}\n"
DEPRECATE_MUL = "  - action: deprecate-op\n    op: aten::mul.Tensor\n    rationale: A test deprecation of a core op.\n" + UPGRADE_MUL
REMOVE_MUL = "  - action: remove-op\n    op: aten::mul.Tensor\n    rationale: The deprecated op leaves the core set.\n"
ABS = SCHEMAS["aten::abs"]


def change_abs(schema: str) -> str:
    return (f"  - action: change-schema\n    op: aten::abs\n    schema: '{schema}'\n"
            "    rationale: torch changed the schema of abs in this test.\n"
            "    upgrader:\n      op: aten::abs\n      arguments: {self: self}\n")


def accepted(number: int, type_: str, changes: str, target: str) -> str:
    extra = f"resolution: Accepted at the review.\ntarget_version: '{target}'\n"
    text = process_proposal(number, "accepted", extra)
    return text.replace("type: process", f"type: {type_}").replace("changes: []", "changes:\n" + changes.rstrip("\n"))


def snapshot(root: Path) -> dict[str, str]:
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(root.rglob("*")) if p.is_file()}


def release(root: Path, version: str) -> int:
    return main(["release", "--root", str(root), "--date", "2026-12-01", version])


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = write_workspace(tmp_path / "repo")
    (root / "proposals" / "0002-deprecate-mul.md").write_text(accepted(2, "deprecate-op", DEPRECATE_MUL, "2026.12"))
    assert release(root, "2026.12") == 0
    return root


def with_torch_abs(monkeypatch, schema: str) -> None:
    """A torch whose abs prints ``schema`` (the release checks a schema change against the installed torch)."""
    live = dict(torch_ops.all_aten_schemas(), **{"aten::abs": schema})
    monkeypatch.setattr(torch_ops, "all_aten_schemas", lambda: live)


def test_release_refuses_a_removal_inside_the_deprecation_window(ws, capsys):
    (ws / "proposals" / "0003-remove-mul.md").write_text(accepted(3, "remove-op", REMOVE_MUL, "2027.01"))
    capsys.readouterr()
    before = snapshot(ws)
    assert release(ws, "2027.01") == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1, err
    assert "0003-remove-mul.md" in err[0] and "aten::mul.Tensor" in err[0]
    assert "breaks the compatibility rule deprecation-period" in err[0] and "compatibility.yaml:" in err[0]
    assert "allows removal from 2027.06" in err[0]
    assert snapshot(ws) == before  # nothing written

    # the same removal once the period has passed is released
    (ws / "proposals" / "0003-remove-mul.md").write_text(accepted(3, "remove-op", REMOVE_MUL, "2027.06"))
    assert release(ws, "2027.06") == 0, capsys.readouterr().err
    assert load.load_opset("2027.06", ws / "opset").ops_by_name["aten::mul.Tensor"].status == "removed"


def test_release_refuses_an_incompatible_schema_change(ws, capsys, monkeypatch):
    incompatible = "aten::abs(Tensor self, bool exact) -> Tensor"
    with_torch_abs(monkeypatch, incompatible)
    (ws / "proposals" / "0003-change-abs.md").write_text(accepted(3, "schema-change", change_abs(incompatible), "2027.01"))
    capsys.readouterr()
    before = snapshot(ws)
    assert release(ws, "2027.01") == 1
    err = capsys.readouterr().err
    assert "breaks the compatibility rule schema-compatibility" in err
    assert "add-required-argument: `exact` (bool) is added" in err and "needs a new op" in err
    assert snapshot(ws) == before

    compatible = "aten::abs(Tensor self, *, bool exact=False) -> Tensor"
    with_torch_abs(monkeypatch, compatible)
    (ws / "proposals" / "0003-change-abs.md").write_text(accepted(3, "schema-change", change_abs(compatible), "2027.01"))
    assert release(ws, "2027.01") == 0, capsys.readouterr().err


def test_validate_names_the_rule_a_hand_edited_version_breaks(ws):
    """A draft version that drops a core op without deprecating it, edited by hand rather than released."""
    opset = ws / "opset"
    shutil.copytree(opset / "2026.12", opset / "2027.01")
    ops_path = opset / "2027.01" / "core_ops.yaml"
    data = yamlio.load_file(ops_path)
    for entry in data["ops"]:
        if entry["name"] == "aten::abs":
            entry.update(status="removed", deprecated="2027.01", removed="2027.01")
    ops_path.write_text(yamlio.dump({"opset": "2027.01", "ops": list(data["ops"])}))
    for name in ("decompositions.yaml", "bookkeeping_ops.yaml"):
        path = opset / "2027.01" / name
        if path.is_file():
            path.write_text(path.read_text().replace("opset: '2026.12'", "opset: '2027.01'"))
    index = yamlio.load_file(opset / "versions.yaml")
    index["versions"].append({"version": "2027.01", "status": "draft", "torch": "2.13.0"})
    (opset / "versions.yaml").write_text(yamlio.dump({"versions": list(index["versions"])}))
    report = validate.validate(opset, use_torch=False)
    messages = [str(f) for f in report.findings]
    assert any("aten::abs: removed in 2027.01 but active in 2026.12" in m and "removal-needs-deprecation" in m
               and "2027.01/core_ops.yaml:" in m for m in messages), messages


def test_validate_reports_a_broken_policy_file(opset_copy):
    path = opset_copy / "compatibility.yaml"
    path.write_text(path.read_text().replace("minimum_months: 6", "minimum_months: soon"))
    report = validate.validate(opset_copy, use_torch=False)
    assert any("compatibility.yaml:" in str(f) and "deprecation/minimum_months" in str(f) for f in report.findings)


def test_the_released_history_keeps_the_policy():
    """2026.11 -> 2026.12 only adds ops and rules: no rule is broken."""
    root = resources.opset_root()
    policy, problems = policy_data.read_policy(root)
    assert problems == [] and policy is not None
    old, new = (load.read_version(root, v)[0] for v in ("2026.11", "2026.12"))
    ops = [{e["name"]: e for _, e in load.iter_entries(f, "ops")} for f in (old, new)]
    assert compatibility.transition(policy, "2026.11", ops[0], "2026.12", ops[1], schemas.differences) == []


@pytest.mark.parametrize("new, kinds", [
    (ABS, []),
    ("aten::abs(Tensor self, *, bool exact=False) -> Tensor", ["add-defaulted-argument"]),
    ("aten::abs(Tensor self, bool exact=False) -> Tensor", ["add-defaulted-argument"]),
    ("aten::abs(Tensor self, bool exact) -> Tensor", ["add-required-argument"]),
    ("aten::abs(Tensor x) -> Tensor", ["rename-argument"]),
    ("aten::abs(Tensor(a!) self) -> Tensor(a!)", ["change-mutability", "change-returns"]),
    ("aten::abs(Tensor self) -> (Tensor, Tensor)", ["change-returns"]),
    ("aten::abs.out(Tensor self) -> Tensor", ["rename-op"]),
])
def test_schema_differences_are_told_apart_by_function_schema(new, kinds):
    assert [d.kind for d in schemas.differences(ABS, new)] == kinds


def test_schema_differences_in_arguments():
    add = SCHEMAS["aten::add.Tensor"]
    assert [d.kind for d in schemas.differences(add, add.replace("Scalar alpha=1", "Scalar alpha=2"))] == ["change-default"]
    assert [d.kind for d in schemas.differences(add, add.replace(", *, Scalar alpha=1", ""))] == ["remove-argument"]
    assert [d.kind for d in schemas.differences(add, add.replace("*, Scalar alpha=1", "Scalar alpha=1"))] == ["change-keyword-only"]
    swapped = "aten::add.Tensor(Tensor other, Tensor self, *, Scalar alpha=1) -> Tensor"
    assert [d.kind for d in schemas.differences(add, swapped)] == ["reorder-arguments"]
    view = "aten::view(Tensor(a) self, int[] size) -> Tensor(a)"
    assert [d.kind for d in schemas.differences(view, view.replace("int[]", "SymInt[]"))] == ["widen-to-symint"]
    with pytest.raises(schemas.SchemaError, match="cannot parse"):
        schemas.differences(add, "aten::add.Tensor(Tensor self")


def test_policy_arithmetic():
    policy, _ = policy_data.read_policy(resources.opset_root())
    assert policy.earliest_removal("2026.12") == "2027.06"
    assert policy_data.months_between("2026.11", "2027.02") == 3
    assert policy.support_ends("2026-11-23") == "2028-11-23"
    assert not policy.is_compatible("remove-argument") and policy.is_compatible("add-defaulted-argument")
    assert not policy.is_compatible("a-kind-nobody-listed")


def test_an_accepted_deprecation_needs_its_upgrader(tmp_path):
    root = write_workspace(tmp_path / "repo")
    bare = DEPRECATE_MUL.replace(UPGRADE_MUL, "")
    path = root / "proposals" / "0002-deprecate-mul.md"
    path.write_text(accepted(2, "deprecate-op", bare, "2026.12"))
    found = [str(f) for f in checking.check(root / "proposals", root / "opset", use_torch=False).findings]
    assert any("needs an `upgrader`" in m and "upgrader-required" in m for m in found), found
    path.write_text(accepted(2, "deprecate-op", DEPRECATE_MUL.replace("other: other", "other: others"), "2026.12"))
    found = [str(f) for f in checking.check(root / "proposals", root / "opset").findings]
    assert any("aten::mul.Tensor has no argument 'others'" in m for m in found), found
    path.write_text(accepted(2, "deprecate-op", DEPRECATE_MUL, "2026.12"))
    assert checking.check(root / "proposals", root / "opset").findings == []


def test_the_compatibility_page_shows_the_policy_and_the_torch_table(tmp_path):
    from opspec.reports.site import compatibility_page, generate
    from opspec.spec.workspace import Workspace

    root = write_workspace(tmp_path / "repo")
    env = generate._environment()
    ws = Workspace(root)

    def render() -> str:
        return env.get_template("compatibility.md.j2").render(**compatibility_page.context(ws, load.load_versions(ws.opset)))

    page = render()
    policy, _ = policy_data.read_policy(root / "opset")
    for rule in (policy.support, policy.deprecation, policy.removal, policy.upgraders, policy.schema_changes):
        assert f"| `{rule.id}` |" in page
    assert all(f"| `{kind}` |" in page for kind in policy.kinds)
    assert "| 2026.11 | 2026-11-01 | 2028-11-01 | 0 | 0 |" in page and "Not measured yet." in page
    results = root / "benchmarks" / "results" / "golden_matrix.json"
    results.parent.mkdir(parents=True)
    cell = {"programs": 2, "loads": 2, "runs": 2, "matches": 2, "failures": []}
    broken = {"programs": 2, "loads": 1, "runs": 1, "matches": 1,
              "failures": [{"file": "reduction.pt2", "detail": "not a program torch.export can load", "failed_ops": []}]}
    results.write_text(json.dumps({"opset": "2026.12", "measured": "2026-11-26", "exported": {"2.11.0": {}, "2.15.0": {}},
                                   "loaded": {"2.11.0": {"cells": {"2.11.0": cell, "2.15.0": broken}},
                                              "2.15.0": {"cells": {"2.11.0": cell, "2.15.0": cell}}},
                                   "explanations": {"reduction.pt2": "a newer serializer"}}))
    page = render()
    assert "| 2.11.0 | 2/2 match | 2/2 match |" in page
    assert "| 2.15.0 | loads 1/2, runs 1/2, matches 1/2 | 2/2 match |" in page
    assert "exported with 2.15.0, loaded with 2.11.0: `reduction.pt2`: not a program torch.export can load. Why: a newer serializer" in page
