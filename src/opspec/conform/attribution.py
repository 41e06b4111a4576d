"""Who failed: the torch front end, the backend, or opspec itself.

A case that does not pass is run again, on its failing example, through the
same front end with PyTorch's eager kernels behind it, one layer at a time, as
the backend's declaration names the layers (``Declaration.stages``):

- ``torch.compile`` backends: dynamo alone (backend ``eager``); then AOT autograd
  (``aot_eager``) where the backend went through it; then the layers the
  declaration adds (Inductor's decompositions, ``aot_eager_decomp_partition``),
  and the ``opspec_front_end`` attribute of its callable (a ``torch.compile``
  backend running its own front end with eager kernels);
- backends built on torch.export: torch.export with no decompositions, its
  module run (ExecuTorch adds its Edge decompositions).

The first layer that also fails the example takes the blame (``frontend``, naming
the layer); when none does, it is the ``backend``'s, unless the declaration says
otherwise (``Declaration.unexplained``): a backend that is all front end puts what
its layers do not show on its last layer, and the reference itself on ``opspec``.
``opspec`` takes harness errors, the opset's own decomposition rules, and cases
with no valid inputs.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from opspec.conform import backends
from opspec.results.vocabulary import BLAME

INTERNAL = "opspec internal error"


@dataclass(frozen=True)
class Blame:
    party: str
    stage: str  # the front-end layer, or the check that decided
    reason: str

    def as_dict(self) -> dict[str, str]:
        return {"blame": self.party, "blame_stage": self.stage, "blame_reason": self.reason}


# a right answer not computed by the backend's target is still put on the backend: (stage, reason)
RIGHT_ANSWERS = {
    "undelegated": ("execution", "the backend's target left the op to its runtime"),
    "fallback": ("execution", "the backend left the op to PyTorch"),
    "unverified": ("evidence", "the backend reports nothing about who computed the op"),
}


def right_answer(status: str) -> Blame:
    return Blame("backend", *RIGHT_ANSWERS[status])


def stages(backend: backends.Backend) -> list[tuple[str, backends.Backend]]:
    """(layer, reference backend) pairs, outermost first, as the backend's declaration names them."""
    declaration = backend.declaration
    return declaration.stages(backend) if declaration is not None and declaration.stages is not None else []


def attribute(status: str, message: str, backend: backends.Backend,
              reproduces: Callable[[str, backends.Backend], str | None], own_rule: bool = False) -> Blame:
    """Who failed, for a case whose result did not pass (its status and message); ``reproduces(layer, reference)``
    is the reference's non-pass status, or None where it passes."""
    if message.startswith(INTERNAL):
        return Blame("opspec", "harness", "the harness raised")
    if status == "skip":
        return Blame("opspec", "inputs", "opspec drew no inputs the eager kernel accepts")
    if status in RIGHT_ANSWERS:
        return right_answer(status)
    found = stages(backend)
    for layer, reference in found:
        got = reproduces(layer, reference)
        if got is not None:
            return Blame("frontend", layer, f"{reference.name} also gives {got}")
    unexplained = backend.declaration.unexplained if backend.declaration is not None else None
    if unexplained is not None:  # a backend that is all front end: what its layers do not show is its last layer's
        return Blame(*unexplained(own_rule))
    checked = ", ".join(layer for layer, _ in found)
    return Blame("backend", "backend", f"the front end with eager kernels passes ({checked})")


def unchecked(status: str) -> Blame:
    """A crash or timeout with no repro to check it against (the worker died before writing one)."""
    return Blame("backend", "process", f"{status} while the backend compiled or ran the case; no repro was left "
                                       "to check the front end with")


def device_fault() -> Blame:
    """A device fault: the device context was poisoned while the case ran (eager kernel or backend);
    nothing run after it in that process can be replayed to tell which."""
    return Blame("backend", "device", "the device faulted (its context is poisoned); the worker was replaced "
                                      "and the case was not replayed")
