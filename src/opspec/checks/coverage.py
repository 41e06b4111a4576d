"""Which ops a model's exported graph needs, and which of them an opset and its backends cover.

The model is exported once with ``torch.export``, decomposed with the opset's
table, and every ``call_function`` op left in the graph is counted. Each op is
put in one opset class: ``core``, ``bookkeeping`` (an assertion or range
constraint whose treatment the opset's bookkeeping policy records) or
``outside``. Against each backend's manifest an op is ``lowered``, ``library``
(its lowering calls a library kernel, as Inductor's GEMM and convolution do: lowered,
shown apart), ``fallback``, ``unsupported`` or ``undeclared`` on the chosen device, in
the dtypes the model's calls use; the model is flagged for a backend when an op the
backend must run is not lowered there — the "ops not lowered" list a
backend author needs before shipping the model. Bookkeeping ops never flag a
model: the policy says what a backend owes them.
"""
from __future__ import annotations

import contextlib
import io
import sys
import warnings
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from opspec.bridge import torch_ops
from opspec.checks.models import (  # noqa: F401 - the public entry points
    ExampleModel,
    ModelError,
    load_model,
)
from opspec.spec.errors import one_line
from opspec.spec.manifests import BackendManifest
from opspec.spec.model import Opset

CORE, BOOKKEEPING, OUTSIDE = "core", "bookkeeping", "outside"
HOST_READ = "aten::_local_scalar_dense"  # the op behind .item(), bool(t), int(t): a value read into Python
NOT_RUN = "not run"  # a backend's status for a host read outside the graph it compiles: the Python code is not its
# the backend's own lowering: code it generates, or a library kernel it chooses to call (Inductor's extern GEMM)
OWN_LOWERING = ("lowered", "library")


@dataclass(frozen=True)
class OpUse:
    op: str
    count: int
    opset: str  # core | bookkeeping | outside
    backends: dict[str, tuple[str, str]] = field(default_factory=dict)  # backend -> (status, note)
    note: str = ""

    def flagged_for(self, backend: str) -> bool:
        if self.opset == BOOKKEEPING:
            return False
        return self.backends[backend][0] not in (*OWN_LOWERING, NOT_RUN)

    @property
    def flagged(self) -> bool:
        """Not lowered by some backend; with no backend, outside the opset."""
        if not self.backends:
            return self.opset == OUTSIDE
        return any(self.flagged_for(name) for name in self.backends)


@dataclass(frozen=True)
class Report:
    model: str
    opset_version: str
    backends: tuple[str, ...] = ()
    device: str = "cpu"
    ops: tuple[OpUse, ...] = ()

    @property
    def flagged(self) -> tuple[OpUse, ...]:
        return tuple(use for use in self.ops if use.flagged)

    @property
    def exit_code(self) -> int:
        return 1 if self.flagged else 0

    def not_lowered(self, backend: str) -> list[str]:
        return [use.op for use in self.ops if use.flagged_for(backend)]

    def library_calls(self, backend: str) -> list[str]:
        """Ops the backend lowers by calling a library kernel: not flagged, shown apart."""
        return [use.op for use in self.ops if use.backends[backend][0] == "library" and use.opset != BOOKKEEPING]

    def to_dict(self) -> dict[str, Any]:
        return {
            "model": self.model,
            "opset": self.opset_version,
            "device": self.device,
            "backends": list(self.backends),
            "ops": [{"op": u.op, "count": u.count, "opset": u.opset, "note": u.note,
                     "backends": {name: {"status": s, "note": n} for name, (s, n) in u.backends.items()}}
                    for u in self.ops],
            "outside_opset": [u.op for u in self.ops if u.opset == OUTSIDE],
            "bookkeeping": [u.op for u in self.ops if u.opset == BOOKKEEPING],
            "not_lowered": {name: self.not_lowered(name) for name in self.backends},
            "library_calls": {name: self.library_calls(name) for name in self.backends},
            "exit_code": self.exit_code,
        }


def export_program(example: ExampleModel):
    """``torch.export`` of the model on its example inputs; ModelError (one line) when export refuses."""
    torch = torch_ops.torch_module()
    # On failure torch.export prints the partial graph to stderr; the error line says enough.
    captured = io.StringIO()
    try:
        with contextlib.redirect_stderr(captured), warnings.catch_warnings():
            warnings.simplefilter("ignore")  # model libraries warn about tracing; the report says what matters
            exported = torch.export.export(example.model, example.args, example.kwargs,
                                           dynamic_shapes=example.dynamic_shapes, strict=False)
    except Exception as err:
        raise ModelError(f"torch.export failed: {one_line(err)}") from None
    sys.stderr.write(captured.getvalue())
    return exported


