"""Who failed: the torch front end, the backend, or opspec itself.

A case that does not pass is run again, on its failing example, through the
same front end with PyTorch's eager kernels behind it, one layer at a time:

- ``torch.compile`` backends: dynamo alone (backend ``eager``); then AOT autograd
  (``aot_eager``) where the backend went through it; then the backend's own front
  end where it names one: Inductor's decompositions (``aot_eager_decomp_partition``),
  or, for a third-party backend, the ``opspec_front_end`` attribute of its callable
  (a ``torch.compile`` backend running its front end with eager kernels);
- ``export`` and ``onnxruntime``: torch.export with no decompositions, its module run.

The first layer that also fails the example takes the blame (``frontend``, naming
the layer); when none does, it is the ``backend``'s. A backend that is all front
end (``aot_eager``, ``export``) puts what its layers do not show on its last layer.
``opspec`` takes harness errors, the ``eager`` reference disagreeing with itself,
the opset's own decomposition rules, and cases with no valid inputs.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from opspec.conform import backends

BLAME = ("frontend", "backend", "opspec")
INTERNAL = "opspec internal error"


@dataclass(frozen=True)
class Blame:
    party: str
    stage: str  # the front-end layer, or the check that decided
    reason: str

    def as_dict(self) -> dict[str, str]:
        return {"blame": self.party, "blame_stage": self.stage, "blame_reason": self.reason}


def _dynamo_stage(name: str, dynamic: bool) -> backends.Backend:
    from torch._dynamo.backends.registry import lookup_backend

    return backends.Backend(name, backends._dynamo_compile, dynamic=dynamic, inner=lookup_backend(name))


def stages(backend: backends.Backend) -> list[tuple[str, backends.Backend]]:
    """(layer, reference backend) pairs, outermost first."""
    if backend.name == "eager":
        return []
    if backend.stages is not None:  # an adapter that names its own front end (ExecuTorch: export, Edge decompositions)
        return backend.stages()
    if backend.name in backends.PROGRAM_BACKENDS:
        plain = backends.Backend("export (no decompositions)", backends._export_compile, dynamic=backend.dynamic, table={})
        return [("export", plain)]
    found = [("dynamo", _dynamo_stage("eager", backend.dynamic))]
    if "aot_autograd" in backend.front_end or backend.name == "aot_eager":
        found.append(("aot_autograd", _dynamo_stage("aot_eager", backend.dynamic)))
    if backend.name == "inductor":
        found.append(("decompositions", _dynamo_stage("aot_eager_decomp_partition", backend.dynamic)))
    own = getattr(backend.inner, "opspec_front_end", None)
    if callable(own):
        found.append(("front end", backends.Backend(f"{backend.name} front end", backends._dynamo_compile,
                                                    dynamic=backend.dynamic, inner=own)))
    return found


def attribute(record: dict, backend: backends.Backend, reproduces: Callable[[str, backends.Backend], str | None],
              own_rule: bool = False) -> Blame:
    """Who failed, for a record that did not pass; ``reproduces(layer, reference)`` is the reference's non-pass
    status, or None where it passes."""
    status, message = record["status"], record.get("message", "")
    if message.startswith(INTERNAL):
        return Blame("opspec", "harness", "the harness raised")
    if status == "skip":
        return Blame("opspec", "inputs", "opspec drew no inputs the eager kernel accepts")
    if status == "fallback":
        return Blame("backend", "execution", "the backend left the op to PyTorch")
    if backend.name == "eager":
        return Blame("opspec", "reference", "the eager reference disagrees with itself")
    for layer, reference in stages(backend):
        got = reproduces(layer, reference)
        if got is not None:
            return Blame("frontend", layer, f"{reference.name} also gives {got}")
    if backend.name == "aot_eager":
        return Blame("frontend", "aot_autograd", "dynamo alone passes; AOT autograd with eager kernels does not")
    if backend.name == backends.EXPORT:
        if own_rule:
            return Blame("opspec", "decomposition", "export alone passes; the opset's own decomposition rule does not")
        return Blame("frontend", "decomposition", "export alone passes; with the opset's decompositions it does not")
    checked = ", ".join(layer for layer, _ in stages(backend))
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
