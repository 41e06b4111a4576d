"""Execution evidence: did the backend's target run the op, its runtime around it, or PyTorch?

A numerically right answer is a ``pass`` only where the backend's *target* computed
it. Each backend declares its target (``Declaration.target``: Inductor's generated
kernels, the XNNPACK delegate, OpenVINO's partitions) and, where it has one, the
runtime that runs what the target does not take (``Declaration.runtime``:
ExecuTorch's portable kernels around a delegate). Each case records who computed
the op under test (``executed``), one level of:

- ``target``: the backend's target ran all of the op's computation (``pass``);
- ``runtime``: the backend's runtime ran it, outside its target (``undelegated``);
- ``pytorch``: the op under test ran on a PyTorch kernel (``fallback``);
- ``partial``: the backend ran part, PyTorch kernels the rest (also ``fallback``);
- ``unknown``: nothing tells (``unverified``: a right answer nobody can vouch for).

Where it comes from (``source``), in this order:

1. ``hook``: the callable the backend returns (or a compiler nested in it, through
   :func:`report`) says so. The contract: an ``executed_ops()`` method returning
   ``{"target": [op, ...], "runtime": [op, ...], "pytorch": [op, ...]}`` with
   qualified aten names (``"backend"`` is read as ``"target"``; missing keys are empty).
2. ``partition``: the backend returned a ``torch.fx.GraphModule``. Following the
   ``torch.fx`` partitioner convention (``CapabilityBasedPartitioner``), ops inside
   its submodules ran in the backend and ``call_function`` nodes left at the top
   level ran in PyTorch. A backend that returns the graph it was handed ran nothing.
   Graphs a backend compiles inside AOT autograd are seen the same way.
3. ``generated-code``: the wrapper code Inductor generates (read by a watcher its
   declaration names, in ``backends/inductor.py``); its calls to ATen kernels
   (``aten.*``, ``extern_kernels.*``) ran in PyTorch, its generated kernels in Inductor.
4. ``reference``: the backend *is* PyTorch's eager kernels by design (its
   declaration says so, with what a pass means there): a pass says the front end
   kept the op's meaning.
5. ``whole-program``: the backend runs the whole program with no way back to
   PyTorch (declared so: an ONNX Runtime session).
"""
from __future__ import annotations

import contextlib
import contextvars
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Iterator

import torch

from opspec.bridge import torch_ops
from opspec.results import model
from opspec.results.model import CaseRecord
from opspec.results.vocabulary import EVIDENCE_SOURCES, EXECUTED, FALLBACK, PASSING_STATUS  # noqa: F401

# how far from the target a program ran the op: a case's repro is the program that showed its level
DISTANCE = {"runtime": 1, "partial": 2, "pytorch": 2}
LEGACY_EXECUTED = {"backend": "target"}  # reports written before the levels: the backend was its own target
SOURCES = EVIDENCE_SOURCES

SHAPE_QUERIES = ("aten::sym_size.int", "aten::sym_stride.int", "aten::sym_numel", "aten::sym_storage_offset")


@dataclass
class Seen:
    """What one compiled program says about who runs which ops."""

    source: str
    target_ops: set[str] = field(default_factory=set)
    pytorch_ops: set[str] = field(default_factory=set)
    note: str = ""
    kernels: int = 0  # kernels the backend generated (inductor), where it names no ops
    runtime_ops: set[str] = field(default_factory=set)  # ran in the backend's runtime, outside its target


@dataclass
class Evidence:
    executed: str
    source: str
    target_ops: list[str] = field(default_factory=list)
    pytorch_ops: list[str] = field(default_factory=list)
    note: str = ""
    runtime_ops: list[str] = field(default_factory=list)
    kernels: int = 0  # kernels the backend generated, where it names no ops (a re-judged record needs it)

    def as_dict(self) -> dict[str, Any]:
        entry: dict[str, Any] = {"executed": self.executed, "source": self.source}
        for key in ("target_ops", "runtime_ops", "pytorch_ops", "kernels"):
            if getattr(self, key):
                entry[key] = getattr(self, key)
        if self.note:
            entry["note"] = self.note
        return entry

    def as_record(self) -> model.Evidence:
        """The evidence as a report's record holds it."""
        return model.Evidence.from_dict(self.as_dict())


