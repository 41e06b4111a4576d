"""``opspec conform``: run the core opset against a backend and write a conformance report."""
from __future__ import annotations

import re
import sys
from pathlib import Path

from opspec.cli import UsageError

STATUS_HELP = "pass, fallback, fail, xfail, xpass, skip, compile-error, run-error, crash, timeout"


def add_parser(subparsers) -> None:
    parser = subparsers.add_parser(
        "conform",
        help="run the core opset against a backend (torch.compile backend, export, onnxruntime)",
        description="For every core op of the opset: draw inputs from its schema and hints, run them through the "
        "backend and compare with eager by the shared rule. Each case (op, dtype, device) ends in one of: "
        f"{STATUS_HELP}. Exit 0 when every case passes or is expected, 1 otherwise, 2 for usage errors.",
    )
    parser.add_argument("--backend", required=True, metavar="NAME",
                        help="a torch.compile backend name (inductor, aot_eager, eager, ...), export, onnxruntime, "
                             "or pkg.module:callable")
    parser.add_argument("--device", choices=("cpu", "cuda"), default="cpu")
    parser.add_argument("--opset", dest="opset_version", metavar="V", help="opset version (default: newest)")
    parser.add_argument("--ops", action="append", metavar="GLOB",
                        help="only ops matching this fnmatch glob, spelled as 'opspec show' takes them: 'add.*', "
                             "'aten::sym_*', 'aten::sin.default', 'aten.sin.default', 'torch.ops.aten.sin.default' "
                             "(repeatable, or comma-separated)")
    parser.add_argument("--dtypes", nargs="+", metavar="D", default=["float32"],
                        help="dtypes to run (default float32; 'all' for each op's full list). An op that takes none "
                             "of them runs in its first dtype, so every op is recorded")
    parser.add_argument("--expectations", metavar="FILE",
                        help="expectations YAML (default: conformance/expectations/BACKEND.yaml when it exists)")
    parser.add_argument("--no-expectations", action="store_true", help="ignore the default expectations file")
    parser.add_argument("--report", metavar="PATH", help="final JSON report (default: conformance-BACKEND-DEVICE.json)")
    parser.add_argument("--isolate", action="store_true",
                        help="record a crash or hang as that case's status and go on (cases run in worker processes)")
    parser.add_argument("--timeout", type=float, metavar="S", help="seconds a case may take (default 300 with --isolate)")
    parser.add_argument("--resume", metavar="PATH", help="skip the cases recorded in this report or journal")
    parser.add_argument("--rerun-failures", action="store_true",
                        help="with --resume: run again the recorded cases whose outcome was not pass")
    parser.add_argument("--shuffle", type=int, metavar="SEED",
                        help="run the cases in a shuffled order (the report keeps the usual order): verdicts must not change")
    parser.add_argument("--max-examples", type=int, default=4, metavar="N", help="drawn calls per case (default 4)")
    parser.add_argument("--max-compiles", type=int, default=2, metavar="N",
                        help="compiled programs per case: examples come from at most N compile keys (default 2)")
    parser.add_argument("--seed", type=int, default=0, metavar="S")
    parser.add_argument("--no-special-cases", action="store_true",
                        help="leave out the op's special-case rows (opset/special_cases), run by default")
    parser.add_argument("--static", action="store_true", help="compile with static shapes")
    parser.add_argument("--functionalization", action="store_true",
                        help="also export every in-place and out= variant of the selected ops, mutating inputs and "
                             "intermediates directly and through views, and add the report's functionalization "
                             "section (runs in this process, after the cases)")
    parser.add_argument("--inputs", metavar="FILE",
                        help="replay the recorded calls in FILE (an op-level repro written by --model, opspec-ir JSON) "
                             "instead of drawing inputs; one case per recorded op and dtype")
    parser.add_argument("--model", metavar="MODEL",
                        help="run a whole model instead of the op set: pkg.module:factory, path/to/file.py:factory, "
                             "torchvision:NAME or transformers:NAME; exported once, compiled by the backend, compared "
                             "with eager; a divergence is localised to the first op that diverges alone")
    parser.add_argument("--findings", metavar="FILE",
                        help="functionalization findings YAML (default: conformance/expectations/functionalization.yaml)")
    parser.set_defaults(func=run)


