"""OpenVINO's ``torch.compile`` backend (the ``openvino`` entry point), observed.

The backend traces the graph with its decompositions, partitions it with
``CapabilityBasedPartitioner`` and runs each partition (``fused_*``
submodules) in OpenVINO; everything else runs in PyTorch, and it falls back
silently twice: a graph it cannot convert is handed to Inductor, and a
partition that fails at its first run goes on in PyTorch for good. By default
the partitioner drops single-node partitions, so a one-op program runs
entirely in PyTorch; ``options={"testing": True}`` keeps them.

Two backends:
- ``openvino``: the entry point as users get it (default options);
- ``openvino-single-op``: ``options={"testing": True}``, so each op opspec
  tests gets its own partition and really runs in OpenVINO.

The declaration keeps the Inductor fallback from passing as OpenVINO's result (it
is a compile error naming OpenVINO's own failure), and the callable it returns
says which ops ran where (``executed_ops()``): ops inside partitions that ran
in OpenVINO, and ops at the top level or in partitions that fell back, in PyTorch.
"""
from __future__ import annotations

import contextlib
import importlib.metadata
import sys
from typing import Any, Callable

import torch

from opspec.bridge import torch_ops
from opspec.conform import evidence
from opspec.conform.backends import dynamo
from opspec.conform.backends.base import Backend, CompileError, Declaration, MissingExtra, versioned
from opspec.spec.errors import one_line

SINGLE_OP = {"testing": True}


def _entry_point() -> Callable:
    """The ``openvino`` backend exactly as torch.compile finds it: the package's entry point."""
    for entry in importlib.metadata.entry_points(group="torch_dynamo_backends"):
        if entry.name == "openvino":
            return entry.load()
    raise MissingExtra("the openvino package registers no 'openvino' torch.compile backend")


def _builder(options: dict | None) -> Callable[[Declaration, Any, bool], Backend]:
    def build(declaration: Declaration, opset, dynamic: bool) -> Backend:
        observed = Observed(declaration.name, _entry_point(), dict(options) if options else None)
        return Backend(declaration.name, dynamo.compile_program, versioned(*declaration.packages), dynamic,
                       inner=observed, package="openvino", declaration=declaration)

    return build


def _declare(name: str, options: dict | None) -> Declaration:
    return Declaration(name, _builder(options), stages=dynamo.stages_with(), extra="openvino",
                       target="OpenVINO (the partitions its CPU plugin runs)",
                       requires=("openvino.frontend.pytorch.torchdynamo.backend",), packages=("openvino",))


DECLARATIONS = (_declare("openvino", None), _declare("openvino-single-op", SINGLE_OP))


class Observed:
    """The OpenVINO backend with its partitions captured and its Inductor fallback refused."""

    def __init__(self, name: str, entry: Callable, options: dict | None):
        self.__name__ = name
        self.entry, self.options = entry, options
        self._alive: list = []  # OpenVINO caches partitioned graphs by id(): keep ids from being reused

    def __call__(self, gm: torch.fx.GraphModule, example_inputs: list):
        partitioned: list[torch.fx.GraphModule] = []
        with _capturing_partitions(partitioned), _refusing_inductor():
            compiled = self.entry(gm, example_inputs, options=self.options)
        module = partitioned[-1] if partitioned else None
        self._alive += [gm, module, compiled]
        return Executed(compiled, module)


class Executed:
    """The compiled program, and what ran where (read after each call: a partition may fall back at run time)."""

    def __init__(self, compiled: Callable, module: torch.fx.GraphModule | None):
        self.compiled, self.module = compiled, module

    def __call__(self, *args):
        result = self.compiled(*args)
        _tell_runner(self.executed_ops())
        return result

    def executed_ops(self) -> dict[str, list[str]]:
        if self.module is None:
            return {"target": [], "pytorch": []}
        from openvino.frontend.pytorch.torchdynamo.execute import OpenVINOGraphModule

        backend, pytorch = set(), set(_ops(self.module.graph))
        for node in self.module.graph.nodes:
            if node.op != "call_module":
                continue
            child = self.module.get_submodule(node.target)
            if isinstance(child, OpenVINOGraphModule):
                ops, ran_in_openvino = _partition_ran(child, OpenVINOGraphModule)
                (backend if ran_in_openvino else pytorch).update(ops)
            elif isinstance(child, torch.fx.GraphModule):  # not run yet: OpenVINO will compile it at the first call
                backend |= _ops(child.graph)
        return {"target": sorted(backend), "pytorch": sorted(pytorch)}


def _partition_ran(child, wrapper: type) -> tuple[set[str], bool]:
    """(ops, whether OpenVINO ran them) for one partition. Each new input signature makes OpenVINO wrap the
    partition again; a wrapper that fell back calls what it wraps, so the first one that did not, ran it."""
    while isinstance(child, wrapper):
        if not child.perm_fallback:
            inner = child.gm
            while isinstance(inner, wrapper):
                inner = inner.gm
            return _ops(inner.graph), True
        child = child.gm
    return _ops(child.graph), False


def _tell_runner(ops: dict[str, list[str]]) -> None:
    """After each run: a partition that failed at its first run fell back to PyTorch then, not at compile time."""
    evidence.report(ops["target"], ops["pytorch"])


@contextlib.contextmanager
def _capturing_partitions(found: list):
    from openvino.frontend.pytorch.torchdynamo import partition

    original = partition.Partitioner.make_partitions

    def make_partitions(self, graph_module, options):
        module = original(self, graph_module, options)
        found.append(module)
        return module

    partition.Partitioner.make_partitions = make_partitions
    try:
        yield
    finally:
        partition.Partitioner.make_partitions = original


@contextlib.contextmanager
def _refusing_inductor():
    """OpenVINO's backend catches any error of its own and compiles with Inductor instead: say so."""
    from openvino.frontend.pytorch.torchdynamo import backend as ov_backend

    original = ov_backend.compile_fx

    def compile_fx(*args: Any, **kwargs: Any):
        failure = sys.exc_info()[1]  # called from the except block that caught OpenVINO's error
        cause = one_line(failure, cause=True) if failure is not None else "unknown error"
        raise CompileError(f"openvino failed to convert the graph (its backend would run Inductor instead): {cause}")

    ov_backend.compile_fx = compile_fx
    try:
        yield
    finally:
        ov_backend.compile_fx = original


def _ops(graph) -> set[str]:
    return set(torch_ops.graph_ops(graph))
