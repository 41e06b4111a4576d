"""Functionalization, one suite of the conformance run: mutating programs of core ops, exported,
must become functional core graphs.

For each in-place or ``out=`` variant of an active core op (see
:mod:`opspec.bridge.functional_variants`) a *mutation* is one program shape: the
written tensor is a graph input or an intermediate (a clone made inside the
program), reached directly or through a view (slice, select, diagonal,
transpose, expand). Calls of the functional op are drawn from the shared
strategy layer until one builds the program; it is exported with
``torch.export`` and lowered with the opset's decomposition table, then:

(a) the graph may call only functional core ops of the opset; an input mutation
    must be recorded in the graph signature (the epilogue that writes it back),
    and no other input may be;
(b) the exported program's outputs and the inputs it mutates must match eager,
    by the shared comparison rule.

A variant that does not functionalize on the installed torch is a *finding*,
recorded with its reason in ``conformance/expectations/functionalization.yaml``
(schema ``functionalization_findings.schema.json``); the run reports it as
``xfail``, and a finding that no longer fails as ``xpass``. The results form
the conformance report's ``functionalization`` section.
"""
from __future__ import annotations

import fnmatch
import sys
import time
import warnings
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, TextIO

import torch

from opspec.bridge import decomp_table, functional_variants, torch_ops
from opspec.bridge.functional_variants import TENSOR_OPTIONS, Variant
from opspec.conform import cases as cases_mod
from opspec.conform.backends.program import ProgramModule
from opspec.conform.cases import fill
from opspec.conform.expectations import expectations_dir
from opspec.spec import load, yamlio
from opspec.spec.errors import first_line, one_line
from opspec.spec.model import Opset
from opspec.testing import compare, strategies
from opspec.testing.strategies import Call
from opspec.testing.slots import split_tensors
from opspec.testing.strategies.values import copy_preserving_layout
from opspec.results import vocabulary
from opspec.results.model import Functionalization, FunctionalizationRecord

TARGETS = ("input", "intermediate")


@dataclass(frozen=True)
class View:
    """How a target of shape S is reached through a view of a base tensor."""

    name: str
    applies: Callable[[tuple[int, ...]], bool]
    base_shape: Callable[[tuple[int, ...]], tuple[int, ...]]
    take: Callable[[torch.Tensor, tuple[int, ...]], torch.Tensor]


def _swap_ends(shape: tuple[int, ...]) -> tuple[int, ...]:
    return (shape[-1], *shape[1:-1], shape[0])


VIEWS: dict[str, View] = {view.name: view for view in (
    View("direct", lambda s: True, lambda s: s, lambda base, s: base),
    # a window one row in from each end, so writes past it would show in the base
    View("slice", lambda s: len(s) >= 1, lambda s: (s[0] + 2, *s[1:]), lambda base, s: base[1:1 + s[0]]),
    View("select", lambda s: True, lambda s: (2, *s), lambda base, s: base[1]),
    View("diagonal", lambda s: len(s) >= 1, lambda s: (*s, s[-1]), lambda base, s: base.diagonal(0, -2, -1)),
    View("transpose", lambda s: len(s) >= 2, _swap_ends, lambda base, s: base.transpose(0, -1)),
    # writing through an expanded view is legal only where no two elements share memory:
    # a new leading dim of size 1, or an expand to the base's own shape
    View("expand", lambda s: True, lambda s: s[1:] if s and s[0] == 1 else s, lambda base, s: base.expand(s)),
)}


@dataclass(frozen=True)
class Mutation:
    variant: Variant
    target: str  # "input" | "intermediate"
    view: str  # a key of VIEWS

    @property
    def program_id(self) -> str:
        return f"{self.target}/{self.view}"

    @property
    def id(self) -> str:
        return f"{self.variant.id}/{self.program_id}"


def mutations(variant: Variant) -> list[Mutation]:
    return [Mutation(variant, target, view) for target in TARGETS for view in VIEWS]


# ---- programs ----

def _filler(shape: tuple[int, ...], dtype: torch.dtype, device: str) -> torch.Tensor:
    """Distinct-looking values for the parts of a base the op must leave alone."""
    numel = 1
    for size in shape:
        numel *= size
    values = torch.arange(numel, device=device).remainder(5).sub(2).reshape(shape)
    return values.to(dtype)


