"""Model-level conformance: a whole exported model through a backend, compared with eager, and the op that diverges.

1. The model is exported once and decomposed with the opset's table (as
   ``opspec coverage`` does); the backend compiles that graph as one program
   over the model's tensor inputs (non-tensor inputs are baked in, as export did).
2. Its outputs are compared with the eager model by the shared comparison rule,
   at a whole-model tolerance (errors add up over many ops).
3. When they diverge, the graph is compiled again with every intermediate value
   as an output, and each node's value is compared with the eager value of the
   same node, in graph order. Each diverging node is then run *alone* through
   the backend on the eager values of its inputs and checked at the op's own
   tolerance: the first that fails on its own is the culprit. Its call is
   written as an op-level repro (:mod:`.ir` JSON) that
   ``opspec conform --ops OP --inputs FILE`` replays. Where the instrumented
   program matches (the divergence needs the whole program, e.g. a fusion),
   every node is checked alone in graph order.

A matching model is a ``pass`` only where the backend computed it: the execution
evidence of op-level cases (:mod:`.evidence`) is collected over the model's
program, and a model whose ops ran in PyTorch, all or some, is ``fallback``
(the right answer, not all of it the backend's), naming the ops PyTorch ran.
"""
from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import torch
import torch.fx
from torch.utils import _pytree

from opspec.checks import coverage
from opspec.checks.models import ExampleModel
from opspec.conform import backends, evidence, ir, report
from opspec.conform.backends import CompileError
from opspec.spec import atomic
from opspec.spec.errors import one_line
from opspec.spec.model import Opset, Tolerance
from opspec.testing import compare, strategies
from opspec.testing.strategies import Call

MODEL_TOLERANCE = Tolerance(
    "a whole model adds up rounding over many ops; per-op checks use each op's own tolerance",
    {"float32": (1e-4, 1e-4), "float64": (1e-7, 1e-7), "float16": (1e-2, 1e-2), "bfloat16": (5e-2, 5e-2)},
)
MAX_CANDIDATES = 8  # diverging nodes checked alone before giving up on the instrumented run


@dataclass
class Culprit:
    node: str
    op: str
    message: str
    repro: str | None = None  # path of the op-level repro

    def to_dict(self) -> dict[str, Any]:
        return {"node": self.node, "op": self.op, "message": self.message, "repro": self.repro}


@dataclass
class ModelResult:
    model: str
    backend: dict[str, str]
    status: str  # pass | fallback | fail | compile-error | run-error
    message: str = ""
    executed: evidence.Evidence | None = None  # who ran the model's ops
    nodes: int = 0
    compared: dict[str, Any] = field(default_factory=dict)
    first_divergence: str | None = None  # node name in the instrumented run
    culprit: Culprit | None = None
    duration_s: float = 0.0

    @property
    def exit_code(self) -> int:
        return 0 if self.status in ("pass", *evidence.PASSING_STATUS.values()) else 1  # a right answer is no bug

    def to_dict(self) -> dict[str, Any]:
        return {"model": self.model, "backend": self.backend, "status": self.status, "message": self.message,
                "nodes": self.nodes, "comparison": self.compared, "first_divergence": self.first_divergence,
                "culprit": self.culprit.to_dict() if self.culprit else None, "duration_s": round(self.duration_s, 2),
                "executed": self.executed.executed if self.executed else "unknown",
                "evidence": self.executed.as_dict() if self.executed else None}


def _tensor_program(module: Callable, example: ExampleModel) -> tuple[Callable, list[torch.Tensor]]:
    """A function of the model's tensor inputs alone, the other inputs baked in as export baked them."""
    leaves, spec = _pytree.tree_flatten((example.args, dict(example.kwargs)))
    positions = [i for i, leaf in enumerate(leaves) if isinstance(leaf, torch.Tensor)]

    def program(*tensors):
        filled = list(leaves)
        for position, tensor in zip(positions, tensors):
            filled[position] = tensor
        args, kwargs = _pytree.tree_unflatten(filled, spec)
        return module(*args, **kwargs)

    return program, [leaves[i] for i in positions]


def _fresh(tensors: list[torch.Tensor]) -> list[torch.Tensor]:
    return [t.clone() for t in tensors]


