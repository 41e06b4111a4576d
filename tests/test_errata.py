"""Errata for released versions: checked by `opspec validate`, shown by the site and `opspec show`, and the audit of
the sealed prose against torch."""
from __future__ import annotations

import dataclasses
import html
import json
import importlib.util
import re
import sys
from pathlib import Path

import pytest
from opspec_fixtures import on_tested_torch, reopen_newest, write_workspace

from opspec.cli import main
from opspec.reports.site import errata as site_errata
from opspec.reports.site.generate import generate
from opspec.spec import errata, load, manifests, resources, special_cases
from opspec.spec.workspace import Workspace

pytestmark = pytest.mark.usefixtures("warm_validate_parts")  # validate reuses the bundled opset's parts

ROOT = Path(__file__).resolve().parents[1]
FINDING = re.compile(r"^(?P<path>[^:]+):(?P<line>\d+):(?P<col>\d+): (?P<message>.+)$")
POW_WAS = "integer dtypes reject negative exponents"


def run_cli(capsys, *argv: str) -> tuple[int, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out + captured.err


def line_of(path: Path, needle: str) -> int:
    return next(number for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1) if needle in line)


def errata_findings(out: str, path: Path) -> list[re.Match]:
    return [m for m in map(FINDING.match, out.splitlines()) if m and Path(m["path"]) == path]


def test_the_repository_errata_hold_against_the_sealed_text_and_the_rows():
    found = errata.load_errata()
    assert found, "opset/errata.yaml holds the published errata"
    opsets = {info.version: load.load_opset(info.version) for info in load.load_versions()}
    assert errata.findings(found, opsets, special_cases.load_special_cases(), manifests.load_bundled()) == []


def test_pow_tensor_tensor_note_is_corrected_by_an_erratum_citing_its_integer_rows():
    [erratum] = [e for e in errata.load_errata() if e.name == "aten::pow.Tensor_Tensor" and e.was == POW_WAS]
    assert set(erratum.versions) == {"2026.11", "2026.12", "2027.01"} and erratum.was == POW_WAS
    cases = special_cases.load_special_cases()
    rows = [errata.find_cited(cases, ref, erratum.name) for ref in erratum.shown_by]
    assert rows and all(row is not None and row.klass == "integer" for row in rows)
    assert all(set(row.dtypes) <= {"int8", "int16", "int32", "int64", "uint8"} for row in rows)
    for version in erratum.versions:
        sealed = load.load_opset(version).ops_by_name[erratum.name].testing.notes
        shown = errata.corrected(sealed, [erratum])
        assert POW_WAS in sealed and POW_WAS not in shown and "without raising" in shown


def test_the_cited_integer_rows_hold_on_torch():
    """The correction is checked against torch through its rows, like every row."""
    pytest.importorskip("torch")
    from opspec.checks import special_cases as check

    [erratum] = [e for e in errata.load_errata() if e.name == "aten::pow.Tensor_Tensor" and e.was == POW_WAS]
    cases = special_cases.load_special_cases()
    cited = tuple(errata.find_cited(cases, ref, erratum.name) for ref in erratum.shown_by)
    result = check.run_cases({erratum.name: cited}, load.load_opset())
    assert result.findings == [] and result.checked >= 4  # one check per integer dtype of the row


@pytest.fixture
def opset_with_errata(opset_copy):
    return opset_copy, opset_copy / "errata.yaml"


