"""The commands that read data, not torch, run where torch cannot be imported.

Each runs in a child process with ``sys.modules['torch'] = None``, so any import
of torch, at module level or inside a function, fails there.
"""
from __future__ import annotations

import subprocess
import sys

import pytest
from opspec_fixtures import ROOT

pytestmark = pytest.mark.usefixtures("warm_validate_parts")  # validate reuses the bundled opset's parts

NO_TORCH = """
import sys
sys.modules["torch"] = None
from opspec.cli import main
code = main(sys.argv[1:])
assert sys.modules["torch"] is None, "something replaced the blocked torch"
sys.exit(code)
"""


def run_without_torch(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", NO_TORCH, *args], capture_output=True, text=True, cwd=ROOT, timeout=120)


@pytest.mark.parametrize("args, expected", [
    (("validate", "--no-torch"), "0 finding(s)"),
    (("ops",), "aten::add.Tensor"),
    (("ops", "--format", "json"), '"name": "aten::add.Tensor"'),
    (("show", "add.Tensor"), "aten::add.Tensor"),
    (("proposal", "--root", str(ROOT), "list"), "0004"),
    (("proposal", "--root", str(ROOT), "check", "--no-torch"), ""),
])
def test_data_commands_run_without_torch(args, expected):
    run = run_without_torch(*args)
    assert run.returncode == 0, run.stderr
    assert "Traceback" not in run.stderr
    assert expected in run.stdout


def test_proposal_check_says_torch_was_not_consulted():
    """Without --no-torch, a proposal check where torch is missing still checks the rest, and says what it skipped."""
    run = run_without_torch("proposal", "--root", str(ROOT), "check")
    assert run.returncode == 0, run.stderr
    assert "Traceback" not in run.stderr
    assert "note: changes were not checked against torch (cannot import it: ModuleNotFoundError" in run.stderr
    assert "proposal(s) checked, no findings" in run.stderr


def test_a_command_that_needs_torch_fails_without_it():
    """The block is real: a torch command in the same child fails to import it."""
    run = run_without_torch("check-decomp", "aten::addcmul")
    assert run.returncode != 0 and "torch" in run.stderr