def check_model(name: str, example: ExampleModel, backend: backends.Backend, opset: Opset, table: dict,
                repro_dir: Path) -> ModelResult:
    started = time.perf_counter()
    result = ModelResult(name, backend.describe(), "pass")
    exported = coverage.export_decomposed(example, table)
    graph_module = exported.module()
    result.nodes = sum(1 for n in graph_module.graph.nodes if n.op == "call_function")
    program, tensors = _tensor_program(graph_module, example)
    with torch.no_grad():
        reference = example.run()
        torch._dynamo.reset()
        with evidence.collecting() as seen:
            try:
                compiled = backend.compile(program, _fresh(tensors))
                candidate = compiled(*_fresh(tensors))
            except CompileError as err:
                return _done(result, "compile-error", str(err), started)
            except Exception as err:  # noqa: BLE001 - the backend under test may fail any way
                return _done(result, "run-error", one_line(err, 300), started)
        # "" is no op: the model's evidence is judged over all of its ops
        result.executed = backend.static_evidence() or evidence.judge("", seen)
        verdict = compare.compare(_tensors_of(candidate), _tensors_of(reference), tolerance=MODEL_TOLERANCE)
        result.compared = _numbers(verdict)
        if verdict.ok:
            return _done(result, evidence.PASSING_STATUS[result.executed.executed], _right_answer(result.executed),
                         started)
        result.message = f"outputs differ from eager: {verdict.message}"
        result.status = "fail"
        result.first_divergence, result.culprit = localise(graph_module, example, backend, opset, repro_dir, name)
    return _done(result, result.status, result.message, started)


def _done(result: ModelResult, status: str, message: str, started: float) -> ModelResult:
    result.status, result.message = status, message
    result.duration_s = time.perf_counter() - started
    return result


def _tensors_of(value: Any) -> list[torch.Tensor]:
    """The tensor leaves of a model output (dataclass-like outputs of model libraries included)."""
    return [leaf for leaf in _pytree.tree_leaves(value) if isinstance(leaf, torch.Tensor)]


def _numbers(verdict: compare.Comparison) -> dict[str, Any]:
    return {"ok": verdict.ok, "max_abs_error": verdict.max_abs_error, "max_rel_error": verdict.max_rel_error,
            "tolerance": list(verdict.tolerance) if verdict.tolerance else None, "where": verdict.path}


# ---- localisation ----

def _value_nodes(graph: torch.fx.Graph) -> list[torch.fx.Node]:
    """aten call nodes whose value is one tensor: the intermediates worth comparing."""
    return [n for n in graph.nodes if n.op == "call_function" and isinstance(n.target, torch._ops.OpOverload)
            and isinstance(n.meta.get("val"), torch.Tensor)]


def eager_values(graph_module: torch.fx.GraphModule, inputs: list) -> dict[str, Any]:
    """Every node's value when the graph runs in eager mode."""
    values: dict[str, Any] = {}

    class Recorder(torch.fx.Interpreter):
        def run_node(self, node):
            value = super().run_node(node)
            values[node.name] = value
            return value

    Recorder(graph_module).run(*inputs)
    return values


def instrumented(graph_module: torch.fx.GraphModule) -> tuple[torch.fx.GraphModule, list[str]]:
    """A copy whose outputs are every intermediate tensor, in graph order."""
    graph = torch.fx.Graph()
    mapping: dict[torch.fx.Node, torch.fx.Node] = {}
    graph.graph_copy(graph_module.graph, mapping)  # without the output node
    names = [n.name for n in _value_nodes(graph_module.graph)]
    outputs = [mapping[n] for n in graph_module.graph.nodes if n.name in set(names)]
    graph.output(tuple(outputs))
    return torch.fx.GraphModule(graph_module, graph), names


