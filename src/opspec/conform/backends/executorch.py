"""ExecuTorch: torch.export -> Edge dialect (``to_edge_transform_and_lower``) -> ``to_executorch`` -> the runtime.

Two backends: ``executorch`` (every op on the portable CPU kernels) and
``executorch-xnnpack`` (the XNNPACK partitioner delegates what it supports; the
rest runs on the portable kernels, so a right answer computed there is
``undelegated``, not a pass of XNNPACK). The program is exported the way the
``export`` backend exports it (dynamic sizes, ``Dim.AUTO``), lowered with
ExecuTorch's own decompositions, serialized, loaded by the runtime
(``executorch.runtime``, the pybindings) and run there: nothing falls back to
PyTorch, so every op of the program ran in ExecuTorch. For XNNPACK, the ops
inside delegated subgraphs are recorded (``delegated_ops``), and the rest ran
on portable kernels.
"""
from __future__ import annotations

import warnings
from typing import Callable

import torch
from torch.utils import _pytree

from opspec.bridge import torch_ops
from opspec.conform import evidence
from opspec.conform.backends import program
from opspec.conform.backends.base import Backend, CompileError, Declaration, versioned
from opspec.spec.errors import one_line

FRONT_END = "torch.export"  # named in messages, so a failure says whose it is
MAX_SIZE = 16  # bound of every dynamic size: drawn sizes stay below it, and 16**5 floats of planned memory is small


def _builder(xnnpack: bool) -> Callable[[Declaration, object, bool], Backend]:
    def build(declaration: Declaration, opset, dynamic: bool) -> Backend:
        def compile_fn(backend: Backend, fn: Callable, example_inputs: list) -> Callable:
            return _compile(backend, fn, example_inputs, xnnpack=xnnpack)

        return Backend(declaration.name, compile_fn, versioned(*declaration.packages), dynamic, package="executorch",
                       declaration=declaration)

    return build


def _stages(backend: Backend) -> list[tuple[str, Backend]]:
    """The front end with PyTorch's kernels behind it: torch.export alone, then with the Edge decompositions."""
    from executorch.exir.tracer import _default_decomposition_table

    edge = program.exported("export + ExecuTorch's Edge decompositions", backend.dynamic,
                            _default_decomposition_table())
    return [*program.export_stages(backend), ("edge decompositions", edge)]


PORTABLE = "ExecuTorch's portable CPU kernels"


def _declare(name: str, xnnpack: bool) -> Declaration:
    # with a delegate, a pass is the delegate's; the portable kernels around it are the runtime level
    levels = {"target": "the XNNPACK delegate", "runtime": PORTABLE} if xnnpack else {"target": PORTABLE}
    return Declaration(name, _builder(xnnpack), stages=_stages, extra="executorch", requires=("executorch.exir",),
                       packages=("executorch",), **levels)


DECLARATIONS = (_declare("executorch", False), _declare("executorch-xnnpack", True))


def _bounded_shapes(example_inputs: list) -> tuple | None:
    """Dynamic sizes with an upper bound: ExecuTorch plans memory for the largest size a program may see,
    and without a bound takes the example's own, so a larger input later is refused (error 0x10). The bound is
    at least the example's size, or the program would refuse the very input it was built for."""
    from torch.export import Dim

    if not example_inputs:
        return None
    return (tuple({i: Dim.AUTO(max=max(MAX_SIZE, t.shape[i])) for i in range(t.dim())} for t in example_inputs),)


def _delegated(edge_program) -> set[str]:
    """Ops inside the subgraphs a partitioner delegated (``executorch_call_delegate``)."""
    found: set[str] = set()
    module = edge_program.graph_module
    for node in module.graph.nodes:
        if node.op == "get_attr" and node.target.startswith("lowered_module"):
            lowered = getattr(module, node.target)
            found |= _ops(lowered.original_module.graph)
    return found


def _compile(backend: Backend, fn: Callable, example_inputs: list, *, xnnpack: bool) -> Callable:
    from executorch.exir import to_edge_transform_and_lower
    from executorch.runtime import Runtime

    backend.compiles += 1
    # the runtime takes dense tensors only (no strides, only a dim order): export what it will be given
    example_inputs = [t.contiguous() for t in example_inputs]
    try:
        exported = torch.export.export(program.ProgramModule(fn), tuple(example_inputs), strict=False,
                                       dynamic_shapes=_bounded_shapes(example_inputs) if backend.dynamic else None)
    except Exception as err:  # noqa: BLE001
        raise CompileError(f"{FRONT_END}: {one_line(err, cause=True)}") from err
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            partitioner = []
            if xnnpack:
                from executorch.backends.xnnpack.partition.xnnpack_partitioner import (
                    XnnpackPartitioner,
                )

                partitioner = [XnnpackPartitioner()]
            edge = to_edge_transform_and_lower(exported, partitioner=partitioner)
            edge_program = edge.exported_program()
            delegated, portable_ops = _delegated(edge_program), _ops(edge_program.graph)  # before out= variants
            buffer = edge.to_executorch().buffer
            loaded = Runtime.get().load_program(buffer)
            method = loaded.load_method("forward")
    except Exception as err:  # noqa: BLE001
        raise CompileError(f"executorch: {one_line(err, cause=True)}") from err
    backend.handed |= _ops(exported.graph)
    backend.delegated |= delegated
    # everything runs in the ExecuTorch runtime: with XNNPACK, delegated subgraphs in the delegate (the target)
    # and the rest on the portable kernels (the runtime level); without it, the portable kernels are the target
    executed = {"target": sorted(delegated), "runtime": sorted(portable_ops), "pytorch": []} if xnnpack \
        else {"target": sorted(portable_ops), "pytorch": []}
    evidence.report(executed["target"], [], runtime_ops=executed.get("runtime", ()))
    _, spec = _pytree.tree_flatten(fn(*[t.clone() for t in example_inputs]))

    def run(*inputs, _keep=(buffer, loaded)):  # the method reads the program's memory: keep it alive
        # the runtime reads a tensor's memory as its dim order says; views are made dense first
        outputs = method.execute(tuple(t.contiguous() for t in inputs))
        return _pytree.tree_unflatten(list(outputs), spec)

    def executed_ops() -> dict[str, list[str]]:
        return executed

    run.executed_ops = executed_ops
    run.delegated_ops = sorted(delegated)
    return run


def _ops(graph) -> set[str]:
    return set(torch_ops.graph_ops(graph))
