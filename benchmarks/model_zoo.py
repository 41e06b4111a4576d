"""Real models: is `opspec coverage` true for what people deploy?

For every model of the zoo (``opspec.examples.zoo``: torchvision and transformers
architectures built from their own definitions with random weights), this runs
``opspec coverage MODEL --backend aot_eager,eager,inductor,onnxruntime`` as a user
would (a subprocess, start-up included) and checks its answer twice:

- the op set against an independent computation: ``torch.export`` ->
  ``run_decompositions(core_aten_decompositions())`` -> the ops left and their
  counts, each classified core or not by ``torch.Tag.core``;
- each backend's verdicts against what the backend really does with the model on
  CPU: Inductor's generated code (an op called lowered must not be called back
  as ``torch.ops.aten.*``; an op flagged must really be called back, or the
  compile must fail; the wrapper code is read as Inductor writes it, before its
  C++ kernels are built); ``torch.onnx.export(dynamo=True)`` run in ONNX Runtime (an
  op flagged must be the reason the export or run fails; a failure that names no
  op is reported as such); eager and aot_eager runs (they run every op).

Needs the zoo's venv (see benchmarks/README.md): torchvision and transformers
beside the registry's torch 2.13.0 build.

    python benchmarks/model_zoo.py                      # every model; writes benchmarks/model_zoo.json
    python benchmarks/model_zoo.py --models transformers:gpt2 --out /tmp/x.json
    python benchmarks/model_zoo.py --markdown           # the table of benchmarks/model_zoo.json, for the README
"""
from __future__ import annotations

import argparse
import importlib.metadata
import json
import re
import subprocess
import sys
import time
import warnings
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
OUT = HERE / "model_zoo.json"
BACKENDS = ("aot_eager", "eager", "inductor", "onnxruntime")
FALLBACK_CALL = re.compile(r"\b(?:torch\.ops\.)?aten\.(\w+)\.(\w+)\(")  # the wrapper aliases aten = torch.ops.aten
EXTERN_CALL = re.compile(r"extern_kernels\.(\w+)\(")


class CoverageFailed(Exception):
    """`opspec coverage` gave no report for a model (its exit status and last words)."""


def qualified(name: str, overload: str) -> str:
    return f"aten::{name}" if overload == "default" else f"aten::{name}.{overload}"


def run_coverage(key: str) -> tuple[dict, float, int]:
    tool = Path(sys.executable).parent / "opspec"
    started = time.perf_counter()
    done = subprocess.run([str(tool), "coverage", key, "--backend", ",".join(BACKENDS), "--format", "json"],
                          capture_output=True, text=True)
    elapsed = time.perf_counter() - started
    if done.returncode not in (0, 1):
        raise CoverageFailed(f"opspec coverage exited {done.returncode}: {done.stderr.strip()[-500:]}")
    return json.loads(done.stdout), elapsed, done.returncode


def independent(example) -> tuple[Counter, dict[str, bool], object]:
    """Op counts after torch's own core decompositions, and Tag.core per op: no opspec code involved."""
    import torch
    from torch._decomp import core_aten_decompositions

    exported = torch.export.export(example.model, example.args, dict(example.kwargs), strict=False)
    decomposed = exported.run_decompositions(core_aten_decompositions())
    counts: Counter = Counter()
    core: dict[str, bool] = {}
    for module in decomposed.graph_module.modules():
        for node in getattr(module, "graph", torch.fx.Graph()).nodes:
            if node.op == "call_function" and isinstance(node.target, torch._ops.OpOverload):
                schema = node.target._schema
                name = schema.name + (f".{schema.overload_name}" if schema.overload_name else "")
                counts[name] += 1
                core[name] = torch.Tag.core in node.target.tags
    return counts, core, decomposed


