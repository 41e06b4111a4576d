"""The lifecycle cannot be skipped: decisions are recorded, accepted changes are measured, releases leave nothing open."""
from __future__ import annotations

from pathlib import Path

import pytest
from opspec_fixtures import evidence, process_proposal, write_workspace

from opspec.cli import main
from opspec.proposals import check as checking
from opspec.spec import load

ADD_BUCKETIZE = """\
changes:
  - action: add-op
    op: aten::bucketize.Tensor
    schema: aten::bucketize.Tensor(Tensor self, Tensor boundaries, *, bool out_int32=False, bool right=False) -> Tensor
    category: indexing
    rationale: Its only decomposition is an unrolled binary search.
    testing: {}"""
RULE = """\
changes:
  - action: add-rule
    rule:
      op: aten::linalg_vector_norm
      kind: default
      targets: [aten::abs, aten::amax, aten::pow.Tensor_Scalar, aten::sum.dim_IntList]
      formula: sum(abs(x)^ord)^(1/ord)
      rationale: Core reductions over a pointwise map.
      implementation: torch
      origin: opspec"""
ACCEPTED = "resolution: Accepted at the review.\ntarget_version: '2026.12'\n"


def proposal(number: int, status: str, type_: str = "process", changes: str = "", extra: str = "") -> str:
    text = process_proposal(number, status, extra)
    if changes:
        text = text.replace("type: process", f"type: {type_}").replace("changes: []", changes)
    return text


def check_lines(root: Path, capsys, *files: Path) -> tuple[int, list[str]]:
    code = main(["proposal", "--root", str(root), "check", "--no-torch", *map(str, files)])
    return code, capsys.readouterr().out.splitlines()


@pytest.fixture
def ws(tmp_path) -> Path:
    root = write_workspace(tmp_path / "repo")
    # the op an accepted add-op makes core is described (an undescribed one is test_proposals_guidance's case)
    (root / "opset" / "descriptions.yaml").write_text(
        "ops:\n  aten::bucketize.Tensor:\n    description: The index of the bucket each value falls in.\n"
        "    example: torch.ops.aten.bucketize.Tensor(torch.ones(2), torch.ones(1))\n")
    return root


def test_accepted_without_a_decision_record_is_refused(ws, capsys):
    path = ws / "proposals" / "0002-undecided.md"
    path.write_text(proposal(2, "accepted", extra=ACCEPTED + "decision: null\n"))
    code, lines = check_lines(ws, capsys, path)
    assert code == 1
    assert lines == [f"{path}:7:1: status accepted needs a `decision` record (date, reviewers or record, reasons): "
                     "pass --reviewer NAME or --record URL_OR_PATH, and --reason TEXT, to `opspec proposal set-status`"]


def test_a_decision_names_reviewers_or_a_record_and_gives_reasons(ws, capsys):
    path = ws / "proposals" / "0002-decided.md"
    nameless = "decision:\n  date: '2026-11-03'\n  reasons:\n    - The reviewers agreed after reading it.\n"
    path.write_text(proposal(2, "rejected", extra="resolution: Rejected at the review.\n" + nameless))
    code, lines = check_lines(ws, capsys, path)
    assert code == 1 and len(lines) == 1 and lines[0].startswith(f"{path}:") and "decision" in lines[0]
    path.write_text(proposal(2, "rejected", extra="resolution: Rejected at the review.\n"
                             + nameless.replace("  reasons:", "  record: https://example.org/minutes/12\n  reasons:")))
    assert check_lines(ws, capsys, path) == (0, [])


def test_accepted_changes_need_their_measurements(ws, capsys):
    add = ws / "proposals" / "0002-add.md"
    add.write_text(proposal(2, "accepted", "add-op", ADD_BUCKETIZE.replace("    testing: {}", ""), ACCEPTED))
    rule = ws / "proposals" / "0003-rule.md"
    rule.write_text(proposal(3, "accepted", "decompose-op", RULE, ACCEPTED))
    code, lines = check_lines(ws, capsys, add, rule)
    # (the live decomposition check also runs on the rule; its verdict is the measure test's business)
    lines = [line for line in lines if "decomposition check:" not in line]
    assert code == 1
    assert sorted(lines) == sorted([
        f"{add}:11:5: changes/0: an accepted add-op states `testing` (hints for drawing valid inputs)",
        f"{add}:11:5: changes/0: accepted without `strategy` evidence for aten::bucketize.Tensor; run `opspec proposal measure 2`",
        f"{rule}:11:5: changes/0: accepted without `check-decomp` evidence for aten::linalg_vector_norm; run `opspec proposal measure 3`",
    ])
    failed = evidence(("check-decomp", "aten::linalg_vector_norm")).replace("result: pass", "result: fail")
    rule.write_text(proposal(3, "accepted", "decompose-op", RULE, ACCEPTED + failed))
    code, lines = check_lines(ws, capsys, rule)
    lines = [line for line in lines if "decomposition check:" not in line]
    assert code == 1 and lines == [f"{rule}:22:1: changes/0: the recorded `check-decomp` of aten::linalg_vector_norm failed: "
                                   "measured in the test fixture"]
    add.write_text(proposal(2, "accepted", "add-op", ADD_BUCKETIZE, ACCEPTED + evidence(("strategy", "aten::bucketize.Tensor"))))
    rule.write_text(proposal(3, "accepted", "decompose-op", RULE, ACCEPTED + evidence(("check-decomp", "aten::linalg_vector_norm"))))
    assert check_lines(ws, capsys, add)[1] == []
    assert [line for line in check_lines(ws, capsys, rule)[1] if "decomposition check:" not in line] == []


