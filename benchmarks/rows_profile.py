"""Where a case's time goes on Inductor, with and without its special-case rows.

    python benchmarks/rows_profile.py --ops div.Tensor,eq.Scalar,fmod.Tensor,gelu,cos

Runs the float32 cases of ``--ops`` under cProfile, once with the rows left out and
once at the defaults, each leg in a process of its own with a fresh Inductor cache and
one warm-up case first (imports and Inductor's precompiled header paid before). Prints
each leg's wall time, programs compiled, the calls of ``AsyncCompile.wait`` (one per
program with kernels) and the time spent in them, waiting for the C++ compiles of the
kernels: the rows' cost split into compiles of their own and C++ for the kernels they add.
"""
from __future__ import annotations

import argparse
import cProfile
import json
import os
import pstats
import sys
import tempfile
import time


def leg(ops: list[str], rows: bool) -> dict:
    from opspec.conform.cases import Case
    from opspec.conform.runner import CaseRunner, Settings

    runner = CaseRunner(Settings(backend="inductor", special_cases=rows))
    runner.run(Case("aten::neg", "float32", "cpu"))  # warm-up, not counted
    profile, started, compiles = cProfile.Profile(), time.perf_counter(), 0
    profile.enable()
    for op in ops:
        compiles += runner.run(Case(f"aten::{op}", "float32", "cpu"))["compiles"]
    profile.disable()
    stats = pstats.Stats(profile).stats
    waits = [(calls, cumulative) for (path, _, name), (calls, _, _, cumulative, _) in stats.items()
             if path.endswith("async_compile.py") and name == "wait"]
    return {"wall_s": round(time.perf_counter() - started, 1), "programs": compiles,
            "waits": sum(c for c, _ in waits), "cpp_wait_s": round(max((t for _, t in waits), default=0.0), 1)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ops", default="div.Tensor,eq.Scalar,fmod.Tensor,gelu,cos")
    parser.add_argument("--leg", choices=("without_rows", "defaults"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    ops = args.ops.split(",")
    if args.leg:  # one leg, in a process of its own (a fresh Inductor cache, no state from the other leg)
        print(json.dumps(leg(ops, args.leg == "defaults")))
        return 0
    import subprocess

    result = {}
    for name in ("without_rows", "defaults"):
        with tempfile.TemporaryDirectory(prefix="opspec-rows-") as cache:
            out = subprocess.run([sys.executable, __file__, "--ops", args.ops, "--leg", name], check=True,
                                 capture_output=True, text=True, env={**os.environ, "TORCHINDUCTOR_CACHE_DIR": cache})
        result[name] = json.loads(out.stdout.strip().splitlines()[-1])
        print(name, result[name], flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