def decompose(exported, table: dict):
    """Decompose with ``table``.

    A plain dict is enough in torch 2.13: run_decompositions decomposes the
    CompositeImplicitAutograd ops that are keys of the table and keeps the others,
    and torch's core table (which the opset's table starts from) lists every CIA op
    but the upsample ``.vec`` overloads export deliberately preserves — the same
    result as ``torch.export.default_decompositions()``.
    """
    try:
        with warnings.catch_warnings():
            # torch 2.13 warns about its own pytree internals while copying the program.
            warnings.simplefilter("ignore", FutureWarning)
            return exported.run_decompositions(table)
    except Exception as err:
        raise ModelError(f"decomposing the exported graph failed: {one_line(err)}") from None


def export_decomposed(example: ExampleModel, table: dict):
    return decompose(export_program(example), table)


def count_ops(graph_module) -> Counter:
    """call_function targets of the graph and its subgraphs (control flow), by qualified name.

    Python's ``operator`` functions (tuple indexing, size arithmetic) run on the host,
    not on the backend, so they are not ops.
    """
    return Counter(_target_name(node.target) for node in _op_nodes(graph_module))


def _op_nodes(graph_module):
    for submodule in graph_module.modules():
        graph = getattr(submodule, "graph", None)
        if graph is None:
            continue
        for node in graph.nodes:
            if node.op == "call_function" and getattr(node.target, "__module__", None) != "_operator":
                yield node


def _dtype_of(value):
    """A graph value's dtype, from the example value export recorded on its node (a tuple's first item's); None
    for a constant or a value without one."""
    value = getattr(value, "meta", {}).get("val")
    value = value[0] if isinstance(value, (list, tuple)) and value else value
    return getattr(value, "dtype", None)


def settings_by_op(graph_module) -> dict[str, frozenset[str]]:
    """op -> the arguments some call of it in the graph sets away from their schema defaults, and the dtypes its
    tensor arguments hold (``indices:bool``): a backend may lower an op at its defaults only (PyTorch/XLA's ``addmm``
    with ``beta`` or ``alpha`` set falls back) or for some input dtypes only (its ``index`` with a boolean mask)."""
    from opspec.testing.strategies.defaults import dtype_tokens, set_arguments

    found: dict[str, set[str]] = {}
    for node in _op_nodes(graph_module):
        if hasattr(node.target, "_schema"):
            schema = node.target._schema
            found.setdefault(_target_name(node.target), set()).update(
                set_arguments(schema, node.args, node.kwargs), dtype_tokens(schema, node.args, node.kwargs, _dtype_of))
    return {op: frozenset(names) for op, names in found.items()}


def dtypes_by_op(graph_module) -> dict[str, frozenset[str]]:
    """op -> the dtypes of its calls in the graph, as conform names a case's dtype: its first tensor argument's,
    or for a call with none (a factory) its output's. A manifest may say an op falls back in some dtypes only."""
    found: dict[str, set[str]] = {}
    for node in _op_nodes(graph_module):
        arguments = [a for a in (*node.args, *node.kwargs.values()) for a in (a if isinstance(a, (list, tuple)) else [a])]
        dtype = next((d for d in map(_dtype_of, arguments) if d is not None), None) or _dtype_of(node)
        if dtype is not None:
            found.setdefault(_target_name(node.target), set()).add(str(dtype).removeprefix("torch."))
    return {op: frozenset(names) for op, names in found.items()}


def _target_name(target) -> str:
    if hasattr(target, "_schema"):
        return torch_ops.op_name(target)
    if isinstance(target, torch_ops.torch_module()._ops.HigherOrderOperator):
        return f"higher_order::{target.name()}"
    return f"{getattr(target, '__module__', '?')}.{getattr(target, '__qualname__', repr(target))}"


def opset_class(op: str, opset: Opset) -> tuple[str, str]:
    """(core | bookkeeping | outside, note) for one op."""
    if op in opset.core_names():
        return CORE, ""
    policy = opset.bookkeeping_by_name.get(op)
    if policy is not None:
        owed = "a backend may run it as a no-op" if policy.backend == "may-skip" else "a backend must check it when the graph runs"
        return BOOKKEEPING, f"{policy.kind}, {policy.backend}: {owed}"
    # A rule that exists but left the op in the graph did not apply to these inputs.
    return OUTSIDE, "has a decomposition rule that did not apply" if op in opset.rules_by_op else "not in the opset"