def inductor_reality(program, example) -> dict:
    """What Inductor's generated CPU code calls back into ATen, or why it did not compile."""
    import torch

    from opspec.bridge import inductor_code

    torch._dynamo.reset()
    compiled = torch.compile(program.module(), backend="inductor")
    try:
        with torch.no_grad():
            sources = inductor_code.wrapper_code(compiled, *example.args, **dict(example.kwargs))
    except Exception as err:  # noqa: BLE001 - a failing backend is a result
        return {"ran": False, "error": _line(err), "fallback_calls": [], "extern_calls": []}
    code = "\n".join(sources)
    return {"ran": True, "error": "",
            "fallback_calls": sorted({qualified(n, o) for n, o in FALLBACK_CALL.findall(code)}),
            "extern_calls": sorted(set(EXTERN_CALL.findall(code)))}


def onnx_reality(example) -> dict:
    """torch.onnx.export(dynamo=True) of the model, run in ONNX Runtime."""
    import torch

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            program = torch.onnx.export(example.model, example.args, kwargs=dict(example.kwargs), dynamo=True,
                                        verbose=False, report=False)
            program.initialize_inference_session()
            program(*example.args, **dict(example.kwargs))
    except Exception as err:  # noqa: BLE001
        return {"ran": False, "error": _root_line(err)}
    return {"ran": True, "error": ""}


def eager_reality(example, backend: str) -> dict:
    import torch

    torch._dynamo.reset()
    try:
        with torch.no_grad():
            fn = example.model if backend == "eager" else torch.compile(example.model, backend=backend)
            fn(*example.args, **dict(example.kwargs))
    except Exception as err:  # noqa: BLE001
        return {"ran": False, "error": _line(err)}
    return {"ran": True, "error": ""}


def _line(err: BaseException) -> str:
    lines = [line for line in str(err).strip().splitlines() if line.strip()]
    return f"{type(err).__name__}: {lines[0][:300] if lines else ''}"


def _root_line(err: BaseException) -> str:
    while isinstance(err.__cause__, BaseException):
        err = err.__cause__
    return _line(err)


def _named(op: str, message: str) -> bool:
    return re.search(rf"\b{re.escape(op.split('::')[1].split('.')[0])}\b", message) is not None


def judge(report: dict, backend: str, reality: dict) -> dict:
    """Where the coverage verdicts for one backend disagree with what the backend did."""
    ops = {entry["op"]: entry for entry in report["ops"]}
    flagged = set(report["not_lowered"][backend])
    wrong = []
    if backend == "inductor" and reality["ran"]:
        called_back = set(reality["fallback_calls"])
        for op, entry in ops.items():
            status = entry["backends"][backend]["status"]
            if status == "lowered" and op in called_back:
                wrong.append(f"{op}: called lowered, but the generated code calls torch.ops.{op.replace('::', '.')}")
            if op in flagged and op not in called_back:
                wrong.append(f"{op}: flagged {status}, but the generated code computes it")
    elif reality["ran"]:  # the whole model ran on the backend: every op it needs ran there
        wrong += [f"{op}: flagged {ops[op]['backends'][backend]['status']}, but the model runs on {backend}"
                  for op in sorted(flagged)]
    else:
        named = [op for op in flagged if _named(op, reality["error"])]
        if flagged and not named:
            wrong.append(f"flagged {', '.join(sorted(flagged))}, but the failure names none of them: {reality['error']}")
    # a failure is an op's when it names an op coverage flagged; otherwise every op is supported and it is not an op's
    cause = "" if reality["ran"] else ("op" if any(_named(op, reality["error"]) for op in flagged) else "not an op")
    return {"agrees": not wrong, "disagreements": wrong, "ran": reality["ran"], "failure": reality.get("error", ""),
            "failure_cause": cause}