def judge(op: str, seen: Iterable[Seen]) -> Evidence:
    """The case's evidence from every program compiled for it, judged for the op under test."""
    seen = list(seen)
    if not seen:
        return Evidence("unknown", "none", note="the backend reported nothing about what it executed")
    source = min((s.source for s in seen), key=SOURCES.index)
    note = "; ".join(dict.fromkeys(s.note for s in seen if s.note))
    if source in ("reference", "whole-program"):
        return Evidence("target", source, note=note)
    ran_target = set().union(*(s.target_ops for s in seen))
    ran_runtime = set().union(*(s.runtime_ops for s in seen))
    ran_pytorch = set().union(*(s.pytorch_ops for s in seen))
    if op not in SHAPE_QUERIES:  # shape arithmetic around the op is not the op's computation
        ran_pytorch -= set(SHAPE_QUERIES)
        ran_runtime -= set(SHAPE_QUERIES)
    did_backend = bool(ran_target or ran_runtime) or any(s.kernels for s in seen)
    if _ran(op, ran_pytorch):
        executed = "pytorch"
    elif ran_pytorch:
        executed = "partial" if did_backend else "pytorch"
    elif _ran(op, ran_runtime) or (ran_runtime and not _ran(op, ran_target)):
        executed = "runtime"  # the op, or part of what it became, never reached the target
    elif did_backend or source == "generated-code":  # no kernel and no ATen call: views Inductor resolved itself
        executed = "target"
    else:
        executed = "unknown"
        note = note or "no op was left to run"
    return Evidence(executed, source, sorted(ran_target), sorted(ran_pytorch), note, sorted(ran_runtime),
                    sum(s.kernels for s in seen))


def distance(op: str, seen: list[Seen]) -> int:
    """How far from the target the programs in ``seen`` ran ``op`` (0: the target, or nothing tells)."""
    return DISTANCE.get(judge(op, seen).executed, 0) if seen else 0


def _ran(op: str, ops: set[str]) -> bool:
    return op in ops or _same_op(op, ops)


def static(kind: str, note: str) -> Evidence | None:
    """Evidence that follows from what the backend is, with no need to look: a backend declared ``reference``
    (its kernels are PyTorch's own by design) or ``whole-program`` (no way back to PyTorch), or ``none`` (it
    declares that nothing can tell: its right answers are unverified); None where evidence is observed."""
    if kind in ("reference", "whole-program"):
        return Evidence("target", kind, note=note)
    if kind == "none":
        return Evidence("unknown", "none", note=note or "the backend's declaration says nothing can tell")
    return None


def carried(record: CaseRecord, found: Evidence | None) -> CaseRecord:
    """A record from a run that collected no evidence, given what can be known without running it again
    (``found``: the backend's static evidence, or None)."""
    if record.written("evidence"):
        return upgraded(record)
    found = found or Evidence("unknown", "none", note="recorded before opspec collected execution evidence")
    return record.replace(evidence=found.as_record(), executed=found.executed)


def upgraded(record: CaseRecord) -> CaseRecord:
    """A record written before execution levels, in today's terms: ``backend`` was the backend's target, and the
    ops it named (``backend_ops``) are the target's."""
    found = record.evidence
    if found is None or found.executed not in LEGACY_EXECUTED and "backend_ops" not in found.extra:
        return record
    target_ops = found.extra.get("backend_ops", found.target_ops)
    now = found.replace(executed=LEGACY_EXECUTED.get(found.executed, found.executed),
                        target_ops=None if target_ops is None else tuple(target_ops),
                        extra={k: v for k, v in found.extra.items() if k != "backend_ops"})
    return record.replace(evidence=now, executed=now.executed)


def _same_op(op: str, ops: set[str]) -> bool:
    """``aten::sort.stable`` ran for ``aten::sort``: kernels are named by packet in generated code."""
    packet = op.split(".")[0]
    return any(o.split(".")[0] == packet for o in ops)


# ---- collecting, per case ----

_collector: contextvars.ContextVar[list[Seen] | None] = contextvars.ContextVar("opspec_evidence", default=None)


@contextlib.contextmanager
def collecting() -> Iterator[list[Seen]]:
    """Everything seen while the block runs (compiles included) lands in the yielded list."""
    seen: list[Seen] = []
    token = _collector.set(seen)
    try:
        yield seen
    finally:
        _collector.reset(token)


def current() -> list[Seen] | None:
    """What the enclosing :func:`collecting` block has seen so far (None outside one)."""
    return _collector.get()


def note(item: Seen) -> None:
    found = _collector.get()
    if found is not None:
        found.append(item)


def report(target_ops: Iterable[str] = (), pytorch_ops: Iterable[str] = (), note_text: str = "",
           runtime_ops: Iterable[str] = ()) -> None:
    """For a backend's compiler nested where opspec cannot see its output: say what ran where."""
    note(Seen("hook", set(target_ops), set(pytorch_ops), note_text, runtime_ops=set(runtime_ops)))


# ---- reading what a backend returned ----

