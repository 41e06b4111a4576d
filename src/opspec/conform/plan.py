"""A run's plan, from what the user asked for: backend declaration, opset, cases, expectations, resume state.

The command line parses its arguments into a :class:`Request` and hands it here;
:func:`prepare` turns it into a :class:`Prepared` run (or one :class:`PlanError`
line, with nothing written), :func:`execute` runs it and writes the report.
"""
from __future__ import annotations

import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from opspec.bridge import functional_variants, torch_ops
from opspec.conform import backends, cases, expectations, functionalization, ir, report, shards, suite
from opspec.conform.isolation import WorkerError
from opspec.conform.pool import Pool, default_jobs
from opspec.conform.lowering import shown
from opspec.conform.runner import Settings, cached_opset
from opspec.results.model import Backend, CaseRecord, Functionalization, Header


class PlanError(ValueError):
    """The request cannot be run: one line, naming the option or file."""


@dataclass(frozen=True)
class Request:
    """What the user asked for, parsed and nothing more."""

    backend: str
    report_path: Path
    device: str = "cpu"
    opset: str | None = None
    ops: tuple[str, ...] = ()  # fnmatch globs
    dtypes: tuple[str, ...] | None = ("float32",)  # None: each op's full list
    expectations: Path | None = None  # None: the declaration's default
    no_expectations: bool = False
    isolate: bool = False
    timeout: float | None = None
    resume: Path | None = None
    rerun_failures: bool = False
    shuffle: int | None = None
    max_examples: int = 4
    max_compiles: int = 2
    seed: int = 0
    static: bool = False
    special_cases: bool = True  # every special-case row of the op, judged exactly (conform.special_rows)
    inputs: Path | None = None
    functionalization: bool = False
    findings: Path | None = None
    jobs: int | None = None  # worker processes; None: the machine's cores
    shard: str | None = None  # "K/N": the K-th of N cost-balanced parts of the cases (conform.shards)


@dataclass
class Prepared:
    plan: suite.Plan
    settings: Settings
    timeout: float | None
    jobs: int = 1
    findings: Any = None  # functionalization findings, with --functionalization
    variants: list = field(default_factory=list)
    carried_section: Functionalization | None = None  # the resumed report's functionalization section

    @property
    def declaration(self) -> backends.Declaration:
        """The backend's declaration, looked up once by :func:`prepare`: the suite and the report read it."""
        return self.plan.declaration

    @property
    def repro_dir(self) -> Path:
        return Path(self.settings.repro_dir)

    @property
    def log_file(self) -> Path:
        return Path(self.settings.log_file)


def declaration_of(name: str) -> backends.Declaration:
    """The backend's declaration: this process's only look-up in the registry (each worker process resolves
    the name once more, for itself). PlanError (one line) when nothing declares it."""
    try:
        declaration = backends.find(name)
        declaration.check_extra(installed_only=True)  # said here, before workers start and import torch for it
    except (backends.UnknownBackend, backends.MissingExtra) as err:
        raise PlanError(str(err)) from None
    return declaration


def prepare(request: Request, out: TextIO | None = None) -> Prepared:
    out = out or sys.stderr
    if request.max_examples < 1 or request.max_compiles < 1:
        raise PlanError("--max-examples and --max-compiles must be at least 1")
    if request.timeout is not None and request.timeout <= 0:
        raise PlanError("--timeout must be positive")
    if request.device == "cuda" and not torch_ops.torch_module().cuda.is_available():
        raise PlanError("--device cuda: CUDA is not available on this machine")
    if request.rerun_failures and request.resume is None:
        raise PlanError("--rerun-failures needs --resume")
    if request.findings is not None and not request.functionalization:
        raise PlanError("--findings needs --functionalization")
    if request.jobs is not None and request.jobs < 1:
        raise PlanError("-j/--jobs must be at least 1")
    split = _shard(request)
    declaration = declaration_of(request.backend)
    opset = cached_opset(request.opset)
    try:
        ops = cases.select_ops(opset, list(request.ops))
    except ValueError as err:
        raise PlanError(str(err)) from None
    replayed = recorded_cases(request.inputs, ops, request.device) if request.inputs else None
    expectation_path = request.expectations or (None if request.no_expectations else declaration.expectations_path())
    expected = expectations.read(expectation_path, opset) if expectation_path else expectations.Expectations()
    for warning in expected.warnings:
        print(f"warning: {warning}", file=out)

    findings, variants = None, []
    if request.functionalization:
        findings_path = Path(shown(request.findings or functionalization.default_path()))
        variants = functional_variants.variants(op.name for op in ops)
        findings = functionalization.read_findings(findings_path, variants, opset)
        for warning in findings.warnings:
            print(f"warning: {warning}", file=out)

    dtypes = list(request.dtypes) if request.dtypes is not None else None
    # the worker resolves the backend and fills in its description when it starts
    head = report.header(backend=Backend(name=request.backend), device=request.device, opset=opset.version,
                         seed=request.seed, max_examples=request.max_examples, max_compiles=request.max_compiles,
                         dtypes=dtypes, ops=list(request.ops) or None,
                         expectations=shown(expectation_path) if expectation_path else None, isolate=request.isolate,
                         shuffle=request.shuffle, dynamic=not request.static, special_cases=request.special_cases)
    planned = replayed or cases.cases_for(ops, dtypes, [request.device])
    if split is not None:
        costs = shards.costs_for(request.backend)
        planned = split.select(planned, costs)
        head = head.replace(shard=split.describe(planned, costs))
    jobs = request.jobs or default_jobs()
    head = head.replace(jobs=jobs)
    previous, previous_duration, carried_section = _resumed(request, head)
    plan = suite.Plan(cases=planned, header=head, declaration=declaration,
                      report_path=request.report_path, expectations=expected, previous=previous,
                      keep_going=request.isolate, previous_duration_s=previous_duration, shuffle=request.shuffle)
    timeout = request.timeout if request.timeout is not None else (300.0 if request.isolate else None)
    settings = Settings(backend=request.backend, opset=opset.version, max_examples=request.max_examples,
                        max_compiles=request.max_compiles, seed=request.seed, dynamic=not request.static,
                        repro_dir=str(request.report_path.with_suffix(".repros")),
                        log_file=str(request.report_path.with_suffix(".log")),
                        inputs=str(request.inputs.resolve()) if request.inputs else None,
                        special_cases=request.special_cases)
    return Prepared(plan, settings, timeout, jobs, findings, variants, carried_section)


