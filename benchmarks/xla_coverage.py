"""Is `opspec coverage MODEL --backend xla` true for what PyTorch/XLA does with the model?

For every model of the zoo (``opspec.examples.zoo``), this runs
``opspec coverage MODEL --backend xla --format json`` as a user would (a
subprocess), then runs the model itself on the XLA device (``PJRT_DEVICE=CPU``
unless set) with ``torch_xla.debug.metrics`` cleared first, and compares the
ops coverage says are not lowered with the ATen ops XLA's own counters report as
fallen back to the CPU (``executed_fallback_ops()``, the names its debugging
tool prints after "Op(s) not lowered:"). Names are compared by operator
(``aten::nonzero``): the counters name a fallback by its packet or its overload.

A model is in agreement when both sets are equal. Coverage reads the model's
graph after the core decompositions, the device runs the model's own calls, so a
disagreement says which side named what; a model whose run on XLA fails is
recorded with its error and whether the error names an op coverage flagged.

Needs the xla extra's venv (torch 2.9 with torch-xla 2.9.0) and the zoo's
libraries in it (torchvision 0.24.0, the release paired with torch 2.9, and
transformers); see benchmarks/README.md.

    python benchmarks/xla_coverage.py                     # every model; writes benchmarks/results/xla_coverage.json
    python benchmarks/xla_coverage.py --models torchvision:resnet18 --out /tmp/x.json
    python benchmarks/xla_coverage.py --markdown          # the table, for the README
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
OUT = HERE / "results" / "xla_coverage.json"
sys.path.insert(0, str(HERE.parent / "src"))


def operator(name: str) -> str:
    """``aten::bucketize.Tensor`` -> ``aten::bucketize``: the counters name some fallbacks without the overload."""
    return name.split(".")[0]


def coverage_flags(key: str) -> tuple[dict, float]:
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "opspec", "coverage", key, "--backend", "xla", "--format", "json"],
                          capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(HERE.parent / "src")})
    if done.returncode not in (0, 1):
        raise RuntimeError(f"opspec coverage exited {done.returncode}: {done.stderr.strip()[-300:]}")
    return json.loads(done.stdout), time.perf_counter() - started


def xla_run(key: str) -> dict:
    """The model on the XLA device: the fallback ops XLA counted, or the error that stopped it."""
    import torch

    from opspec.checks import models
    from opspec.conform.backends import xla
    from opspec.examples import zoo

    example = models.load_model(key, zoo.ZOO)
    device = xla.device()
    metrics = xla._metrics()
    metrics.clear_all()
    try:
        model = example.model.to(device)
        args = [a.to(device) if isinstance(a, torch.Tensor) else a for a in example.args]
        kwargs = {k: v.to(device) if isinstance(v, torch.Tensor) else v for k, v in dict(example.kwargs).items()}
        with torch.no_grad():
            xla.on_device(lambda *inputs: model(*inputs, **kwargs))(*args)
    except Exception as err:  # noqa: BLE001 - a model XLA cannot run is a result
        lines = [line for line in str(err).strip().splitlines() if line.strip()]
        error = f"{type(err).__name__}: {lines[0][:300] if lines else ''}"
    else:
        error = ""
    lowered, fell_back = xla.executed(metrics.counter_names(), metrics.executed_fallback_ops())
    return {"ran": not error, "error": error, "fallback_ops": fell_back, "lowered_counters": len(lowered)}


def judge(flagged: list[str], reality: dict) -> dict:
    ours = {operator(op) for op in flagged}
    theirs = {operator(op) for op in reality["fallback_ops"]}
    named = [op for op in ours if op.split("::")[1] in reality["error"]]
    cause = "" if reality["ran"] else ("op" if named else "not an op")
    return {"agrees": reality["ran"] and ours == theirs, "only_coverage": sorted(ours - theirs),
            "only_xla": sorted(theirs - ours), "failure_cause": cause}


def measure(key: str) -> dict:
    report, seconds = coverage_flags(key)
    flagged = report["not_lowered"]["xla"]
    reality = xla_run(key)
    return {"model": key, "ops": len(report["ops"]), "flagged": flagged, "coverage_s": round(seconds, 1),
            "xla": reality, **judge(flagged, reality)}


def markdown(data: dict) -> str:
    rows = ["| model | ops | coverage: not lowered on XLA | XLA's counters: executed_fallback_ops | agree |",
            "|---|---|---|---|---|"]
    for m in data["models"]:
        if "coverage_error" in m:
            rows.append(f"| {m['model']} | **coverage failed**: {m['coverage_error']} | | | |")
            continue
        flagged = ", ".join(m["flagged"]) or "none"
        reality = ", ".join(m["xla"]["fallback_ops"]) or "none"
        if not m["xla"]["ran"]:
            reality += f" (run failed, {m['failure_cause']}: {m['xla']['error'][:120]})"
        verdict = "yes" if m["agrees"] else "**no**" + "".join(
            f"; only {side}: {', '.join(ops)}" for side, ops in (("coverage", m["only_coverage"]), ("XLA", m["only_xla"]))
            if ops)
        rows.append(f"| {m['model']} | {m['ops']} | {flagged} | {reality} | {verdict} |")
    s = data["summary"]
    rows += ["", f"{s['agree']} of {s['models']} models agree; {s['failed_runs']} model run(s) failed on XLA "
                 f"({s['failed_not_an_op']} for a reason that is not an op)."]
    return "\n".join(rows)


def summarised(results: list[dict]) -> dict:
    import importlib.metadata

    done = [r for r in results if "coverage_error" not in r]
    return {
        "command": "PJRT_DEVICE=CPU python benchmarks/xla_coverage.py",
        "environment": {name: importlib.metadata.version(name).split("+")[0]
                        for name in ("torch", "torch-xla", "torchvision", "transformers")},
        "summary": {"models": len(done), "agree": sum(r["agrees"] for r in done),
                    "failed_runs": sum(not r["xla"]["ran"] for r in done),
                    "failed_not_an_op": sum(r["failure_cause"] == "not an op" for r in done)},
        "models": results,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", nargs="+", metavar="KEY", help="zoo keys (default: all)")
    parser.add_argument("--out", type=Path, default=OUT)
    parser.add_argument("--markdown", action="store_true", help="print the table of --out and exit")
    args = parser.parse_args()
    if args.markdown:
        print(markdown(json.loads(args.out.read_text(encoding="utf-8"))))
        return 0
    from opspec.examples import zoo
    from opspec.spec import atomic, portable

    results = []
    for key in args.models or list(zoo.ZOO):
        started = time.perf_counter()
        try:
            result = measure(key)
        except RuntimeError as failure:
            result = {"model": key, "coverage_error": str(failure)}
        result["benchmark_s"] = round(time.perf_counter() - started, 1)
        print(f"{key}: {'agrees' if result.get('agrees') else 'disagrees'} ({result['benchmark_s']} s)", flush=True)
        results.append(result)
        data = summarised(results)
        atomic.write_text(args.out, portable.portable_json(data, indent=1))  # after each model: a long run keeps what it did
    print(markdown(data))
    return 0


if __name__ == "__main__":
    sys.exit(main())
