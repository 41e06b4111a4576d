"""Default ``opspec conform`` time with and without the special-case rows, in one run.

    python benchmarks/conform_time.py --backend inductor [--out results/conform_time.json]
    python benchmarks/conform_time.py --backend inductor --before CHECKOUT

Runs ``opspec conform --backend B --isolate`` twice on the same machine, one
after the other, each from a fresh Inductor cache: first with
``--no-special-cases`` (the rows left out), then at the defaults. Prints and
writes the wall time, the report's ``duration_s``, compile counts and
statuses of each leg, and the growth the rows cost.

With ``--before CHECKOUT`` (a worktree of an earlier commit, e.g. ``git worktree
add /tmp/before f0d3600``) the first leg is that checkout's default run instead,
its own code and opset on the same interpreter, so the growth is what a user of
the defaults sees between the two commits.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

import torch

LEGS = {"without_rows": ["--no-special-cases"], "defaults": []}


def run_leg(backend: str, extra: list[str], folder: str, name: str, checkout: str | None = None) -> dict:
    report = os.path.join(folder, f"{name}.json")
    env = {**os.environ, "TORCHINDUCTOR_CACHE_DIR": os.path.join(folder, f"cache-{name}")}
    if checkout:  # that commit's package and data, not this one's
        env["PYTHONPATH"] = os.path.join(checkout, "src")
    command = [sys.executable, "-m", "opspec", "conform", "--backend", backend, "--isolate",
               "--report", report, *extra]
    load_before = os.getloadavg()[0]
    started = time.perf_counter()
    code = subprocess.call(command, env=env, stdout=subprocess.DEVNULL, cwd=checkout)
    wall = time.perf_counter() - started
    data = json.loads(open(report, encoding="utf-8").read())
    summary = {k: v for k, v in data["summary"].items() if v}
    return {"command": "opspec " + " ".join(command[3:-2 - len(extra)] + extra),
            "exit": code, "wall_s": round(wall, 1), "duration_s": data.get("duration_s"),
            "load_before": round(load_before, 2), "load_after": round(os.getloadavg()[0], 2),
            "summary": summary, **({"checkout": _commit(checkout)} if checkout else {})}


def _commit(checkout: str) -> str:
    return subprocess.run(["git", "-C", checkout, "log", "-1", "--format=%h"], capture_output=True,
                          text=True).stdout.strip()


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--backend", default="inductor")
    parser.add_argument("--out", default=None)
    parser.add_argument("--keep", default=None, help="keep both legs' reports in this folder")
    parser.add_argument("--before", default=None, metavar="CHECKOUT",
                        help="time that checkout's default run as the first leg, instead of --no-special-cases")
    args = parser.parse_args()
    legs = {"before": ([], os.path.abspath(args.before))} if args.before else \
        {"without_rows": (LEGS["without_rows"], None)}
    legs["defaults"] = (LEGS["defaults"], None)
    result = {"backend": args.backend, "torch": torch.__version__, "cores": os.cpu_count(),
              "started": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())}
    with tempfile.TemporaryDirectory(prefix="opspec-time-") as folder:
        for name, (extra, checkout) in legs.items():
            result[name] = run_leg(args.backend, extra, folder, name, checkout)
            if args.keep:
                os.makedirs(args.keep, exist_ok=True)
                shutil.copy(os.path.join(folder, f"{name}.json"), args.keep)
            leg = result[name]
            print(f"{name}: exit {leg['exit']}, {leg['wall_s']} s wall, "
                  f"load {leg['load_before']} -> {leg['load_after']}, {leg['summary']}", flush=True)
    first = next(iter(legs))
    result["growth"] = round(result["defaults"]["wall_s"] / result[first]["wall_s"] - 1, 3)
    print(f"the defaults take {result['growth']:+.1%} of wall time against {first}")
    if args.out:
        with open(args.out, "w", encoding="utf-8") as handle:
            json.dump(result, handle, indent=1)
            handle.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