def classify(counts: Counter, opset: Opset, manifests: list[BackendManifest] | BackendManifest | None = None,
             model: str = "", device: str = "cpu", settings: dict[str, frozenset[str]] | None = None,
             dtypes: dict[str, frozenset[str]] | None = None) -> Report:
    """``settings``: op -> the arguments its calls set away from their defaults (``settings_by_op``); without
    it, the calls may set any (the manifest's verdict for an arbitrary call). ``dtypes``: op -> its calls' dtypes
    (``dtypes_by_op``); without it, the calls may be of any dtype."""
    dtypes = dtypes or {}
    if isinstance(manifests, BackendManifest):
        manifests = [manifests]
    manifests = list(manifests or [])
    uses = []
    for op, count in sorted(counts.items(), key=lambda item: (-item[1], item[0])):
        status, note = opset_class(op, opset)
        backends = {m.backend: m.status_over(op, device, dtypes.get(op), None if settings is None else settings.get(op))
                    for m in manifests}
        uses.append(OpUse(op, count, status, backends, note))
    return Report(model, opset.version, tuple(m.backend for m in manifests), device, tuple(uses))


def eager_calls(example: ExampleModel) -> Counter:
    """op -> how often one eager run of the model on its example inputs dispatches it. A backend that runs the
    model's own code (PyTorch/XLA) sees these calls, not the exported graph: the model's reads of tensor values
    (``.item()``, ``if mask.all():``, run as ``aten::_local_scalar_dense``), which export specialises away, and ops
    outside the core set that export decomposes (``torch._weight_norm`` calls ``aten::_weight_norm_interface``)."""
    torch = torch_ops.torch_module()
    from torch.utils._python_dispatch import TorchDispatchMode

    calls: Counter = Counter()

    class Calls(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            calls[torch_ops.op_name(func)] += 1
            return func(*args, **(kwargs or {}))

    try:
        with torch.no_grad(), warnings.catch_warnings(), Calls():
            warnings.simplefilter("ignore")
            example.model(*example.args, **dict(example.kwargs))
    except Exception as err:
        raise ModelError(f"the model's eager run failed: {one_line(err)}") from None
    return calls


def with_eager_calls(report: Report, calls: Counter, manifests: list[BackendManifest], opset: Opset) -> Report:
    """The report with the model's eager calls counted for the backends that run its Python code (manifest
    ``runs_model_code``): its host reads, and the calls of ops outside the graph that such a backend's
    ``eager_ops`` measured as fallbacks. The other backends compile only the graph, where these calls are not."""
    eager = [m for m in manifests if m.runs_model_code]
    if not eager:
        return report
    uses = {use.op: use for use in report.ops}
    reads = calls.get(HOST_READ, 0)
    if reads and HOST_READ in uses:  # in the graph too: the graph's calls decide, the note adds the eager reads
        use = uses[HOST_READ]
        note = f"read {reads} time(s) by the model's Python code, outside the exported graph"
        uses[HOST_READ] = OpUse(HOST_READ, use.count, use.opset, use.backends, "; ".join(filter(None, (use.note, note))))
    elif reads:
        uses[HOST_READ] = OpUse(HOST_READ, reads, opset_class(HOST_READ, opset)[0], _eager_status(HOST_READ, manifests, report.device, (
            NOT_RUN, "the backend compiles the exported graph, which holds no such read")),
            f"read {reads} time(s) by the model's Python code, outside the exported graph")
    for op, count in sorted(calls.items()):
        if op in uses or not any(m.eager_ops.get(op, ("",))[0] == "fallback" for m in eager):
            continue
        uses[op] = OpUse(op, count, opset_class(op, opset)[0], _eager_status(op, manifests, report.device, (
            NOT_RUN, "the backend compiles the exported graph, where the call is decomposed")),
            f"called {count} time(s) by the model's eager code; the exported graph holds its decomposition")
    return Report(report.model, report.opset_version, report.backends, report.device, tuple(uses.values()))


def _eager_status(op: str, manifests: list[BackendManifest], device: str, elsewhere: tuple[str, str]) -> dict:
    def status(m: BackendManifest) -> tuple[str, str]:
        if not m.runs_model_code:
            return elsewhere
        if op in m.eager_ops:
            return m.eager_ops[op]
        return m.status(op, device, frozenset())
    return {m.backend: status(m) for m in manifests}


def coverage(example: ExampleModel, opset: Opset, table: dict, manifests=None, name: str = "", device: str = "cpu") -> Report:
    exported = export_decomposed(example, table)
    manifests = [manifests] if isinstance(manifests, BackendManifest) else list(manifests or [])
    report = classify(count_ops(exported.graph_module), opset, manifests, name, device,
                      settings_by_op(exported.graph_module), dtypes_by_op(exported.graph_module))
    return with_eager_calls(report, eager_calls(example) if any(m.runs_model_code for m in manifests) else Counter(),
                            manifests, opset)
