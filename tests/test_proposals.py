"""`opspec proposal check`: every schema error, malformed input and cross-file rule, each one line with its place."""
from __future__ import annotations

import re
import sys
import textwrap
from pathlib import Path

import pytest
from opspec_fixtures import process_proposal, write_workspace

import opspec.checks
from opspec.cli import main
from opspec.proposals import check as checking
from opspec.proposals.parse import parse_file

FINDING_RE = re.compile(r"^(?P<path>[^:]+):(?P<line>\d+):(?P<col>\d+): (?P<message>.+)$")


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    return write_workspace(tmp_path / "repo")


def run(ws: Path, *args: str, capsys) -> tuple[int, list[str], str]:
    code = main(["proposal", "--root", str(ws), *args])
    out, err = capsys.readouterr()
    return code, [line for line in out.splitlines() if line], err


def write(ws: Path, name: str, text: str) -> Path:
    path = ws / "proposals" / name
    path.write_text(text)
    return path


def findings_for(ws: Path, path: Path, use_torch: bool = False) -> list[tuple[int, str]]:
    result = checking.check(ws / "proposals", ws / "opset", files=[path], use_torch=use_torch)
    return [(f.mark.line, f.message) for f in result.findings]


def test_the_fixture_and_the_repository_are_clean(ws, capsys):
    assert run(ws, "check", capsys=capsys)[:2] == (0, [])
    assert main(["proposal", "check"]) == 0  # the repository's own proposals


SCHEMA_CASES = [
    # (replace this line, with this, expected line, message fragment)
    ("type: process", "type: add-ops", 6, "'add-ops' is not one of"),
    ("status: review", "status: pending", 7, "'pending' is not one of"),
    ("created: '2026-11-02'", "created: '2026-13-02'", 8, "does not match"),
    ("updated: '2026-11-03'", "updated: 20261103", 9, "is not of type 'string'"),
    ("id: 2", "id: two", 2, "is not of type 'integer'"),
    ("title: Process proposal number 2", "title: x", 3, "is too short (1 character, at least 5)"),
    ("changes: []", "changes: []\nreviewers: [a]", 11, "unknown key 'reviewers'"),
    ("changes: []", "changes: {}", 10, "is not of type 'array'"),
    ("  - Ada Lovelace", "  - Ada Lovelace\n  - Ada Lovelace", 4, "non-unique"),
    ("changes: []", "changes: []\ndiscussion: http://example.org/x", 11, "does not match"),
    ("changes: []", "changes: []\ntarget_version: 2026.12", 11, "2026.12"),
    ("changes: []", "changes: []\nrequires: [0]", 11, "less than the minimum"),
]


@pytest.mark.parametrize("old,new,line,fragment", SCHEMA_CASES)
def test_schema_errors_name_file_and_line(ws, capsys, old, new, line, fragment):
    text = process_proposal(2)
    assert old in text
    path = write(ws, "0002-second.md", text.replace(old, new))
    code, lines, _ = run(ws, "check", str(path), capsys=capsys)
    assert code == 1
    matches = [FINDING_RE.match(l) for l in lines]
    assert all(matches), lines
    hits = [m for m in matches if fragment in m["message"]]
    assert hits, lines
    assert hits[0]["path"].endswith("0002-second.md") and int(hits[0]["line"]) == line


def test_missing_required_keys(ws):
    text = process_proposal(2).replace("status: review\n", "").replace("authors:\n  - Ada Lovelace\n", "")
    path = write(ws, "0002-second.md", text)
    messages = [m for _, m in findings_for(ws, path)]
    assert any("'status' is a required property" in m for m in messages)
    assert any("'authors' is a required property" in m for m in messages)


