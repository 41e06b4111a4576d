"""``onnxruntime``: ``torch.onnx.export(dynamo=True)`` run by an ONNX Runtime session (the ``onnx`` extra).

The whole program runs in the session: the ONNX exporter has no PyTorch fallback.
"""
from __future__ import annotations

from typing import Callable

from opspec.bridge import torch_ops
from opspec.conform.backends import program
from opspec.conform.backends.base import Backend, CompileError, Declaration, versioned
from opspec.spec.errors import one_line


def _compile(backend: Backend, fn: Callable, example_inputs: list) -> Callable:
    import warnings

    import torch
    from torch.utils import _pytree

    backend.compiles += 1
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            onnx_program = torch.onnx.export(program.ProgramModule(fn), tuple(example_inputs), dynamo=True,
                                             verbose=False, dynamic_shapes=program.dynamic_shapes(example_inputs),
                                             report=False)
            onnx_program.initialize_inference_session()
    except Exception as err:
        raise CompileError(one_line(err, cause=True)) from err
    if onnx_program.exported_program is not None:
        backend.handed |= set(torch_ops.graph_ops(onnx_program.exported_program.graph))
    _, spec = _pytree.tree_flatten(fn(*example_inputs))

    def run(*inputs):
        outputs = onnx_program(*inputs)
        return _pytree.tree_unflatten(list(outputs), spec)

    return run


def _build(declaration: Declaration, opset, dynamic: bool) -> Backend:
    return Backend(declaration.name, _compile, versioned(*declaration.packages), dynamic, package="onnxruntime",
                   declaration=declaration)


DECLARATIONS = (
    Declaration(
        "onnxruntime", _build,
        evidence="whole-program", target="the ONNX Runtime session",
        evidence_note="the whole exported program runs in an ONNX Runtime session; the ONNX exporter has no PyTorch "
                      "fallback",
        stages=program.export_stages,
        extra="onnx", requires=("onnxruntime", "onnxscript"), packages=("onnxruntime", "onnxscript", "onnx"),
        lowering_meaning="Lowered: torchlib translates the op to ONNX directly; the others are decomposed before "
                         "export or cannot be exported. The graph then runs in ONNX Runtime.",
    ),
)
