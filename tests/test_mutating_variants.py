"""Functionalization checks: variant discovery, programs through views, verdicts, findings files."""
from __future__ import annotations

import json

import pytest
import torch
from test_conform import validate

from opspec.bridge import functional_variants
from opspec.cli import main
from opspec.conform import functionalization as fx
from opspec.spec import load
from opspec.spec.load import OpsetError
from opspec.testing.strategies import Call

# The findings in these tests are about writes through a diagonal view, which lower to
# diagonal_scatter: outside opset 2026.11, core from 2026.12 (proposal 0006).
FINDINGS_OPSET = "2026.11"


@pytest.fixture(scope="module")
def opset():
    return load.load_opset(FINDINGS_OPSET)


@pytest.fixture(scope="module")
def table(opset):
    return fx.lowering_table(opset)


def variant(name: str) -> functional_variants.Variant:
    functional = {"aten::add_.Tensor": "aten::add.Tensor", "aten::add.out": "aten::add.Tensor",
                  "aten::mul_.Tensor": "aten::mul.Tensor"}[name]
    return next(v for v in functional_variants.variants_of(functional) if v.name == name)


def add_call() -> Call:
    torch.manual_seed(0)
    return Call("aten::add.Tensor", (torch.randn(3, 4), torch.randn(3, 4)), {"alpha": 2})


def test_variants_are_found_by_signature():
    assert [(v.name, v.kind, v.outs) for v in functional_variants.variants_of("aten::add.Tensor")] == [
        ("aten::add_.Tensor", "inplace", ()), ("aten::add.out", "out", ("out",))]
    outs = {v.name: v.outs for v in functional_variants.variants_of("aten::max.dim")}
    assert outs == {"aten::max.dim_max": ("max", "max_values")}
    # tensor options are carried by the out tensor, so full's out form still matches
    assert [v.name for v in functional_variants.variants_of("aten::full")] == ["aten::full.out"]
    assert functional_variants.variants_of("aten::resize_") == []  # a mutating op has no variants


def test_every_core_op_with_variants_is_covered(opset):
    found = functional_variants.variants(op.name for op in opset.active_ops())
    assert len({v.functional for v in found}) > 150
    assert {"inplace", "out"} == {v.kind for v in found}


def _every_view_and_version() -> list:
    """Every view in the newest opset; in 2026.11 the diagonal one, whose write it cannot lower (the other views
    lower there as in the newest: `make sweep`)."""
    return [pytest.param(version, view, id=f"{label}-{view}",
                         marks=pytest.mark.sweep if label == "2026.11" and view != "diagonal" else ())
            for version, label in ((FINDINGS_OPSET, "2026.11"), (None, "newest")) for view in fx.VIEWS]


@pytest.mark.parametrize("target", fx.TARGETS)
@pytest.mark.parametrize("name", ["aten::add_.Tensor", "aten::add.out"])
@pytest.mark.parametrize("version, view", _every_view_and_version())
def test_add_variants_functionalize_through_every_view(version, name, target, view):
    opset = load.load_opset(version)
    table = fx.lowering_table(opset)
    mutation = fx.Mutation(variant(name), target, view)
    program = fx.build(mutation, add_call())
    assert program is not None
    verdict = fx.check(program, opset, table)
    if view == "diagonal" and "aten::diagonal_scatter" not in opset.core_names():
        assert verdict.status == "not-functional" and "aten::diagonal_scatter" in verdict.message
    else:
        assert verdict.status == "pass", verdict.message
        assert "aten::add.Tensor" in verdict.graph_ops and not any(op.endswith("_") for op in verdict.graph_ops)


def test_the_write_must_reach_the_base_outside_the_view(opset, table):
    program = fx.build(fx.Mutation(variant("aten::mul_.Tensor"), "input", "slice"),
                       Call("aten::mul.Tensor", (torch.ones(2, 3), torch.full((2, 3), 3.0))))
    base = program.fresh_inputs()[0]
    program.function(base, *program.fresh_inputs()[1:])
    assert base[1:3].eq(3).all() and base[0].eq(program.inputs[0][0]).all() and base[3].eq(program.inputs[0][3]).all()


def test_a_wrong_lowering_is_caught(opset, table):
    wrong = {**table, torch.ops.aten.add.Tensor: lambda x, y, alpha=1: torch.ops.aten.sub.Tensor(x, y, alpha=alpha)}
    program = fx.build(fx.Mutation(variant("aten::add_.Tensor"), "input", "select"), add_call())
    verdict = fx.check(program, opset, wrong)
    assert verdict.status == "fail" and "outputs" in verdict.message


def test_ops_outside_the_opset_are_not_functional(opset):
    program = fx.build(fx.Mutation(variant("aten::add_.Tensor"), "input", "direct"), add_call())
    smaller = opset.core_names() - {"aten::add.Tensor"}
    shrunk = type("Shrunk", (), {"core_names": lambda self: smaller, "version": "test"})()
    verdict = fx.check(program, shrunk, {})
    assert verdict.status == "not-functional" and "aten::add.Tensor" in verdict.message


def test_views_that_cannot_reach_the_output_are_not_built():
    scalar = Call("aten::add.Tensor", (torch.tensor(1.0), torch.tensor(2.0)), {})
    assert fx.build(fx.Mutation(variant("aten::add_.Tensor"), "input", "transpose"), scalar) is None
    assert fx.build(fx.Mutation(variant("aten::add_.Tensor"), "input", "direct"), scalar) is not None


