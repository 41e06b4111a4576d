"""``opspec conform``: run the core opset against a backend and write a conformance report."""
from __future__ import annotations

from pathlib import Path

from opspec.cli import UsageError, add_opset_option, dtype_names, pathargs

STATUS_HELP = ("pass (the backend's target computed it), undelegated (its runtime did), fallback (PyTorch did), "
               "unverified (nobody can tell), fail, xfail, xpass, skip, compile-error, run-error, crash, timeout")


def add_parser(subparsers) -> None:
    parser = subparsers.add_parser(
        "conform",
        help="run the core opset against a backend (torch.compile backend, export, onnxruntime)",
        description="For every core op of the opset: draw inputs from its schema and hints, run them through the "
        "backend and compare with eager by the shared rule. Each case (op, dtype, device) ends in one of: "
        f"{STATUS_HELP}. Exit 0 when every case passes or is expected, 1 otherwise, 2 for usage errors.",
    )
    parser.add_argument("--backend", required=True, metavar="NAME",
                        help="a declared backend (inductor, aot_eager, eager, export, onnxruntime, ...), one a "
                             "package registers under the opspec_backends entry points, a torch.compile backend "
                             "name, or pkg.module:callable")
    parser.add_argument("--device", choices=("cpu", "cuda"), default="cpu")
    add_opset_option(parser)
    parser.add_argument("--ops", action="append", metavar="GLOB",
                        help="only ops matching this fnmatch glob, spelled as 'opspec show' takes them: 'add.*', "
                             "'aten::sym_*', 'aten::sin.default', 'aten.sin.default', 'torch.ops.aten.sin.default' "
                             "(repeatable, or comma-separated)")
    parser.add_argument("--dtypes", nargs="+", metavar="D", default=["float32"],
                        help="dtypes to run (default float32; 'all' for each op's full list). An op that takes none "
                             "of them runs in its first dtype, so every op is recorded")
    parser.add_argument("--expectations", type=pathargs.input_file, metavar="FILE",
                        help="expectations YAML (default: conformance/expectations/BACKEND.yaml when it exists)")
    parser.add_argument("--no-expectations", action="store_true", help="ignore the default expectations file")
    parser.add_argument("--report", type=pathargs.output_file, metavar="PATH", help="final JSON report (default: conformance-BACKEND-DEVICE.json)")
    parser.add_argument("--isolate", action="store_true",
                        help="record a crash or hang as that case's status and go on (cases run in worker processes)")
    parser.add_argument("-j", "--jobs", type=int, metavar="N",
                        help="cases run at once, each in its own worker process (default: the cores this process may "
                             "use). Verdicts are the same for any N; the report keeps the plan's order. Without "
                             "--isolate the first crash or hang still ends the run: no new case starts, those running "
                             "finish and are journaled")
    parser.add_argument("--shard", metavar="K/N",
                        help="run only the K-th of N parts of the cases: whole ops, cut from a hash order of their "
                             "names into parts of about equal measured cost (conformance/costs/case_costs.yaml), so a "
                             "new op moves no other op; 'opspec report merge' joins the N reports into one")
    parser.add_argument("--timeout", type=float, metavar="S", help="seconds a case may take (default 300 with --isolate)")
    parser.add_argument("--resume", type=pathargs.input_file, metavar="PATH", help="skip the cases recorded in this report or journal")
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
    parser.add_argument("--inputs", type=pathargs.input_file, metavar="FILE",
                        help="replay the recorded calls in FILE (an op-level repro written by --model, opspec-ir JSON) "
                             "instead of drawing inputs; one case per recorded op and dtype")
    parser.add_argument("--model", metavar="MODEL",
                        help="run a whole model instead of the op set: pkg.module:factory, path/to/file.py:factory, "
                             "torchvision:NAME or transformers:NAME; exported once, compiled by the backend, compared "
                             "with eager; a divergence is localised to the first op that diverges alone")
    parser.add_argument("--findings", type=pathargs.input_file, metavar="FILE",
                        help="functionalization findings YAML (default: conformance/expectations/functionalization.yaml)")
    parser.set_defaults(func=run)


def run(args) -> int:
    from opspec.conform import plan as plan_mod
    from opspec.conform import report

    if args.model:
        return run_model(args)
    report_path = Path(args.report or f"conformance-{report.slug(args.backend)}-{args.device}.json")
    # the worker opens the log when it starts: a path it cannot write is the user's line, before any work
    pathargs.prepare(files=[report_path, report_path.with_suffix(".log")], folders=[report_path.with_suffix(".repros")])
    globs = tuple(g.strip() for item in args.ops or [] for g in item.split(",") if g.strip())
    request = plan_mod.Request(
        backend=args.backend, report_path=report_path,
        device=args.device, opset=args.opset_version or None, ops=globs,
        dtypes=_tuple(dtype_names("--dtypes", args.dtypes, all_word=True)),
        expectations=Path(args.expectations) if args.expectations else None, no_expectations=args.no_expectations,
        isolate=args.isolate, timeout=args.timeout, resume=Path(args.resume) if args.resume else None,
        rerun_failures=args.rerun_failures, shuffle=args.shuffle, max_examples=args.max_examples,
        max_compiles=args.max_compiles, seed=args.seed, static=args.static,
        special_cases=not args.no_special_cases, inputs=Path(args.inputs) if args.inputs else None, functionalization=args.functionalization,
        findings=Path(args.findings) if args.findings else None, jobs=args.jobs, shard=args.shard)
    try:
        return plan_mod.execute(plan_mod.prepare(request))
    except plan_mod.PlanError as err:
        raise UsageError(str(err)) from None


def _tuple(names: list[str] | None) -> tuple[str, ...] | None:
    return tuple(names) if names is not None else None


def run_model(args) -> int:
    """``--model``: the whole model through the backend, compared with eager; a divergence localised to one op."""
    import json

    from opspec.bridge import decomp_table
    from opspec.checks import models
    from opspec.conform import backends, report, torch_logs, whole_model
    from opspec.conform.runner import cached_opset
    from opspec.examples import zoo
    from opspec.spec import atomic
    from opspec.spec.errors import first_line

    if args.ops or args.inputs or args.functionalization or args.resume or args.shard or args.jobs:
        raise UsageError("--model runs a whole model; it takes no --ops, --inputs, --functionalization, --resume, "
                         "--shard or --jobs")
    opset = cached_opset(args.opset_version if args.opset_version else None)
    report_path = Path(args.report or f"conformance-model-{report.slug(args.model)}-{report.slug(args.backend)}.json")
    log_path = report_path.with_suffix(".log")
    pathargs.prepare(files=[report_path, log_path])
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
