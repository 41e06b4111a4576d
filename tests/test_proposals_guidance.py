"""What `opspec proposal new`, `check` and `set-status` tell an author: refusals that name the flag or field and
the limit, a scaffold that holds every change and follow-up the op needs, and the next step after each command."""
from __future__ import annotations

import re
import shutil
import types
from pathlib import Path

import pytest
from opspec_fixtures import ROOT, init_repo, process_proposal, write_workspace

from opspec.cli import main
from opspec.proposals import check as checking
from opspec.proposals import from_drift

pytestmark = pytest.mark.usefixtures("warm_validate_parts")  # validate reuses the bundled opset's parts

NEW = ("new", "--author", "Ada Lovelace", "--date", "2026-11-30")


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    return write_workspace(tmp_path / "repo")


def run(ws: Path, *args: str, capsys) -> tuple[int, list[str], list[str]]:
    code = main(["proposal", "--root", str(ws), *args])
    out, err = capsys.readouterr()
    return code, out.splitlines(), err.splitlines()


def fill_in(path: Path, category: str = "reduction") -> None:
    """What the author writes in place of every TODO and every section's template text."""
    text = path.read_text()
    text = re.sub(r"rationale: TODO.*", "rationale: Written by the author, long enough to explain it.", text)
    text = re.sub(r"category: misc  # TODO.*", f"category: {category}", text)
    front, body = text.split("\n---\n", 1)
    body = re.sub(r"(## (?!Follow-up)[^\n]+\n\n)(?:(?!## ).*\n?)*", lambda m: m.group(1) + "Written by the author.\n\n", body)
    path.write_text(front + "\n---\n" + body)


# --- new: the op it is about -----------------------------------------------------------------


@pytest.mark.parametrize("type_,op,message", [
    ("add-op", "aten::logadexp",
     "--op aten::logadexp: the installed torch has no operator aten::logadexp (did you mean aten::logaddexp?)"),
    ("decompose-op", "aten::logadexp",
     "--op aten::logadexp: the installed torch has no operator aten::logadexp (did you mean aten::logaddexp?)"),
    ("add-op", "aten::abs", "--op aten::abs: already core in 2026.11; an add-op proposal adds an op that is not core yet"),
    ("deprecate-op", "aten::abss",
     "--op aten::abss: not a core op in 2026.11 (did you mean aten::abs?); a deprecate-op proposal is about a core op"),
    ("schema-change", "aten::logaddexp",
     "--op aten::logaddexp: not a core op in 2026.11; a schema-change proposal is about a core op"),
    ("add-op", None, "an add-op proposal needs --op OP, the qualified op it is about"),
])
def test_new_refuses_an_op_it_cannot_be_about(ws, capsys, type_, op, message):
    before = sorted(p.name for p in (ws / "proposals").iterdir())
    code, out, err = run(ws, *NEW, "--type", type_, "--title", "A proposal about one op", *(("--op", op) if op else ()),
                         capsys=capsys)
    assert (code, out, err) == (2, [], [f"opspec proposal: error: {message}"])
    assert sorted(p.name for p in (ws / "proposals").iterdir()) == before  # nothing written


def test_new_refuses_a_title_out_of_bounds_saying_how_long_it_is(ws, capsys):
    code, _, err = run(ws, *NEW, "--type", "process", "--title", "Tiny", capsys=capsys)
    assert code == 2
    assert err == ["opspec proposal: error: --title is 4 characters; it must be one line of 5 to 120 characters"]


# --- new: what the scaffold holds ------------------------------------------------------------


