"""``opspec accuracy``: measure each op's error in ULPs against its accuracy contract (``opset/accuracy.yaml``)."""
from __future__ import annotations

import argparse
import contextlib
import fnmatch
import json
import math
import sys
from pathlib import Path
from typing import Any

from opspec.cli import UsageError, checkout, pathargs
from opspec.spec import accuracy as spec_accuracy
from opspec.spec import atomic, yamlio
from opspec.spec.yamlio import DataError

FLOATING = ("float64", "float32", "float16", "bfloat16")
DEFAULT_SAMPLES = 1_000_000


def add_parser(subparsers) -> None:
    parser = subparsers.add_parser(
        "accuracy",
        help="measure each op's error in ULPs against its accuracy contract",
        description="Run each op of opset/accuracy.yaml on every float16 and bfloat16 value of its domain and on "
        "a seeded sample of float32 and float64 values stratified by binade (each binade alike, the subnormals, "
        "the largest values and the domain's ends), compare each result with the correctly rounded one and "
        "judge the largest error against the contract. Eager kernels unless --backend names one. Exit 0 when "
        "every contract holds, 1 when one is broken (each named with its worst input), 2 for unusable input.",
    )
    parser.add_argument("--ops", action="append", metavar="GLOB",
                        help="ops to measure, e.g. 'aten::exp' or 'aten::log*' (repeatable; default every contract)")
    parser.add_argument("--dtypes", nargs="+", choices=FLOATING, metavar="DTYPE",
                        help=f"dtypes to measure ({', '.join(FLOATING)}; default every dtype a contract names)")
    parser.add_argument("--device", choices=("cpu", "cuda"), default="cpu", help="where the kernels run (default cpu)")
    parser.add_argument("--backend", metavar="NAME",
                        help="compile one program per op and dtype with this backend (as opspec conform resolves "
                        "it) instead of running eager kernels")
    parser.add_argument("--rules", action="store_true",
                        help="measure the opset's decomposition rule of each op (optional rules too) instead of its "
                        "kernel: a rule must meet the contract of the op it lowers; ops without a rule are left out")
    parser.add_argument("--samples", type=int, default=DEFAULT_SAMPLES, metavar="N",
                        help=f"inputs per float32 or float64 measurement (default {DEFAULT_SAMPLES:,})")
    parser.add_argument("--seed", type=int, default=0, metavar="S",
                        help="seed of the float32/float64 sample (default 0)")
    parser.add_argument("--format", choices=("table", "json"), default="table")
    parser.add_argument("--report", type=pathargs.output_file, metavar="PATH",
                        help="also write the measurements as JSON (histograms and worst inputs)")
    parser.add_argument("--contracts", type=pathargs.input_file, metavar="PATH",
                        help="the contracts file (default the opset's accuracy.yaml)")
    parser.add_argument("--record", action="store_true",
                        help="write each measurement into the contracts file as `measured:` (eager only)")
    parser.set_defaults(func=run)


def run(args) -> int:
    if args.samples < 1:
        raise UsageError(f"--samples {args.samples}: must be at least 1")
    if args.record and args.backend:
        raise UsageError("--record writes what eager kernels measure; it cannot be combined with --backend")
    if args.rules and (args.backend or args.record):
        raise UsageError("--rules measures the opset's decomposition rules on eager kernels; it cannot be combined "
                         f"with {'--backend' if args.backend else '--record'}")
    path = args.contracts or _contracts_path(args.record)
    contracts = spec_accuracy.load_contracts(path)
    chosen = _chosen(contracts, args.ops, args.dtypes)
    if args.rules:
        chosen = _with_rules(chosen)

    from opspec.bridge import torch_ops
    from opspec.checks import accuracy

    _check_device(args.device)
    kernel_for, executed = _kernel_factory(args.backend, rules=args.rules)
    progress = _Progress(sys.stderr)
    with _backend_log(args):
        judged = accuracy.measure_all(chosen, kernel_for, samples=args.samples, seed=args.seed, device=args.device,
                                      progress=progress)
    progress.finish()
    report = _report(judged, args, torch_ops.version(), executed)
    if args.report:
        atomic.write_text(args.report, _json_text(report))
    if args.record:
        _record(path, judged, torch_ops.version(), args.device)
    print(_json_text(report).rstrip("\n") if args.format == "json" else _table(judged))
    broken = [finding for finding in map(accuracy.judge, judged) if finding is not None]
    for finding in broken:
        print(finding, file=sys.stderr)
    return 1 if broken else 0


