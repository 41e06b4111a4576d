"""Time what a newcomer runs first, on a fresh clone of this repository's HEAD.

    python benchmarks/first_hour.py [--out benchmarks/results/first_hour.json] [--skip-test]

Clones HEAD into a scratch folder and, with no environment variables but the system's PATH and HOME (the
Quickstart promises that nothing else is needed; HOME is the user's, whose pip configuration says
where the machine keeps its wheels) and the caches in the scratch folder, runs there:

- ``make test``: builds ``.venv`` from nothing and runs the test suite (timed as those two parts: ``make
  .venv/.installed``, then ``make test``, which finds ``.venv`` built);
- ``opspec validate`` with an empty result cache, then again with nothing changed;
- ``opspec drift``, the rest of ``make run``;
- ``opspec site build`` into a scratch folder.

Each step's wall time, exit status and the load average around it are written as JSON; a
step that fails stops the run (its output's tail is printed). On a shared machine the wall
time is mostly waiting for a core: say what else ran when you quote a number.
"""
from __future__ import annotations

import argparse
import os
import platform
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
from opspec.spec import portable  # noqa: E402


# The system's own programs, as a machine with no variables set finds them: not the user's PATH, whose first python3
# may be another build (a pyenv Python compiled without optimizations ran this suite's Python about 40% slower).
SYSTEM_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"


def clean_env(cache: Path) -> dict[str, str]:
    """PATH and HOME only: PATH the system's, HOME the user's own, whose pip configuration is the machine's (where the
    CPU build of torch lies; an empty HOME sends pip to the registry, whose torch 2.13.0 is a CUDA build of 5 GB).
    The caches opspec and pip keep go to a folder of this run, so they start empty."""
    return {"PATH": SYSTEM_PATH, "HOME": os.environ.get("HOME", str(Path.home())), "XDG_CACHE_HOME": str(cache)}


PYTEST_SUMMARY = re.compile(r"^=* ?\d+ (passed|failed).* in [\d.]+s")


def step(name: str, command: list[str], cwd: Path, env: dict[str, str]) -> dict:
    load_before = os.getloadavg()[0]
    started = time.perf_counter()
    done = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True)
    wall = round(time.perf_counter() - started, 1)
    result = {"command": " ".join(command), "wall_s": wall, "exit": done.returncode,
              "load_before": round(load_before, 2), "load_after": round(os.getloadavg()[0], 2),
              "tail": done.stdout.strip().splitlines()[-3:]}
    summary = [line for line in done.stdout.splitlines() if PYTEST_SUMMARY.match(line)]
    if summary:  # pytest's own count and time, apart from what came before it
        result["pytest"] = summary[-1]
    print(f"{name}: {wall} s, exit {done.returncode} (load {result['load_before']} -> {result['load_after']})")
    if done.returncode != 0:
        lines = (done.stdout + done.stderr).splitlines()
        failed = [line for line in lines if line.startswith(("FAILED ", "ERROR "))]  # pytest's summary: what failed
        result["failed"] = failed
        print("\n".join(failed + ["..."] + lines[-40:]), file=sys.stderr)
    return result


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results" / "first_hour.json")
    parser.add_argument("--skip-test", action="store_true", help="set up .venv without running the tests")
    args = parser.parse_args()
    head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True).stdout.strip()
    results: dict = {"commit": head, "machine": platform.machine(), "cores": os.cpu_count(),
                     "python": platform.python_version(), "steps": {}}
    with tempfile.TemporaryDirectory(prefix="opspec-first-hour-") as scratch:
        clone = Path(scratch) / "opspec"
        subprocess.run(["git", "clone", "--quiet", "--no-hardlinks", str(ROOT), str(clone)], check=True)
        env = clean_env(Path(scratch) / "cache")
        # `make test` builds .venv, then runs the suite: timed as its two parts, one after the other
        plan = [("make test: .venv", ["make", ".venv/.installed"]),
                *([] if args.skip_test else [("make test: the suite", ["make", "test"])]),
                ("validate, empty cache", [".venv/bin/opspec", "validate"]),
                ("validate, nothing changed", [".venv/bin/opspec", "validate"]),
                ("drift", [".venv/bin/opspec", "drift"]),
                ("site build", [".venv/bin/opspec", "site", "build", "--out", str(Path(scratch) / "site")])]
        for name, command in plan:
            results["steps"][name] = step(name, command, clone, env)
            if results["steps"][name]["exit"] != 0:
                break
        parts = [results["steps"].get(name) for name in ("make test: .venv", "make test: the suite")]
        if all(parts) and not args.skip_test:
            results["make test"] = {"wall_s": round(sum(part["wall_s"] for part in parts), 1),
                                    "exit": max(part["exit"] for part in parts)}
            print(f"make test (.venv included): {results['make test']['wall_s']} s")
        shown = portable.portable_json(results, Path(scratch), indent=1)  # the scratch paths, from the scratch folder
    args.out.write_text(shown)
    return max(step["exit"] for step in results["steps"].values())


if __name__ == "__main__":
    sys.exit(main())