def measure(key: str, previous: dict | None = None) -> dict:
    """One model; with ``previous`` (its earlier result), the backends' runs are reused and only coverage reruns."""
    import torch

    from opspec.bridge import torch_ops
    from opspec.checks import models
    from opspec.examples import zoo
    from opspec.spec import load

    report, seconds, exit_code = run_coverage(key)
    example = models.load_model(key, zoo.ZOO)
    counts, core, program = independent(example)
    ours = {entry["op"]: entry["count"] for entry in report["ops"]}
    ours_core = {entry["op"]: entry["opset"] == "core" for entry in report["ops"]}
    # ops torch's core table leaves that the opset lowers with a rule of its own
    own_rules = {rule.op for rule in load.load_opset().rules} - set(torch_ops.core_decomposition_table())
    lowered_further = sorted(op for op in set(counts) - set(ours) if op in own_rules)
    kept = {op for op in set(counts) & set(ours)}
    op_set = {
        "agrees": ours == dict(counts) and ours_core == core,
        "lowered_further": lowered_further,
        # equal except where an opset rule lowers what torch's table leaves (those rules' targets may add calls)
        "agrees_given_rules": bool(lowered_further) and set(counts) - set(ours) == set(lowered_further)
                              and all(ours[op] >= counts[op] for op in kept)
                              and all(ours_core[op] == core[op] for op in kept if op in core),
        "only_coverage": sorted(set(ours) - set(counts)),
        "only_independent": sorted(set(counts) - set(ours)),
        "count_differences": sorted(op for op in set(ours) & set(counts) if ours[op] != counts[op]),
        "core_differences": sorted(op for op in set(ours) & set(core) if ours_core[op] != core[op]),
    }
    if previous is not None:
        reality = previous["reality"]
    else:
        reality = {
            "inductor": inductor_reality(program, example),
            "onnxruntime": onnx_reality(example),
            "eager": eager_reality(example, "eager"),
            "aot_eager": eager_reality(example, "aot_eager"),
        }
    torch._dynamo.reset()
    return {
        "model": key,
        "ops": len(ours),
        "calls": sum(ours.values()),
        "core": sum(1 for e in report["ops"] if e["opset"] == "core"),
        "bookkeeping": report["bookkeeping"],
        "outside_opset": report["outside_opset"],
        "flagged": {b: report["not_lowered"][b] for b in BACKENDS},
        "coverage_exit": exit_code,
        "coverage_s": round(seconds, 1),
        "op_set": op_set,
        "backends": {b: judge(report, b, reality[b]) for b in BACKENDS},
        "reality": reality,
    }


def environment() -> dict:
    return {name: importlib.metadata.version(name).split("+")[0]
            for name in ("torch", "torchvision", "transformers", "onnxscript", "onnxruntime")}


def markdown(data: dict) -> str:
    rows = ["| model | ops (calls) | bookkeeping / outside opset | flagged | op set = independent | backends agree with reality | coverage time |",
            "|---|---|---|---|---|---|---|"]
    for m in data["models"]:
        if "coverage_error" in m:
            rows.append(f"| {m['model']} | **coverage failed**: {m['coverage_error']} | | | | | |")
            continue
        flagged = "; ".join(f"{b}: {', '.join(o.removeprefix('aten::') for o in ops)}"
                            for b, ops in m["flagged"].items() if ops) or "none"
        extra = ", ".join(o.removeprefix("aten::") for o in m["bookkeeping"] + m["outside_opset"]) or "-"
        agree = []
        for b, verdict in m["backends"].items():
            mark = "yes" if verdict["agrees"] else "**no**"
            note = "" if verdict["ran"] else f" (fails: {verdict['failure_cause']})"
            agree.append(f"{b} {mark}{note}")
        rows.append(f"| {m['model']} | {m['ops']} ({m['calls']}) | {extra} | {flagged} | "
                    f"{op_set_cell(m['op_set'])} | {'; '.join(agree)} | {m['coverage_s']} s |")
    s = data["summary"]
    rows.append("")
    rows.append(f"{s['models']} models, {s['model_op_pairs']} model x op pairs: op sets agree with the independent "
                f"computation on {s['op_set_agrees']} of {s['models']}"
                + (f" ({s['op_set_agrees_given_rules']} more where only the opset's own rules lower further)"
                   if s.get("op_set_agrees_given_rules") else "")
                + "; coverage agrees with what the backend does "
                f"for {s['backend_agrees']} of {s['models'] * len(BACKENDS)} model x backend pairs"
                + (f"; coverage gave no report for {s['coverage_failed']} model(s)." if s.get("coverage_failed") else "."))
    return "\n".join(rows)


