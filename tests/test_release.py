"""`opspec release`: applies accepted proposals into a new version, atomically and only once."""
from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

import pytest
from opspec_fixtures import evidence, process_proposal, write_workspace

from opspec.cli import main
from opspec.proposals import check as checking
from opspec.spec import load

ACCEPTED = {"resolution": "Accepted at the review.", "target_version": "'2026.12'"}


def measured(changes: str) -> str:
    """Passing evidence for every op the changes add and every rule they add or change."""
    found = [("strategy", op) for op in re.findall(r"action: add-op\n\s+op: (\S+)", changes)]
    found += [("check-decomp", op) for op in re.findall(r"action: (?:add|change)-rule\n\s+rule:\n\s+op: (\S+)", changes)]
    return evidence(*found) if found else ""


def accepted(number: int, type_: str, changes: str, requires: str = "") -> str:
    extra = "resolution: Accepted at the review.\ntarget_version: '2026.12'\n" + requires + measured(changes)
    text = process_proposal(number, "accepted", extra)
    return text.replace("type: process", f"type: {type_}").replace("changes: []", "changes:\n" + changes.rstrip("\n"))


ADD_BUCKETIZE = """\
  - action: add-op
    op: aten::bucketize.Tensor
    schema: aten::bucketize.Tensor(Tensor self, Tensor boundaries, *, bool out_int32=False, bool right=False) -> Tensor
    category: indexing
    rationale: Its only decomposition is an unrolled binary search.
    testing: {}
"""
DEPRECATE_MUL = """\
  - action: deprecate-op
    op: aten::mul.Tensor
    rationale: A test deprecation of a core op.
    upgrader:
      op: aten::mul.Tensor
      arguments: {self: self, other: other}
"""
RULE_ON_BUCKETIZE = """\
  - action: add-rule
    rule:
      op: aten::searchsorted.Tensor
      kind: default
      targets: [aten::bucketize.Tensor]
      formula: bucketize(self, sorted_sequence)
      rationale: The same lookup with the arguments swapped.
      implementation: torch
      origin: opspec
"""


def snapshot(root: Path) -> dict[str, str]:
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = write_workspace(tmp_path / "repo")
    # every op an accepted add-op here makes core is described, as `proposal check` asks
    (root / "opset" / "descriptions.yaml").write_text("ops:\n" + "".join(
        f"  {op}:\n    description: Described for the test's add-op proposals.\n    example: torch.ones(2)\n"
        for op in ("aten::abs", "aten::bucketize.Scalar", "aten::bucketize.Tensor")))
    (root / "proposals" / "0002-add-bucketize.md").write_text(accepted(2, "add-op", ADD_BUCKETIZE))
    (root / "proposals" / "0003-deprecate-mul.md").write_text(accepted(3, "deprecate-op", DEPRECATE_MUL))
    # 0004 targets an op 0002 adds, so it must run after it: `requires` decides the order.
    (root / "proposals" / "0004-decompose-searchsorted.md").write_text(
        accepted(4, "decompose-op", RULE_ON_BUCKETIZE, "requires: [2]\n"))
    return root


def release(root: Path, *args: str) -> int:
    return main(["release", "--root", str(root), "--date", "2026-12-01", *args])


