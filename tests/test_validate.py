"""`opspec validate` on the real opset and on copies broken in the ways people break files."""
from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
from opspec_fixtures import on_tested_torch, reopen_newest

from opspec.cli import main
from opspec.spec import load, resources

pytestmark = pytest.mark.usefixtures("warm_validate_parts")  # validate reuses the bundled opset's parts

VERSION = [info.version for info in load.load_versions(resources.opset_root())][-1]  # the newest


@pytest.fixture
def opset_copy(opset_copy):
    """The bundled opset, copied, with its newest version reopened as a draft that tests may break."""
    reopen_newest(opset_copy)
    return opset_copy
FINDING = re.compile(r"^(?P<path>[^:]+):(?P<line>\d+):(?P<col>\d+): (?P<message>.+)$")


def run_cli(capsys, *argv: str) -> tuple[int, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out + captured.err


def findings_for(output: str, path: Path) -> list[re.Match]:
    matches = [FINDING.match(line) for line in output.splitlines()]
    return [m for m in matches if m and Path(m["path"]) == path]


def line_of(path: Path, needle: str) -> int:
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if needle in line:
            return number
    raise AssertionError(f"{needle!r} not in {path}")


def test_repository_opset_is_clean(first_validate):
    """The session's first `opspec validate`, from an empty cache (every check ran): no finding, every version."""
    assert first_validate["returncode"] == 0, first_validate["output"]
    versions = ", ".join(info.version for info in load.load_versions(resources.opset_root()))
    assert f"0 finding(s) in {resources.opset_root()} (versions: {versions}; " in first_validate["output"]


def test_opset_holds_exactly_the_core_tagged_overloads():
    """2026.11 is torch 2.13's core tag as it stood; later versions add ops by proposal."""
    from opspec.bridge import torch_ops

    opset = load.load_opset("2026.11")
    assert len(opset.ops) == 193
    if on_tested_torch():
        assert {op.name for op in opset.ops} == set(torch_ops.core_tagged())


def test_at_least_sixty_rules_with_declared_targets():
    opset = load.load_opset(VERSION)
    assert len(opset.rules) >= 60
    assert all(rule.targets and rule.formula and rule.rationale for rule in opset.rules)


def test_altered_schema_string(opset_copy, capsys):
    ops = opset_copy / VERSION / "core_ops.yaml"
    text = ops.read_text()
    ops.write_text(text.replace("schema: aten::abs(Tensor self) -> Tensor", "schema: aten::abs(Tensor self, int extra) -> Tensor"))
    code, out = run_cli(capsys, "validate", "--opset-dir", str(opset_copy))
    assert code == 1
    hits = findings_for(out, ops)
    [hit] = [h for h in hits if "schema differs from torch" in h["message"]]
    assert int(hit["line"]) == line_of(ops, "aten::abs(Tensor self, int extra)")
    assert "aten::abs(Tensor self) -> Tensor" in hit["message"]
    # the compatibility policy names the same edit: a required argument added since the version before
    [policy] = [h for h in hits if h is not hit]
    assert "add-required-argument" in policy["message"] and "schema-compatibility" in policy["message"]


def test_unknown_key(opset_copy, capsys):
    rules = opset_copy / VERSION / "decompositions.yaml"
    text = rules.read_text()
    first_formula = text.index("    formula:")
    rules.write_text(text[:first_formula] + "    formulla: typo\n" + text[first_formula:])
    code, out = run_cli(capsys, "validate", "--opset-dir", str(opset_copy))
    assert code == 1
    [hit] = findings_for(out, rules)
    assert int(hit["line"]) == line_of(rules, "formulla: typo")
    assert "unknown key 'formulla'" in hit["message"]


def test_duplicate_op(opset_copy, capsys):
    ops = opset_copy / VERSION / "core_ops.yaml"
    lines = ops.read_text().splitlines(keepends=True)
    start = next(i for i, line in enumerate(lines) if line.startswith("  - name: aten::abs\n"))
    end = next(i for i in range(start + 1, len(lines)) if lines[i].startswith("  - name:"))
    ops.write_text("".join(lines[:end] + lines[start:end] + lines[end:]))
    code, out = run_cli(capsys, "validate", "--opset-dir", str(opset_copy))
    assert code == 1
    hits = [h for h in findings_for(out, ops) if "duplicate op aten::abs" in h["message"]]
    assert len(hits) == 1 and int(hits[0]["line"]) == end + 1


def test_truncated_file(opset_copy, capsys):
    ops = opset_copy / VERSION / "core_ops.yaml"
    raw = ops.read_bytes()
    ops.write_bytes(raw[: len(raw) // 2] + b"\n  - name: [unclosed\n")
    code, out = run_cli(capsys, "validate", "--opset-dir", str(opset_copy))
    assert code == 2
    [hit] = findings_for(out, ops)
    assert "invalid YAML" in hit["message"] and int(hit["line"]) > 1


def test_empty_file(opset_copy, capsys):
    rules = opset_copy / VERSION / "decompositions.yaml"
    rules.write_text("")
    code, out = run_cli(capsys, "validate", "--opset-dir", str(opset_copy))
    assert code == 2
    [hit] = findings_for(out, rules)
    assert hit["line"] == "1" and "file is empty" in hit["message"]


def test_non_utf8_file(opset_copy, capsys):
    ops = opset_copy / VERSION / "core_ops.yaml"
    raw = ops.read_bytes()
    at = raw.index(b"rationale:", 2000)
    ops.write_bytes(raw[:at] + b"rationale: caf\xe9 \xff\n    " + raw[at:])
    code, out = run_cli(capsys, "validate", "--opset-dir", str(opset_copy))
    assert code == 2
    [hit] = findings_for(out, ops)
    assert "not valid UTF-8" in hit["message"]
    assert int(hit["line"]) == raw[:at].count(b"\n") + 1


def test_unknown_op_gets_a_suggestion(opset_copy, capsys):
    rules = opset_copy / VERSION / "decompositions.yaml"
    text = rules.read_text()
    rules.write_text(text.replace("aten::mul.Tensor", "aten::mull.Tensor", 1))
    code, out = run_cli(capsys, "validate", "--opset-dir", str(opset_copy))
    assert code == 1
    assert any("did you mean aten::mul.Tensor?" in h["message"] for h in findings_for(out, rules))


def test_non_core_target_breaks_closure(opset_copy, capsys):
    rules = opset_copy / VERSION / "decompositions.yaml"
    text = rules.read_text()
    rules.write_text(text.replace("aten::mul.Tensor", "aten::addcmul", 1))
    code, out = run_cli(capsys, "validate", "--opset-dir", str(opset_copy))
    assert code == 1
    assert any("is not a core op of this version (closure)" in h["message"] for h in findings_for(out, rules))


def test_functional_only_rule_needs_an_exception(opset_copy, capsys):
    ops = opset_copy / VERSION / "core_ops.yaml"
    text = ops.read_text()
    start = text.index("  - name: aten::resize_\n")
    block_end = text.index("  - name:", start + 10)
    block = text[start:block_end]
    exc_start = block.index("    exceptions:")
    exc_end = block.index("    testing:") if "    testing:" in block else len(block)
    ops.write_text(text[:start] + block[:exc_start] + block[exc_end:] + text[block_end:])
    code, out = run_cli(capsys, "validate", "--opset-dir", str(opset_copy))
    assert code == 1
    assert any("aten::resize_ is an in-place or out= variant" in h["message"] for h in findings_for(out, ops))


def test_released_version_is_immutable(opset_copy, capsys):
    index = opset_copy / "versions.yaml"
    digest = load.version_digest(opset_copy, VERSION)
    index.write_text(index.read_text().replace("status: draft", f"status: released\n    released: '2026-11-21'\n    digest: {digest}"))
    assert run_cli(capsys, "validate", "--opset-dir", str(opset_copy), "--no-torch")[0] == 0
    ops = opset_copy / VERSION / "core_ops.yaml"
    ops.write_text(ops.read_text().replace("category: reduction", "category: misc", 1))
    code, out = run_cli(capsys, "validate", "--opset-dir", str(opset_copy), "--no-torch")
    assert code == 1
    assert any("has changed since its release" in h["message"] for h in findings_for(out, index))


def test_a_broken_seal_names_the_changed_file_and_line_from_git_history(opset_copy, capsys):
    def git(*args):
        subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@example.com", *args], cwd=opset_copy,
                       check=True, capture_output=True)

    index = opset_copy / "versions.yaml"
    digest = load.version_digest(opset_copy, VERSION)
    index.write_text(index.read_text().replace("status: draft", f"status: released\n    released: '2026-11-21'\n    digest: {digest}"))
    git("init", "-q")
    git("add", ".")
    git("commit", "-q", "-m", "release")
    ops = opset_copy / VERSION / "core_ops.yaml"
    lines = ops.read_text().splitlines(keepends=True)
    changed = next(i for i, line in enumerate(lines) if "category: reduction" in line)
    lines[changed] = lines[changed].replace("category: reduction", "category: misc")
    ops.write_text("".join(lines))
    code, out = run_cli(capsys, "validate", "--opset-dir", str(opset_copy), "--no-torch")
    assert code == 1
    assert any(f"core_ops.yaml (from line {changed + 1})" in h["message"] for h in findings_for(out, index))
    at_file = findings_for(out, ops)
    assert any(int(h["line"]) == changed + 1 and "differs from the release" in h["message"] for h in at_file), out


def test_not_an_opset_folder(tmp_path, capsys):
    code, out = run_cli(capsys, "validate", "--opset-dir", str(tmp_path))
    assert code == 2 and "not an opset folder" in out


def test_bad_data_never_shows_a_traceback(opset_copy):
    (opset_copy / VERSION / "core_ops.yaml").write_bytes(b"opset: '2026.11'\nops: [\xff")
    result = subprocess.run(
        [sys.executable, "-m", "opspec", "validate", "--opset-dir", str(opset_copy)], capture_output=True, text=True
    )
    assert result.returncode == 2
    assert "Traceback" not in result.stderr + result.stdout
    assert "core_ops.yaml:2:" in result.stdout
