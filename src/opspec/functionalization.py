"""Functionalization checks: mutating programs of core ops, exported, must become functional core graphs.

For each in-place or ``out=`` variant of a core op (see :mod:`.functional_variants`)
a *mutation* is one program shape: the written tensor is a graph input or an
intermediate (a clone made inside the program), reached directly or through a
view (slice, select, diagonal, transpose, expand). The program is exported with
``torch.export`` and lowered with the opset's decomposition table, then:

(a) the graph may call only functional core ops of the opset; an input mutation
    must be recorded in the graph signature (the epilogue that writes it back),
    and no other input may be;
(b) the exported program's outputs and the inputs it mutates must match eager,
    by the shared comparison rule.

Arguments come from the shared strategy layer, drawn for the functional op.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

import torch

from . import compare, decomp_table, strategies, torch_bridge
from .conform.backends import ProgramModule, root_cause_line
from .conform.cases import Slot, fill
from .functional_variants import TENSOR_OPTIONS, Variant
from .model import Opset
from .strategies import Call
from .strategies.call import map_tensors
from .strategies.values import copy_preserving_layout

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
    overload = torch_bridge.resolve(variant.name)
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
    inputs: list[torch.Tensor] = list(bases)

    def take(tensor: torch.Tensor) -> Slot:
        inputs.append(tensor)
        return Slot(len(inputs) - 1)

    args, kwargs = map_tensors(take, args), map_tensors(take, kwargs)
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
        return Verdict("export-error", root_cause_line(err))
    ops = _graph_ops(exported.graph)
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
        return Verdict("run-error", root_cause_line(err), tuple(sorted(ops)))
    verdict = compare.compare(actual, expected, tolerance=tolerance)
    if not verdict.ok:
        return Verdict("fail", f"outputs: {verdict.message}", tuple(sorted(ops)))
    written = compare.compare(exported_inputs[: program.n_bases], eager_inputs[: program.n_bases], tolerance=tolerance)
    if not written.ok:
        return Verdict("fail", f"mutated inputs: {written.message}", tuple(sorted(ops)))
    return Verdict("pass", "", tuple(sorted(ops)))


def _graph_ops(graph: torch.fx.Graph) -> set[str]:
    return {torch_bridge.op_name(node.target) for node in graph.nodes
            if node.op == "call_function" and hasattr(node.target, "_schema")}


def _graph_problem(exported, ops: set[str], opset: Opset, mutation: Mutation, n_bases: int) -> str:
    """Why the lowered graph is not the functional core graph the mutation should become; "" when it is."""
    core = opset.core_names()
    outside = sorted(op for op in ops if op not in core)
    mutable = sorted(op for op in ops if torch_bridge.resolve(op)._schema.is_mutable)
    if mutable:
        return f"the graph still mutates: {', '.join(mutable)}"
    if outside:
        return f"the graph calls ops outside opset {opset.version}: {', '.join(outside)}"
    signature = exported.graph_signature
    user_inputs = list(signature.user_inputs)
    mutated = set(signature.user_inputs_to_mutate.values())
    # an inplace_view op (as_strided_, unsqueeze_) changes only the view's metadata, never data
    writes_data = torch.Tag.inplace_view not in torch_bridge.resolve(mutation.variant.name).tags
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
