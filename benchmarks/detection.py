"""Detection power: how many known-wrong decompositions each checker kills.

Two checkers run on the corpus in benchmarks/faults/ (manifest.yaml):
- opspec: decomp_check.run, hypothesis-drawn calls from the schema and hints
  (values only: closure is off, so a fault is killed by its numbers, not by the
  ops it happens to use);
- peer: PyTorch's OpInfo sample inputs (the inputs test/test_decomp.py uses),
  each sample bound to the aten overload and judged by the same comparison
  rule (opspec.testing.compare, float64 reference for float16/bfloat16).
A fault counts as killed when the checker reports a mismatch (or the candidate
raises where the kernel does not); a control flagged by a checker is a false
positive. Every fault's recorded witness is re-checked first.

    python benchmarks/detection.py --out benchmarks/results/detection.json
"""
from __future__ import annotations

import argparse
import math
import sys
import time
import warnings
from collections import defaultdict
from pathlib import Path

import torch
import yaml

from opspec.bridge import torch_ops
from opspec.checks import decomp_check
from opspec.spec import load, portable
from opspec.testing import compare, contract_compare
from opspec.testing.strategies import op_traits
from opspec.testing.strategies.call import map_tensors
from opspec.testing.strategies.values import copy_preserving_layout

FAULTS = Path(__file__).resolve().parent / "faults"
CATEGORY_ORDER = ("formula", "sign", "precision", "overflow", "nan", "ties", "dims", "dtype", "broadcast", "empty",
                  "domain", "branch", "spread", "signed_zero", "inf", "integer", "layout", "size", "accuracy")
DEFAULT_DTYPES = ("float32", "float64")
DROPPABLE_KWARGS = {"inplace": False}  # Python-API flags with no aten counterpart, harmless to drop at this value


def load_entries(path: Path) -> list[dict]:
    entries = yaml.safe_load(path.read_text())["entries"]
    seen = set()
    for entry in entries:
        if entry["impl"] in seen:
            raise SystemExit(f"duplicate entry {entry['impl']}")
        seen.add(entry["impl"])
    return entries


def candidate(entry: dict):
    from opspec.bridge.decomp_table import load_callable

    return load_callable(entry["impl"])


def copied(value):
    return map_tensors(copy_preserving_layout, value)


def judge(op: str, fn, args: tuple, kwargs: dict) -> tuple[bool, str]:
    """(differs, problem) for one call under opspec's rule; the kernel must accept the call."""
    kernel = torch_ops.resolve(op)
    expected = kernel(*copied(args), **copied(kwargs))
    try:
        actual = fn(*copied(args), **copied(kwargs))
    except Exception as err:
        return True, f"decomposition raised {type(err).__name__}: {err}"
    near_zero = op in op_traits.ACCURATE_NEAR_ZERO
    floating = next((t for t in _tensors((args, kwargs)) if t.is_floating_point()), None)
    contract = contract_compare.contract_for(op, str(floating.dtype).removeprefix("torch.")) if floating is not None \
        else None
    operands = contract_compare.operands_of_call(contract, args, kwargs)
    if operands is not None:  # the op's accuracy contract, as the decomposition check judges it
        verdict = contract_compare.compare_with_contract(actual, expected, operands, contract, near_zero=near_zero)
        return (not verdict.ok), verdict.message
    low = [t for t in _tensors((args, kwargs)) if t.dtype in compare.LOW_PRECISION]
    reference64 = None
    if low:
        try:
            reference64 = compare.float64_run(kernel, copied(args), copied(kwargs))
        except Exception:
            reference64 = None
    verdict = compare.compare(actual, expected, float64=reference64, near_zero=near_zero)
    return (not verdict.ok), verdict.message


def _tensors(value) -> list[torch.Tensor]:
    found: list[torch.Tensor] = []
    map_tensors(lambda t: found.append(t) or t, value)
    return found


def first_line(text: str) -> str:
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return " ".join(lines[:3])[:240]


# ---- witnesses ----

def check_witness(entry: dict) -> dict:
    def capture(*args, **kwargs):
        return args, kwargs

    args, kwargs = eval(f"capture({entry['witness']})", {"torch": torch, "capture": capture,
                                                          "nan": math.nan, "inf": math.inf})
    differs, problem = judge(entry["op"], candidate(entry), args, kwargs)
    if not differs:  # the rule does not see the sign of a zero (a row states it); a witness may be about one
        expected = _tensors(torch_ops.resolve(entry["op"])(*copied(args), **copied(kwargs)))
        actual = _tensors(candidate(entry)(*copied(args), **copied(kwargs)))
        for want, got in zip(expected, actual):
            if want.is_floating_point() and got.shape == want.shape and \
                    ((want == 0) & (got == 0) & (want.signbit() != got.signbit())).any():
                differs, problem = True, "the sign of a zero differs (a special-case row states it)"
    return {"confirmed": differs, "problem": first_line(problem)}


