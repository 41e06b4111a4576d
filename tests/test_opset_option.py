"""One spelling for the opset: ``--opset VERSION`` in every command that reads a version, ``--opset-dir PATH`` for a
folder of opset data. The old spellings work for one release, hidden from --help, each use saying the new one in
one line on stderr."""
from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from opspec.cli import build_parser, main

pytestmark = pytest.mark.usefixtures("warm_validate_parts")  # validate reuses the bundled opset's parts

ROOT = Path(__file__).resolve().parents[1]
PROGRAM = str(ROOT / "conformance" / "golden" / "2026.12" / "misc.pt2")

# every command that reads one opset version, with the arguments it needs besides --opset
VERSION_COMMANDS = {
    "ops": [],
    "show": ["aten::abs"],
    "drift": [],
    "check-decomp": ["aten::abs"],
    "strategies": ["--report"],
    "coverage": ["opspec.examples.models:mlp", "--backend", "eager"],
    "check-program": [PROGRAM],
    "conform": ["--backend", "eager", "--ops", "aten::abs"],
}


def subcommands() -> dict[str, argparse.ArgumentParser]:
    parser = build_parser()
    return next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction)).choices


def visible_options(parser: argparse.ArgumentParser) -> set[str]:
    return {option for action in parser._actions if action.help != argparse.SUPPRESS for option in action.option_strings}


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


def test_no_command_shows_another_spelling_of_the_opset():
    shown = {name: visible_options(parser) for name, parser in subcommands().items()}
    assert not [name for name, options in shown.items() if "--version" in options]
    assert [name for name, options in shown.items() if "--opset-dir" in options] == ["validate"]
    assert {name for name, options in shown.items() if "--opset" in options} == {*VERSION_COMMANDS, "golden"}


@pytest.mark.parametrize("command", sorted(VERSION_COMMANDS))
def test_each_command_takes_opset_version(command):
    args = build_parser().parse_args([command, *VERSION_COMMANDS[command], "--opset", "2026.11"])
    assert args.opset_version == "2026.11"


@pytest.mark.parametrize("command", sorted(VERSION_COMMANDS))
def test_an_unknown_version_is_one_line_and_exit_2(capsys, command, tmp_path):
    extra = ["--report", str(tmp_path / "report.json")] if command == "conform" else []
    code, out, err = run(capsys, command, *VERSION_COMMANDS[command], *extra, "--opset", "1999.01")
    assert code == 2 and out == "" and len(err.splitlines()) == 1 and "1999.01" in err, err


def test_ops_and_show_run_on_the_version_named(capsys):
    code, out, err = run(capsys, "ops", "--category", "reduction", "--opset", "2026.11")
    assert code == 0 and "core ops in opset 2026.11" in out and err == ""
    code, out, err = run(capsys, "show", "aten::abs", "--opset", "2026.11", "--format", "json")
    assert code == 0 and '"aten::abs"' in out and err == ""


@pytest.mark.parametrize("argv", [["ops", "--category", "reduction"], ["show", "aten::abs"]])
def test_version_still_works_and_says_so(capsys, argv):
    code, out, err = run(capsys, *argv, "--version", "2026.11")
    assert code == 0 and out == run(capsys, *argv, "--opset", "2026.11")[1]
    assert err == f"opspec {argv[0]}: --version is deprecated and goes in the next release; use --opset V\n"


def test_golden_repeats_opset_and_takes_the_old_list_with_a_line(capsys):
    parser = build_parser()
    assert parser.parse_args(["golden", "--opset", "2026.11", "--opset", "2026.12"]).versions == ["2026.11", "2026.12"]
    assert capsys.readouterr().err == ""
    assert parser.parse_args(["golden", "--opset", "2026.11", "2026.12"]).versions == ["2026.11", "2026.12"]
    assert capsys.readouterr().err == ("opspec golden: --opset 2026.11 2026.12 is deprecated and goes in the next "
                                       "release; use --opset 2026.11 --opset 2026.12\n")
    code, out, err = run(capsys, "golden", "--opset", "2026.11", "--opset", "1999.01")
    assert code == 2 and out == "" and err == "opspec golden: error: --opset 1999.01: no such opset version\n"


def test_validate_takes_opset_dir(capsys, opset_copy):
    code, out, err = run(capsys, "validate", "--opset-dir", str(opset_copy), "--no-torch")
    assert code == 0 and f"in {opset_copy}" in out and err == ""


def test_validate_opset_path_still_works_and_says_so(capsys, opset_copy):
    code, out, err = run(capsys, "validate", "--opset", str(opset_copy), "--no-torch")
    assert code == 0 and f"in {opset_copy}" in out
    assert err == "opspec validate: --opset is deprecated and goes in the next release; use --opset-dir PATH\n"


def test_validate_opset_dir_that_is_not_a_folder_is_one_line_and_exit_2(capsys, tmp_path):
    code, out, err = run(capsys, "validate", "--opset-dir", str(tmp_path / "missing"))
    assert code == 2 and out == "" and err == f"opspec validate: error: {tmp_path / 'missing'}: no such folder\n"
