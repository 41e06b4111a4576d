"""C++ warnings of kernels called on purpose at their edges stay off the terminal; other native output does not."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from opspec.testing import native_warnings


def test_native_warnings_are_held_back_and_other_output_passes(capfd):
    with native_warnings.held_back():
        torch.ops.aten.var.correction(torch.ones(1), None, correction=1)  # TORCH_WARN straight to fd 2
        os.write(2, b"a native library says something else\n")
    err = capfd.readouterr().err
    assert "degrees of freedom" not in err
    assert "a native library says something else" in err


def test_without_it_the_warning_reaches_stderr(capfd):
    torch.ops.aten.var.correction(torch.ones(1), None, correction=1)
    assert "degrees of freedom" in capfd.readouterr().err


# Commands that call kernels at their edges on purpose: rows and formulas (var of one element), drawn calls, the
# golden programs; they run with every other subcommand below.
AT_THE_EDGES = [
    ("check-decomp", "aten::var", "--max-examples", "10"),
    ("strategies", "--report", "--check", "5", "--op", "aten::var.correction"),
    ("golden",),
]


def test_no_native_warning_reaches_the_terminal_from_validate(first_validate):
    """validate from an empty cache (every row and formula runs its kernels), in a fresh process: the session's
    own first validate, which the tests that validate copies of the opset start from (conftest.py)."""
    assert first_validate["returncode"] == 0, first_validate["output"]
    assert "0 finding(s)" in first_validate["output"]
    assert [line for line in first_validate["output"].splitlines() if line.startswith("[W")] == []


# Every other subcommand, run one after another in one interpreter (one torch import for all of them); a marker
# line before each tells whose output a line is. `drift` and `site build` take the better part of a minute each:
# they run in the sweep (`make sweep`).
ROOT = Path(__file__).resolve().parents[1]
GOLDEN = ROOT / "conformance" / "golden" / "2026.12"
HISTORY = sorted((ROOT / "conformance" / "results" / "history" / "aot_eager-cpu").glob("*.json"))
EVERY_COMMAND = [
    *AT_THE_EDGES,
    ("ops", "--format", "json"),
    ("show", "aten::var.correction"),
    ("diff", "2026.11", "2026.12"),
    ("proposal", "list"),
    ("proposal", "check", str(ROOT / "proposals" / "0004-add-bucketize-to-the-core-set.md")),
    ("check-program", str(GOLDEN / "normalization.pt2")),
    ("upgrade", str(GOLDEN / "normalization.pt2"), "--to", "2026.12", "--out", "{tmp}/upgraded.pt2"),
    ("coverage", "opspec.examples.models:mlp", "--backend", "eager"),
    ("conform", "--backend", "eager", "--ops", "aten::var.correction", "--dtypes", "float32", "float16",
     "--shard", "1/1", "--report", "{tmp}/var.json"),
    ("report", "merge", "{tmp}/var.json", "--out", "{tmp}/merged.json"),
    ("history", "changes", str(HISTORY[0]), str(HISTORY[-1])),
    ("accuracy", "--ops", "aten::sigmoid", "--dtypes", "bfloat16"),
]
SLOW_COMMANDS = [("drift",), ("site", "build", "--out", "{tmp}/site")]
DRIVER = """
import os, sys, json
from opspec.cli import main
for argv in json.loads(sys.argv[1]):
    sys.stdout.flush(); sys.stderr.flush()
    os.write(2, ("=== " + " ".join(argv) + "\\n").encode())
    try:
        code = main(argv)
    except SystemExit as stop:
        code = stop.code
    sys.stdout.flush(); sys.stderr.flush()
    os.write(2, ("=== exit " + str(code) + "\\n").encode())
"""


def native_warnings_of(commands: list[tuple[str, ...]], tmp_path: Path, clean: tuple = ()) -> dict[str, list[str]]:
    """Each command's ``[W`` lines (and its exit code, which must not be 2: a usage error checks nothing, nor other
    than 0 for the commands in ``clean``)."""
    argvs = [[arg.replace("{tmp}", str(tmp_path)) for arg in argv] for argv in commands]
    env = {**os.environ, "OPSPEC_CACHE_DIR": str(tmp_path / "cache")}
    done = subprocess.run([sys.executable, "-c", DRIVER, json.dumps(argvs)], capture_output=True, text=True,
                          env=env, cwd=tmp_path)
    found: dict[str, list[str]] = {}
    current = None
    for line in done.stderr.splitlines():
        if line.startswith("=== exit "):
            assert line != "=== exit 2", f"{current}: usage error\n{done.stderr[-2000:]}"
            assert line == "=== exit 0" or tuple(current.split(" ")) not in clean, f"{current}: {line}\n{done.stderr[-2000:]}"
        elif line.startswith("=== "):
            current = line[4:]
            found[current] = []
        elif line.startswith("[W") and current is not None:
            found[current].append(line)
    assert len(found) == len(argvs), done.stderr[-3000:]
    return found


def test_no_subcommand_prints_a_native_warning(tmp_path):
    assert {command: lines for command, lines in native_warnings_of(EVERY_COMMAND, tmp_path, clean=tuple(AT_THE_EDGES)).items() if lines} == {}


@pytest.mark.sweep
def test_no_slow_subcommand_prints_a_native_warning(tmp_path):
    assert {command: lines for command, lines in native_warnings_of(SLOW_COMMANDS, tmp_path).items() if lines} == {}


def test_a_kernel_warning_raised_as_a_python_warning_is_held_back_too(capfd):
    """torch 2.15 reports TORCH_WARN as a UserWarning attributed to torch._ops; other Python warnings still show."""
    import warnings

    with warnings.catch_warnings(record=True) as shown:
        warnings.simplefilter("always")
        with native_warnings.held_back():
            warnings.warn_explicit("var(): degrees of freedom is <= 0.", UserWarning, "torch/_ops.py", 916,
                                   module="torch._ops")
            warnings.warn_explicit("a warning of opspec's own", UserWarning, "opspec/x.py", 1, module="opspec.x")
    assert [str(w.message) for w in shown] == ["a warning of opspec's own"]