def run(args) -> int:
    from opspec.bridge import functional_variants, torch_ops
    from opspec.conform import (
        cases,
        expectations,
        functionalization,
        report,
        suite,
    )
    from opspec.conform.isolation import Isolated, WorkerError
    from opspec.conform.runner import Settings, cached_opset

    if args.model:
        return run_model(args)
    if args.max_examples < 1 or args.max_compiles < 1:
        raise UsageError("--max-examples and --max-compiles must be at least 1")
    if args.timeout is not None and args.timeout <= 0:
        raise UsageError("--timeout must be positive")
    if args.device == "cuda" and not torch_ops.torch_module().cuda.is_available():
        raise UsageError("--device cuda: CUDA is not available on this machine")
    dtypes = _dtypes(args.dtypes)
    opset = cached_opset(args.opset_version if args.opset_version else None)
    globs = [g.strip() for item in args.ops or [] for g in item.split(",") if g.strip()]
    try:
        ops = cases.select_ops(opset, globs)
    except ValueError as err:
        raise UsageError(str(err)) from None
    replayed = _recorded_cases(args.inputs, ops, args.device) if args.inputs else None
    expectation_path = Path(args.expectations) if args.expectations else (
        None if args.no_expectations else expectations.default_path(args.backend))
    expected = expectations.read(expectation_path, opset) if expectation_path else expectations.Expectations()
    for warning in expected.warnings:
        print(f"warning: {warning}", file=sys.stderr)

    findings, variants = None, []
    if args.functionalization:
        findings_path = Path(_shown(Path(args.findings) if args.findings else functionalization.default_path()))
        variants = functional_variants.variants(op.name for op in ops)
        findings = functionalization.read_findings(findings_path, variants, opset)
        for warning in findings.warnings:
            print(f"warning: {warning}", file=sys.stderr)
    elif args.findings:
        raise UsageError("--findings needs --functionalization")

    report_path = Path(args.report or f"conformance-{_slug(args.backend)}-{args.device}.json")
    # the worker resolves the backend and fills in its description when it starts
    head = report.header(backend={"name": args.backend}, device=args.device, opset=opset.version, seed=args.seed,
                         max_examples=args.max_examples, max_compiles=args.max_compiles,
                         dtypes=dtypes, ops=globs or None,
                         expectations=_shown(expectation_path), isolate=args.isolate, shuffle=args.shuffle)
    previous: list = []
    previous_duration = 0.0
    # read before the run: the report being resumed may be the one rewritten
    carried_section = report.previous_section(Path(args.resume), "functionalization") if args.resume else None
    if args.resume:
        try:
            previous_head, previous = report.read_previous(Path(args.resume))
            report.check_compatible(previous_head, head, Path(args.resume))
            previous_duration = float(previous_head.get("duration_s") or 0.0)
        except report.ReportError as err:
            raise UsageError(f"--resume {err}") from None
        if args.rerun_failures:
            previous = [r for r in previous if r.get("outcome", r["status"]) == "pass"]
    elif args.rerun_failures:
        raise UsageError("--rerun-failures needs --resume")

    plan = suite.Plan(cases=replayed or cases.cases_for(ops, dtypes, [args.device]), header=head, report_path=report_path,
                      expectations=expected, previous=previous, keep_going=args.isolate,
                      previous_duration_s=previous_duration, shuffle=args.shuffle)
    timeout = args.timeout if args.timeout is not None else (300.0 if args.isolate else None)
    repro_dir = report_path.with_suffix(".repros")
    log_file = report_path.with_suffix(".log")
    settings = Settings(backend=args.backend, opset=opset.version, max_examples=args.max_examples,
                        max_compiles=args.max_compiles, seed=args.seed, dynamic=not args.static,
                        repro_dir=str(repro_dir), log_file=str(log_file),
                        inputs=str(Path(args.inputs).resolve()) if args.inputs else None,
                        special_cases=not args.no_special_cases)
    executor = Isolated(settings, timeout)
    try:
        head["backend"] = executor.start()  # the run's only resolution of the backend
    except WorkerError as err:
        raise UsageError(str(err)) from None
    repro_dir.mkdir(parents=True, exist_ok=True)
    kept = {report.case_of(r) for r in previous}
    for case in plan.cases:  # a repro left by an earlier run of a case about to run again is stale
        if case not in kept:
            (repro_dir / f"{case.id}.py").unlink(missing_ok=True)
    try:
        final = suite.execute(plan, executor)
    except WorkerError as err:
        raise UsageError(str(err)) from None
    except suite.RunAborted as err:
        print(f"opspec conform: error: {err}", file=sys.stderr)
        return 1
    code = suite.exit_code(final)
    if findings is not None:
        section = functionalization.section(opset, variants, findings, device=args.device, seed=args.seed,
                                            previous=carried_section)
        final = report.with_section(final, "functionalization", section)
        report.write(report_path, final)
        code = code or (0 if functionalization.clean(section) else 1)
    print()
    print(report.summary_table(final))
    if findings is not None:
        print("\n" + "\n".join(functionalization.summary_lines(final["functionalization"])))
    if not any(repro_dir.iterdir()):
        repro_dir.rmdir()
    print(f"\nreport: {report_path}" + (f"\nrepros: {repro_dir}/" if repro_dir.exists() else "")
          + (f"\ntorch's log: {log_file}" if log_file.exists() else ""))
    return code