def test_an_add_op_scaffold_drops_the_rule_that_decomposes_the_op(ws, capsys):
    """aten::var_mean.correction has a default rule in the fixture's opset: the draft removes it first."""
    code, out, err = run(ws, *NEW, "--type", "add-op", "--title", "Add var_mean to the core set",
                         "--op", "aten::var_mean.correction", capsys=capsys)
    assert code == 0, err
    path = ws / out[0]
    assert err == [f"next: replace every TODO and each section's template text, then run `opspec proposal check "
                   f"{out[0]}`; its `## Follow-up` section lists what else a new core op needs"]
    text = path.read_text()
    front = text.split("\n---\n", 1)[0]
    assert front.split("changes:\n", 1)[1] == (
        "  - action: remove-rule\n"
        "    op: aten::var_mean.correction\n"
        "    rationale: TODO say why backends should receive aten::var_mean.correction whole rather than decomposed by "
        "its rule ((var(x), mean(x))).\n"
        "  - action: add-op\n"
        "    op: aten::var_mean.correction\n"
        "    schema: aten::var_mean.correction(Tensor self, int[1]? dim=None, *, Scalar? correction=None, "
        "bool keepdim=False) -> (Tensor, Tensor)\n"
        "    category: misc  # TODO choose one of pointwise-unary, pointwise-binary, reduction, shape-view, indexing, "
        "convolution-pooling, normalization, creation-random, linear-algebra, misc; its special-case rows go in that "
        "file\n"
        "    rationale: TODO say why backends should implement this op directly.\n"
        "    testing: {}"
    )
    body = text.split("\n---\n", 1)[1]
    follow_up = body.split("## Follow-up\n", 1)[1].split("## Compatibility")[0]
    assert "an entry under `ops:` in\n  `opset/descriptions.yaml`" in follow_up
    assert "  aten::var_mean.correction:\n    description:" in follow_up
    assert "      torch.ops.aten.var_mean.correction(...)" in follow_up
    assert "`opset/special_cases/CATEGORY.yaml` (its `category`), written with the release" in follow_up

    # written out, the draft passes: the rule goes before the op becomes core
    fill_in(path)
    result = checking.check(ws / "proposals", ws / "opset", files=[path])
    assert result.findings == []
    assert result.notes == [
        f"proposal 0002: aten::var_mean.correction has no entry in {ws / 'opset' / 'descriptions.yaml'} yet; it needs "
        "one before the proposal is accepted",
        f"proposal 0002: aten::var_mean.correction has no special-case rows; write them in "
        f"{ws / 'opset' / 'special_cases'}/reduction.yaml with the release that makes it core (`opspec validate` refuses "
        "rows for an op no version holds)",
    ]
    # without the remove-rule the check refuses the add-op, as it always did
    text = path.read_text()
    start = text.index("  - action: remove-rule")
    path.write_text(text[:start] + text[text.index("  - action: add-op"):])
    assert any("decomposed by a default rule" in f.message for f in checking.check(ws / "proposals", ws / "opset",
                                                                                   files=[path]).findings)


@pytest.fixture
def repo_copy(tmp_path: Path) -> Path:
    """The repository's own opset, with an empty proposals folder."""
    root = tmp_path / "repo"
    shutil.copytree(ROOT / "opset", root / "opset")
    (root / "proposals").mkdir()
    return root


def test_drafting_logaddexp_from_the_readme(repo_copy, capsys):
    """The newcomer's case: aten::logaddexp is decomposed by a rule in the newest version and has rows in
    decomposed.yaml, but no description."""
    code, out, _ = run(repo_copy, *NEW, "--type", "add-op", "--title", "Add logaddexp to the core set",
                       "--op", "aten::logaddexp", capsys=capsys)
    assert code == 0
    path = repo_copy / out[0]
    text = path.read_text()
    assert text.index("  - action: remove-rule\n    op: aten::logaddexp\n") < text.index("  - action: add-op\n")
    # the rule's testing hints are where the op's start
    assert "    testing:\n      dtypes:\n        - float64\n        - float32\n        - float16\n        - bfloat16\n---" \
        in text
    assert ("they are in `opset/special_cases/decomposed.yaml`, with the\n  ops rules lower; they move to "
            "`opset/special_cases/CATEGORY.yaml` (its `category`)\n  with the release that makes it core") in text
    fill_in(path, "pointwise-binary")
    result = checking.check(repo_copy / "proposals", repo_copy / "opset", files=[path])
    assert result.findings == []
    folder = repo_copy / "opset" / "special_cases"
    assert result.notes[-1] == (
        f"proposal 0001: aten::logaddexp's rows in {folder}/decomposed.yaml move to {folder}/pointwise-binary.yaml "
        "with the release that makes it core (`opspec validate` then expects them there)")


def test_an_op_already_described_is_not_asked_for_again(ws, capsys):
    (ws / "opset" / "descriptions.yaml").write_text(
        "ops:\n  aten::var_mean.correction:\n    description: Variance and mean in one pass.\n"
        "    example: torch.ops.aten.var_mean.correction(torch.ones(3))\n")
    code, out, _ = run(ws, *NEW, "--type", "add-op", "--title", "Add var_mean to the core set",
                       "--op", "aten::var_mean.correction", capsys=capsys)
    assert code == 0
    text = (ws / out[0]).read_text()
    assert "- Its description: `opset/descriptions.yaml` already describes `aten::var_mean.correction`" in text
    assert "description: What it computes" not in text


def test_a_drift_draft_drops_the_rule_of_an_op_torch_now_tags_core(ws):
    report = types.SimpleNamespace(core_added={"aten::var_mean.correction": "aten::var_mean.correction(...)"},
                                   schema_changed=[], core_removed=[], table_changes=[], opset_version="2026.11",
                                   torch_version="2.13.0")
    rule = {"op": "aten::var_mean.correction", "kind": "default", "formula": "(var(x), mean(x))",
            "testing": {"dtypes": ["float32"]}}
    [drafted] = from_drift.draft_all(report, ws / "proposals", {"aten::var_mean.correction": rule}, author="Ada Lovelace")
    changes = checking.parse_file(drafted.path).proposal.changes
    assert [c["action"] for c in changes] == ["remove-rule", "add-op"]
    assert changes[1]["testing"] == {"dtypes": ["float32"]}