CHANGE_CASES = [
    ("  - action: add-op\n    op: aten::abs\n    category: reduction\n", "'rationale' is a required property"),
    ("  - action: add-op\n    op: aten::abs\n    category: nonsense\n    rationale: a long enough rationale text\n", "'nonsense' is not one of"),
    ("  - action: grow-op\n    op: aten::abs\n", "'grow-op' is not one of"),
    ("  - action: deprecate-op\n    op: abs\n    rationale: a long enough rationale text\n", "does not match"),
    ("  - action: deprecate-op\n    op: aten::abs\n    rationale: a long enough rationale text\n    when: soon\n", "unknown key 'when'"),
    ("  - action: add-rule\n    rule:\n      op: aten::x\n", "is a required property"),
    ("  - op: aten::abs\n", "'action' is a required property"),
    ("  - action: change-testing\n    op: aten::abs\n    rationale: a long enough rationale text\n", "'testing' is a required property"),
    ("  - action: change-testing\n    op: aten::abs\n    testing:\n      dtype: [float32]\n    rationale: a long enough rationale text\n",
     "unknown key 'dtype'"),
]


@pytest.mark.parametrize("change,fragment", CHANGE_CASES)
def test_change_items_are_schema_checked(ws, change, fragment):
    text = process_proposal(2).replace("type: process", "type: add-op").replace("changes: []", "changes:\n" + change.rstrip("\n"))
    path = write(ws, "0002-second.md", text)
    found = findings_for(ws, path)
    assert any(fragment in m and line >= 11 for line, m in found), found


@pytest.mark.parametrize("text,line,fragment", [
    ("id: 2\n---\n", 1, "starts with a '---' line"),
    ("---\nid: 2\n", 1, "not closed"),
    ("---\nid: 2\ntitle: [unclosed\n---\n", 4, "invalid YAML"),
    ("---\nid: 2\nid: 3\n---\n", 3, "duplicate key 'id'"),
    ("---\n- a list\n---\n", 2, "must be a YAML mapping"),
    ("---\nid: 2\n\ttitle: tab\n---\n", 3, "invalid YAML"),
])
def test_malformed_front_matter(ws, capsys, text, line, fragment):
    path = write(ws, "0002-broken.md", text)
    code, lines, err = run(ws, "check", str(path), capsys=capsys)
    assert code == 1 and "Traceback" not in err
    hit = [l for l in lines if fragment in l]
    assert hit, lines
    assert hit[0].startswith(f"{checking.display_path(path)}:{line}:")


def test_not_utf8(ws):
    path = ws / "proposals" / "0002-bytes.md"
    path.write_bytes(b"---\nid: 2\ntitle: caf\xe9\n---\n")
    assert any("not valid UTF-8" in m and line == 3 for line, m in findings_for(ws, path))


def test_missing_section_points_at_the_body(ws, capsys):
    text = process_proposal(2).replace("## Alternatives\n", "## Alternative\n")
    path = write(ws, "0002-second.md", text)
    code, lines, _ = run(ws, "check", str(path), capsys=capsys)
    assert code == 1
    assert lines == [f"{checking.display_path(path)}:12:1: missing required section '## Alternatives'"]


def test_sections_inside_code_fences_do_not_count(ws):
    text = process_proposal(2).replace("## Summary\n", "```\n## Summary\n```\n")
    path = write(ws, "0002-second.md", text)
    assert any("'## Summary'" in m for _, m in findings_for(ws, path))


def test_duplicate_ids(ws, capsys):
    write(ws, "0002-first.md", process_proposal(2))
    write(ws, "0002-second.md", process_proposal(2))
    code, lines, _ = run(ws, "check", capsys=capsys)
    assert code == 1
    dupes = [l for l in lines if "duplicate id 2" in l]
    assert len(dupes) == 2 and all(":2:1:" in l for l in dupes)


def test_id_must_match_file_name(ws):
    path = write(ws, "0003-second.md", process_proposal(2))
    assert (2, "id 2 does not match the file name's number 0003") in findings_for(ws, path)


def test_bad_file_name(ws):
    path = write(ws, "2-Second.md", process_proposal(2))
    assert any("file name must be NNNN-slug.md" in m for _, m in findings_for(ws, path))


