"""Time the whole core opset against Inductor on CPU, from a cold Inductor cache.

    python benchmarks/conform_inductor.py [--max-compiles N] [--report PATH]

Runs ``opspec conform --backend inductor --isolate`` with a fresh
TORCHINDUCTOR_CACHE_DIR (so no kernel comes from an earlier run) and prints the
wall time, the load average around the run, and compile counts from the report.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections import Counter


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--max-compiles", default="2")
    parser.add_argument("--report", default=None)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="opspec-bench-") as folder:
        report = args.report or os.path.join(folder, "inductor-cpu.json")
        env = {**os.environ, "TORCHINDUCTOR_CACHE_DIR": os.path.join(folder, "inductor-cache")}
        command = [sys.executable, "-m", "opspec", "conform", "--backend", "inductor", "--isolate",
                   "--max-compiles", args.max_compiles, "--report", report]
        load_before = os.getloadavg()[0]
        started = time.perf_counter()
        code = subprocess.call(command, env=env, stdout=subprocess.DEVNULL)
        elapsed = time.perf_counter() - started
        load_after = os.getloadavg()[0]
        data = json.loads(open(report, encoding="utf-8").read())
    compiles = Counter(r.get("compiles", 0) for r in data["results"])
    print(f"exit {code}; {len(data['results'])} cases in {elapsed:.0f}s wall "
          f"(load average {load_before:.1f} before, {load_after:.1f} after, {os.cpu_count()} cores)")
    print(f"compiles: {data['summary']['compiles']} total, at most {max(compiles)} per case; "
          f"cases by compile count: {dict(sorted(compiles.items()))}")
    print("statuses:", {k: v for k, v in data["summary"].items() if v and k not in ("cases", "compiles")})
    return 0


if __name__ == "__main__":
    sys.exit(main())
