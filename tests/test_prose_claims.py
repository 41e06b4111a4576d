"""Prose that states an edge behaviour cites the row that shows it; validate refuses it otherwise, at file:line."""
import shutil
from pathlib import Path

import pytest
import yaml

from opspec.checks import prose_claims
from opspec.spec.special_cases import load_special_cases

pytestmark = pytest.mark.usefixtures("warm_validate_parts")  # validate reuses the bundled opset's parts

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize(("sentence", "topic"), [
    # the false claims issue 46 found, as they were written
    ("An integer scalar is first wrapped into an integer tensor's dtype (int8 with 300 divides by 44).", "wrapping and overflow"),
    ("a value that overflows the dtype raises", "errors"),
    ("Its size along the last of dims must equal last_dim_size//2 + 1 (the kernel neither trims nor pads).",
     "shapes and arguments accepted"),
    ("A value outside the dtype's range raises, except that negative integers wrap for uint8.", "wrapping and overflow"),
    ("NaN propagates.", "special values"),
    ("The sign of -0.0 is kept.", "special values"),
    ("Ties go to the first index.", "ties"),
    ("Integer inputs are promoted to the default float dtype.", "dtype rules"),
    ("An int8 input gives an int64 result.", "dtype rules"),
    ("In float32, points 1 apart near 1e4 come out 0 apart.", "numbers at edges"),
    ("log1p of -1 gives -inf.", "special values"),
])
def test_a_sentence_stating_an_edge_behaviour_is_a_claim(sentence, topic):
    assert topic in prose_claims.topics(sentence)


@pytest.mark.parametrize("sentence", [
    "Absolute value of each element.",
    "Gradient of _adaptive_avg_pool2d with respect to its input.",
    "Each output gradient is divided by the size of its window and added to every input position of that window.",
    "Matrix product of two 2-D tensors.",
    "mode is 0 sum, 1 mean, 2 max.",
    "Strides follow self when self is dense, else they are contiguous.",
])
def test_a_summary_is_not_a_claim(sentence):
    assert prose_claims.topics(sentence) == []


def test_sentences_end_at_periods_but_not_inside_abbreviations_or_numbers():
    text = "Sums over dim, e.g. dim 0. A 1.5 scale stays 1.5! Why? keepdim keeps it."
    assert [s.text for s in prose_claims.sentences(text)] == [
        "Sums over dim, e.g. dim 0.", "A 1.5 scale stays 1.5!", "Why?", "keepdim keeps it."]


def test_a_claim_that_cites_a_row_passes_and_one_that_does_not_is_named():
    cited = lambda text: "#" in text  # noqa: E731 - the rule for what counts as a citation is tested below
    text = "Absolute value of each element. NaN stays NaN (#abs-nan). The smallest integer wraps around."
    assert [(s.text, topics) for s, topics in prose_claims.uncited(text, cited)] == [
        ("The smallest integer wraps around.", ["wrapping and overflow"])]


def _opset(tmp_path: Path) -> Path:
    root = tmp_path / "opset"
    shutil.copytree(ROOT / "opset", root)
    return root


def _describe(root: Path, op: str, description: str) -> int:
    """Gives ``op`` this description (single-quoted); the line it stands on."""
    path = root / "descriptions.yaml"
    lines = path.read_text().splitlines(keepends=True)
    at = lines.index(f"  {op}:\n") + 1
    assert lines[at].startswith("    description: ")
    lines[at] = "    description: '" + description.replace("'", "''") + "'\n"
    path.write_text("".join(lines))
    return at + 1


def test_validate_refuses_an_uncited_claim_at_its_line_and_a_citation_of_no_row(tmp_path):
    root = _opset(tmp_path)
    line = _describe(root, "aten::abs", "Absolute value of each element. NaN stays NaN. The smallest integer "
                                        "wraps around (#abs-integer). -0.0 gives +0.0 (#abs-no-such-row).")
    found = [str(f) for f in prose_claims.findings(root, load_special_cases(root))]
    where = f"{root / 'descriptions.yaml'}:{line}:5"
    assert f"{where}: aten::abs: description cites #abs-no-such-row, which names no special-case row" in found
    assert any(f.startswith(f"{where}: aten::abs: description states special values without citing") and "'NaN stays NaN.'" in f
               for f in found)
    assert not any("wraps around" in f for f in found)
    assert len(found) == 2  # the -0.0 sentence cites (a row that does not exist): one finding, for the citation


def test_a_listed_sentence_passes_until_it_is_fixed_then_its_listing_is_a_finding(tmp_path):
    root = _opset(tmp_path)
    op, sentence = "aten::abs", "NaN stays NaN."
    _describe(root, op, f"Absolute value of each element. {sentence}")
    (root / "uncited_prose.yaml").write_text(yaml.safe_dump({"ops": {op: [sentence]}}))
    assert prose_claims.findings(root, load_special_cases(root)) == []
    path = root / "descriptions.yaml"
    assert path.read_text().count(sentence) == 1
    path.write_text(path.read_text().replace(sentence, "A summary."))  # cut
    found = [str(f) for f in prose_claims.findings(root, load_special_cases(root))]
    assert len(found) == 1 and f"{op}: listed as uncited, but uncited_prose.yaml need not list it" in found[0]
    assert found[0].startswith(f"{root / 'uncited_prose.yaml'}:")
