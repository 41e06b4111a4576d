"""Time ``opspec accuracy``: one op over every dtype, and the whole table for one CPU backend.

    python benchmarks/accuracy_table.py [--backend NAME] [--opspec .venv/bin/opspec] [--only-op] [--keep PATH]

The targets (issue 45): ``opspec accuracy --ops aten::exp`` (every dtype, eager) under 30 s, and the whole table
for one CPU backend under 10 minutes on 2 cores. Each run writes its JSON report to a temporary folder and is
timed by wall clock and by the CPU time (user + sys) of the command, with the load average before and after:
on a shared machine the CPU time is the number to compare, and the load says what else ran.
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TARGETS = {"one op": 30.0, "whole table": 600.0}  # seconds of wall clock


def timed(command: list[str]) -> dict:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    load = os.getloadavg()[0]
    start = time.perf_counter()
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return {"exit": done.returncode, "wall_s": round(wall, 1), "cpu_s": round(cpu, 1),
            "load_before": round(load, 2), "load_after": round(os.getloadavg()[0], 2),
            "stderr_tail": done.stderr.strip().splitlines()[-3:]}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--opspec", default=str(ROOT / ".venv" / "bin" / "opspec"))
    parser.add_argument("--backend", help="a conform backend (default eager kernels)")
    parser.add_argument("--only-op", action="store_true", help="time the one-op run only")
    parser.add_argument("--keep", type=Path, help="copy the whole table's JSON report here")
    args = parser.parse_args()
    backend = ["--backend", args.backend] if args.backend else []
    results = {}
    with tempfile.TemporaryDirectory() as folder:
        runs = {"one op": ["--ops", "aten::exp"]}
        if not args.only_op:
            runs["whole table"] = []
        for name, extra in runs.items():
            report = Path(folder) / f"{name.replace(' ', '-')}.json"
            found = timed([args.opspec, "accuracy", *backend, *extra, "--report", str(report)])
            if report.exists():
                data = json.loads(report.read_text())
                found["measurements"] = len(data["results"])
                found["inputs"] = sum(r.get("inputs", 0) for r in data["results"])
            found["target_s"] = TARGETS[name]
            found["met"] = found["wall_s"] <= TARGETS[name]
            results[name] = found
            if args.keep and name == "whole table" and report.exists():
                args.keep.write_text(report.read_text())
            print(f"{name}: {json.dumps(found)}", flush=True)
    return 0 if all(r["met"] for r in results.values()) else 1


if __name__ == "__main__":
    raise SystemExit(main())