@pytest.mark.parametrize("old, new, needle, message", [
    (f"was: {POW_WAS}", "was: integer dtypes refuse negative exponents", "integer dtypes refuse",
     "was is not in the testing.notes of opset 2026.11"),
    ("row: pointwise-binary.yaml#pow.Tensor_Tensor-integer-tensors-negative", "row: pointwise-binary.yaml#pow.Tensor_Tensor-integer-tensors-negative-typo",
     "#pow.Tensor_Tensor-integer-tensors-negative-typo", "no special-case row of it is pointwise-binary.yaml#pow.Tensor_Tensor-integer-tensors-negative-typo"),
    ("row: pointwise-binary.yaml#pow.Tensor_Tensor-integer-tensors-negative", "row: reduction.yaml#pow.Tensor_Tensor-integer-tensors-negative",
     "row: reduction.yaml#pow.Tensor_Tensor-integer-tensors-negative", "no special-case row of it is reduction.yaml#pow.Tensor_Tensor-integer-tensors-negative"),
    ("op: aten::pow.Tensor_Tensor", "op: aten::pow.Tensor_Tensr", "aten::pow.Tensor_Tensr",
     "opset 2026.11 has no core op aten::pow.Tensor_Tensr"),
    ("field: testing.notes\n    was: integer dtypes", "field: rationale\n    was: integer dtypes", f"was: {POW_WAS}",
     "was is not in the rationale of opset 2026.11"),
    ("- audit: the result has self's strides", "- audit: the result keeps self's strides", "audit: the result keeps",
     "the audit claim cited is not in now: \"the result keeps self's strides\""),
    ("lowering: fallback", "lowering: lowered", "lowering: lowered",
     "the inductor manifest does not place it lowered: it says fallback"),
    ("- backend: inductor\n        lowering: fallback", "- backend: inductr\n        lowering: fallback", "backend: inductr",
     "no lowering manifest for backend 'inductr' (known: aot_eager, eager, inductor"),
])
def test_a_wrong_erratum_is_refused_at_its_line(opset_with_errata, capsys, old, new, needle, message):
    opset, path = opset_with_errata
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new, 1))
    code, out = run_cli(capsys, "validate", "--no-torch", "--opset-dir", str(opset))
    assert code == 1
    hits = [h for h in errata_findings(out, path) if message in h["message"]]
    assert hits and all(int(h["line"]) == line_of(path, needle) for h in hits)
    assert "Traceback" not in out


def test_an_erratum_for_an_unknown_or_draft_version_is_refused(opset_with_errata, capsys):
    opset, path = opset_with_errata
    path.write_text(path.read_text().replace("versions: ['2026.11', '2026.12'", "versions: ['2026.11', '2026.10'", 1))
    code, out = run_cli(capsys, "validate", "--no-torch", "--opset-dir", str(opset))
    assert code == 1 and "unknown opset version 2026.10" in out
    path.write_text(path.read_text().replace("'2026.10'", "'2026.12'", 1))
    newest = reopen_newest(opset)
    # the newest release carries corrected text, so no erratum names it yet: name it in the first one
    path.write_text(path.read_text().replace("versions: ['2026.11', '2026.12', '2027.01'",
                                             f"versions: ['2026.11', '2026.12', '2027.01', '{newest}'", 1))
    code, out = run_cli(capsys, "validate", "--no-torch", "--opset-dir", str(opset))
    assert code == 1
    hits = [h for h in errata_findings(out, path) if f"opset {newest} is a draft" in h["message"]]
    lines = path.read_text().splitlines()
    # each at the versions line of an erratum that names the reopened version
    assert hits and all(lines[int(h["line"]) - 1].lstrip().startswith(("versions:", "- versions:"))
                        and newest in lines[int(h["line"]) - 1] for h in hits)


def test_bad_errata_yaml_is_one_line_with_its_place_and_exit_2(opset_with_errata, capsys):
    opset, path = opset_with_errata
    path.write_text(path.read_text() + "  - versions: [unclosed\n")
    code, out = run_cli(capsys, "validate", "--no-torch", "--opset-dir", str(opset))
    assert code == 2
    [hit] = errata_findings(out, path)
    assert "invalid YAML" in hit["message"] and int(hit["line"]) > 1
    assert "Traceback" not in out


def test_errata_schema_problems_point_at_the_key(opset_with_errata, capsys):
    opset, path = opset_with_errata
    path.write_text(path.read_text().replace("    published: '2026-11-26'\n", "    publishd: '2026-11-26'\n", 1))
    code, out = run_cli(capsys, "validate", "--no-torch", "--opset-dir", str(opset))
    assert code == 1
    hits = errata_findings(out, path)
    assert any("unknown key 'publishd'" in h["message"] and int(h["line"]) == line_of(path, "publishd") for h in hits)
    assert any("'published' is a required property" in h["message"] for h in hits)


def lowering_errata() -> list[tuple[errata.Erratum, errata.LoweringRef]]:
    return [(e, cited) for e in errata.load_errata() for cited in e.shown_by if isinstance(cited, errata.LoweringRef)]