@pytest.mark.parametrize("status,extra,fragment", [
    ("accepted", "", "needs `resolution`"),
    ("accepted", "resolution: Accepted at the review.\n", "needs `target_version`"),
    ("implemented", "resolution: Accepted at the review.\ntarget_version: '2026.11'\n", "needs `released_in`"),
    ("superseded", "resolution: Accepted at the review.\ntarget_version: '2026.11'\nreleased_in: '2026.11'\n", "needs `superseded_by`"),
    ("review", "requires: [7]\n", "requires refers to proposal 7, which does not exist"),
    ("review", "replaces: [2]\n", "replaces refers to the proposal itself"),
    ("review", "released_in: '2026.11'\n", "only a release sets it"),
    ("review", "target_version: '2026.11'\n", "is released and immutable"),
    ("implemented", "resolution: Accepted at the review.\ntarget_version: '2030.01'\nreleased_in: '2030.01'\n", "not a version in versions.yaml"),
    ("review", "updated: '2026-10-01'\n", "is before created"),
])
def test_cross_field_rules(ws, status, extra, fragment):
    text = process_proposal(2, status)
    if "updated:" in extra:
        text = text.replace("updated: '2026-11-03'\n", "")
    path = write(ws, "0002-second.md", text.replace("changes: []", extra + "changes: []"))
    found = findings_for(ws, path)
    assert any(fragment in m for _, m in found), found


def test_process_proposals_carry_no_changes_and_others_need_one(ws):
    path = write(ws, "0002-second.md", process_proposal(2).replace("type: process", "type: add-op"))
    assert any("needs at least one change" in m for _, m in findings_for(ws, path))


def _add_op(op: str, action: str = "add-op", extra: str = "", type_: str = "add-op") -> str:
    change = f"  - action: {action}\n    op: {op}\n"
    if action == "add-op":
        change += "    category: indexing\n"
    change += "    rationale: A rationale that is long enough.\n" + extra
    return process_proposal(2).replace("type: process", f"type: {type_}").replace("changes: []", "changes:\n" + change.rstrip("\n"))


@pytest.mark.parametrize("text,fragment", [
    (_add_op("aten::abs"), "aten::abs is already core in 2026.11"),
    (_add_op("aten::no_such_op"), "torch has no operator aten::no_such_op"),
    (_add_op("aten::bucketize.Tensor", extra="    schema: aten::bucketize.Tensor(Tensor self) -> Tensor\n"), "schema does not match torch"),
    (_add_op("aten::bucketize.Tensor", "deprecate-op", type_="deprecate-op"), "is not a core op in 2026.11"),
    (_add_op("aten::abs", "remove-op", type_="remove-op"), "must be deprecated in an earlier version"),
    (_add_op("aten::abs", "change-schema", "    schema: aten::abs(Tensor self) -> Tensor\n", "schema-change"), "is unchanged"),
    (_add_op("aten::var_mean.correction", type_="add-op"), "decomposed by a default rule"),
    (_add_op("aten::abs", "remove-rule"), "has no rule in 2026.11"),
    (_add_op("aten::abs", "deprecate-op"), "does not belong in a add-op proposal"),
    (_add_op("aten::bucketize.Tensor", "change-testing", "    testing:\n      dtypes: [float32]\n", "testing-change"),
     "aten::bucketize.Tensor is not a core op in 2026.11"),
    (_add_op("aten::abs", "change-testing", "    testing: {}\n", "testing-change"), "testing hints of aten::abs are unchanged"),
    (_add_op("aten::abs", "change-testing", "    testing: {}\n", "schema-change"), "does not belong in a schema-change proposal"),
])
def test_changes_are_checked_against_the_opset_and_torch(ws, text, fragment):
    path = write(ws, "0002-second.md", text)
    found = findings_for(ws, path, use_torch=True)
    assert any(fragment in m for _, m in found), found
    assert all(line >= 11 for line, m in found if m.startswith("changes/"))


def test_valid_add_op_passes(ws):
    path = write(ws, "0002-second.md", _add_op("aten::bucketize.Tensor"))
    assert findings_for(ws, path, use_torch=True) == []


def test_valid_testing_change_passes(ws):
    path = write(ws, "0002-second.md", _add_op("aten::abs", "change-testing", "    testing:\n      dtypes: [float32, float64]\n",
                                              "testing-change"))
    assert findings_for(ws, path, use_torch=True) == []