def op_set_cell(op_set: dict) -> str:
    if op_set["agrees"]:
        return "yes"
    if op_set.get("agrees_given_rules"):
        lowered = ", ".join(o.removeprefix("aten::") for o in op_set["lowered_further"])
        return f"yes, but for {lowered}: torch's core table keeps it, an opset rule lowers it"
    return "**no**"


def summarised(all_results: list[dict]) -> dict:
    results = [r for r in all_results if "coverage_error" not in r]
    return {
        "command": "python benchmarks/model_zoo.py",
        "environment": environment(),
        "summary": {
            "models": len(results),
            "coverage_failed": len(all_results) - len(results),
            "model_op_pairs": sum(r["ops"] for r in results),
            "op_set_agrees": sum(r["op_set"]["agrees"] for r in results),
            "op_set_agrees_given_rules": sum(bool(r["op_set"].get("agrees_given_rules")) for r in results),
            "backend_agrees": sum(v["agrees"] for r in results for v in r["backends"].values()),
        },
        "models": all_results,
    }


def in_zoo_order(by_model: dict, zoo_keys) -> list[dict]:
    """Results in the zoo's order, then any model no longer in the zoo."""
    return [by_model[k] for k in zoo_keys if k in by_model] + [m for k, m in by_model.items() if k not in zoo_keys]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", nargs="+", metavar="KEY", help="zoo keys (default: all)")
    parser.add_argument("--out", type=Path, default=OUT)
    parser.add_argument("--markdown", action="store_true", help="print the table of --out and exit")
    parser.add_argument("--rejudge", action="store_true",
                        help="reuse the backends' runs recorded in --out; rerun coverage and the op-set check only "
                             "(after the manifests changed)")
    parser.add_argument("--merge", nargs="+", type=Path, metavar="JSON",
                        help="combine results written by runs over parts of the zoo (in zoo order) into --out")
    args = parser.parse_args()
    if args.merge:
        from opspec.examples import zoo
        from opspec.spec import atomic, portable

        found = {m["model"]: m for path in args.merge for m in json.loads(path.read_text(encoding="utf-8"))["models"]}
        atomic.write_text(args.out, portable.portable_json(summarised(in_zoo_order(found, zoo.ZOO)), indent=1))
        return 0
    if args.markdown:
        print(markdown(json.loads(args.out.read_text(encoding="utf-8"))))
        return 0
    from opspec.examples import zoo
    from opspec.spec import atomic, portable

    keys = args.models or list(zoo.ZOO)
    earlier = {}
    if args.rejudge:
        earlier = {m["model"]: m for m in json.loads(args.out.read_text(encoding="utf-8"))["models"]}
    results = []
    for key in keys:
        started = time.perf_counter()
        try:
            result = measure(key, earlier.get(key))
        except CoverageFailed as failure:  # recorded as a row of its own: opspec could not answer for this model
            result = {"model": key, "coverage_error": str(failure)}
        result["benchmark_s"] = round(time.perf_counter() - started, 1)
        results.append(result)
        written = in_zoo_order({**earlier, **{r["model"]: r for r in results}}, zoo.ZOO)  # --rejudge keeps the others
        atomic.write_text(args.out, portable.portable_json(summarised(written), indent=1))  # a stopped run keeps its models
        if "coverage_error" in result:
            print(f"{key}: {result['coverage_error']}", flush=True)
            continue
        verdicts = ", ".join(f"{b} {'ok' if v['agrees'] else 'NO'}" for b, v in result["backends"].items())
        print(f"{key}: {result['ops']} ops, op set {'ok' if result['op_set']['agrees'] else 'NO'}, {verdicts} "
              f"({result['benchmark_s']}s)", flush=True)
    data = summarised(in_zoo_order({**earlier, **{r["model"]: r for r in results}}, zoo.ZOO))
    atomic.write_text(args.out, portable.portable_json(data, indent=1))
    print(markdown(data))
    return 0


if __name__ == "__main__":
    sys.exit(main())
