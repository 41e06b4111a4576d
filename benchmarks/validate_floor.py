"""The least time a first ``opspec validate`` can take here: the work it cannot skip, spread perfectly over the cores.

    python benchmarks/validate_floor.py [--opspec .venv/bin/opspec] [--repeat 3]

Before an empty-cache validate judges one special-case row or evaluates one formula, it must

1. import torch,
2. read the data and check it against the schemas,
3. draw the inputs that each formula is checked on,
4. fork a child for each out-of-contract call, because such a call may corrupt the process that makes it.

Each step is timed by itself as CPU time (user + sys), the median of ``--repeat`` runs, each in a process of
its own. The sum of those times divided by the usable cores is a lower bound on the wall time of a run that
still judges nothing. A real empty-cache run is timed beside it. The bound leaves out the rest of what a
first run does: torch's facts, the rows' kernel calls and judgements, the formulas' evaluations, the errata,
the prose and the manifests.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

# In the venv's Python: the CPU time of drawing every formula's inputs as validate draws them (checks.formulas).
DRAW = """
import json, os, time
os.environ["HYPOTHESIS_NO_PLUGINS"] = "1"
from opspec.checks import formulas
from opspec.spec import load, resources
root = resources.opset_root()
written, _ = formulas.syntax_findings(root)
opset = load.load_opset(None, root)  # the newest, whose hints validate draws with
hints = {**{r.op: r.testing for r in opset.rules}, **{o.name: o.testing for o in opset.ops}}
started = time.process_time()
drawn = sum(len(formulas._drawn_calls(f.op, hints.get(f.op))) for f in written)
print(json.dumps({"cpu": time.process_time() - started, "calls": drawn}))
"""

# The number of contained children in an empty-cache run (rows run in this process), then what one fork of this
# process costs with torch imported and the data read: this process's CPU and the child's.
FORKS = """
import contextlib, io, json, os, sys
os.environ["HYPOTHESIS_NO_PLUGINS"] = "1"
from opspec.testing import contained
children = 0
def counted(run_each):
    def run(calls, show):
        global children
        children += 1
        return run_each(calls, show)
    return run
contained.run_each = counted(contained.run_each)
from opspec.cli import main
sys.argv = ["opspec", "validate", "--no-cache"]
with contextlib.redirect_stdout(io.StringIO()):
    main()
forked, before, n = children, os.times(), 40
for _ in range(n):
    contained.run(lambda: 1, str)
after = os.times()
spent = sum(getattr(after, f) - getattr(before, f) for f in ("user", "system", "children_user", "children_system"))
print(json.dumps({"children": forked, "cpu_each": spent / n}))
"""


def cpu_of(command: list[str], env: dict[str, str]) -> tuple[float, float, str]:
    """(CPU s of the command and its children, wall s, stdout)."""
    before = os.times()
    started = time.perf_counter()
    done = subprocess.run(command, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - started
    after = os.times()
    if done.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(command[:3])}: exit {done.returncode}: {done.stderr.strip()[-300:]}")
    return after.children_user - before.children_user + after.children_system - before.children_system, wall, done.stdout


def median(values) -> float:
    return statistics.median(list(values))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--opspec", default=str(ROOT / ".venv" / "bin" / "opspec"))
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    python = str(Path(args.opspec).with_name("python"))
    cores = len(os.sched_getaffinity(0))
    with tempfile.TemporaryDirectory() as scratch:
        env = {**os.environ, "OPSPEC_CACHE_DIR": str(Path(scratch) / "cache"), "HYPOTHESIS_NO_PLUGINS": "1"}
        runs = range(args.repeat)
        bare = median(cpu_of([python, "-c", "pass"], env)[0] for _ in runs)
        steps = {
            "import torch": median(cpu_of([python, "-c", "import torch"], env)[0] for _ in runs) - bare,
            "read and schema-check the data": median(
                cpu_of([args.opspec, "validate", "--no-torch", "--no-cache"], env)[0] for _ in runs),
        }
        draws = [json.loads(cpu_of([python, "-c", DRAW], env)[2]) for _ in runs]
        steps[f"draw the formulas' {draws[0]['calls']:,} calls"] = median(d["cpu"] for d in draws)
        forks = [json.loads(cpu_of([python, "-c", FORKS], env)[2]) for _ in runs]
        children = forks[0]["children"]
        steps[f"fork {children} contained children"] = children * median(f["cpu_each"] for f in forks)
        walls = []
        for _ in runs:  # each from an empty cache
            walls.append(cpu_of([args.opspec, "validate"], env)[1])
            shutil.rmtree(env["OPSPEC_CACHE_DIR"], ignore_errors=True)
    for name, cpu in steps.items():
        print(f"{name:40s} {cpu:5.2f} s CPU")
    total = sum(steps.values())
    print(f"{'sum':40s} {total:5.2f} s CPU")
    print(f"floor on {cores} core(s): {total / cores:.2f} s; an empty-cache validate took {median(walls):.2f} s "
          f"({min(walls):.2f}-{max(walls):.2f}); load {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    sys.exit(main())