def test_release_applies_proposals_and_diff_shows_them(ws, capsys):
    before = snapshot(ws)
    assert release(ws, "2026.12", "--dry-run") == 0
    assert snapshot(ws) == before  # a dry run writes nothing
    capsys.readouterr()

    assert release(ws, "2026.12") == 0
    out = capsys.readouterr().out
    assert out.index("proposal 0002") < out.index("proposal 0003") < out.index("proposal 0004")

    new = load.load_opset("2026.12", ws / "opset")
    assert new.info.status == "released" and new.info.released == "2026-12-01"
    assert new.info.digest == load.version_digest(ws / "opset", "2026.12")
    bucketize = new.ops_by_name["aten::bucketize.Tensor"]
    assert (bucketize.since, bucketize.proposals, bucketize.status) == ("2026.12", (2,), "active")
    assert bucketize.schema.startswith("aten::bucketize.Tensor(Tensor self, Tensor boundaries")
    mul = new.ops_by_name["aten::mul.Tensor"]
    assert (mul.status, mul.deprecated, mul.proposals) == ("deprecated", "2026.12", (1, 3))
    rule = new.rules_by_op["aten::searchsorted.Tensor"]
    assert (rule.since, rule.proposals) == ("2026.12", (4,))
    names = [op.name for op in new.ops]
    assert names == sorted(names)
    assert (ws / "opset" / "2026.12" / "core_ops.yaml").read_text().startswith("# yaml-language-server")
    # the older version is untouched and its seal still holds
    old = load.load_opset("2026.11", ws / "opset")
    assert old.info.digest == load.version_digest(ws / "opset", "2026.11")

    parsed = {p.proposal.id: p.proposal for p in checking.load_all(ws / "proposals")}
    for number in (2, 3, 4):
        assert (parsed[number].status, parsed[number].released_in, parsed[number].updated) == ("implemented", "2026.12", "2026-12-01")
    assert checking.check(ws / "proposals", ws / "opset").findings == []

    assert main(["diff", "--root", str(ws), "2026.11", "2026.12"]) == 0
    md = capsys.readouterr().out
    assert "### Added ops" in md and "`aten::bucketize.Tensor`" in md and "proposal 0002" in md
    assert "### Deprecated ops" in md and "proposal 0003" in md
    assert "### Decomposition rules added" in md and "proposal 0004" in md
    assert main(["diff", "--root", str(ws), "2026.11", "2026.12", "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert {"kind": "added", "op": "aten::bucketize.Tensor", "detail": "indexing", "proposals": [2]} in data["changes"]

    # released versions are immutable: releasing again changes nothing
    sealed = snapshot(ws)
    assert release(ws, "2026.12") == 0
    assert "already released" in capsys.readouterr().out
    assert snapshot(ws) == sealed


def test_release_is_deterministic(ws, tmp_path):
    import shutil

    twin = tmp_path / "twin"
    shutil.copytree(ws, twin)
    assert release(ws, "2026.12") == 0 and release(twin, "2026.12") == 0
    assert snapshot(ws / "opset") == snapshot(twin / "opset")


@pytest.mark.parametrize("name,text,fragment", [
    ("0005-again.md", accepted(5, "add-op", ADD_BUCKETIZE.replace("bucketize.Tensor", "abs")), "aten::abs is already core"),
    ("0005-cycle.md", accepted(5, "add-op", ADD_BUCKETIZE.replace("bucketize.Tensor", "bucketize.Scalar"), "requires: [5]\n"), ""),
    ("0005-broken.md", "---\nid: [\n---\n", "invalid YAML"),
])
def test_a_failed_release_writes_nothing(ws, capsys, name, text, fragment):
    (ws / "proposals" / name).write_text(text)
    before = snapshot(ws)
    code = release(ws, "2026.12")
    err = capsys.readouterr().err
    assert code == 1 and "Traceback" not in err and err.strip()
    assert fragment in err
    assert snapshot(ws) == before
    assert not (ws / "opset" / "2026.12").exists()


def test_accepted_for_a_released_version_is_refused(ws, capsys):
    assert release(ws, "2026.12") == 0
    (ws / "proposals" / "0005-late.md").write_text(
        accepted(5, "add-op", ADD_BUCKETIZE.replace("bucketize.Tensor", "bucketize.Scalar")))
    before = snapshot(ws)
    assert release(ws, "2026.12") == 1
    assert "already released and immutable" in capsys.readouterr().err
    assert snapshot(ws) == before


def test_version_rules(ws, capsys):
    assert release(ws, "2026.10") == 1
    assert "older than the newest version" in capsys.readouterr().err
    assert release(ws, "26.1") == 1
    with pytest.raises(SystemExit):
        main(["release"])


def test_sealing_a_draft_keeps_its_bytes(tmp_path, capsys):
    root = write_workspace(tmp_path / "repo", released=False)
    before = snapshot(root / "opset" / "2026.11")
    assert release(root, "2026.11") == 0
    assert snapshot(root / "opset" / "2026.11") == before
    info = load.load_versions(root / "opset")[0]
    assert info.status == "released" and info.digest == load.version_digest(root / "opset", "2026.11")


def test_commit_failure_rolls_back(ws, monkeypatch):
    from opspec.proposals import release as release_mod

    real_replace = release_mod.os.replace
    calls = []

    def flaky(src, dst):
        calls.append(dst)
        if str(dst).endswith("versions.yaml"):
            raise OSError("disk full")
        return real_replace(src, dst)

    before = snapshot(ws)
    monkeypatch.setattr(release_mod.os, "replace", flaky)
    plan = release_mod.plan(release_mod.Workspace(ws), "2026.12", "2026-12-01")
    with pytest.raises(OSError):
        release_mod.commit(plan)
    assert len(calls) > 1
    assert snapshot(ws) == before