@dataclass
class Program:
    """A mutation made concrete for one drawn call: its inputs (bases first) and the function."""

    mutation: Mutation
    inputs: list[torch.Tensor]
    function: Callable
    n_bases: int

    def fresh_inputs(self) -> list[torch.Tensor]:
        return [copy_preserving_layout(t) for t in self.inputs]


def _broadcasts(self: torch.Tensor, result: torch.Tensor) -> bool:
    """Whether the op broadcast ``self`` up to the result's shape (as opposed to reshaping it, like as_strided)."""
    if self.shape == result.shape or self.dtype != result.dtype:
        return False
    try:
        return torch.broadcast_shapes(self.shape, result.shape) == result.shape
    except RuntimeError:
        return False


def build(mutation: Mutation, call: Call) -> Program | None:
    """The program for ``call`` (a call of the functional op), or None when this mutation cannot apply to it."""
    variant, view = mutation.variant, VIEWS[mutation.view]
    overload = torch_ops.resolve(variant.name)
    try:
        result = call.run()
    except Exception:  # noqa: BLE001 - the functional kernel refuses the call: nothing to build from
        return None
    if variant.kind == "inplace":
        first = call.args[0]
        if not isinstance(first, torch.Tensor):
            return None
        if isinstance(result, torch.Tensor) and _broadcasts(first, result):
            # in place needs self at the result's shape: a broadcast self, materialized, gives the same values
            first = first.expand(result.shape).clone()
        targets = [first]
        args, kwargs = call.args[1:], dict(call.kwargs)
    else:
        outputs = result if isinstance(result, (tuple, list)) else (result,)
        if len(outputs) != len(variant.outs) or not all(isinstance(t, torch.Tensor) for t in outputs):
            return None
        targets = [_filler(tuple(t.shape), t.dtype, str(t.device)) for t in outputs]
        args, kwargs = call.args, {k: v for k, v in call.kwargs.items() if k not in TENSOR_OPTIONS}
    shapes = [tuple(t.shape) for t in targets]
    if not all(view.applies(shape) for shape in shapes):
        return None
    bases = []
    for target, shape in zip(targets, shapes):
        base = _filler(view.base_shape(shape), target.dtype, str(target.device))
        view.take(base, shape).copy_(target)
        bases.append(base)
    args, kwargs, inputs = split_tensors(args, kwargs, list(bases))
    n_bases, intermediate = len(bases), mutation.target == "intermediate"

    def function(*tensors):
        written = [t.clone() for t in tensors[:n_bases]] if intermediate else list(tensors[:n_bases])
        views = [view.take(base, shape) for base, shape in zip(written, shapes)]
        if variant.kind == "inplace":
            result = overload(views[0], *fill(args, tensors), **fill(kwargs, tensors))
        else:
            result = overload(*fill(args, tensors), **fill(kwargs, tensors), **dict(zip(variant.outs, views)))
        # an intermediate base is returned too: the write must reach it through the view
        return (result, *written) if intermediate else result

    program = Program(mutation, inputs, function, n_bases)
    try:
        function(*program.fresh_inputs())
    except Exception:  # the eager variant refuses this call (e.g. in-place would need a broadcast self)
        return None
    return program


# ---- the check ----

@dataclass
class Verdict:
    status: str
    message: str = ""
    graph_ops: tuple[str, ...] = ()

    def as_dict(self) -> dict[str, Any]:
        return {"status": self.status, "message": self.message, "graph_ops": list(self.graph_ops)}