# --- check: what is missing, and what comes next ---------------------------------------------


BUCKETIZE = "aten::bucketize.Tensor(Tensor self, Tensor boundaries, *, bool out_int32=False, bool right=False) -> Tensor"


def add_op(status: str, extra: str = "") -> str:
    change = ("changes:\n  - action: add-op\n    op: aten::bucketize.Tensor\n"
              f"    schema: '{BUCKETIZE}'\n    category: indexing\n"
              "    rationale: A sorted lookup that no core op expresses.\n    testing: {}\n")
    return process_proposal(2, status, extra).replace("type: process", "type: add-op").replace("changes: []\n", change)


ACCEPTED = "resolution: Accepted at the review.\ntarget_version: '2026.12'\n"
MEASURED = """\
evidence:
  - check: strategy
    op: aten::bucketize.Tensor
    result: pass
    torch: 2.13.0
    date: '2026-11-03'
    command: opspec proposal measure 2
    detail: measured in the test fixture
"""
DESCRIBED = ("ops:\n  aten::bucketize.Tensor:\n    description: The index of the bucket each value falls in.\n"
             "    example: torch.ops.aten.bucketize.Tensor(torch.ones(2), torch.ones(1))\n")


def test_an_accepted_add_op_needs_its_description(ws):
    path = ws / "proposals" / "0002-add.md"
    path.write_text(add_op("accepted", ACCEPTED + MEASURED))
    found = [str(f) for f in checking.check(ws / "proposals", ws / "opset", files=[path]).findings]
    assert found == [
        f"{path}:11:5: changes/0: aten::bucketize.Tensor has no entry in {ws / 'opset' / 'descriptions.yaml'}; an "
        "accepted add-op's op is described there (`description`, `example`; the proposal's `## Follow-up` section says "
        "what to write)"]
    (ws / "opset" / "descriptions.yaml").write_text(DESCRIBED)
    assert checking.check(ws / "proposals", ws / "opset", files=[path]).findings == []


def test_a_release_does_not_make_an_undescribed_op_core(ws, capsys):
    path = ws / "proposals" / "0002-add.md"
    path.write_text(add_op("accepted", ACCEPTED + MEASURED))
    assert main(["release", "--root", str(ws), "--date", "2026-12-01", "2026.12"]) == 1
    assert "aten::bucketize.Tensor has no entry in" in capsys.readouterr().err
    assert not (ws / "opset" / "2026.12").exists()
    (ws / "opset" / "descriptions.yaml").write_text(DESCRIBED)
    assert main(["release", "--root", str(ws), "--date", "2026-12-01", "2026.12"]) == 0


@pytest.mark.parametrize("status,extra,described,step", [
    ("draft", "", False, "move it to review: `opspec proposal set-status 2 review --target-version 2026.12`"),
    ("draft", "target_version: '2027.03'\n", False, "move it to review: `opspec proposal set-status 2 review`"),
    ("review", "", False, "describe aten::bucketize.Tensor in {descriptions} (the proposal's `## Follow-up` section "
                          "says what to write), which acceptance needs"),
    ("review", "", True, "record the measurements acceptance needs: `opspec proposal measure 2`"),
    ("review", MEASURED, True, "after the review, record the decision: `opspec proposal set-status 2 accepted "
                               "--resolution TEXT --target-version 2026.12 --reviewer NAME --reason TEXT` (or rejected, "
                               "deferred or withdrawn; draft to rework it)"),
    ("accepted", ACCEPTED + MEASURED, True, "`opspec release 2026.12` applies it and marks it implemented"),
    ("deferred", "resolution: Deferred to a later review.\n", True,
     "`opspec proposal set-status 2 draft` when work on it resumes"),
    ("withdrawn", "resolution: Withdrawn by the authors.\n", True, "nothing more: withdrawn is final"),
])
def test_a_clean_check_names_the_next_step(ws, capsys, status, extra, described, step):
    if described:
        (ws / "opset" / "descriptions.yaml").write_text(DESCRIBED)
    path = ws / "proposals" / "0002-add.md"
    path.write_text(add_op(status, extra))
    init_repo(ws)  # committed: the step is the move itself
    code, out, err = run(ws, "check", "--no-torch", str(path), capsys=capsys)
    assert (code, out) == (0, [])
    assert err[-2:] == ["1 proposal(s) checked, no findings",
                        "next: " + step.format(descriptions=ws / "opset" / "descriptions.yaml")]