def test_measure_records_evidence_from_the_checks(ws, capsys):
    add = ws / "proposals" / "0002-add.md"
    add.write_text(proposal(2, "review", "add-op", ADD_BUCKETIZE, "target_version: '2026.12'\n"))
    rule = ws / "proposals" / "0003-rule.md"
    rule.write_text(proposal(3, "review", "decompose-op", RULE, "target_version: '2026.12'\n"))
    # hints the kernel cannot serve: nextafter has no integer kernel
    nextafter = (ADD_BUCKETIZE.replace("aten::bucketize.Tensor(Tensor self, Tensor boundaries, *, bool out_int32=False, "
                                       "bool right=False)", "aten::nextafter(Tensor self, Tensor other)")
                 .replace("bucketize.Tensor", "nextafter").replace("testing: {}", "testing: {dtypes: [int64]}"))
    add.write_text(proposal(2, "review", "add-op", nextafter, "target_version: '2026.12'\n"))
    assert main(["proposal", "--root", str(ws), "measure", "2", "--max-examples", "10"]) == 1
    assert "strategy aten::nextafter: fail: generic strategy: valid calls int64 0/10; int64: NotImplementedError:" \
        in capsys.readouterr().out
    add.write_text(proposal(2, "review", "add-op", ADD_BUCKETIZE.replace("testing: {}", "testing: {ranks: {boundaries: [1, 1]}}"),
                            "target_version: '2026.12'\n"))
    assert main(["proposal", "--root", str(ws), "measure", "2", "--max-examples", "10", "--date", "2026-11-04"]) == 0
    out = capsys.readouterr().out
    assert "strategy aten::bucketize.Tensor: pass" in out
    [item] = checking.load_all(ws / "proposals")[1].proposal.evidence
    assert (item["check"], item["result"], item["date"]) == ("strategy", "pass", "2026-11-04")
    assert item["command"] == "opspec proposal measure 2 --max-examples 10 --seed 0"
    # linalg_vector_norm also produces _to_copy, ne, amin..., none of which the rule declares or the opset holds
    assert main(["proposal", "--root", str(ws), "measure", "3", "--max-examples", "10"]) == 1
    out = capsys.readouterr().out
    assert "check-decomp aten::linalg_vector_norm: fail" in out
    [item] = checking.load_all(ws / "proposals")[2].proposal.evidence
    assert item["result"] == "fail" and item["detail"]
    assert main(["proposal", "--root", str(ws), "measure", "1"]) == 1  # an implemented proposal is not measured again
    assert "not implemented" in capsys.readouterr().err


def test_diff_reorders_reversed_versions_and_says_so(ws, capsys):
    (ws / "proposals" / "0002-add.md").write_text(proposal(
        2, "accepted", "add-op", ADD_BUCKETIZE, ACCEPTED + evidence(("strategy", "aten::bucketize.Tensor"))))
    assert main(["release", "--root", str(ws), "--date", "2026-12-01", "2026.12"]) == 0
    capsys.readouterr()
    assert main(["diff", "--root", str(ws), "2026.11", "2026.12"]) == 0
    forward = capsys.readouterr()
    assert main(["diff", "--root", str(ws), "2026.12", "2026.11"]) == 0
    backward = capsys.readouterr()
    assert backward.out == forward.out and "changes since 2026.11" in backward.out
    assert backward.err == "note: 2026.12 is newer than 2026.11; showing the changes from 2026.11 to 2026.12\n"
    assert main(["diff", "--root", str(ws), "2026.11", "26.12"]) == 2


def test_release_refuses_or_retargets_open_proposals(ws, capsys):
    (ws / "proposals" / "0002-add.md").write_text(proposal(
        2, "accepted", "add-op", ADD_BUCKETIZE, ACCEPTED + evidence(("strategy", "aten::bucketize.Tensor"))))
    pending = ws / "proposals" / "0003-pending.md"
    pending.write_text(proposal(3, "review", extra="target_version: '2026.12'\n"))
    assert main(["release", "--root", str(ws), "--date", "2026-12-01", "2026.12"]) == 1
    err = capsys.readouterr().err.splitlines()
    assert err == [f"{checking.display_path(pending)}:1:1: proposal 0003 is still review for 2026.12: "
                   "decide it first, or release 2026.12 with --retarget NEXT"]
    assert not (ws / "opset" / "2026.12").exists()
    assert main(["release", "--root", str(ws), "--date", "2026-12-01", "2026.12", "--retarget", "2026.11"]) == 1
    assert "must be a YYYY.MM version after 2026.12" in capsys.readouterr().err
    assert main(["release", "--root", str(ws), "--date", "2026-12-01", "2026.12", "--retarget", "2027.01"]) == 0
    assert "retargeted to 2027.01" in capsys.readouterr().out
    moved = checking.load_all(ws / "proposals")[2].proposal
    assert (moved.status, moved.target_version, moved.updated) == ("review", "2027.01", "2026-12-01")
    assert load.load_opset("2026.12", ws / "opset").info.status == "released"
    assert checking.check(ws / "proposals", ws / "opset", use_torch=False).findings == []


def test_sealing_a_draft_version_keeps_its_bytes(tmp_path, capsys):
    root = write_workspace(tmp_path / "repo", released=False)
    before = {p.name: p.read_bytes() for p in (root / "opset" / "2026.11").iterdir()}
    assert main(["release", "--root", str(root), "--date", "2026-11-23", "2026.11"]) == 0
    info = load.load_opset("2026.11", root / "opset").info
    assert (info.status, info.released) == ("released", "2026-11-23")
    assert info.digest == load.version_digest(root / "opset", "2026.11")
    assert {p.name: p.read_bytes() for p in (root / "opset" / "2026.11").iterdir()} == before
