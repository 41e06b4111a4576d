"""Default ``opspec conform`` time with and without the special-case rows, in one run.

    python benchmarks/conform_time.py --backend inductor [--out results/conform_time.json]

Runs ``opspec conform --backend B --isolate`` twice on the same machine, one
after the other, each from a fresh Inductor cache: first with
``--no-special-cases`` (the rows left out), then at the defaults. Prints and
writes the wall time, the report's ``duration_s``, compile counts and
statuses of each leg, and the growth the rows cost.
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


def run_leg(backend: str, extra: list[str], folder: str, name: str) -> dict:
    report = os.path.join(folder, f"{name}.json")
    env = {**os.environ, "TORCHINDUCTOR_CACHE_DIR": os.path.join(folder, f"cache-{name}")}
    command = [sys.executable, "-m", "opspec", "conform", "--backend", backend, "--isolate",
               "--report", report, *extra]
    load_before = os.getloadavg()[0]
    started = time.perf_counter()
    code = subprocess.call(command, env=env, stdout=subprocess.DEVNULL)
    wall = time.perf_counter() - started
    data = json.loads(open(report, encoding="utf-8").read())
    summary = {k: v for k, v in data["summary"].items() if v}
    return {"command": "opspec " + " ".join(command[3:-2 - len(extra)] + extra),
            "exit": code, "wall_s": round(wall, 1), "duration_s": data.get("duration_s"),
            "load_before": round(load_before, 2), "load_after": round(os.getloadavg()[0], 2),
            "summary": summary}


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--backend", default="inductor")
    parser.add_argument("--out", default=None)
    parser.add_argument("--keep", default=None, help="keep both legs' reports in this folder")
    args = parser.parse_args()
    result = {"backend": args.backend, "torch": torch.__version__, "cores": os.cpu_count(),
              "started": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())}
    with tempfile.TemporaryDirectory(prefix="opspec-time-") as folder:
        for name, extra in LEGS.items():
            result[name] = run_leg(args.backend, extra, folder, name)
            if args.keep:
                os.makedirs(args.keep, exist_ok=True)
                shutil.copy(os.path.join(folder, f"{name}.json"), args.keep)
            leg = result[name]
            print(f"{name}: exit {leg['exit']}, {leg['wall_s']} s wall, "
                  f"load {leg['load_before']} -> {leg['load_after']}, {leg['summary']}", flush=True)
    result["growth"] = round(result["defaults"]["wall_s"] / result["without_rows"]["wall_s"] - 1, 3)
    print(f"the rows cost {result['growth']:+.1%} of wall time")
    if args.out:
        with open(args.out, "w", encoding="utf-8") as handle:
            json.dump(result, handle, indent=1)
            handle.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
