"""The changelog between two versions: every kind of change, each with its proposals."""
from __future__ import annotations

from opspec_fixtures import TESTED_TORCH

from opspec.reports import changelog
from opspec.spec.model import CoreOp, DecompositionRule, Opset, VersionInfo


def op(name, status="active", schema=None, proposals=(1,), **extra):
    return CoreOp(name=name, schema=schema or f"{name}(Tensor self) -> Tensor", category="misc", status=status,
                  since="2026.11", rationale="r" * 20, proposals=tuple(proposals), **extra)


def rule(name, formula="f(x)", proposals=(1,), targets=("aten::a",)):
    return DecompositionRule(op=name, kind="default", targets=targets, formula=formula, rationale="r" * 20,
                             implementation="torch", origin="opspec", proposals=tuple(proposals))


def opset(version, ops, rules=()):
    return Opset(version, VersionInfo(version, "released", TESTED_TORCH), tuple(ops), tuple(rules))


OLD = opset("2026.11", [op("aten::a"), op("aten::b"), op("aten::c"), op("aten::d", "deprecated", deprecated="2026.11"),
                        op("aten::gone")],
            [rule("aten::r1"), rule("aten::r2"), rule("aten::r3")])
NEW = opset("2026.12", [op("aten::a"), op("aten::b", "deprecated", proposals=(1, 7), deprecated="2026.12"),
                        op("aten::c", schema="aten::c(Tensor self, int k) -> Tensor", proposals=(1, 8)),
                        op("aten::d", "removed", proposals=(1, 9), deprecated="2026.11", removed="2026.12"),
                        op("aten::e", proposals=(6,))],
            [rule("aten::r1"), rule("aten::r2", formula="g(x)", proposals=(1, 10)), rule("aten::r4", proposals=(11,))])


def test_every_kind_of_change():
    log = changelog.diff(OLD, NEW, {("rule-removed", "aten::r3"): (12,)})
    found = {(c.kind, c.op): c.proposals for c in log.changes}
    assert found == {
        ("added", "aten::e"): (6,),
        ("deprecated", "aten::b"): (7,),
        ("schema-changed", "aten::c"): (8,),
        ("removed", "aten::d"): (9,),
        ("removed", "aten::gone"): (),
        ("rule-changed", "aten::r2"): (10,),
        ("rule-added", "aten::r4"): (11,),
        ("rule-removed", "aten::r3"): (12,),
    }


def test_markdown_links_proposals_and_ops():
    log = changelog.diff(OLD, NEW)
    md = changelog.to_markdown(log, link=lambda n: f"p/{n}.md", op_link=lambda name: f"o/{name}.md")
    assert md.startswith("## 2026.12 (changes since 2026.11)")
    assert "- [`aten::e`](o/aten::e.md): misc ([proposal 0006](p/6.md))" in md
    for heading in ("Added ops", "Deprecated ops", "Removed ops", "Schema changes", "Decomposition rules changed",
                    "Decomposition rules added", "Decomposition rules removed"):
        assert f"### {heading}" in md


def test_no_changes_and_first_version():
    assert "No changes." in changelog.to_markdown(changelog.diff(OLD, OLD))
    first = changelog.diff(None, OLD)
    assert first.old is None and len(first.of_kind("added")) == 5
    assert changelog.to_json(first)["from"] is None


def test_process_proposals_released_in_a_version_are_listed():
    from types import SimpleNamespace

    proposals = [SimpleNamespace(id=5, title="Export with the opset's table", released_in="2026.12", changes=()),
                 SimpleNamespace(id=3, title="Add shifts", released_in="2026.12", changes=({"action": "add-op"},)),
                 SimpleNamespace(id=1, title="Founding review", released_in="2026.11", changes=())]
    decisions = changelog.decisions_from(proposals, "2026.12")
    assert decisions == [(5, "Export with the opset's table")]
    log = changelog.diff(OLD, OLD, decisions=decisions)
    md = changelog.to_markdown(log, link=lambda n: f"p/{n}.md")
    assert "### Process decisions (no data change)\n\n- [proposal 0005](p/5.md): Export with the opset's table" in md
    assert "No changes." not in md
    assert changelog.to_json(log)["decisions"] == [{"proposal": 5, "title": "Export with the opset's table"}]


def test_text_a_release_took_from_the_errata_is_listed_as_corrected_not_as_a_change():
    from opspec.spec import errata, load

    log = changelog.diff(load.load_opset("2027.01"), load.load_opset("2027.02"), errata=errata.load_errata())
    corrected = {c.op: c.detail for c in log.of_kind("corrected")}
    assert corrected["aten::pow.Tensor_Tensor"].startswith("testing.notes (opset/errata.yaml:")
    assert corrected["aten::addcmul"].startswith("rule: formula (opset/errata.yaml:")
    assert not log.of_kind("testing-changed") and not log.of_kind("rule-changed")
    assert [c.op for c in log.of_kind("rule-added")] == ["aten::nonzero_static"]
    # without the errata the same edits read as changes of the hints
    assert "aten::pow.Tensor_Tensor" in {c.op for c in changelog.diff(load.load_opset("2027.01"),
                                                                      load.load_opset("2027.02")).of_kind("testing-changed")}