def _backend_log(args: argparse.Namespace):
    """A backend's (and torch's) log lines and warnings go to a log beside the report, as in ``opspec conform``,
    not to the terminal; eager kernels log nothing worth a file."""
    if not args.backend:
        return contextlib.nullcontext()
    from opspec.conform import torch_logs

    log = Path(args.report).with_suffix(".log") if args.report else Path(f"accuracy-{args.backend}.log")
    pathargs.prepare(files=[log])
    return torch_logs.to_file_while(str(log))


def _contracts_path(record: bool):
    """The opset's contracts: the checkout's where they are written, never the copy inside an installed wheel."""
    return checkout(None).opset / spec_accuracy.FILE if record else spec_accuracy.path_of()


def _chosen(contracts: spec_accuracy.Contracts, globs: list[str] | None, dtypes: list[str] | None) -> list:
    patterns = [p.strip() for value in globs or ["*"] for p in value.split(",") if p.strip()]
    for pattern in patterns:
        if not any(fnmatch.fnmatchcase(c.op, pattern) for c in contracts.ulp):
            known = ", ".join(sorted({c.op for c in contracts.ulp}))
            raise UsageError(f"--ops {pattern}: no ULP contract matches (contracts: {known})")
    chosen = [c for c in contracts.ulp if any(fnmatch.fnmatchcase(c.op, p) for p in patterns)
              and (not dtypes or c.dtype in dtypes)]
    if not chosen:
        raise UsageError(f"no contract of {', '.join(patterns)} names {', '.join(dtypes or FLOATING)}")
    from opspec.testing.accuracy_functions import FUNCTIONS  # numpy and mpmath: not on every command's start-up

    for contract in chosen:
        if contract.op not in FUNCTIONS:
            raise DataError(contract.mark, f"{contract.op}: no reference function measures it "
                                           "(opspec.testing.accuracy_functions)")
    return chosen


def _check_device(device: str) -> None:
    import torch

    if device == "cuda" and not torch.cuda.is_available():
        raise UsageError("--device cuda: torch sees no CUDA device here")


def _with_rules(chosen: list) -> list:
    """The contracts of ops the opset has a decomposition rule for; a usage error where none has."""
    from opspec.spec import load

    ruled = {rule.op for rule in load.load_opset().rules}
    kept = [contract for contract in chosen if contract.op in ruled]
    if not kept:
        raise UsageError("--rules: no chosen op has a decomposition rule in the opset")
    return kept


def _kernel_factory(backend_name: str | None, rules: bool = False):
    """contract -> a callable applying its op to its tensor arguments (in the reference function's order) with the
    contract's fixed arguments: the eager overload, the opset's rule for an op the opset decomposes and does not
    keep in its core set (for every op with a rule, optional ones too, with ``rules``), or a backend's program."""
    from opspec.conform import accuracy_programs
    from opspec.spec import load
    from opspec.testing.accuracy_functions import FUNCTIONS

    opset = load.load_opset()
    if backend_name is None:
        core = {op.name for op in opset.active_ops()}
        by_op = {rule.op: rule for rule in opset.rules}

        def eager(contract):
            from opspec.bridge import decomp_table

            rule = by_op.get(contract.op) if rules or contract.op not in core else None
            implementation = decomp_table.implementation(rule) if rule is not None else None
            return accuracy_programs.eager(contract.op, FUNCTIONS[contract.op].args, contract.arguments,
                                           implementation)

        return eager, None
    from opspec.conform import evidence
    from opspec.conform.backends import registry
    from opspec.conform.backends.base import UnknownBackend

    try:
        backend = registry.resolve(backend_name, opset)
    except UnknownBackend as err:
        raise UsageError(err) from None
    static = backend.static_evidence()
    seen: dict[tuple[str, str], list] = {}

    def watched(contract):
        """The backend's kernel for the contract, each compile and run watched as ``opspec conform`` watches a
        case: a measurement of a kernel PyTorch ran in the backend's stead is not the backend's."""
        kernel = accuracy_programs.compiled(backend, contract.op, FUNCTIONS[contract.op].args, contract.arguments)
        found = seen.setdefault((contract.op, contract.dtype), [])

        def run(*inputs):
            with evidence.collecting() as now:
                out = kernel(*inputs)
            found.extend(now)
            return out
        return run if static is None else kernel

    def executed(op: str, dtype: str) -> str | None:
        if (op, dtype) not in seen:
            return None
        return (static or evidence.judge(op, seen[(op, dtype)])).executed

    return watched, executed