def _recorded_cases(path: str, ops, device: str) -> list:
    """One case per (op, dtype) recorded in the file; the ops must be among those --ops selects."""
    import torch

    from opspec.conform import cases, ir

    try:
        calls = ir.read_calls(path)
        found = []
        for data in calls:
            op, args, kwargs = ir.call_from_json(data, "cpu")
            tensors = [t for t in torch.utils._pytree.tree_leaves((args, kwargs)) if isinstance(t, torch.Tensor)]
            found.append(cases.Case(op, cases.dtype_name(tensors[0].dtype) if tensors else "float32", device))
    except (ir.IRError, KeyError, TypeError, ValueError) as err:
        raise UsageError(f"--inputs {err}") from None
    selected = {op.name for op in ops}
    outside = sorted({case.op for case in found} - selected)
    if outside:
        raise UsageError(f"--inputs {path}: records {', '.join(outside)}, which --ops does not select")
    return list(dict.fromkeys(found))


def run_model(args) -> int:
    """``--model``: the whole model through the backend, compared with eager; a divergence localised to one op."""
    import json

    from opspec.bridge import decomp_table
    from opspec.checks import models
    from opspec.conform import backends, torch_logs, whole_model
    from opspec.conform.runner import cached_opset
    from opspec.examples import zoo
    from opspec.spec import atomic
    from opspec.spec.errors import first_line

    if args.ops or args.inputs or args.functionalization or args.resume:
        raise UsageError("--model runs a whole model; it takes no --ops, --inputs, --functionalization or --resume")
    opset = cached_opset(args.opset_version if args.opset_version else None)
    report_path = Path(args.report or f"conformance-model-{_slug(args.model)}-{_slug(args.backend)}.json")
    log_path = report_path.with_suffix(".log")
    # torch's and the backend package's log lines and warnings go to the log, not the terminal
    with torch_logs.to_file_while(str(log_path)):
        try:
            backend = backends.resolve(args.backend, opset, dynamic=not args.static)
            example = models.load_model(args.model, zoo.ZOO)
            result = whole_model.check_model(args.model, example, backend, opset,
                                             decomp_table.decomposition_table(opset), report_path.with_suffix(".repros"))
        except (backends.UnknownBackend, models.ModelError) as err:
            raise UsageError(str(err)) from None
    atomic.write_text(report_path, json.dumps(result.to_dict(), indent=2) + "\n")
    print(f"{args.model} on {backend.name}: {result.status} ({result.nodes} ops in the graph, {result.duration_s:.1f}s)")
    if result.message:
        print(f"  {first_line(result.message)}")
    if result.status == "fail":
        if result.culprit is not None:
            print(f"  first op that diverges alone: {result.culprit.op} (node {result.culprit.node})")
            print(f"    {' '.join(result.culprit.message.split())[:300]}")
            print(f"  repro: {result.culprit.repro}")
            print(f"  replay: opspec conform --backend {backend.name} --ops {result.culprit.op.removeprefix('aten::')} "
                  f"--inputs {result.culprit.repro}")
        else:
            where = f" (first diverging node: {result.first_divergence})" if result.first_divergence else ""
            print(f"  no single op diverges alone{where}: the difference needs the whole program (fusion or rounding)")
    print(f"report: {report_path}")
    print(f"torch's log: {log_path}")
    return result.exit_code


def _dtypes(names: list[str]) -> list[str] | None:
    import torch

    if names == ["all"]:
        return None
    for name in names:
        if not isinstance(getattr(torch, name, None), torch.dtype):
            raise UsageError(f"--dtypes {name}: not a torch dtype (e.g. float32, bfloat16, int64) or 'all'")
    return names


def _shown(path: Path | None) -> str | None:
    from opspec.conform.lowering import shown

    return None if path is None else shown(path)


def _slug(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", name)