def test_a_move_waits_for_the_commit(ws, capsys):
    path = ws / "proposals" / "0002-add.md"
    path.write_text(add_op("draft"))
    _, _, err = run(ws, "check", "--no-torch", str(path), capsys=capsys)
    assert err[-1] == (f"next: commit {path}, then move it to review: `opspec proposal set-status 2 review "
                       "--target-version 2026.12`")


def test_findings_end_with_what_to_do(ws, capsys):
    path = ws / "proposals" / "0002-add.md"
    path.write_text(add_op("draft").replace("title: Process proposal number 2", "title: Add"))
    code, out, err = run(ws, "check", "--no-torch", str(path), capsys=capsys)
    assert code == 1
    assert out == [f"{path}:3:1: title: 'Add' is too short (3 characters, at least 5)"]
    assert err[-1] == f"next: fix each finding above, then run `opspec proposal check {path}` again"


@pytest.mark.parametrize("replace,with_,message", [
    ("rationale: A sorted lookup that no core op expresses.", "rationale: Sorted lookup.",
     "changes/0/rationale: 'Sorted lookup.' is too short (14 characters, at least 20)"),
    ("  - Ada Lovelace\n", "  - A\n", "authors/0: 'A' is too short (1 character, at least 2)"),
    ("authors:\n  - Ada Lovelace\n", "authors: []\n", "authors: [] should be non-empty (0 items, at least 1)"),
])
def test_a_length_finding_gives_the_length_and_the_limit(ws, replace, with_, message):
    path = ws / "proposals" / "0002-add.md"
    text = add_op("draft")
    assert replace in text
    path.write_text(text.replace(replace, with_))
    assert [f.message for f in checking.check(ws / "proposals", ws / "opset", files=[path]).findings] == [message]


@pytest.mark.parametrize("status,extra,message", [
    ("accepted", "resolution: Accepted at the review.\n", "status accepted needs `target_version` (the version the "
     "changes go into): pass --target-version V to `opspec proposal set-status`"),
    ("rejected", "", "status rejected needs `resolution` (why, for the record): pass --resolution TEXT to "
     "`opspec proposal set-status`"),
    ("superseded", "resolution: Accepted at the review.\ntarget_version: '2026.11'\nreleased_in: '2026.11'\n",
     "status superseded needs `superseded_by` (the proposal that replaces it): pass --superseded-by ID to "
     "`opspec proposal set-status`"),
])
def test_a_missing_field_names_the_flag_that_writes_it(ws, status, extra, message):
    path = ws / "proposals" / "0002-second.md"
    path.write_text(process_proposal(2, status, extra))
    assert message in [f.message for f in checking.check(ws / "proposals", ws / "opset", files=[path]).findings]


# --- set-status: what follows the move, and the option that writes a refused field -------------


@pytest.fixture
def committed(ws: Path) -> Path:
    (ws / "proposals" / "0002-add.md").write_text(add_op("review"))
    (ws / "opset" / "descriptions.yaml").write_text(DESCRIBED)
    init_repo(ws)
    return ws


def test_set_status_says_what_follows_the_move(committed, capsys):
    code, out, err = run(committed, "set-status", "2", "withdrawn", "--resolution", "Withdrawn by the authors.",
                         "--date", "2026-11-04", capsys=capsys)
    assert code == 0
    assert out == [f"{committed / 'proposals' / '0002-add.md'}: review -> withdrawn"]
    assert err == ["next: commit this move; nothing more: withdrawn is final"]


def test_set_status_back_to_draft_names_the_move_to_review(committed, capsys):
    code, _, err = run(committed, "set-status", "2", "draft", "--date", "2026-11-04", capsys=capsys)
    assert code == 0
    assert err == ["next: commit this move (one status move per commit), then move it to review: "
                   "`opspec proposal set-status 2 review --target-version 2026.12`"]


def test_set_status_names_the_flag_of_a_refused_field(committed, capsys):
    path = committed / "proposals" / "0002-add.md"
    code, _, err = run(committed, "set-status", "2", "rejected", "--resolution", "No.", "--reviewer", "Ada Lovelace",
                       "--reason", "Too short", capsys=capsys)
    assert code == 1
    assert err == [
        f"{path}:10:1: resolution: 'No.' is too short (3 characters, at least 10); --resolution TEXT writes it",
        f"{path}:16:7: decision/reasons/0: 'Too short' is too short (9 characters, at least 20); --reason TEXT writes it",
    ]


def test_check_takes_a_proposals_id_as_set_status_does(capsys):
    from opspec.cli import main

    assert main(["proposal", "check", "8"]) == 0
    assert "1 proposal(s) checked" in capsys.readouterr().err
    assert main(["proposal", "check", "999"]) == 2
    assert "999: no proposal has this id" in capsys.readouterr().err