# ---- opspec ----

def run_opspec(entry: dict, opset, max_examples: int, seed: int) -> dict:
    subject = decomp_check.subject_for_candidate(opset, entry["op"], entry["impl"])
    dtypes = dtypes_for(subject)
    started = time.perf_counter()
    outcome = decomp_check.run(subject, dtypes=dtypes, max_examples=max_examples, seed=seed, closure=False)
    result = {"killed": outcome.counterexample is not None or bool(outcome.broken_rows), "seconds": round(time.perf_counter() - started, 2),
              "examples": outcome.examples, "dtypes": [str(d).removeprefix("torch.") for d in dtypes]}
    if outcome.counterexample is not None:
        result["dtype"] = str(outcome.counterexample.dtype).removeprefix("torch.")
        result["problem"] = first_line(outcome.counterexample.problem)
    elif outcome.broken_rows:
        result["problem"] = first_line(outcome.broken_rows[0])
    if outcome.error:
        result["error"] = outcome.error
    return result


def dtypes_for(subject) -> tuple[torch.dtype, ...]:
    from opspec.testing import strategies

    hinted = strategies.effective_hints(subject.op, subject.hints).dtypes
    return tuple(getattr(torch, name) for name in (hinted or DEFAULT_DTYPES))


# ---- peer: OpInfo samples ----

_OP_DB = None


def op_db():
    global _OP_DB
    if _OP_DB is None:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            from torch.testing._internal.common_methods_invocations import op_db as db
        _OP_DB = db
    return _OP_DB


def opinfos_for(op: str) -> list:
    """OpInfos whose function is this op's base name: name, nn.functional.name, or aten_name."""
    _, base, _ = torch_ops.split_name(op)
    names = {base, f"nn.functional.{base}", f"special.{base}"}
    return [info for info in op_db() if info.name in names or info.aten_name == base]


def opinfo_label(info) -> str:
    return info.name + (f".{info.variant_test_name}" if info.variant_test_name else "")


def bind_sample(op: str, sample) -> tuple[tuple, dict] | None:
    """The sample as a call of the aten overload, or None when it does not fit the schema."""
    _, arguments = _schema_arguments(op)
    names = {a.name for a in arguments}
    args = (sample.input, *sample.args)
    positional = [a for a in arguments if not a.kwarg_only]
    if len(args) > len(positional):
        return None
    # a tensor where the schema wants a number binds through __index__ (max.binary's `other` as max.dim's dim):
    # not a call a graph would hold, so the sample does not fit
    for argument, value in zip(positional, args):
        if isinstance(value, torch.Tensor) and not argument.is_tensor:
            return None
    if any(isinstance(v, torch.Tensor) and not a.is_tensor for a in arguments for k, v in sample.kwargs.items() if k == a.name):
        return None
    kwargs = {}
    for key, value in sample.kwargs.items():
        if key in names:
            kwargs[key] = value
        elif key in DROPPABLE_KWARGS and value == DROPPABLE_KWARGS[key]:
            continue
        else:
            return None
    return args, kwargs


def _schema_arguments(op: str):
    from opspec.testing.strategies.schema_args import arguments_of

    return arguments_of(torch_ops.all_aten_schemas()[op])


def run_peer(entry: dict, dtypes: tuple[torch.dtype, ...]) -> dict:
    infos = opinfos_for(entry["op"])
    result = {"opinfos": [opinfo_label(i) for i in infos], "killed": False, "samples_run": 0,
              "samples_skipped": 0, "seconds": 0.0}
    if not infos:
        return result
    fn, kernel = candidate(entry), torch_ops.resolve(entry["op"])
    started = time.perf_counter()
    for dtype in dtypes:
        for info in infos:
            try:
                samples = list(info.sample_inputs("cpu", dtype))
            except Exception:
                continue  # the OpInfo has no samples for this dtype
            for sample in samples:
                bound = bind_sample(entry["op"], sample)
                if bound is None:
                    result["samples_skipped"] += 1
                    continue
                args, kwargs = bound
                try:
                    kernel(*copied(args), **copied(kwargs))
                except Exception:
                    result["samples_skipped"] += 1  # not a valid call of this overload
                    continue
                result["samples_run"] += 1
                differs, problem = judge(entry["op"], fn, args, kwargs)
                if differs:
                    result.update(killed=True, dtype=str(dtype).removeprefix("torch."), opinfo=opinfo_label(info),
                                  problem=first_line(problem))
                    result["seconds"] = round(time.perf_counter() - started, 2)
                    return result
    result["seconds"] = round(time.perf_counter() - started, 2)
    return result