def check(program: Program, opset: Opset, table: dict, tolerance=None) -> Verdict:
    """Export, lower and run one program; the verdict on (a) the graph and (b) the values."""
    mutation = program.mutation
    try:
        exported = torch.export.export(ProgramModule(program.function), tuple(program.fresh_inputs()), strict=False)
        exported = exported.run_decompositions(table)
    except Exception as err:  # noqa: BLE001 - torch.export fails in many ways; each is a finding
        return Verdict("export-error", one_line(err, cause=True))
    ops = set(torch_ops.graph_ops(exported.graph))
    problem = _graph_problem(exported, ops, opset, mutation, program.n_bases)
    if problem:
        return Verdict("not-functional", problem, tuple(sorted(ops)))
    torch.manual_seed(0)
    eager_inputs = program.fresh_inputs()
    expected = program.function(*eager_inputs)
    torch.manual_seed(0)
    exported_inputs = program.fresh_inputs()
    try:
        actual = exported.module()(*exported_inputs)
    except Exception as err:  # noqa: BLE001
        return Verdict("run-error", one_line(err, cause=True), tuple(sorted(ops)))
    verdict = compare.compare(actual, expected, tolerance=tolerance)
    if not verdict.ok:
        return Verdict("fail", f"outputs: {verdict.message}", tuple(sorted(ops)))
    written = compare.compare(exported_inputs[: program.n_bases], eager_inputs[: program.n_bases], tolerance=tolerance)
    if not written.ok:
        return Verdict("fail", f"mutated inputs: {written.message}", tuple(sorted(ops)))
    return Verdict("pass", "", tuple(sorted(ops)))


def _graph_problem(exported, ops: set[str], opset: Opset, mutation: Mutation, n_bases: int) -> str:
    """Why the lowered graph is not the functional core graph the mutation should become; "" when it is."""
    core = opset.core_names()
    outside = sorted(op for op in ops if op not in core)
    mutable = sorted(op for op in ops if torch_ops.resolve(op)._schema.is_mutable)
    if mutable:
        return f"the graph still mutates: {', '.join(mutable)}"
    if outside:
        return f"the graph calls ops outside opset {opset.version}: {', '.join(outside)}"
    signature = exported.graph_signature
    user_inputs = list(signature.user_inputs)
    mutated = set(signature.user_inputs_to_mutate.values())
    # an inplace_view op (as_strided_, unsqueeze_) changes only the view's metadata, never data
    writes_data = torch.Tag.inplace_view not in torch_ops.resolve(mutation.variant.name).tags
    expected = set(user_inputs[:n_bases]) if mutation.target == "input" and writes_data else set()
    if mutated != expected:
        missing, extra = sorted(expected - mutated), sorted(mutated - expected)
        parts = ([f"the write to input {', '.join(missing)} is not recorded"] if missing else []) + (
            [f"input {', '.join(extra)} is recorded as mutated but is not written"] if extra else [])
        return "; ".join(parts)
    return ""


# ---- helpers for runners ----

def tolerance_of(opset: Opset, variant: Variant):
    op = opset.ops_by_name[variant.functional]
    return strategies.effective_hints(op.name, op.testing).tolerance


def lowering_table(opset: Opset) -> dict:
    return decomp_table.decomposition_table(opset)


SCHEMA = "functionalization_findings.schema.json"
# skip: this view cannot reach the drawn outputs (transpose of a vector); no-program: not even the plain
# mutation could be built from any drawn call, which would leave the variant unchecked
STATUSES = vocabulary.FUNCTIONALIZATION
CLEAN = vocabulary.FUNCTIONALIZATION_CLEAN
CALLS = 6  # drawn calls per variant; a mutation takes the first one it can be built from
EXPORTED_WITH = "torch.export.export(strict=False), then run_decompositions with the opset's decomposition table"


@dataclass(frozen=True)
class Finding:
    """A known way some variants do not functionalize on the installed torch."""

    variants: tuple[str, ...]  # fnmatch globs over variant names, with or without aten::
    programs: tuple[str, ...]  # globs over "target/view"
    reason: str
    status: str = ""  # the failing status it expects; any when empty
    strict: bool = True  # False: it fails for some values only, so a pass is not stale
    excluding: tuple[str, ...] = ()  # variant globs the entry does not cover
    link: str = ""
    where: str = ""

    def covers(self, mutation: Mutation) -> bool:
        name = mutation.variant.name
        return (any(cases_mod.op_matches(name, glob) for glob in self.variants)
                and not any(cases_mod.op_matches(name, glob) for glob in self.excluding)) and any(
            fnmatch.fnmatchcase(mutation.program_id, glob) for glob in self.programs)

    def as_dict(self) -> dict[str, str]:
        entry = {"reason": self.reason, "where": self.where}
        return {**entry, "link": self.link} if self.link else entry


