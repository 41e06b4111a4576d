"""Detection power of `opspec conform`: how many faulty backends a default run catches.

Each faulty backend in benchmarks/backend_faults/ (manifest.yaml: ``faults`` from corpus.py,
``held_out`` from held_out.py) computes one op subtly wrong; a fault is caught when its op's
case does not pass. The correct control runs every op of the corpus and must pass all
of them. Settings are `opspec conform`'s defaults (4 examples, 2 compiles per case, seed 0, dynamic
shapes, the op's default dtypes); `--no-edges` measures the same run with random
draws only, as opspec drew them before edge inputs.

    python benchmarks/backend_detection.py --out benchmarks/results/backend_detection.json
"""
from __future__ import annotations

import argparse
import dataclasses
import sys
import time
from collections import defaultdict
from pathlib import Path

import yaml

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))  # backend_faults is imported as pkg.module:callable

from opspec.conform import cases  # noqa: E402
from opspec.conform.plan import Request  # noqa: E402
from opspec.conform.runner import CaseRunner, Settings  # noqa: E402

DEFAULT_DTYPES = next(f.default for f in dataclasses.fields(Request) if f.name == "dtypes")


def load_manifest(path: Path = HERE / "backend_faults" / "manifest.yaml") -> dict:
    return yaml.safe_load(path.read_text())


def run_case(backend: str, op: str, *, edges: bool, seed: int) -> list[dict]:
    """The records of ``op`` a default ``opspec conform`` run writes (its default dtypes: float32, or the op's
    first dtype where it takes no float32), at conform's default settings."""
    defaults = Settings(backend=backend)
    runner = CaseRunner(Settings(backend=backend, seed=seed, edges=edges, max_examples=defaults.max_examples,
                                 max_compiles=defaults.max_compiles))
    opset_op = runner.opset.ops_by_name[op]
    return [runner.run(case) for case in cases.cases_for([opset_op], list(DEFAULT_DTYPES), ["cpu"])]


def measure(manifest: dict, *, edges: bool, seed: int, only: list[str] | None = None) -> dict:
    faults = [{**f, "corpus": corpus} for corpus, key in (("corpus", "faults"), ("held_out", "held_out"))
              for f in manifest.get(key, ()) if not only or f["backend"] in only]
    results = []
    for fault in faults:
        records = run_case(f"backend_faults.{fault['corpus']}:{fault['backend']}", fault["op"], edges=edges, seed=seed)
        caught = any(r["status"] != "pass" for r in records)
        first = next((r for r in records if r["status"] != "pass"), records[0])
        results.append({**fault, "caught": caught, "status": first["status"], "dtype": first["dtype"],
                        "message": first.get("message", "")[:240], "examples": first.get("examples"),
                        "seconds": round(sum(r["duration_s"] for r in records), 2)})
    open_choices = []  # backends right by the contract where eager chose one of several answers: must pass
    for choice in [c for c in manifest.get("open_choices", ()) if not only or c["backend"] in only]:
        records = run_case(f"backend_faults.corpus:{choice['backend']}", choice["op"], edges=edges, seed=seed)
        first = next((r for r in records if r["status"] != "pass"), records[0])
        open_choices.append({**choice, "passed": all(r["status"] == "pass" for r in records), "status": first["status"],
                             "message": first.get("message", "")[:240]})
    control = []
    for op in dict.fromkeys(f["op"] for f in faults):
        for record in run_case(f"backend_faults.{manifest['control']}", op, edges=edges, seed=seed):
            control.append({"op": op, "dtype": record["dtype"], "status": record["status"],
                            "message": record.get("message", "")[:240], "examples": record.get("examples")})
    by_category: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for result in results:
        by_category[result["category"]][0] += result["caught"]
        by_category[result["category"]][1] += 1
    return {
        "edges": edges,
        "seed": seed,
        "caught": sum(r["caught"] for r in results),
        "faults": len(results),
        "held_out_caught": sum(r["caught"] for r in results if r["corpus"] == "held_out"),
        "held_out": sum(r["corpus"] == "held_out" for r in results),
        "control_cases": len(control),
        "control_passed": sum(c["status"] == "pass" for c in control),
        # right answers: a pass, or a fallback where the backend did not say it ran the op itself
        "control_right": sum(c["status"] in ("pass", "fallback") for c in control),
        "by_category": {k: {"caught": v[0], "faults": v[1]} for k, v in by_category.items()},
        "open_choices": len(open_choices),
        "open_choices_passed": sum(c["passed"] for c in open_choices),
        "results": results,
        "open_choice_results": open_choices,
        "control": control,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, help="write the JSON results here")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--no-edges", action="store_true", help="random draws only")
    parser.add_argument("--both", action="store_true", help="measure with and without edge inputs")
    parser.add_argument("--only", nargs="*", help="these faulty backends only (names from the manifest)")
    args = parser.parse_args(argv)
    import torch

    manifest = load_manifest()
    started = time.perf_counter()
    modes = [True, False] if args.both else [not args.no_edges]
    runs = [measure(manifest, edges=mode, seed=args.seed, only=args.only) for mode in modes]
    for run in runs:
        label = "edge inputs + random draws" if run["edges"] else "random draws only"
        print(f"{label}: caught {run['caught']}/{run['faults']} (held out: {run['held_out_caught']}/{run['held_out']}); "
              f"control right on "
              f"{run['control_right']}/{run['control_cases']} cases ({run['control_passed']} pass); "
              f"open choices passed {run['open_choices_passed']}/{run['open_choices']}")
        for result in run["results"]:
            mark = "caught" if result["caught"] else "MISSED"
            print(f"  {mark:<7}{result['backend']:<26}{result['status']:<14}{' '.join(result['message'].split())[:90]}")
        for choice in run["open_choice_results"]:
            if not choice["passed"]:
                print(f"  open choice {choice['backend']} {choice['status']}: {' '.join(choice['message'].split())[:90]}")
        for record in run["control"]:
            if record["status"] not in ("pass", "fallback"):
                print(f"  control {record['status']} {record['op']} {record['dtype']}: {record['message'][:100]}")
    if args.out:
        from opspec.spec import atomic, portable

        payload = {"torch": torch.__version__, "seconds": round(time.perf_counter() - started, 1), "runs": runs}
        atomic.write_text(args.out, portable.portable_json(payload, indent=1))
    ok = all(r["control_right"] == r["control_cases"] and r["open_choices_passed"] == r["open_choices"] for r in runs)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
