"""Family proposals: one decide-family proposal answers each op of a family on its own (made core, decomposed, or
declared out of scope), `opspec release` applies it, the version records the out-of-scope decisions, and the
changelog lists them."""
from __future__ import annotations

import pytest
from opspec_fixtures import write_workspace
from test_release import accepted, release

from opspec.cli import main
from opspec.proposals.changes import Draft, apply_proposal
from opspec.spec import load

FAMILY = """\
  - action: add-rule
    rule:
      op: aten::linalg_vector_norm
      kind: default
      targets: [aten::abs, aten::pow.Tensor_Scalar, aten::sum.dim_IntList]
      formula: sum(abs(x)^ord)^(1/ord)
      rationale: Every finite order is a core reduction over a pointwise map.
      implementation: torch
      origin: opspec
  - action: declare-out-of-scope
    op: aten::_to_sparse
    family: sparse layouts
    rationale: Sparse layouts are outside the dense core set; a backend that wants them implements them itself.
  - action: declare-out-of-scope
    op: aten::_to_sparse_csr
    family: sparse layouts
    rationale: Sparse layouts are outside the dense core set; a backend that wants them implements them itself.
"""


@pytest.fixture
def ws(tmp_path):
    root = write_workspace(tmp_path / "repo")
    (root / "proposals" / "0002-decide-norms-and-sparse.md").write_text(accepted(2, "decide-family", FAMILY))
    return root


def test_release_records_out_of_scope_decisions_and_the_changelog_lists_them(ws, capsys):
    assert release(ws, "2026.12") == 0, capsys.readouterr()
    new = load.load_opset("2026.12", ws / "opset")
    assert new.info.digest == load.version_digest(ws / "opset", "2026.12")  # the new file is sealed with the rest
    assert [(op.name, op.family, op.since, op.proposals) for op in new.out_of_scope] == [
        ("aten::_to_sparse", "sparse layouts", "2026.12", (2,)), ("aten::_to_sparse_csr", "sparse layouts", "2026.12", (2,))]
    assert new.rules_by_op["aten::linalg_vector_norm"].proposals == (2,)
    assert (ws / "opset" / "2026.12" / load.OUT_OF_SCOPE_FILE).read_text().startswith("# yaml-language-server")
    # the older version has no such file and keeps its seal
    assert load.load_opset("2026.11", ws / "opset").out_of_scope == ()
    capsys.readouterr()
    assert main(["diff", "--root", str(ws), "2026.11", "2026.12"]) == 0
    md = capsys.readouterr().out
    assert "### Declared out of scope" in md and "`aten::_to_sparse_csr`" in md and "sparse layouts" in md


def test_a_decision_cannot_contradict_the_version():
    draft = Draft.of("2027.01", [{"name": "aten::abs", "status": "active"}],
                     [{"op": "aten::erfc", "kind": "default"}],
                     [{"name": "aten::_to_sparse", "family": "sparse layouts", "reason": "r", "since": "2026.12",
                       "proposals": [5]}])

    def declare(op):
        return {"action": "declare-out-of-scope", "op": op, "family": "f", "rationale": "a reason long enough"}

    done, problems = apply_proposal(draft, 9, [declare("aten::abs"), declare("aten::erfc"), declare("aten::_to_sparse")],
                                    None)
    assert done == []
    assert [p.message for p in problems] == [
        "aten::abs is core in 2027.01; deprecate and remove it instead",
        "aten::erfc is decomposed by a default rule in 2027.01; add a remove-rule change for it before this one",
        "aten::_to_sparse is already out of scope in 2027.01",
    ]
    add = {"action": "add-op", "op": "aten::_to_sparse", "category": "other", "rationale": "a reason long enough"}
    assert [p.message for p in apply_proposal(draft, 9, [add], None)[1]] == [
        "aten::_to_sparse is out of scope in 2027.01 by proposal 0005"]
    done, problems = apply_proposal(draft, 9, [declare("aten::i0")], None)
    assert (done, problems) == (["declared aten::i0 out of scope"], [])
    assert draft.out_of_scope["aten::i0"] == {"name": "aten::i0", "family": "f", "reason": "a reason long enough",
                                              "since": "2027.01", "proposals": [9]}
