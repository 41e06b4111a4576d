"""What `opspec proposal new` and `check` tell an author: refusals that name the flag and the limit, and a scaffold
that holds every change and follow-up the op needs."""
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


# --- check: what an accepted add-op still needs ----------------------------------------------


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