@dataclass(frozen=True)
class Findings:
    entries: tuple[Finding, ...] = ()
    path: str = ""
    warnings: tuple[str, ...] = ()

    def lookup(self, mutation: Mutation) -> Finding | None:
        return next((f for f in self.entries if f.covers(mutation)), None)


def default_path() -> Path:
    return expectations_dir() / "functionalization.yaml"


def read_findings(path: Path, variants: list[functional_variants.Variant], opset: Opset) -> Findings:
    """Parse and schema-check the findings file; OpsetError (file:line: message) when it is unusable."""
    data = load.read_checked(path, SCHEMA, "findings")
    entries, notes = [], []
    if data.get("opset", opset.version) != opset.version:
        notes.append(f"{path}:1: findings recorded for opset {data['opset']}, run on {opset.version}")
    for yaml_entry in data["findings"]:  # the findings file's own entries, not a report's records
        mark = yamlio.mark_of(yaml_entry)
        entry = Finding(variants=tuple(yaml_entry["variants"]), programs=tuple(yaml_entry.get("programs", ["*"])),
                        reason=yaml_entry["reason"], status=yaml_entry.get("status", ""),
                        strict=yaml_entry.get("strict", True), excluding=tuple(yaml_entry.get("excluding", ())),
                        link=yaml_entry.get("link", ""), where=f"{mark.path}:{mark.line}")
        for glob in (*entry.variants, *entry.excluding):
            if not any(cases_mod.op_matches(v.name, glob) for v in variants):
                notes.append(f"{mark}: finding {glob!r} matches no in-place or out variant of opset {opset.version}")
        entries.append(entry)
    return Findings(tuple(entries), str(path), tuple(notes))


def judge(outcome: str, finding: Finding | None) -> tuple[str, str]:
    """(status, note) for a raw outcome once the finding is applied; the note says why a finding did not hold."""
    if finding is None or outcome == "skip":
        return outcome, ""
    if outcome == "pass" and not finding.strict:
        return "pass", ""
    if outcome == "pass":
        return "xpass", f"stale finding at {finding.where}: the program functionalizes"
    if finding.status and finding.status != outcome:  # it fails, but not the recorded way
        return outcome, f"the finding at {finding.where} expects {finding.status}"
    return "xfail", ""


def rejudge(record: FunctionalizationRecord, findings: Findings) -> FunctionalizationRecord:
    """A record from an earlier run, judged by today's findings (its raw outcome is kept)."""
    variant = functional_variants.Variant(record.functional, record.variant, record.kind)
    finding = findings.lookup(Mutation(variant, record.target, record.view))
    return _judged(record.without("finding", "note"), finding)


def _judged(record: FunctionalizationRecord, finding: Finding | None) -> FunctionalizationRecord:
    """The record (without a finding or a note) with its status once ``finding`` is applied."""
    status, note = judge(record.outcome, finding)
    return record.replace(status=status, note=note or None,
                          finding=finding.as_dict() if finding is not None else None)


def every_output(call: Call) -> Call:
    """The call asking for every output: an ``out=`` variant needs them all, a backward's output_mask may drop some."""
    names = [a.name for a in torch_ops.resolve(call.op)._schema.arguments]
    if "output_mask" not in names:
        return call
    position = names.index("output_mask")
    if position < len(call.args):
        mask = call.args[position]
        return Call(call.op, (*call.args[:position], [True] * len(mask), *call.args[position + 1:]), call.kwargs)
    if "output_mask" in call.kwargs:
        return Call(call.op, call.args, {**call.kwargs, "output_mask": [True] * len(call.kwargs["output_mask"])})
    return call


