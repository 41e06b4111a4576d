"""Every path argument of every subcommand, given each kind of bad path: one line, exit 2, nothing written.

The sweep is built from the parser itself, so a new path argument is swept as soon
as it declares its kind (``cli.pathargs``), and one that does not fails
``test_every_path_argument_declares_its_kind``. Each case stops before any work (a
bad path is found before the subcommand runs), so the whole sweep costs process
starts only; they are forked from one driver process, which pays for the imports once.
"""
from __future__ import annotations

import argparse
import os
import tempfile
from pathlib import Path

import forked_cli
import pytest

from opspec.cli import build_parser, main, pathargs

pytestmark = pytest.mark.xdist_group("bad_paths")  # one worker runs them all: the module's shared runs are made once

SRC = Path(__file__).resolve().parents[1] / "src"
CHECKOUT = SRC.parent

KINDS = {pathargs.output_file: "output file", pathargs.output_folder: "output folder",
         pathargs.input_file: "input file", pathargs.input_folder: "input folder"}
PATHLIKE_METAVARS = {"PATH", "FILE", "DIR"}

# The other arguments each subcommand needs to parse; none of them is a path.
REQUIRED = {
    ("conform",): ["--backend", "eager", "--ops", "aten::sin", "--dtypes", "float32"],
    ("release",): ["2099.01", "--dry-run"],
    ("diff",): ["2026.11", "2026.12"],
    ("proposal", "new"): ["--type", "process", "--title", "A title long enough"],
    ("proposal", "measure"): ["1"],
    ("proposal", "set-status"): ["1", "review"],
    ("report", "merge"): ["afile"],  # a part that exists (the sweep's folder holds it)
    ("history", "archive"): ["afile"],  # a second REPORT (the sweep's plain file): the bad path is refused first
    ("history", "changes"): ["afile"],
    ("upgrade",): ["--to", "2026.12"],
}
# A valid positional path for subcommands that need one while an option's path is the one under test.
POSITIONAL = {("upgrade",): str(CHECKOUT / "conformance" / "golden" / "2026.12" / "model-mlp.pt2"),
              ("report", "publish"): str(CHECKOUT / "conformance" / "results" / "aot_eager-cpu.json")}
# Subcommands that take no path: they read the bundled opset, or a model spec handled by the model loader.
NO_PATHS = {("ops",), ("show",), ("check-decomp",), ("strategies",), ("coverage",)}