def test_a_broadcast_self_is_materialized_for_in_place():
    call = Call("aten::add.Tensor", (torch.randn(4), torch.randn(3, 4)), {})
    program = fx.build(fx.Mutation(variant("aten::add_.Tensor"), "input", "direct"), call)
    assert program is not None and program.inputs[0].shape == (3, 4)


FINDINGS = f"""\
opset: '2026.11'
measured_with: torch {torch.__version__}
findings:
  - variants: [aten::add_.Tensor]
    programs: ['*/diagonal']
    status: not-functional
    reason: diagonal_scatter is outside the opset
  - variants: [aten::no_such_op_]
    reason: matches nothing at all here
"""


def read(tmp_path, text: str, opset):
    path = tmp_path / "functionalization.yaml"
    path.write_text(text)
    variants = functional_variants.variants(op.name for op in opset.active_ops())
    return fx.read_findings(path, variants, opset)


def test_findings_cover_programs_and_warn_about_unknown_variants(tmp_path, opset):
    findings = read(tmp_path, FINDINGS, opset)
    assert findings.warnings == (f"{tmp_path / 'functionalization.yaml'}:8:5: finding 'aten::no_such_op_' matches "
                                 f"no in-place or out variant of opset 2026.11",)
    diagonal = fx.Mutation(variant("aten::add_.Tensor"), "input", "diagonal")
    finding = findings.lookup(diagonal)
    assert finding is not None and finding.where.endswith(":4")
    assert findings.lookup(fx.Mutation(variant("aten::add_.Tensor"), "input", "slice")) is None
    assert fx.judge("not-functional", finding) == ("xfail", "")
    assert fx.judge("pass", finding)[0] == "xpass"
    status, note = fx.judge("fail", finding)
    assert status == "fail" and "expects not-functional" in note
    lenient = fx.Finding(("aten::add_.Tensor",), ("*/expand",), "fails for non-finite values", "fail",
                                  strict=False)
    assert fx.judge("pass", lenient) == ("pass", "")
    assert fx.judge("fail", lenient) == ("xfail", "")


@pytest.mark.parametrize("text, message", [
    ("opset: '2026.11'\nfindings: [\n", "functionalization.yaml:"),
    (f"opset: '2026.11'\nmeasured_with: torch {torch.__version__}\nfindings:\n  - variants: [x]\n", "reason"),
])
def test_unusable_findings_files_name_file_and_line(tmp_path, opset, text, message):
    with pytest.raises(OpsetError) as err:
        read(tmp_path, text, opset)
    assert message in str(err.value.findings[0])


def test_cli_usage_errors_are_one_line(tmp_path, capsys):
    report = tmp_path / "report.json"
    findings = tmp_path / "x.yaml"
    findings.write_text("findings: []\n")
    assert main(["conform", "--backend", "eager", "--report", str(report), "--findings", str(findings)]) == 2
    assert "--findings needs --functionalization" in capsys.readouterr().err
    assert main(["conform", "--backend", "eager", "--functionalization", "--report", str(report),
                 "--findings", str(tmp_path / "missing.yaml")]) == 2
    assert "missing.yaml: no such file" in capsys.readouterr().err  # checked with every path, before work starts
    bad = tmp_path / "bad.yaml"
    bad.write_text("findings: 3\n")
    assert main(["conform", "--backend", "eager", "--functionalization", "--report", str(report),
                 "--findings", str(bad)]) == 2
    assert not report.exists() and not list(tmp_path.glob("report.json*"))  # refused before any case ran
    err = capsys.readouterr().err
    lines = err.strip().splitlines()
    assert lines and "Traceback" not in err
    assert all("bad.yaml:" in line for line in lines)  # one line per finding, each naming file and line


def test_section_in_the_report_and_resume_rejudges(tmp_path, capsys):
    findings = tmp_path / "findings.yaml"
    findings.write_text(f"opset: '2026.11'\nmeasured_with: torch {torch.__version__}\nfindings:\n"
                        "  - variants: [aten::abs_, aten::abs.out]\n    programs: ['*/diagonal']\n"
                        "    status: not-functional\n    reason: diagonal_scatter is outside the opset\n")
    out = tmp_path / "report.json"
    args = ["conform", "--backend", "eager", "--opset", FINDINGS_OPSET, "--ops", "aten::abs", "--report", str(out),
            "--max-examples", "1",
            "--max-compiles", "1", "--functionalization", "--findings", str(findings)]
    assert main(args) == 0, capsys.readouterr().out
    report = json.loads(out.read_text())
    validate(report)
    section = report["functionalization"]
    assert section["summary"]["variants"] == 2 and section["summary"]["programs"] == 24
    assert {(r["view"], r["status"]) for r in section["results"] if r["view"] == "diagonal"} == {("diagonal", "xfail")}
    assert all(r["status"] in ("pass", "skip") for r in section["results"] if r["view"] != "diagonal")
    # without the finding the same programs are unexpected: judged again from the recorded outcome, not rerun
    findings.write_text(f"opset: '2026.11'\nmeasured_with: torch {torch.__version__}\nfindings: []\n")
    capsys.readouterr()
    assert main([*args, "--resume", str(out)]) == 1
    text = capsys.readouterr().out
    assert "(recorded)" in text and "(ran)" not in text
    assert "abs_/input/diagonal: not-functional" in text
