"""Programs built with torch.export from the case's function: what the export-based backends share."""
from __future__ import annotations

from typing import Callable

import torch

from opspec.bridge import decomp_table, torch_ops
from opspec.conform.backends.base import Backend, CompileError
from opspec.spec.errors import one_line


class ProgramModule(torch.nn.Module):
    """A function over tensors as the nn.Module that torch.export and torch.onnx.export take."""

    def __init__(self, fn: Callable):
        super().__init__()
        self.fn = fn

    def forward(self, *inputs):
        return self.fn(*inputs)


def dynamic_shapes(example_inputs: list) -> tuple | None:
    from torch.export import Dim

    if not example_inputs:  # creation ops: nothing to make dynamic
        return None
    # one entry per forward argument; the program takes its tensors as *inputs, one tuple
    return (tuple({i: Dim.AUTO for i in range(t.dim())} for t in example_inputs),)


def export(fn: Callable, example_inputs: list):
    return torch.export.export(ProgramModule(fn), tuple(example_inputs), dynamic_shapes=dynamic_shapes(example_inputs),
                               strict=False)


def export_compile(backend: Backend, fn: Callable, example_inputs: list) -> Callable:
    """torch.export with ``backend.table`` as decompositions; the exported module runs on eager kernels."""
    backend.compiles += 1
    try:
        program = export(fn, example_inputs).run_decompositions(backend.table)
        module = program.module()
    except Exception as err:
        raise CompileError(one_line(err, cause=True)) from err
    backend.handed |= set(torch_ops.graph_ops(program.graph))
    return module


def exported(label: str, dynamic: bool, table: dict) -> Backend:
    """A reference layer for attribution: torch.export with ``table``, its module run on eager kernels."""
    return Backend(label, export_compile, dynamic=dynamic, table=table)


def export_stages(backend: Backend) -> list[tuple[str, Backend]]:
    """The front end of every backend built on torch.export: torch.export alone, no decompositions."""
    return [("export", exported("export (no decompositions)", backend.dynamic, {}))]


def opset_table(opset) -> dict:
    """The opset's decomposition table (empty with no opset)."""
    return decomp_table.decomposition_table(opset) if opset is not None else {}
