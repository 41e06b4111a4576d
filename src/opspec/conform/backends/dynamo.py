"""``torch.compile`` backends: the machinery every one of them shares, and the declaration of any of them.

A backend callable ``(GraphModule, example_inputs) -> callable`` is wrapped so
the suite counts its compiles, records the ops in the graphs it was handed, and
reads what the callable it returns says about who executed them (see
:mod:`opspec.conform.evidence`). Its front-end layers for attribution are
dynamo alone, AOT autograd where the backend went through it, the layers its
declaration adds, and the ``opspec_front_end`` attribute of its callable.
"""
from __future__ import annotations

import contextlib
from typing import Callable

import torch

from opspec.bridge import torch_ops
from opspec.conform import evidence
from opspec.conform.backends.base import Backend, CompileError, Declaration, versioned
from opspec.spec.errors import one_line


def configure(duck_shapes: bool = True) -> None:
    import torch._dynamo  # noqa: F401 - loads torch._dynamo.config
    import torch.fx.experimental._config

    # item() and data-dependent output shapes stay inside the graph instead of breaking it
    torch._dynamo.config.capture_scalar_outputs = True
    torch._dynamo.config.capture_dynamic_output_shape_ops = True
    # torch's default ("duck" sizes: dims equal when traced share one symbol), as users compile;
    # a backend's manifest may ask otherwise (compile: {duck_shapes: false})
    torch.fx.experimental._config.use_duck_shape = duck_shapes


class _Recording:
    """The backend as dynamo sees it: counts compiles and records the ops it is handed."""

    def __init__(self, backend: Backend, inner: Callable):
        self.backend, self.inner = backend, inner
        self.__name__ = backend.name  # dynamo names the backend in its messages

    def __repr__(self) -> str:
        return self.backend.name

    def __call__(self, gm: torch.fx.GraphModule, example_inputs: list):
        handed = set(torch_ops.graph_ops(gm.graph))  # read now: a backend may partition gm in place
        self.backend.handed |= handed
        watchers = self.backend.declaration.watchers if self.backend.declaration is not None else ()
        # exceptions pass through untouched: dynamo restarts analysis on some of its own,
        # and wraps the rest in BackendCompilerFailed, which compile_program turns into CompileError
        with contextlib.ExitStack() as watching:
            watching.enter_context(evidence.watching_aot(self.backend.front_end))
            for watcher in watchers:
                watching.enter_context(watcher())
            compiled = self.inner(gm, example_inputs)
        seen = evidence.inspect_returned(compiled, gm, handed)
        if seen is not None:
            evidence.note(seen)
        self.backend.compiles += 1  # counted once built: a restarted analysis is one compile
        return compiled


def _fresh_function(fn: Callable) -> Callable:
    """``fn`` with its own code object: dynamo caches per code object, and the suite's cases
    share one, so without this every case would count against the same recompile limit."""
    clone = type(fn)(fn.__code__.replace(), fn.__globals__, fn.__name__, fn.__defaults__, fn.__closure__)
    clone.__kwdefaults__ = fn.__kwdefaults__
    return clone


def compile_program(backend: Backend, fn: Callable, example_inputs: list) -> Callable:
    """``torch.compile(fn, backend=backend.inner)``, recorded; a dynamo failure is a CompileError at the first call."""
    import torch._dynamo

    compiled = torch.compile(_fresh_function(fn), backend=_Recording(backend, backend.inner), dynamic=backend.dynamic,
                             fullgraph=True)

    def run(*inputs):
        try:
            return compiled(*inputs)
        except torch._dynamo.exc.TorchDynamoException as err:
            raise CompileError(one_line(err, cause=True)) from err

    return run


def reference(name: str, dynamic: bool, label: str | None = None, inner: Callable | None = None) -> Backend:
    """A backend of torch's registry (or ``inner``) as a reference layer for attribution."""
    from torch._dynamo.backends.registry import lookup_backend

    return Backend(label or name, compile_program, dynamic=dynamic, inner=inner or lookup_backend(name))


def stages_with(*layers: tuple[str, str], aot: bool = False) -> Callable[[Backend], list]:
    """The front-end layers of a ``torch.compile`` backend: dynamo, AOT autograd where it went through it
    (always, with ``aot``), then ``layers`` as (layer, reference backend name), then its own front end."""

    def stages(backend: Backend) -> list[tuple[str, Backend]]:
        found = [("dynamo", reference("eager", backend.dynamic))]
        if aot or "aot_autograd" in backend.front_end:
            found.append(("aot_autograd", reference("aot_eager", backend.dynamic)))
        found += [(layer, reference(name, backend.dynamic)) for layer, name in layers]
        own = getattr(backend.inner, "opspec_front_end", None)
        if callable(own):
            found.append(("front end", reference("", backend.dynamic, f"{backend.name} front end", inner=own)))
        return found

    return stages


def declare(name: str, inner: Callable | None = None, package: str = "torch", **fields) -> Declaration:
    """The declaration of a ``torch.compile`` backend: ``inner``, or torch's registry entry called ``name``.
    ``package`` is the distribution it comes from (its version is recorded); "" for none known."""

    def build(declaration: Declaration, opset, dynamic: bool) -> Backend:
        from torch._dynamo.backends.registry import lookup_backend

        if package == "torch":
            version = versioned()
        else:
            version = versioned(package) if package else f"unversioned, {versioned()}"
        return Backend(name, compile_program, version, dynamic, inner=inner or lookup_backend(name), package=package,
                       declaration=declaration)

    fields.setdefault("stages", stages_with())
    return Declaration(name, build, **fields)
