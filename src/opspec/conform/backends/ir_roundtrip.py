"""``ir-roundtrip``: the exported graph as flat JSON records (:mod:`opspec.conform.ir`), each call rebuilt from
its schema alone and run by PyTorch's eager kernels: a pass says the op's calls survive the round trip."""
from __future__ import annotations

from typing import Callable

from opspec.bridge import torch_ops
from opspec.conform import ir
from opspec.conform.backends import program
from opspec.conform.backends.base import Backend, CompileError, Declaration, versioned
from opspec.spec.errors import one_line


def _compile(backend: Backend, fn: Callable, example_inputs: list) -> Callable:
    from torch.utils import _pytree

    backend.compiles += 1
    try:
        exported = program.export(fn, example_inputs).run_decompositions(backend.table)
    except Exception as err:  # the front end, before any record exists: as the export backend fails
        raise CompileError(f"torch.export: {one_line(err, cause=True)}") from err
    backend.handed |= set(torch_ops.graph_ops(exported.graph))
    try:
        extracted = ir.program_of(exported)
        rebuilt = ir.Program.from_json(extracted.to_json(), extracted.constants)  # only what survived JSON runs
    except Exception as err:
        raise CompileError(f"ir: {one_line(err, cause=True)}") from err
    _, spec = _pytree.tree_flatten(fn(*example_inputs))

    def run(*inputs):
        return _pytree.tree_unflatten(rebuilt.run(*inputs), spec)

    return run


def _build(declaration: Declaration, opset, dynamic: bool) -> Backend:
    return Backend(declaration.name, _compile, versioned(), dynamic, table=program.opset_table(opset),
                   package="torch", declaration=declaration)


DECLARATIONS = (
    Declaration(
        "ir-roundtrip", _build,
        evidence="reference", target="PyTorch's eager kernels behind the rebuilt records",
        evidence_note="the exported program as flat JSON records, each call rebuilt from its schema and run by "
                      "PyTorch's eager kernels: a pass says the op's calls survive the round trip",
        stages=program.export_stages,
    ),
)
