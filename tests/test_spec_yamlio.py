"""opspec.spec.yamlio: marks on every node, every way a file can be unusable, and a dump that round-trips."""
from __future__ import annotations

import pytest

from opspec.spec import yamlio
from opspec.spec.yamlio import DataError, Mark, MarkedDict, MarkedList

TEXT = """\
opset: '2026.11'
ops:
  - name: aten::abs
    since: 2026-11-21
    testing:
      dtypes: [float32, int64]
  - name: aten::neg
"""


def test_every_mapping_and_sequence_knows_its_place():
    data = yamlio.load_text(TEXT, "core_ops.yaml")
    assert isinstance(data, MarkedDict) and data.mark == Mark("core_ops.yaml", 1, 1)
    assert yamlio.mark_of(data, "ops") == Mark("core_ops.yaml", 2, 1)
    ops = data["ops"]
    assert isinstance(ops, MarkedList)
    assert [yamlio.mark_of(ops, i).line for i in range(len(ops))] == [3, 7]
    assert yamlio.mark_of(ops[0], "testing") == Mark("core_ops.yaml", 5, 5)
    assert yamlio.mark_of(ops[0]["testing"]["dtypes"], 1) == Mark("core_ops.yaml", 6, 25)


def test_mark_of_falls_back_to_the_node_then_the_default():
    data = yamlio.load_text(TEXT, "f.yaml")
    assert yamlio.mark_of(data, "no_such_key") == data.mark
    assert yamlio.mark_of(data["ops"], 99) == data["ops"].mark
    assert yamlio.mark_of("plain text") == Mark("<unknown>", 1, 1)
    assert yamlio.mark_of(None, "x", default=Mark("d.yaml", 4, 2)) == Mark("d.yaml", 4, 2)


def test_dates_stay_text():
    data = yamlio.load_text(TEXT, "f.yaml")
    assert data["ops"][0]["since"] == "2026-11-21"


@pytest.mark.parametrize("text, line, col, message", [
    ("a: 1\nb: 2\na: 3\n", 3, 1, "duplicate key 'a'"),
    ("ops:\n  - name: x\n    name: y\n", 3, 5, "duplicate key 'name'"),
    ("? [a, b]\n: 1\n", 1, 3, "mapping keys must be plain scalars"),
    ("a: [1, 2\nb: 3\n", 2, 2, "invalid YAML"),
    ("a: b: c\n", 1, 5, "invalid YAML: mapping values are not allowed"),
    ("a: *missing\n", 1, 4, "invalid YAML"),
    ("a: !!python/object:os.system ls\n", 1, 4, "invalid YAML"),
])
def test_malformed_yaml_is_one_error_with_its_place(text, line, col, message):
    with pytest.raises(DataError) as caught:
        yamlio.load_text(text, "bad.yaml")
    err = caught.value
    assert (err.mark.path, err.mark.line, err.mark.col) == ("bad.yaml", line, col)
    assert err.message.startswith(message)
    assert str(err) == f"bad.yaml:{line}:{col}: {err.message}" and "\n" not in str(err)


def test_unusable_files(tmp_path):
    with pytest.raises(DataError, match=r"missing\.yaml:1:1: cannot read file: No such file"):
        yamlio.load_file(tmp_path / "missing.yaml")
    empty = tmp_path / "empty.yaml"
    empty.write_text("# only a comment\n")
    with pytest.raises(DataError, match=r"empty\.yaml:1:1: file is empty"):
        yamlio.load_file(empty)
    latin = tmp_path / "latin.yaml"
    latin.write_bytes("a: 1\nb: caf\xe9\n".encode("latin-1"))
    with pytest.raises(DataError) as caught:
        yamlio.load_file(latin)
    assert (caught.value.mark.line, caught.value.mark.col) == (2, 7)
    assert caught.value.message == "file is not valid UTF-8 (byte 0xe9)"


def test_dump_round_trips_and_keeps_key_order():
    data = yamlio.load_text(TEXT, "f.yaml")
    text = yamlio.dump(data, header="# a header\n")
    assert text.startswith("# a header\nopset: '2026.11'\nops:\n  - name: aten::abs\n")
    assert yamlio.load_text(text, "again.yaml") == data
    assert yamlio.dump(yamlio.load_text(text, "again.yaml")) == text.removeprefix("# a header\n")


def test_dump_is_for_people():
    shared = ["float32"]
    text = yamlio.dump({"z": 1, "a": {"long": "x" * 200, "notes": "two\nlines\n", "one": shared, "two": shared}})
    assert text.index("z:") < text.index("a:")  # insertion order, not sorted
    assert "&" not in text and "*" not in text  # no anchors or aliases
    assert "  long: " + "x" * 200 + "\n" in text  # one line, never folded
    assert "notes: |\n" in text  # multi-line text is literal
    assert yamlio.load_text(text, "f.yaml")["a"]["notes"] == "two\nlines\n"


@pytest.mark.parametrize("text, line, col", [
    ("formula: out = #{j : b_j < x}\n", 1, 10),
    ("ops:\n  - says: a count # of rows\n", 2, 11),
    ("items:\n  - first\n  - a # b\n", 3, 5),
])
def test_in_spec_data_a_comment_that_cuts_a_plain_value_is_an_error(text, line, col):
    assert isinstance(yamlio.load_text(text, "prose.yaml"), dict)  # the YAML default: the tail is a comment
    with pytest.raises(DataError) as caught:
        yamlio.load_text(text, "prose.yaml", comments_after_values=False)
    assert (caught.value.mark.line, caught.value.mark.col) == (line, col)
    assert "starts a YAML comment" in caught.value.message and "\n" not in str(caught.value)


@pytest.mark.parametrize("text, value", [
    ("formula: 'out = #{j}'\n", {"formula": "out = #{j}"}),
    ("formula: out = a#b\n", {"formula": "out = a#b"}),
    ("notes: |\n  a # b\n", {"notes": "a # b\n"}),
    ("dtypes: [int8, int64]  # the narrow and the wide\n", {"dtypes": ["int8", "int64"]}),
    ("# a comment line\nop: aten::abs\n", {"op": "aten::abs"}),
])
def test_values_a_comment_cannot_cut_load_in_spec_data(text, value):
    assert yamlio.load_text(text, "prose.yaml", comments_after_values=False) == value