def _commands(parser: argparse.ArgumentParser, prefix: tuple[str, ...] = ()):
    """(command words, the parser of the leaf subcommand) for every subcommand, nested ones included."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _commands(sub, prefix + (name,))
            return
    yield prefix, parser


def _path_actions(parser: argparse.ArgumentParser):
    # a hidden option is an old spelling (opspec.cli.deprecated): its line comes first, its new spelling is swept
    return [a for a in parser._actions if a.type in KINDS and a.help != argparse.SUPPRESS]


def _sweep_targets():
    """(command words, option words before the subaction, option, kind) for every declared path argument."""
    top = build_parser()
    targets = []
    for words, leaf in _commands(top):
        levels = [top._subparsers._group_actions[0].choices[words[0]]]
        if len(words) > 1:
            levels.append(leaf)
        for depth, level in enumerate(levels):
            for action in _path_actions(level):
                targets.append((words, depth, action.option_strings[0] if action.option_strings else None,
                                KINDS[action.type]))
    return targets


TARGETS = _sweep_targets()


def test_every_path_argument_declares_its_kind():
    undeclared = []
    for words, leaf in _commands(build_parser()):
        for action in leaf._actions:
            if str(action.metavar) in PATHLIKE_METAVARS and action.type not in KINDS:
                undeclared.append(f"{' '.join(words)} {action.option_strings or action.dest}")
    assert undeclared == []


def test_every_subcommand_is_swept_or_takes_no_path():
    commands = {words for words, _ in _commands(build_parser())}
    swept = {t[0] for t in TARGETS}
    assert commands - swept == NO_PATHS
    assert {("conform",), ("validate",), ("drift",), ("site", "build"), ("site", "serve"), ("proposal", "check"),
            ("release",), ("diff",)} <= swept


def _unwritable_folder() -> str | None:
    """A folder no write succeeds in: a read-only one, or, for root (whom modes do not stop), /sys."""
    if os.geteuid() != 0:
        return "readonly"  # made with mode 0o555 by the sweep
    try:
        fd, name = tempfile.mkstemp(dir="/sys")
    except OSError:
        return "/sys"
    os.close(fd)
    os.unlink(name)
    return None


UNWRITABLE = _unwritable_folder()
# Relative paths are taken from the sweep's folder, which holds a file `afile` and a folder `adir`.
BAD = {
    "output file": {"unwritable folder": UNWRITABLE and f"{UNWRITABLE}/r.json",
                    "file where a folder is expected": "afile/r.json", "folder where a file is expected": "adir"},
    "output folder": {"unwritable folder": UNWRITABLE and f"{UNWRITABLE}/out",
                      "file where a folder is expected": "afile"},
    "input file": {"missing file": "missing.yaml", "folder where a file is expected": "adir",
                   "file where a folder is expected": "afile/x.yaml"},
    "input folder": {"missing folder": "missing", "file where a folder is expected": "afile"},
}
# (A missing output folder is no error: test_missing_output_folders_are_created_and_removed_on_failure.)


def _cases():
    for words, depth, option, kind in TARGETS:
        for label, value in BAD[kind].items():
            case = f"{' '.join(words)} {option or 'FILE'}: {label}"
            if value is None:
                yield pytest.param(None, None, id=case, marks=pytest.mark.skip(
                    reason="running as root, which file modes do not stop, and /sys is writable here"))
                continue
            given = [option, value] if option else [value]
            argv = [*words[:1], *(given if depth == 0 else []), *words[1:], *(given if depth == 1 else []),
                    *REQUIRED.get(words, []), *([POSITIONAL[words]] if option and words in POSITIONAL else [])]
            yield pytest.param(argv, value, id=case)


CASES = list(_cases())


def _tree(root: Path) -> set[str]:
    return {str(p.relative_to(root)) for p in root.rglob("*")}


@pytest.fixture(scope="module")
def sweep(tmp_path_factory):
    """Every case run once, each in a process of its own forked from one driver: (results by argv, the folder
    before, after)."""
    tmp = tmp_path_factory.mktemp("badpaths")
    (tmp / "afile").write_text("not a folder\n")
    (tmp / "adir").mkdir()
    if UNWRITABLE == "readonly":
        (tmp / "readonly").mkdir()
        (tmp / "readonly").chmod(0o555)
    runs = [p.values[0] for p in CASES if p.values[0] is not None]
    before = _tree(tmp)
    results = forked_cli.run_all(runs, tmp, SRC)
    return results, before, _tree(tmp)


@pytest.mark.parametrize("argv, value", CASES)
def test_bad_path_is_one_line_and_exit_2(sweep, argv, value):
    results, before, after = sweep
    done = results[tuple(argv)]
    lines = done.stderr.splitlines()
    assert done.returncode == 2, (argv, done.stderr)
    assert len(lines) == 1 and "Traceback" not in done.stderr, (argv, done.stderr)
    assert lines[0].startswith(f"opspec {argv[0]}: error: {value}: "), lines[0]
    assert done.stdout == ""
    assert after == before  # nothing written, no folder left behind, by any case


def test_missing_output_folders_are_created_and_removed_on_failure(tmp_path):
    """A missing folder is no error: it is created; when the command then fails for another reason it goes again."""
    (tmp_path / "afile").write_text("x\n")
    cases = [
        (["conform", "--backend", "eager", "--ops", "aten::sin", "--max-examples", "0", "--report",
          "new/sub/r.json"], "--max-examples"),
        (["drift", "--opset", "1999.01", "--propose", "new/sub/proposals"], "unknown opset version"),
        (["site", "--root", str(tmp_path), "build", "--out", "new/sub/site"], "not an opspec checkout"),
    ]
    results = forked_cli.run_all([argv for argv, _ in cases], tmp_path, SRC)  # one after another
    for argv, line in cases:
        done = results[tuple(argv)]
        assert done.returncode == 2 and len(done.stderr.splitlines()) == 1 and line in done.stderr, done.stderr
    assert _tree(tmp_path) == {"afile"}  # nothing any of them made is left


def test_report_in_a_missing_folder_runs_and_writes_there(tmp_path, capsys):
    """The issue's first case: a report path in a folder that does not exist yet is what users type.

    In this process, so it and the next test share one warm worker forkserver (and no chdir: the
    forkserver would read a relative PYTHONPATH from the new folder)."""
    code = main(["conform", "--backend", "eager", "--ops", "aten::sin", "--dtypes", "float32",
                 "--max-examples", "1", "--report", str(tmp_path / "results/run/r.json")])
    assert code == 0, capsys.readouterr().err
    assert (tmp_path / "results/run/r.json").is_file() and (tmp_path / "results/run/r.log").is_file()


def test_a_worker_that_cannot_open_its_log_does_not_blame_the_backend(tmp_path):
    """Defence behind the early check: the worker's own failure to open the log is named as such."""
    from opspec.conform.isolation import Isolated, WorkerError
    from opspec.conform.runner import Settings

    log = tmp_path / "afile" / "r.log"
    (tmp_path / "afile").write_text("x\n")
    executor = Isolated(Settings(backend="eager", opset=None, max_examples=1, max_compiles=1, seed=0, dynamic=True,
                                 repro_dir=str(tmp_path / "repros"), log_file=str(log)), timeout=60)
    with pytest.raises(WorkerError) as caught:
        executor.start()
    assert str(caught.value).startswith(f"{log}: cannot open the log file"), str(caught.value)
    assert "backend" not in str(caught.value)


def test_paths_a_command_derives_are_checked_too(tmp_path):
    """Where a command writes into its checkout (proposals/, site/, a report's log), a bad folder is one line too."""
    (tmp_path / "opset").mkdir()
    (tmp_path / "opset" / "versions.yaml").write_text("versions: []\n")  # enough to be a checkout
    (tmp_path / "proposals").write_text("a file where the proposals folder goes\n")
    (tmp_path / "site").write_text("a file where the site folder goes\n")
    (tmp_path / "r.log").mkdir()  # a folder where conform's log of r.json goes
    cases = [
        (["proposal", "--root", str(tmp_path), "new", "--type", "process", "--title", "A title long enough"],
         "proposals: is a file, not a folder"),
        (["site", "--root", str(tmp_path), "build"], "site is a file, not a folder"),
        (["conform", "--backend", "eager", "--report", "r.json"], "r.log: is a folder, not a file"),
    ]
    before = _tree(tmp_path)
    results = forked_cli.run_all([argv for argv, _ in cases], tmp_path, SRC)  # one after another
    for argv, line in cases:
        done = results[tuple(argv)]
        assert done.returncode == 2 and len(done.stderr.splitlines()) == 1 and line in done.stderr, done.stderr
    assert _tree(tmp_path) == before  # nothing any of them made is left