def localise(graph_module: torch.fx.GraphModule, example: ExampleModel, backend: backends.Backend, opset: Opset,
             repro_dir: Path, model_name: str) -> tuple[str | None, Culprit | None]:
    """(first diverging node of the instrumented run, the op that diverges alone) — either may be None."""
    from torch.export._tree_utils import reorder_kwargs

    # the unlifted module's graph takes the user inputs flattened in the order of its in_spec
    # (its pytree codegen sits outside the graph), keyword inputs ordered as export saw them
    in_spec = graph_module._in_spec
    graph_inputs = _pytree.tree_leaves((example.args, reorder_kwargs(dict(example.kwargs), in_spec)))
    reference = eager_values(_graph_only(graph_module), graph_inputs)
    nodes = {n.name: n for n in graph_module.graph.nodes}

    first, candidates = None, []
    probe, names = instrumented(_graph_only(graph_module))
    program, tensors = _graph_program(probe, graph_inputs)
    try:
        values = backend.compile(program, _fresh(tensors))(*_fresh(tensors))
        for name, value in zip(names, values):
            if not compare.compare(value, reference[name], tolerance=MODEL_TOLERANCE).ok:
                candidates.append(name)
        first = candidates[0] if candidates else None
    except Exception:  # noqa: BLE001 - the instrumented program may not compile where the model did
        candidates = []
    order = candidates[:MAX_CANDIDATES] or [n.name for n in _value_nodes(graph_module.graph)]
    checked: set[tuple] = set()
    for name in order:
        node = nodes[name]
        call = _call_of(node, reference)
        key = (call.op, repr([(t.dtype, tuple(t.shape)) for t in call.tensors()]), _constants_key(call))
        if key in checked:
            continue
        checked.add(key)
        problem = op_alone(call, backend, opset)
        if problem is not None:
            path = repro_dir / f"{report.slug(model_name)}-{report.slug(backend.name)}-{name}.json"
            data = ir.call_to_json(call.op, call.args, call.kwargs,
                                   note=f"node {name} of {model_name} on {backend.name}: {problem}")
            atomic.write_text(path, json.dumps(data, indent=1) + "\n")
            return first, Culprit(name, call.op, problem, str(path))
    return first, None


def _graph_only(graph_module: torch.fx.GraphModule) -> torch.fx.GraphModule:
    """The unlifted module's graph as a GraphModule over flat inputs (no pytree in/out codegen)."""
    graph = torch.fx.Graph()
    mapping: dict = {}
    out = graph.graph_copy(graph_module.graph, mapping)
    graph.output(out)
    module = torch.fx.GraphModule(graph_module, graph)
    return module


def _graph_program(module: torch.fx.GraphModule, inputs: list) -> tuple[Callable, list[torch.Tensor]]:
    positions = [i for i, leaf in enumerate(inputs) if isinstance(leaf, torch.Tensor)]

    def program(*tensors):
        filled = list(inputs)
        for position, tensor in zip(positions, tensors):
            filled[position] = tensor
        return module(*filled)

    return program, [inputs[i] for i in positions]


def _call_of(node: torch.fx.Node, values: dict[str, Any]) -> Call:
    def value(arg):
        return values[arg.name] if isinstance(arg, torch.fx.Node) else arg

    args = torch.fx.node.map_aggregate(node.args, lambda a: value(a) if isinstance(a, torch.fx.Node) else a)
    kwargs = torch.fx.node.map_aggregate(node.kwargs, lambda a: value(a) if isinstance(a, torch.fx.Node) else a)
    from opspec.bridge import torch_ops

    return Call(torch_ops.op_name(node.target), tuple(args), dict(kwargs))


def _constants_key(call: Call) -> str:
    from opspec.testing.strategies.call import map_tensors

    return repr(map_tensors(lambda t: None, (call.args, call.kwargs)))


def op_alone(call: Call, backend: backends.Backend, opset: Opset) -> str | None:
    """None when the backend computes this one call as eager does; else what went wrong."""
    from opspec.conform.cases import Example

    example = Example.of(call)
    op = opset.ops_by_name.get(call.op)
    tolerance = strategies.effective_hints(op.name, op.testing).tolerance if op is not None else None
    reference = example.program()(*example.fresh_inputs())
    try:
        candidate = backend.compile(example.program(), example.fresh_inputs())(*example.fresh_inputs())
    except Exception as err:  # noqa: BLE001
        return one_line(err, 300)
    verdict = compare.compare(candidate, reference, tolerance=tolerance)
    return None if verdict.ok else verdict.message


def _right_answer(found: evidence.Evidence) -> str:
    """Why a model that matched eager is not a pass: who computed its ops instead of the backend's target."""
    if found.executed in evidence.FALLBACK:
        return (f"right answer, but {len(found.pytorch_ops)} of the model's ops ran in PyTorch, not in the backend "
                f"({found.source}): {', '.join(found.pytorch_ops)}")
    if found.executed == "runtime":
        return (f"right answer, but {len(found.runtime_ops)} of the model's ops ran in the backend's runtime, outside "
                f"its target: {', '.join(found.runtime_ops)}")
    if found.executed == "unknown":
        return f"right answer, unverified: {found.note or 'the backend reported nothing about what it executed'}"
    return ""
