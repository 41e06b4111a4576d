"""Run many ``opspec`` command lines as separate processes for the price of one interpreter start.

One driver process imports the CLI once, then forks a child per command line: each child
has its own exit status, standard output and standard error (file descriptors 1 and 2,
so C++ output is caught too), as ``python -m opspec ARGV`` would, without paying for
Python, opspec and its imports again. An exception that escapes ``main`` is printed as
the interpreter prints it, so a traceback still shows where a real process would show one.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

DRIVER = r"""
import json, os, sys, tempfile, traceback
from opspec.cli import build_parser, main
build_parser()  # every subcommand's module imported here, once, not in each child

def run(argv):
    out, err = tempfile.TemporaryFile(), tempfile.TemporaryFile()
    pid = os.fork()
    if pid == 0:
        os.dup2(out.fileno(), 1)
        os.dup2(err.fileno(), 2)
        sys.argv = ["opspec", *argv]
        try:
            code = main(argv)
        except SystemExit as stop:
            code = stop.code if isinstance(stop.code, int) else (0 if stop.code is None else 1)
            if not isinstance(stop.code, (int, type(None))):
                print(stop.code, file=sys.stderr)
        except BaseException:
            traceback.print_exc()
            code = 1
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code or 0)
    _, status = os.waitpid(pid, 0)
    texts = []
    for handle in (out, err):
        handle.seek(0)
        texts.append(handle.read().decode("utf-8", "replace"))
        handle.close()
    return {"argv": argv, "returncode": os.waitstatus_to_exitcode(status), "stdout": texts[0], "stderr": texts[1]}

print(json.dumps([run(argv) for argv in json.load(sys.stdin)]))
"""


@dataclass(frozen=True)
class Done:
    argv: list[str]
    returncode: int
    stdout: str
    stderr: str


def run_all(argvs: list[list[str]], cwd: Path, src: Path, timeout: float = 600) -> dict[tuple[str, ...], Done]:
    """Each of ``argvs`` run as its own forked ``opspec`` process in ``cwd``; results by argv."""
    env = {**os.environ, "PYTHONPATH": str(src)}
    driver = subprocess.run([sys.executable, "-c", DRIVER], input=json.dumps(argvs), cwd=cwd, env=env,
                            capture_output=True, text=True, timeout=timeout)
    if driver.returncode != 0:
        raise RuntimeError(f"the command driver failed: {driver.stderr[-2000:]}")
    return {tuple(item["argv"]): Done(**item) for item in json.loads(driver.stdout)}