def test_inductor_rationales_that_claim_a_lowering_are_corrected_by_its_manifest():
    """_cdist_forward and _pdist_forward were sealed saying Inductor lowers them; its manifest says fallback."""
    cited = {e.name: ref for e, ref in lowering_errata()}
    assert {"aten::_cdist_forward", "aten::_pdist_forward"} <= set(cited)
    for name in ("aten::_cdist_forward", "aten::_pdist_forward"):
        assert (cited[name].backend, cited[name].lowering) == ("inductor", "fallback")
        [erratum] = [e for e, _ in lowering_errata() if e.name == name]
        sealed = load.load_opset("2026.12").ops_by_name[name].rationale
        assert "lowers it" in sealed and "lowers it" not in errata.corrected(sealed, [erratum]).split(";", 1)[1]


def test_a_cited_lowering_is_what_the_committed_reports_saw_run():
    """The manifest a lowering erratum cites is measured from reports; each case of the op in them agrees."""
    for erratum, cited in lowering_errata():
        manifest = manifests.load_manifest(manifests.manifest_path(cited.backend))
        cases = [r for report in manifest.evidence
                 for r in json.loads((ROOT / report).read_text(encoding="utf-8"))["results"] if r["op"] == erratum.name]
        assert cases, f"{erratum.name}: no case of it in {manifest.evidence}"
        expected = {"fallback": {"fallback"}, "lowered": {"pass", "fail", "xfail"}, "unsupported": {"error", "xfail"}}
        assert {case["status"] for case in cases} <= expected[cited.lowering], erratum.name
        if cited.lowering == "fallback":
            assert {case["executed"] for case in cases} == {"pytorch"}


def test_show_prints_the_cited_manifest_under_a_lowering_erratum(capsys):
    code, out = run_cli(capsys, "show", "_cdist_forward", "--opset", "2027.01")
    assert code == 0
    why = next(line for line in out.splitlines() if "Inductor" in line and "ERRATUM" not in line)
    assert "lowers it directly" not in why and "registers a fallback" in why
    assert "shown by conformance/backends/inductor.yaml: fallback" in out
    code, out = run_cli(capsys, "show", "_cdist_forward", "--opset", "2027.01", "--format", "json")
    assert code == 0 and '"backend": "inductor"' in out and '"lowering": "fallback"' in out


def load_audit():
    spec = importlib.util.spec_from_file_location("audit_prose", ROOT / "tools" / "audit_prose.py")
    audit = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = audit  # dataclasses look their module up while the file runs
    spec.loader.exec_module(audit)
    return audit


@pytest.fixture
def audit_of_copy(monkeypatch):
    """The prose audit narrowed to the copy rule's testing notes: its claims (the sealed one and the corrected) and
    its erratum."""
    pytest.importorskip("torch")
    audit = load_audit()
    audit.CLAIMS = [c for c in audit.CLAIMS if c.entry == "aten::copy" and c.rule]
    assert {c.corrected for c in audit.CLAIMS} == {False, True}
    cited = tuple(e for e in errata.load_errata() if e.name == "aten::copy" and e.kind == "rule")
    monkeypatch.setattr(audit.errata_mod, "load_errata", lambda: cited)
    yield audit
    del sys.modules["audit_prose"]


def test_an_erratum_citing_the_audit_is_held_to_a_claim_that_runs_on_torch(audit_of_copy, capsys, monkeypatch):
    assert audit_of_copy.main(["--false-only", "--opset", "2027.01"]) == 0
    [corrected] = [c for c in audit_of_copy.CLAIMS if c.corrected]
    # the correction turns out false on this torch: the audit fails, naming it
    monkeypatch.setattr(audit_of_copy, "CLAIMS", [dataclasses.replace(c, holds=lambda: False) if c.corrected else c
                                                  for c in audit_of_copy.CLAIMS])
    assert audit_of_copy.main(["--false-only", "--opset", "2027.01"]) == 1
    assert "FALSE CORRECTION  rule aten::copy testing.notes: \"the result has self's strides\"" in capsys.readouterr().out
    # an erratum citing a claim the audit does not have
    renamed = [dataclasses.replace(e, shown_by=(errata.AuditRef("the result keeps its strides", e.mark),))
               for e in audit_of_copy.errata_mod.load_errata()]
    monkeypatch.setattr(audit_of_copy, "CLAIMS", [c for c in audit_of_copy.CLAIMS if not c.corrected] + [corrected])
    monkeypatch.setattr(audit_of_copy.errata_mod, "load_errata", lambda: tuple(renamed))
    assert audit_of_copy.main(["--false-only", "--opset", "2027.01"]) == 2
    assert "NO AUDIT CLAIM" in capsys.readouterr().err