def _report(judged: list, args, torch_version: str, executed=None) -> dict[str, Any]:
    """The measurements as JSON; with a backend, each says who computed it (``executed``, as conform says it)."""
    results = [_finite(_result(j)) for j in judged]
    if executed is not None:
        for result in results:
            who = executed(result["op"], result["dtype"])
            if who is not None:
                result["executed"] = who
    return {
        "torch": torch_version,
        "device": args.device,
        "backend": args.backend or ("opset-rules" if args.rules else "eager"),
        "seed": args.seed,
        "samples": args.samples,
        "results": results,
    }


def _json_text(report: dict[str, Any]) -> str:
    """The report with one result per line: small, and a new measurement diffs line by line."""
    head = json.dumps({key: value for key, value in report.items() if key != "results"})[:-1]
    results = ",\n".join(json.dumps(result) for result in report["results"])
    return f'{head}, "results": [\n{results}\n]}}\n'


def _result(judged) -> dict[str, Any]:
    contract = judged.contract
    found = judged.measurement.to_dict() if judged.measurement else {"op": contract.op, "dtype": contract.dtype,
                                                                     "failure": judged.failure}
    return {**found, "contract": {"max_ulp": contract.max_ulp, "subnormals": contract.subnormals.to_dict()},
            "holds": judged.holds}


def _finite(value: Any) -> Any:
    """JSON has no infinity or NaN: such a number is written as the string 'inf', '-inf' or 'nan'."""
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if isinstance(value, dict):
        return {key: _finite(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_finite(item) for item in value]
    return value


def _record(path, judged: list, torch_version: str, device: str) -> None:
    from opspec.checks import accuracy

    data = yamlio.load_file(path)
    found = {(j.contract.op, j.contract.dtype): accuracy.measured(j, torch_version, device)
             for j in judged if j.measurement is not None}
    atomic.write_text(path, spec_accuracy.dump(spec_accuracy.with_measurements(data, found)))
    print(f"recorded {len(found)} measurement(s) in {path}", file=sys.stderr)


def _table(judged: list) -> str:
    from opspec.reports import browse
    from opspec.testing.accuracy import rounded_up

    rows = []
    for j in judged:
        found, contract = j.measurement, j.contract
        if found is None:
            rows.append([contract.op, contract.dtype, f"{contract.max_ulp:g}", "-", "-", "FAILED", j.failure])
            continue
        latitude = " flush" if "may-flush" in (contract.subnormals.inputs, contract.subnormals.results) else ""
        inputs = f"{found.inputs} (all)" if found.exhaustive else str(found.inputs)
        worst = found.worst[0].describe() if found.worst else "-"
        rows.append([contract.op, contract.dtype, f"{contract.max_ulp:g}{latitude}", f"{rounded_up(found.max_ulp):g}",
                     inputs, "ok" if j.holds else "BROKEN", worst])
    return browse.table(rows, ["op", "dtype", "contract", "max ULP", "inputs", "verdict", "worst input"])


class _Progress:
    """``accuracy: I/N op dtype`` on stderr: one rewritten line on a terminal, nothing in a log."""

    def __init__(self, stream):
        self.stream = stream
        self.interactive = stream.isatty()

    def __call__(self, position: int, total: int, contract) -> None:
        if self.interactive and total > 1:
            print(f"\r\033[Kaccuracy: {position + 1}/{total} {contract.op} {contract.dtype}", end="",
                  file=self.stream, flush=True)

    def finish(self) -> None:
        if self.interactive:
            print("\r\033[K", end="", file=self.stream, flush=True)