# ---- summary ----

def summarize(results: list[dict]) -> dict:
    summary: dict = {}
    for checker in ("opspec", "peer"):
        faults = [r for r in results if r["kind"] == "fault"]
        controls = [r for r in results if r["kind"] == "control"]
        per_category = defaultdict(lambda: [0, 0])
        for r in faults:
            per_category[r["category"]][0] += r[checker]["killed"]
            per_category[r["category"]][1] += 1
        summary[checker] = {
            "faults_killed": sum(r[checker]["killed"] for r in faults), "faults": len(faults),
            "controls_flagged": sum(r[checker]["killed"] for r in controls), "controls": len(controls),
            "seconds": round(sum(r[checker]["seconds"] for r in results), 1),
            "per_category": {c: per_category[c] for c in CATEGORY_ORDER if c in per_category},
        }
    summary["peer"]["faults_without_opinfo"] = sum(1 for r in results if r["kind"] == "fault" and not r["peer"]["opinfos"])
    return summary


def markdown(summary: dict) -> str:
    o, p = summary["opspec"], summary["peer"]

    def rate(killed, total):
        return f"{killed}/{total} ({100 * killed / total:.0f}%)" if total else "-"

    lines = ["| | opspec (hypothesis, 100 calls/dtype) | peer (OpInfo samples) |", "|---|---|---|"]
    lines.append(f"| faults killed | {rate(o['faults_killed'], o['faults'])} | {rate(p['faults_killed'], p['faults'])} |")
    lines.append(f"| controls flagged (false positives) | {rate(o['controls_flagged'], o['controls'])} | "
                 f"{rate(p['controls_flagged'], p['controls'])} |")
    for category in o["per_category"]:
        ok, ot = o["per_category"][category]
        pk, pt = p["per_category"][category]
        lines.append(f"| {category} | {ok}/{ot} | {pk}/{pt} |")
    lines.append(f"| checker time, all entries | {o['seconds']:.0f} s | {p['seconds']:.0f} s |")
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path("benchmarks/results/detection.json"))
    parser.add_argument("--manifest", type=Path, default=FAULTS / "manifest.yaml")
    parser.add_argument("--max-examples", type=int, default=100)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--only", metavar="IMPL", action="append", help="run only these entries (module:function)")
    parser.add_argument("--no-peer", action="store_true")
    args = parser.parse_args(argv)

    sys.path.insert(0, str(FAULTS))
    warnings.filterwarnings("ignore")
    torch.set_num_threads(1)  # the corpus is many tiny calls: threads only add contention
    opset = load.load_opset(None)
    entries = [e for e in load_entries(args.manifest) if not args.only or e["impl"] in args.only]
    started = time.perf_counter()
    results = []
    for entry in entries:
        record = {k: entry[k] for k in ("op", "impl", "kind", "category", "description")}
        if entry.get("source"):
            record["source"] = entry["source"]
        if entry["kind"] == "fault":
            record["witness"] = entry["witness"]
            record["witness_check"] = check_witness(entry)
        record["opspec"] = run_opspec(entry, opset, args.max_examples, args.seed)
        dtypes = tuple(getattr(torch, d) for d in record["opspec"]["dtypes"])
        record["peer"] = {"opinfos": [], "killed": False, "seconds": 0.0} if args.no_peer else run_peer(entry, dtypes)
        results.append(record)
        o, p = record["opspec"], record["peer"]
        print(f"{entry['kind']:7} {entry['impl']:48} opspec {'KILLED' if o['killed'] else 'passed':6} {o['seconds']:6.1f}s"
              f"  peer {'KILLED' if p['killed'] else 'passed':6} {p['seconds']:5.1f}s  "
              f"{o.get('problem', o.get('error', ''))[:70]}", flush=True)

    unconfirmed = [r["impl"] for r in results if r["kind"] == "fault" and not r["witness_check"]["confirmed"]]
    summary = summarize(results)
    summary["wall_seconds"] = round(time.perf_counter() - started, 1)
    summary["torch"] = torch.__version__
    summary["unconfirmed_witnesses"] = unconfirmed
    report = {"settings": {"max_examples": args.max_examples, "seed": args.seed, "closure": False,
                           "default_dtypes": list(DEFAULT_DTYPES)},
              "summary": summary, "entries": results}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    temporary = args.out.with_suffix(".tmp")
    temporary.write_text(portable.portable_json(report, indent=1))
    temporary.replace(args.out)  # atomic: a failed run leaves the previous results in place
    print()
    print(markdown(summary))
    print(f"\nwall time {summary['wall_seconds']} s; unconfirmed witnesses: {unconfirmed or 'none'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