def run_variant(variant: functional_variants.Variant, opset: Opset, table: dict, findings: Findings, *,
                device: str, seed: int) -> list[FunctionalizationRecord]:
    """One record per mutation of ``variant``."""
    op = opset.ops_by_name[variant.functional]
    dtype = cases_mod.dtypes_for(op, ["float32"])[0]
    case = cases_mod.Case(variant.name, dtype, device)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            calls = [e.call for e in cases_mod.draw(op, dtype, device, max_examples=CALLS, max_compiles=CALLS,
                                                    seed=case.seed(seed))]
        except Exception as err:  # noqa: BLE001 - a strategy that cannot draw leaves the variant unchecked
            calls, draw_error = [], one_line(err, cause=True)
        else:
            draw_error = ""
        direct = Mutation(variant, "input", "direct")
        if calls and not any(build(direct, call) for call in calls):
            # rare shapes of call (every output of a multi-output op defined): look further before giving up
            more = [e.call for e in cases_mod.draw(op, dtype, device, max_examples=CALLS * 8,
                                                   max_compiles=CALLS * 8, seed=case.seed(seed + 1))]
            calls += [every_output(call) for call in more]
        tolerance = tolerance_of(opset, variant)
        records = []
        for mutation in mutations(variant):
            started = time.perf_counter()
            program = next((p for p in (build(mutation, call) for call in calls) if p is not None), None)
            if program is not None:
                verdict = check(program, opset, table, tolerance)
            elif mutation.view != "direct" and calls:
                verdict = Verdict("skip", f"a {mutation.view} view cannot reach the outputs of the drawn calls")
            else:
                verdict = Verdict("no-program", draw_error or f"eager refuses the {variant.kind} variant on "
                                                                  f"all {len(calls)} drawn calls")
            record = FunctionalizationRecord(
                variant=variant.name, functional=variant.functional, kind=variant.kind, target=mutation.target,
                view=mutation.view, dtype=dtype, device=device, status=verdict.status, outcome=verdict.status,
                message=verdict.message, duration_s=round(time.perf_counter() - started, 3),
                graph_ops=tuple(verdict.graph_ops) if verdict.status not in ("pass", "skip") else None)
            records.append(_judged(record, findings.lookup(mutation)))
    return records


def summarize(records: list[FunctionalizationRecord]) -> dict[str, int]:
    counts = Counter(r.status for r in records)
    return {**{status: counts[status] for status in STATUSES}, "programs": len(records),
            "variants": len({r.variant for r in records}), "ops": len({r.functional for r in records})}


def section(opset: Opset, variants: list[functional_variants.Variant], findings: Findings, *, device: str,
            seed: int, previous: Functionalization | None = None, out: TextIO | None = None,
            clock: Callable[[], float] = time.perf_counter) -> Functionalization:
    """Run every variant; the report's ``functionalization`` section.

    ``previous``: the section of a resumed report; its programs are judged again by
    today's findings instead of being run (when it was drawn with the same seed).
    """
    out = out or sys.stdout
    started = clock()
    carried: dict[str, list[FunctionalizationRecord]] = {}
    if previous and previous.seed == seed and previous.device == device:
        for record in previous.results:
            carried.setdefault(record.variant, []).append(rejudge(record, findings))
    table = lowering_table(opset)
    records: list[FunctionalizationRecord] = []
    for index, variant in enumerate(variants, 1):
        mine = carried.get(variant.name) or run_variant(variant, opset, table, findings, device=device, seed=seed)
        records += mine
        tally = ", ".join(f"{n} {s}" for s, n in Counter(r.status for r in mine).most_common())
        how = "recorded" if variant.name in carried else "ran"
        print(f"[functionalization {index}/{len(variants)}] {variant.id} ({how}): {tally}", file=out, flush=True)
    duration = sum(r.duration_s for r in records)
    return Functionalization(exported_with=EXPORTED_WITH, findings=findings.path, device=device, seed=seed,
                             calls_per_variant=CALLS, duration_s=round(max(duration, clock() - started), 1),
                             summary=summarize(records), warnings=tuple(findings.warnings), results=tuple(records))


def summary_lines(section: Functionalization) -> list[str]:
    s = section.summary
    counts = ", ".join(f"{s[status]} {status}" for status in STATUSES if s[status])
    lines = [f"functionalization: {s['programs']} programs of {s['variants']} variants of {s['ops']} ops: {counts}"]
    bad = [r for r in section.results if r.status not in CLEAN]
    for r in bad[:20]:
        lines.append(f"  {r.variant.removeprefix('aten::')}/{r.target}/{r.view}: {r.status}: "
                     f"{first_line(r.note or r.message, 160)}")
    if len(bad) > 20:
        lines.append(f"  ... and {len(bad) - 20} more in the report")
    return lines


def clean(section: Functionalization) -> bool:
    return all(r.status in CLEAN for r in section.results)