def test_a_testing_change_starts_from_the_ops_current_hints(ws, capsys):
    code, out, err = run(ws, "new", "--type", "testing-change", "--title", "Draw bucketize differently",
                         "--op", "aten::bucketize.Tensor", capsys=capsys)
    assert code == 2 and "--op aten::bucketize.Tensor: not a core op in 2026.11" in err and not out
    assert not list((ws / "proposals").glob("0002-*"))  # nothing written
    code, out, err = run(ws, "new", "--type", "testing-change", "--title", "Draw abs differently", "--op", "aten::abs",
                         "--author", "Ada Lovelace", capsys=capsys)
    assert code == 0, err
    text = (ws / out[0]).read_text()
    assert "  - action: change-testing\n    op: aten::abs\n    testing: {}\n    rationale: TODO" in text


def test_decompose_op_without_checker_is_skipped_with_a_note(ws, monkeypatch):
    rule = textwrap.indent(textwrap.dedent("""\
        - action: add-rule
          rule:
            op: aten::linalg_vector_norm
            kind: default
            targets: [aten::abs, aten::sum.dim_IntList, aten::pow.Tensor_Scalar, aten::amax]
            formula: sum(abs(x)^p)^(1/p)
            rationale: Core reductions over a pointwise map.
            implementation: torch
            origin: opspec
        """), "  ")
    text = process_proposal(2).replace("type: process", "type: decompose-op").replace("changes: []", "changes:\n" + rule.rstrip("\n"))
    path = write(ws, "0002-second.md", text)
    # an installation whose decomposition checker cannot be imported
    monkeypatch.delattr(opspec.checks, "decomp_check", raising=False)
    monkeypatch.setitem(sys.modules, "opspec.checks.decomp_check", None)
    result = checking.check(ws / "proposals", ws / "opset", files=[path])
    assert result.findings == []
    assert any("decomposition check skipped" in n for n in result.notes)
    bad = text.replace("aten::amax]", "aten::amax, aten::linalg_norm]")
    write(ws, "0002-second.md", bad)
    result = checking.check(ws / "proposals", ws / "opset", files=[path])
    assert [f.message for f in result.findings] == ["changes/0: target aten::linalg_norm is not core in 2026.11"]


def test_usage_errors_exit_2_without_traceback(ws, capsys, tmp_path):
    code, _, err = run(ws, "check", str(tmp_path / "nope.md"), capsys=capsys)
    assert code == 2 and err.count("\n") == 1 and "no such file" in err
    assert main(["proposal", "--root", str(tmp_path / "empty"), "list"]) == 2


def test_parse_keeps_real_line_numbers(ws):
    path = write(ws, "0002-second.md", process_proposal(2))
    parsed = parse_file(path)
    assert parsed.mark("status").line == 7 and parsed.sections["Summary"] == 15


def test_list_filters_by_status(ws, capsys):
    write(ws, "0002-second.md", process_proposal(2))
    code, lines, _ = run(ws, "list", "--status", "review", capsys=capsys)
    assert code == 0 and len(lines) == 1 and lines[0].startswith("0002  review")


def test_a_new_proposal_takes_its_date_and_refuses_a_malformed_one(ws, capsys):
    before = sorted(p.name for p in (ws / "proposals").iterdir())
    assert main(["proposal", "--root", str(ws), "new", "--type", "process", "--title", "A process change",
                 "--date", "12/01/2026"]) == 2
    assert "--date '12/01/2026' is not YYYY-MM-DD" in capsys.readouterr().err
    assert sorted(p.name for p in (ws / "proposals").iterdir()) == before  # nothing written
    assert main(["proposal", "--root", str(ws), "new", "--type", "process", "--title", "A process change",
                 "--date", "2026-11-30", "--author", "Ada Lovelace"]) == 0
    written = ws / "proposals" / Path(capsys.readouterr().out.strip()).name
    assert "created: '2026-11-30'" in written.read_text() and "updated: '2026-11-30'" in written.read_text()
