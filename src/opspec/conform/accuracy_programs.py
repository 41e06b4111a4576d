"""The programs a backend's accuracy is measured with: one per op and dtype, the op over a 1-D tensor of inputs.

Built like the conformance cases' programs (:func:`opspec.conform.cases.make_program`), so a backend sees the
op as a model spelling it would give it, and the measurement judges what the backend computed.
"""
from __future__ import annotations

from typing import Callable

import torch

from opspec.conform import cases


def program(op: str) -> Callable[[torch.Tensor], torch.Tensor]:
    """``op`` applied to one tensor, as a conformance case's program spells it."""
    return cases.make_program(op, (cases.Slot(0),), {}, ())


def compiled(backend, op: str) -> Callable[[torch.Tensor], torch.Tensor]:
    """A kernel for ``op`` on one tensor: compiled by ``backend`` for the tensor it is first given, then run."""
    program_of_op = program(op)

    def kernel(inputs: torch.Tensor) -> torch.Tensor:
        return backend.compile(program_of_op, [inputs])(inputs)

    return kernel