def _shard(request: Request) -> shards.Shard | None:
    """``--shard K/N``, parsed; PlanError for a bad value or an option a shard cannot carry."""
    if request.shard is None:
        return None
    if request.functionalization or request.inputs:
        raise PlanError("--shard splits the op cases only; run --functionalization and --inputs unsharded")
    try:
        return shards.Shard.parse(request.shard)
    except ValueError as err:
        raise PlanError(f"--shard {err}") from None


def _resumed(request: Request, head: Header) -> tuple[list[CaseRecord], float, Functionalization | None]:
    """(records carried over, the time they took, the functionalization section) of ``--resume``."""
    if request.resume is None:
        return [], 0.0, None
    # read before the run: the report being resumed may be the one rewritten
    carried_section = report.previous_functionalization(request.resume)
    try:
        previous_head, previous = report.read_previous(request.resume)
        report.check_compatible(previous_head, head, request.resume)
    except report.ReportError as err:
        raise PlanError(f"--resume {err}") from None
    if request.rerun_failures:
        previous = [r for r in previous if r.final_outcome == "pass"]
    return previous, float(previous_head.duration_s or 0.0), carried_section


def recorded_cases(path: Path, ops, device: str) -> list[cases.Case]:
    """One case per (op, dtype) recorded in the file; the ops must be among those --ops selects."""
    import torch

    try:
        found = []
        for data in ir.read_calls(str(path)):
            op, args, kwargs = ir.call_from_json(data, "cpu")
            tensors = [t for t in torch.utils._pytree.tree_leaves((args, kwargs)) if isinstance(t, torch.Tensor)]
            found.append(cases.Case(op, cases.dtype_name(tensors[0].dtype) if tensors else "float32", device))
    except (ir.IRError, KeyError, TypeError, ValueError) as err:
        raise PlanError(f"--inputs {err}") from None
    selected = {op.name for op in ops}
    outside = sorted({case.op for case in found} - selected)
    if outside:
        raise PlanError(f"--inputs {path}: records {', '.join(outside)}, which --ops does not select")
    return list(dict.fromkeys(found))


def execute(prepared: Prepared, out: TextIO | None = None) -> int:
    """Run the plan in worker processes; print the summary; the exit code (0 clean, 1 otherwise)."""
    out = out or sys.stdout
    plan, repro_dir, log_file = prepared.plan, prepared.repro_dir, prepared.log_file
    executor = Pool(prepared.settings, prepared.timeout, prepared.jobs)
    try:
        plan.header = plan.header.replace(backend=Backend.from_dict(executor.start()))  # the run's only resolution
    except WorkerError as err:
        raise PlanError(str(err)) from None
    repro_dir.mkdir(parents=True, exist_ok=True)
    kept = {r.case for r in plan.previous}
    for case in plan.cases:  # a repro left by an earlier run of a case about to run again is stale
        if case not in kept:
            (repro_dir / f"{case.id}.py").unlink(missing_ok=True)
    try:
        final = suite.execute(plan, executor)
    except WorkerError as err:
        raise PlanError(str(err)) from None
    except suite.RunAborted as err:
        print(f"opspec conform: error: {err}", file=sys.stderr)
        return 1
    code = suite.exit_code(final)
    if prepared.findings is not None:
        section = functionalization.section(cached_opset(prepared.settings.opset), prepared.variants,
                                            prepared.findings, device=plan.header.device, seed=plan.header.seed,
                                            previous=prepared.carried_section)
        final = final.replace(functionalization=section)
        report.write(plan.report_path, final)
        code = code or (0 if functionalization.clean(section) else 1)
    print(file=out)
    print(report.summary_table(final), file=out)
    if prepared.findings is not None:
        print("\n" + "\n".join(functionalization.summary_lines(final.functionalization)), file=out)
    if not any(repro_dir.iterdir()):
        repro_dir.rmdir()
    parts = Path(f"{log_file}.parts")  # where each case's output was captured while it ran: settled into the log
    if parts.is_dir() and not any(parts.iterdir()):
        parts.rmdir()
    print(f"\nreport: {plan.report_path}" + (f"\nrepros: {repro_dir}/" if repro_dir.exists() else "")
          + (f"\ntorch's log: {log_file}" if log_file.exists() else ""), file=out)
    return code
