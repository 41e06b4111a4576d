"""``eager``: the reference itself, PyTorch's eager kernels with nothing traced; it checks the suite."""
from __future__ import annotations

from typing import Callable

from opspec.conform.backends.base import Backend, Declaration, versioned


def _compile(backend: Backend, fn: Callable, example_inputs: list) -> Callable:
    backend.compiles += 1
    return fn


def _build(declaration: Declaration, opset, dynamic: bool) -> Backend:
    return Backend(declaration.name, _compile, versioned(), dynamic, package="torch", declaration=declaration)


DECLARATIONS = (
    Declaration(
        "eager", _build,
        evidence="reference", target="PyTorch's eager kernels (the reference)", evidence_note="the reference itself: PyTorch's eager kernels, no tracing",
        stages=lambda backend: [],  # nothing in front of the kernels: a failure is the suite's own
        unexplained=lambda own_rule: ("opspec", "reference", "the eager reference disagrees with itself"),
        lowering_meaning="Runs every op with its eager ATen kernel. Nothing is compiled, so there is no lowering "
                         "figure: its results check the harness and the kernels themselves.",
        lowering_figure=False,
    ),
)
