"""Time one backend's conformance run at -j 1 and -j 2, one after the other, and check the verdicts agree.

    python benchmarks/conform_parallel.py [--backend aot_eager] [--dtypes all] [--shard K/N] [--jobs 1 2]
                                          [--out benchmarks/results/conform_parallel.json] [--keep DIR]

Each run is ``python -m opspec conform --backend B --isolate --dtypes ... -j N`` with
a fresh ``TORCHINDUCTOR_CACHE_DIR`` (no kernel from an earlier run); the script
prints each run's wall time, the load average around it (the machine may be
shared), the ratio to the first, and whether every case has the same verdict as
in the first run (status, outcome, who computed the op, who failed, and the
expectation that judged it); cases whose verdict agrees but whose record differs
in a detail (a message's wording, a compile count) are listed apart.
``--shard K/N`` times one part of the run (the same part at every -j).
``--keep DIR`` keeps each run's report there (``jN.json``, with its repros), so a
timed run can be the one published.
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
from opspec.spec import atomic, paths, portable  # noqa: E402

RUN_FIELDS = ("duration_s", "repro_file")
# A case's verdict: its status, what it would be without expectations, who computed the op, who failed, and the
# expectation that judged it. The rest of the record (the message's wording, compile counts) is detail.
VERDICT_FIELDS = ("status", "outcome", "executed", "blame")


def verdict(record: dict) -> dict:
    return {**{k: record.get(k) for k in VERDICT_FIELDS}, "expectation": (record.get("expectation") or {}).get("where")}


def verdicts(report: dict) -> dict:
    return {f"{r['op']} {r['dtype']} {r['device']}": {k: v for k, v in r.items() if k not in RUN_FIELDS}
            for r in report["results"]}


def compare(runs: list[dict]) -> tuple[list[str], list[str]]:
    """The cases whose verdict differs from the first run's, and those whose verdict agrees but not every detail;
    each run gets ``same_verdicts_as_first``."""
    first, other_verdicts, other_details = runs[0]["verdicts"], set(), set()
    for r in runs:
        differs = {case for case, record in first.items() if verdict(r["verdicts"].get(case) or {}) != verdict(record)}
        r["same_verdicts_as_first"] = not differs
        other_verdicts |= differs
        other_details |= {case for case, record in first.items() if case not in differs and r["verdicts"][case] != record}
    return sorted(other_verdicts), sorted(other_details)


def run(args, jobs: int, folder: Path, reports: Path) -> dict:
    report = reports / f"j{jobs}.json"
    command = [sys.executable, "-m", "opspec", "conform", "--backend", args.backend, "--isolate",
               "--dtypes", *args.dtypes, "-j", str(jobs), "--report", str(report)]
    if args.shard:
        command += ["--shard", args.shard]
    env = {**os.environ, "TORCHINDUCTOR_CACHE_DIR": str(folder / f"inductor-cache-j{jobs}"),
           "PYTHONPATH": os.pathsep.join([str(REPO / "src"), os.environ.get("PYTHONPATH", "")])}
    load_before = os.getloadavg()[0]
    started = time.perf_counter()
    code = subprocess.call(command, env=env, stdout=subprocess.DEVNULL)
    wall = time.perf_counter() - started
    data = json.loads(report.read_text(encoding="utf-8"))
    return {"jobs": jobs, "exit": code, "wall_s": round(wall, 1), "duration_s": data["duration_s"],
            "cases": len(data["results"]), "summary": {k: v for k, v in data["summary"].items() if v},
            "load_before": round(load_before, 1), "load_after": round(os.getloadavg()[0], 1),
            "cpu": data.get("device_name"),  # what ran it: timings from two machines are not comparable
            "verdicts": verdicts(data)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--backend", default="aot_eager")
    parser.add_argument("--dtypes", nargs="+", default=["all"])
    parser.add_argument("--shard", help="time only this part of the run (K/N)")
    parser.add_argument("--jobs", nargs="+", type=int, default=[1, 2])
    parser.add_argument("--out", type=Path, default=REPO / "benchmarks" / "results" / "conform_parallel.json")
    parser.add_argument("--keep", type=Path, help="keep each run's report (jN.json) and repros in this folder")
    args = parser.parse_args()
    try:  # a bad --out or --keep is one line before the first run, not a traceback after it
        paths.prepare(outputs=[(args.out, False)] + ([(args.keep, True)] if args.keep else []))
    except paths.PathError as err:
        print(f"conform_parallel: {err}", file=sys.stderr)
        return 2
    runs = []
    with tempfile.TemporaryDirectory(prefix="opspec-bench-parallel-") as name:
        folder = Path(name)
        for jobs in args.jobs:
            runs.append(run(args, jobs, folder, args.keep or folder))
            r = runs[-1]
            print(f"-j {jobs}: {r['cases']} cases in {r['wall_s']} s wall (report {r['duration_s']} s), "
                  f"load {r['load_before']} -> {r['load_after']}, exit {r['exit']}", flush=True)
    first = runs[0]
    differing, detail = compare(runs)
    for r in runs:
        r["ratio_to_first"] = round(first["wall_s"] / r["wall_s"], 2)
        r.pop("verdicts")
    result = {"backend": args.backend, "dtypes": args.dtypes, "shard": args.shard, "cores": os.cpu_count(),
              "measured": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "runs": runs,
              "verdict_fields": [*VERDICT_FIELDS, "expectation"],
              "cases_with_other_verdicts": differing, "cases_with_the_same_verdict_and_other_details": detail}
    atomic.write_text(args.out, portable.portable_json(result, REPO, indent=2))
    for r in runs[1:]:
        print(f"-j {r['jobs']}: {r['ratio_to_first']}x the speed of -j {first['jobs']}; "
              f"same verdicts: {r['same_verdicts_as_first']}")
    if differing:
        print(f"cases with other verdicts: {', '.join(differing[:10])}")
    if detail:
        print(f"same verdict, other details (message wording, compile counts): {', '.join(detail[:10])}")
    return 0 if not differing else 1


if __name__ == "__main__":
    sys.exit(main())
