"""C++ warnings of kernels called on purpose at their edges stay off the terminal; other native output does not."""
from __future__ import annotations

import os
import subprocess
import sys

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
# golden programs. `opspec drift` (about 40 s) holds them back too (torch_ops.quiet) and is left out for its time.
COMMANDS = [
    ("validate",),
    ("check-decomp", "aten::var", "--max-examples", "10"),
    ("strategies", "--report", "--check", "5", "--op", "aten::var.correction"),
    ("golden",),
]


@pytest.mark.parametrize("argv", COMMANDS, ids=lambda argv: argv[0])
def test_no_native_warning_reaches_the_terminal(argv, tmp_path):
    env = {**os.environ, "OPSPEC_CACHE_DIR": str(tmp_path)}  # a fresh cache: every check runs
    result = subprocess.run([sys.executable, "-m", "opspec", *argv], capture_output=True, text=True, env=env, cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert [line for line in (result.stdout + result.stderr).splitlines() if line.startswith("[W")] == []
