"""The programs a backend's accuracy is measured with: one per op and dtype, the op over 1-D tensors of inputs.

Built like the conformance cases' programs (:func:`opspec.conform.cases.make_program`), so a backend sees the
op as a model spelling it would give it (its fixed non-tensor arguments as literals), and the measurement
judges what the backend computed. An ``out=`` overload writes into a tensor the program allocates.
"""
from __future__ import annotations

import re
from typing import Any, Callable, Mapping, Sequence

import torch

from opspec.conform import cases

_OUT = re.compile(r"Tensor\(\w!\) out\b")


def writes(op: str) -> bool:
    """Whether the overload writes its result into an ``out`` argument."""
    from opspec.bridge import torch_ops

    return bool(_OUT.search(torch_ops.schema_of(op).split("->")[0]))


def program(op: str, tensors: Sequence[str] = ("self",), arguments: Mapping[str, Any] | None = None) -> Callable:
    """``op`` applied to its tensor arguments (named, in this order) and ``arguments``, as a case's program spells
    it; for one tensor named self, positionally, as before."""
    if tuple(tensors) == ("self",) and not arguments:
        return cases.make_program(op, (cases.Slot(0),), {}, ())
    named = {name: cases.Slot(index) for index, name in enumerate(tensors)}
    return cases.make_program(op, (), {**named, **dict(arguments or {})}, ())


def eager(op: str, tensors: Sequence[str] = ("self",), arguments: Mapping[str, Any] | None = None,
          implementation: Callable | None = None) -> Callable[..., torch.Tensor]:
    """A kernel running ``implementation`` (default the eager overload) on the tensors in ``tensors`` order."""
    from opspec.bridge import torch_ops

    function = implementation or torch_ops.resolve(op)
    fixed = dict(arguments or {})
    writing = implementation is None and writes(op)

    # the schema's positional arguments; a keyword-only one (div's rounding_mode) is passed by name
    names = [argument.name for argument in torch_ops.resolve(op)._schema.arguments if not argument.kwarg_only]

    def kernel(*inputs: torch.Tensor) -> torch.Tensor:
        out = {"out": torch.empty_like(inputs[0])} if writing else {}
        values = {**dict(zip(tensors, inputs)), **fixed}
        if implementation is None:
            return function(**values, **out)
        # a rule's implementation names its parameters its own way: the schema's order, positionally
        given = [name for name in names if name in values]
        leading = names[:len(given)] == given
        positional = [values.pop(name) for name in (given if leading or not given else names[:names.index(given[0])])]
        return function(*positional, **values)

    return kernel


def compiled(backend, op: str, tensors: Sequence[str] = ("self",),
             arguments: Mapping[str, Any] | None = None) -> Callable[..., torch.Tensor]:
    """A kernel for ``op``: compiled by ``backend`` for the tensors it is first given, then run."""
    writing = writes(op)
    program_of_op = program(op, tuple(tensors) + (("out",) if writing else ()), arguments)

    def kernel(*inputs: torch.Tensor) -> torch.Tensor:
        inputs = list(inputs) + ([torch.empty_like(inputs[0])] if writing else [])
        return backend.compile(program_of_op, inputs)(*inputs)

    return kernel
