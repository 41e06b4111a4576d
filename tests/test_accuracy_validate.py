"""`opspec validate` holds the accuracy contracts: a malformed one or a missing one is a finding at its file:line."""
from __future__ import annotations

import re

from opspec.cli import main


def validate_lines(opset_dir, capsys) -> tuple[int, list[str]]:
    code = main(["validate", "--opset-dir", str(opset_dir), "--no-torch", "--no-cache"])
    return code, [line for line in capsys.readouterr().out.splitlines() if "accuracy.yaml:" in line]


def test_a_negative_bound_is_refused_at_its_line(opset_copy, capsys):
    path = opset_copy / "accuracy.yaml"
    lines = path.read_text().splitlines(keepends=True)
    at = next(n for n, line in enumerate(lines) if line.strip() == "max_ulp: 1")
    lines[at] = lines[at].replace("max_ulp: 1", "max_ulp: -1")
    path.write_text("".join(lines))
    code, found = validate_lines(opset_copy, capsys)
    assert code == 1
    assert [re.match(r".*accuracy\.yaml:(\d+):\d+: .*max_ulp: -1 is less than the minimum of 0", line) is not None
            and int(re.match(r".*accuracy\.yaml:(\d+)", line).group(1)) == at + 1 for line in found] == [True]


def test_an_op_without_its_contract_is_named(opset_copy, capsys):
    path = opset_copy / "accuracy.yaml"
    text = path.read_text()
    start = text.index("  aten::exp:\n")
    end = text.index("\n  aten::", start + 1) + 1
    path.write_text(text[:start] + text[end:])
    code, found = validate_lines(opset_copy, capsys)
    assert code == 1
    assert any("aten::exp: no accuracy contract" in line and "opspec accuracy --ops aten::exp" in line for line in found)
