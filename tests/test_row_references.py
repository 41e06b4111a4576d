"""Committed files cite special-case rows by id (``FILE#id``), and every citation names a row that exists.

Rows used to be cited by line, which moved whenever a row was inserted above; a line
citation in a committed file is now a finding of its own.
"""
import re
import subprocess
from pathlib import Path

import pytest
import yaml

from opspec.spec import row_refs, special_cases
from opspec.spec.special_cases import load_special_cases

ROOT = Path(__file__).resolve().parents[1]
EXPECTATIONS = sorted((ROOT / "conformance" / "expectations").glob("*.yaml"))
ROW_FILES = {path.name for path in special_cases.data_files(ROOT / "opset")}
# written by the machinery's own tests to show how old reports read, not citations of the opset's rows
OLD_FORM_ON_PURPOSE = {"tests/test_row_references.py"}
BY_LINE = re.compile("(?:" + "|".join(re.escape(name) for name in sorted(ROW_FILES)) + r"):\d+\b")
BY_ID = re.compile("(" + "|".join(re.escape(name) for name in sorted(ROW_FILES)) + ")#(" + row_refs.ID + ")")


@pytest.fixture(scope="module")
def rows():
    return load_special_cases()


def _tracked() -> list[str]:
    listed = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True)
    if listed.returncode != 0:
        pytest.skip("not a git checkout")
    return [name for name in listed.stdout.split() if Path(name).suffix in (".md", ".json", ".yaml", ".py", ".j2", ".txt")]


def test_no_committed_file_names_a_row_by_line():
    found = []
    for name in _tracked():
        path = ROOT / name
        if name in OLD_FORM_ON_PURPOSE or not path.is_file():
            continue
        text = path.read_text(errors="replace")
        found += [f"{name}:{text.count(chr(10), 0, m.start()) + 1}: {m.group(0)}" for m in BY_LINE.finditer(text)]
    assert not found, f"{len(found)} citation(s) of a row by line (cite FILE#id): {found[:5]}"


def test_committed_reports_cite_rows_that_exist(rows):
    ids = {(row.file, row.id) for found in rows.values() for row in found}
    missing = set()
    for name in _tracked():
        if not name.startswith(("conformance/results/", "benchmarks/")) or not (ROOT / name).is_file():
            continue
        for match in BY_ID.finditer((ROOT / name).read_text()):
            if (match[1], match[2]) not in ids:
                missing.add(f"{name}: {match[1]}#{match[2]}")
    assert not missing, sorted(missing)[:10]


@pytest.mark.parametrize("path", EXPECTATIONS, ids=[p.stem for p in EXPECTATIONS])
def test_expectation_reasons_cite_rows_of_their_op(path, rows):
    stale = []
    for entry in (yaml.safe_load(path.read_text()) or {}).get("expectations", []):
        op = entry["op"]
        for ref in row_refs.refs_in(entry.get("reason", ""), ROW_FILES):
            row = row_refs.resolve(rows, ref, op)
            if row is None or (row.op != op and "*" not in op):
                stale.append(f"{op}: {ref}")
    assert not stale, f"{path.name} cites no row of the op: {stale}"


def test_a_citation_reads_in_its_three_spellings(rows):
    text = ("fails (pointwise-unary.yaml#abs-nan, #abs-infinity) and "
            "opset/special_cases/pointwise-unary.yaml#abs-signed-zero; a link README.md#errata is not one")
    found = [row_refs.resolve(rows, ref, "aten::abs") for ref in row_refs.refs_in(text, ROW_FILES)]
    assert [row.id for row in found] == ["abs-nan", "abs-infinity", "abs-signed-zero"]
    assert row_refs.split("opset/special_cases/pointwise-unary.yaml#abs-nan") == ("pointwise-unary.yaml", "abs-nan")
    assert row_refs.split("opset/special_cases/pointwise-unary.yaml:3") is None
    assert re.fullmatch(row_refs.BY_LINE, "pointwise-unary.yaml:3")


def test_a_file_whose_rows_lack_an_id_or_repeat_one_is_refused_at_the_row(tmp_path):
    path = tmp_path / "rows.yaml"
    row = "      class: nan\n      inputs: {self: [nan]}\n      expect: [0.0]\n"
    path.write_text("ops:\n  aten::sign:\n    - id: sign-nan\n      says: The sign of NaN is 0, not NaN.\n" + row
                    + "    - id: sign-nan\n      says: The sign of NaN is 0 again.\n" + row
                    + "    - says: The sign of NaN is 0 a third time.\n" + row)
    _, findings = special_cases.read_file(path)
    messages = [f"{f.mark.line}: {f.message}" for f in findings]
    assert any(m.startswith("8: aten::sign: id 'sign-nan' is already the id of the row at line 3") for m in messages), messages
    assert any(m.startswith("13: ") and "'id' is a required property" in m for m in messages), messages