def test_a_citation_that_is_neither_a_row_nor_a_manifest_says_why_each_form_does_not_fit(opset_with_errata, capsys):
    opset, path = opset_with_errata
    cited = "      - backend: inductor\n        lowering: fallback\n"
    path.write_text(path.read_text().replace(cited, cited + "        file: reduction.yaml\n", 1))
    code, out = run_cli(capsys, "validate", "--no-torch", "--opset-dir", str(opset))
    assert code == 1
    [hit] = errata_findings(out, path)
    assert int(hit["line"]) == line_of(path, "- backend: inductor")
    assert ("fits none of its forms (as a row: unknown keys 'backend', 'lowering', 'file'; as a claim: unknown keys "
            "'backend', 'lowering'; as a lowering: unknown key 'file'; as an audit: unknown keys 'backend', 'lowering', "
            "'file')") in hit["message"]


def test_show_prints_the_corrected_text_and_the_text_as_released(capsys):
    code, out = run_cli(capsys, "show", "pow.Tensor_Tensor", "--opset", "2027.01")
    assert code == 0
    notes = next(line for line in out.splitlines() if line.strip().startswith("test notes:"))
    assert POW_WAS not in notes and "without raising" in notes
    erratum_line = next(line for line in out.splitlines() if "ERRATUM" in line and POW_WAS in line)
    assert f'as released in 2027.01: "{POW_WAS}"' in erratum_line and "opset/errata.yaml:" in erratum_line
    assert "shown by opset/special_cases/pointwise-binary.yaml#pow.Tensor_Tensor-integer-tensors-negative" in out
    code, out = run_cli(capsys, "show", "pow.Tensor_Tensor", "--opset", "2027.01", "--format", "json")
    assert code == 0 and f'"was": "{POW_WAS}"' in out


def test_a_release_carries_the_corrected_text_of_the_version_it_starts_from(capsys):
    """2027.02 was released from 2027.01 with its errata applied: the corrected notes are its own, with no erratum."""
    code, out = run_cli(capsys, "show", "pow.Tensor_Tensor", "--opset", "2027.02")
    assert code == 0 and not [line for line in out.splitlines() if "ERRATUM" in line and POW_WAS in line]
    notes = next(line for line in out.splitlines() if line.strip().startswith("test notes:"))
    assert POW_WAS not in notes and "without raising" in notes


def test_a_version_released_again_with_the_mistake_must_be_named(opset_with_errata, capsys):
    opset, path = opset_with_errata
    newest = load.latest_version()
    core_ops = opset / newest / "core_ops.yaml"
    # as if the release had copied the sealed mistake: the finding names the erratum's versions line
    core_ops.write_text(core_ops.read_text().replace(
        "integer tensors to negative integer exponents give 0 (1 or -1 for bases 1 and -1) without raising "
        "(only pow.Tensor_Scalar refuses them)", POW_WAS, 1))
    index = opset / "versions.yaml"
    sealed = re.search(rf"version: '{re.escape(newest)}'.*?digest: (\S+)", index.read_text(), flags=re.S)[1]
    index.write_text(index.read_text().replace(sealed, load.version_digest(opset, newest)))  # sealed so, not edited
    code, out = run_cli(capsys, "validate", "--no-torch", "--opset-dir", str(opset))
    assert code == 1
    assert any(f"opset {newest} was released with was in its testing.notes too; name {newest} in versions" in h["message"]
               and int(h["line"]) == line_of(path, "versions: ['2026.11', '2026.12', '2027.01']")
               for h in errata_findings(out, path))


