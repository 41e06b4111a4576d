"""Does a backend's verdict on a case depend on anything but the case? Four arrangements of the same run, compared.

    python benchmarks/verdict_stability.py --backend onnxruntime --ops-from conformance/results/onnxruntime-cpu.json \
        [--dtype float32] [--count 40] [--out benchmarks/results/verdict_stability_onnxruntime.json]

The same cases run as ``opspec conform --backend B --isolate --dtypes D --ops ...`` four ways: one worker (``-j 1``),
two (``-j 2``), two in a shuffled order (``-j 2 --shuffle 7``), and each case alone in a process of its own (one
``opspec conform`` per op). Every case must get the same verdict (status, outcome, who computed the op, who failed,
the expectation that judged it) in all four. ``--ops-from`` picks the cases from a published report: half its
non-passes in that dtype (the cases a poisoned worker or another dtype's row would have decided), half its passes,
each half spread evenly over the report's order, so the choice is reproducible.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "src"))
sys.path.insert(0, str(REPO / "benchmarks"))
from conform_parallel import VERDICT_FIELDS, verdict  # noqa: E402

from opspec.results.model import Report  # noqa: E402
from opspec.spec import atomic, paths, portable  # noqa: E402

ARRANGEMENTS = {"j1": ["-j", "1"], "j2": ["-j", "2"], "j2-shuffled": ["-j", "2", "--shuffle", "7"]}


def chosen_ops(report_path: Path, dtype: str, count: int) -> list[str]:
    report = Report.from_dict(json.loads(report_path.read_text(encoding="utf-8")))
    cases = [r for r in report.records if r.dtype == dtype]
    others = [r.op for r in cases if r.status != "pass"]
    passes = [r.op for r in cases if r.status == "pass"]

    def spread(ops: list[str], n: int) -> list[str]:
        return [ops[i * len(ops) // n] for i in range(n)] if len(ops) > n else ops

    half = count // 2
    picked = spread(others, half)
    return sorted(set(picked + spread(passes, count - len(picked))))


def conform(backend: str, dtype: str, ops: list[str], extra: list[str], report: Path, folder: Path) -> dict:
    command = [sys.executable, "-m", "opspec", "conform", "--backend", backend, "--isolate", "--dtypes", dtype,
               "--ops", ",".join(ops), "--report", str(report), *extra]
    env = {**os.environ, "TORCHINDUCTOR_CACHE_DIR": str(folder / "inductor-cache"),
           "PYTHONPATH": os.pathsep.join([str(REPO / "src"), os.environ.get("PYTHONPATH", "")])}
    subprocess.call(command, env=env, stdout=subprocess.DEVNULL)
    data = Report.from_dict(json.loads(report.read_text(encoding="utf-8"))).to_dict()
    return {f"{r['op']} {r['dtype']} {r['device']}": verdict(r) for r in data["results"]}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--backend", required=True)
    parser.add_argument("--ops-from", type=Path, required=True, help="a published report of the backend")
    parser.add_argument("--dtype", default="float32")
    parser.add_argument("--count", type=int, default=40)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    out = args.out or REPO / "benchmarks" / "results" / f"verdict_stability_{args.backend}.json"
    try:
        paths.prepare(inputs=[(args.ops_from, False)], outputs=[(out, False)])
    except paths.PathError as err:
        print(f"verdict_stability: {err}", file=sys.stderr)
        return 2
    ops = chosen_ops(args.ops_from, args.dtype, args.count)
    found, seconds = {}, {}
    with tempfile.TemporaryDirectory(prefix="opspec-bench-stability-") as name:
        folder = Path(name)
        for label, extra in ARRANGEMENTS.items():
            started = time.perf_counter()
            found[label] = conform(args.backend, args.dtype, ops, extra, folder / f"{label}.json", folder)
            seconds[label] = round(time.perf_counter() - started, 1)
            print(f"{label}: {len(found[label])} cases in {seconds[label]} s", flush=True)
        started, alone = time.perf_counter(), {}
        for op in ops:
            alone.update(conform(args.backend, args.dtype, [op], ["-j", "1"], folder / "alone.json", folder))
        found["alone"], seconds["alone"] = alone, round(time.perf_counter() - started, 1)
        print(f"alone: {len(alone)} cases in {seconds['alone']} s", flush=True)
    first = found["j1"]
    differing = {case: {label: found[label].get(case) for label in found}
                 for case in sorted(first) if any(found[label].get(case) != first[case] for label in found)}
    statuses: dict[str, int] = {}
    for record in first.values():
        statuses[record["status"]] = statuses.get(record["status"], 0) + 1
    result = {"backend": args.backend, "dtype": args.dtype, "ops": ops, "cases": len(first), "statuses": statuses,
              "arrangements": {**{k: " ".join(v) for k, v in ARRANGEMENTS.items()}, "alone": "one process per op, -j 1"},
              "seconds": seconds, "verdict_fields": [*VERDICT_FIELDS, "expectation"],
              "measured": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
              "cases_with_other_verdicts": differing,
              "verdicts": {case: record["status"] for case, record in sorted(first.items())}}
    atomic.write_text(out, portable.portable_json(result, REPO, indent=2))
    print(f"{len(first)} cases ({statuses}); other verdicts in some arrangement: {len(differing)}")
    for case, seen in list(differing.items())[:10]:
        print(f"  {case}: " + "; ".join(f"{label} {v and v['status']}" for label, v in seen.items()))
    return 0 if not differing else 1


if __name__ == "__main__":
    sys.exit(main())
