"""The ``opspec`` program exits without tearing the interpreter down, yet loses nothing an exit owes."""
from __future__ import annotations

import subprocess
import sys

PROGRAM = """
import atexit, sys
atexit.register(lambda: print("the exit handler ran", file=sys.stderr))
sys.argv = ["opspec", *sys.argv[1:]]
from opspec.cli import run
print("buffered before the exit", end="")
run()
"""


def program(*argv: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", PROGRAM, *argv], capture_output=True, text=True, timeout=120)


def test_the_exit_code_is_mains_and_buffered_output_and_exit_handlers_are_not_lost():
    done = program("ops", "--format", "json")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("buffered before the exit") and done.stdout.rstrip().endswith("]")
    assert "the exit handler ran" in done.stderr
    refused = program("show", "aten::no_such_op")
    assert refused.returncode == 2 and "the exit handler ran" in refused.stderr


def test_python_dash_m_is_the_same_program():
    done = subprocess.run([sys.executable, "-m", "opspec", "show", "aten::no_such_op"], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 2 and done.stderr.count("\n") == 1 and "Traceback" not in done.stderr