def from_hook(compiled: Any) -> Seen | None:
    executed_ops = getattr(compiled, "executed_ops", None)
    if not callable(executed_ops):
        return None
    found = executed_ops()
    if isinstance(found, dict):
        return Seen("hook", set(found.get("target", ())) | set(found.get("backend", ())), set(found.get("pytorch", ())),
                    runtime_ops=set(found.get("runtime", ())))
    return Seen("hook", set(found))


def graph_module_of(compiled: Any) -> torch.fx.GraphModule | None:
    """The GraphModule behind what a backend returned: the module, its bound forward or __call__."""
    if isinstance(compiled, torch.fx.GraphModule):
        return compiled
    owner = getattr(compiled, "__self__", None)
    return owner if isinstance(owner, torch.fx.GraphModule) else None


def from_partitions(module: torch.fx.GraphModule, handed: torch.fx.GraphModule | None = None,
                    handed_ops: set[str] | None = None) -> Seen:
    """Ops in submodules ran in the backend; aten ``call_function`` nodes at the top level ran in PyTorch.

    ``handed_ops``: the ops of the graph as it was handed over, read before the backend ran. A partitioner that
    fuses in place (``CapabilityBasedPartitioner.fuse_partitions``) returns the module it was handed, mutated:
    read afterwards, that graph no longer shows what a partition wrapped in a runtime computed."""
    if handed_ops is None:
        handed_ops = set(torch_ops.graph_ops(handed.graph)) if handed is not None else None
    pytorch = set(torch_ops.graph_ops(module.graph))
    backend: set[str] = set()
    for node in module.graph.nodes:
        if node.op != "call_module":
            continue
        child = module.get_submodule(node.target)
        if isinstance(child, torch.fx.GraphModule):
            backend |= _all_ops(child)
        elif handed_ops is not None:  # compiled away: whatever was handed and is not left at the top level
            backend |= handed_ops - pytorch
    seen = Seen("partition", backend, pytorch)
    if module is handed and not backend:
        seen.note = "the backend returned the graph it was handed"
    return seen


def _all_ops(module: torch.fx.GraphModule) -> set[str]:
    found = set(torch_ops.graph_ops(module.graph))
    for node in module.graph.nodes:
        if node.op == "call_module":
            child = module.get_submodule(node.target)
            if isinstance(child, torch.fx.GraphModule):
                found |= _all_ops(child)
    return found


def inspect_returned(compiled: Any, handed: torch.fx.GraphModule | None,
                     handed_ops: set[str] | None = None) -> Seen | None:
    """What the callable a compiler returned says by itself (hook, then partitions); None when it says nothing.
    ``handed_ops``: the handed graph's ops as they were before the compiler ran (it may rewrite that graph)."""
    seen = from_hook(compiled)
    if seen is not None:
        return seen
    module = graph_module_of(compiled)
    if module is not None:
        return from_partitions(module, handed, handed_ops)
    return None


# ---- compilers nested in AOT autograd ----

@contextlib.contextmanager
def watching_aot(used: list[str]) -> Iterator[None]:
    """While a backend compiles: note when it goes through AOT autograd, and read what its compilers return."""
    from torch._dynamo.backends import common

    original = common.AotAutograd.__call__

    def call(self, gm, example_inputs, **kwargs):
        used.append("aot_autograd")
        wrapped = dict(self.kwargs)
        for key in ("fw_compiler", "inference_compiler"):
            if callable(wrapped.get(key)):
                wrapped[key] = _observed(wrapped[key])
        saved, self.kwargs = self.kwargs, wrapped
        try:
            return original(self, gm, example_inputs, **kwargs)
        finally:
            self.kwargs = saved

    common.AotAutograd.__call__ = call
    try:
        yield
    finally:
        common.AotAutograd.__call__ = original


def _observed(compiler: Callable) -> Callable:
    def compile_and_look(gm, example_inputs, *args, **kwargs):
        handed_ops = set(torch_ops.graph_ops(gm.graph))  # before the compiler may rewrite gm in place
        compiled = compiler(gm, example_inputs, *args, **kwargs)
        seen = inspect_returned(_unboxed(compiled), gm, handed_ops)
        if seen is not None:
            note(seen)
        return compiled

    for attribute in ("_boxed_call",):
        if hasattr(compiler, attribute):
            setattr(compile_and_look, attribute, getattr(compiler, attribute))
    return compile_and_look


def _unboxed(compiled: Any) -> Any:
    """AOT's boxed-calling wrappers keep the module they wrap in a closure; look through them."""
    if graph_module_of(compiled) is not None or callable(getattr(compiled, "executed_ops", None)):
        return compiled
    for cell in getattr(compiled, "__closure__", None) or ():
        try:
            content = cell.cell_contents
        except ValueError:
            continue
        if graph_module_of(content) is not None or callable(getattr(content, "executed_ops", None)):
            return content
    return compiled