ROWS = """ops:
  aten::abs:
    - id: abs-signed-zero
      says: The absolute value of negative zero is positive zero.
      class: signed-zero
      inputs: {self: ['-0.0']}
      expect: ['+0.0']
"""
ERRATA = """errata:
  - versions: ['2026.11']
    op: aten::abs
    field: rationale
    was: is a building block
    now: is a building block whose sign handling is checked
    shown_by:
      - file: pointwise-unary.yaml
        says: The absolute value of negative zero is positive zero.
    published: '2026-11-26'
"""


def test_the_op_page_marks_the_erratum_strikes_the_sealed_text_and_links_the_row(tmp_path):
    root = write_workspace(tmp_path / "repo")
    (root / "opset" / "special_cases").mkdir()
    (root / "opset" / "special_cases" / "pointwise-unary.yaml").write_text(ROWS)
    (root / "opset" / "errata.yaml").write_text(ERRATA)
    generated = generate(Workspace(root), run_examples=False)
    assert generated.problems == []
    page = generated.pages["ops/aten-abs.md"]
    why = page.split("## Why it is core", 1)[1].split("##", 1)[0]
    anchor = site_errata.row_anchor("The absolute value of negative zero is positive zero.")
    assert "<ins>is a building block whose sign handling is checked</ins>" in why
    assert '<span class="opspec-erratum"><strong>Erratum</strong> (2026-11-26)' in why
    assert "<del>is a building block</del>" in why and "as released in 2026.11" in why
    assert f"(#{anchor})" in why and f'<a id="{anchor}"></a>' in page  # the link lands on the row
    assert '<a id="abs-signed-zero"></a>' in page and "<code>abs-signed-zero</code>" in page  # so does a citation by its id
    listing = html.unescape(generated.pages["errata.md"])
    assert "<del>is a building block</del>" in listing and f"ops/aten-abs.md#{anchor}" in listing
    # an op without errata shows its prose as sealed, unmarked
    assert "Erratum" not in generated.pages["ops/aten-mul.Tensor.md"]


def test_a_lowering_citation_links_the_op_pages_published_results(tmp_path):
    root = write_workspace(tmp_path / "repo")
    cited = "      - backend: inductor\n        lowering: fallback\n"
    (root / "opset" / "errata.yaml").write_text(ERRATA.split("      - file:")[0] + cited + "    published: '2026-11-26'\n")
    generated = generate(Workspace(root), run_examples=False)
    assert generated.problems == []
    page = generated.pages["ops/aten-abs.md"]
    why = page.split("## Why it is core", 1)[1].split("##", 1)[0]
    assert "[inductor's lowering manifest: fallback](#dtypes-and-devices)" in why
    assert "\n## Dtypes and devices\n" in page  # the heading whose id the link names
    assert "ops/aten-abs.md#dtypes-and-devices" in html.unescape(generated.pages["errata.md"])


def test_a_broken_errata_file_is_a_problem_of_the_site_build(tmp_path):
    root = write_workspace(tmp_path / "repo")
    (root / "opset" / "errata.yaml").write_text("errata: [unclosed\n")
    generated = generate(Workspace(root), run_examples=False)
    assert any("errata.yaml:" in problem and "invalid YAML" in problem for problem in generated.problems)


def test_corrected_prose_escapes_every_part():
    [erratum] = errata.load_errata(resources.opset_root())[:1]
    shown = site_errata.prose(f"a <b> [link](javascript:x) {erratum.was} * tail", [erratum], "2026.12", "")
    assert "<b>" not in shown and "&lt;b" in shown and "javascript:" not in shown
    assert f"<ins>{site_errata.sanitize.inline(erratum.now)}</ins>" in shown and "\\* tail" in shown


def test_the_audit_of_the_sealed_prose_leaves_no_false_claim_uncorrected():
    """tools/audit_prose.py runs every behavioural claim of the newest version against torch: each false one is
    corrected by an erratum or recorded as one no row can show, and every correction citing it holds."""
    pytest.importorskip("torch")
    if not on_tested_torch():
        pytest.skip("the audited claims are about the torch the newest opset version was validated against")
    try:
        assert load_audit().main(["--false-only"]) == 0
    finally:
        del sys.modules["audit_prose"]
