"""Backends under test: anything ``torch.compile`` accepts, plus ``export`` and ``onnxruntime``.

A backend is named three ways:
- a name torch knows (``torch._dynamo.list_backends()``: ``inductor``,
  ``aot_eager``, third-party ones registered under ``torch_dynamo_backends``),
  and ``eager``, the reference itself, to check the suite;
- ``pkg.module:callable`` with the ``(GraphModule, example_inputs) -> callable`` signature;
- ``export``, ``onnxruntime`` and ``ir-roundtrip``, which are not ``torch.compile``
  backends but programs built from the same function: torch.export lowered with
  the opset's decomposition table; the ONNX exporter run by ONNX Runtime; and
  that same exported graph turned into flat JSON records and rebuilt call by
  call from each op's schema alone (:mod:`.ir`).

Every backend is wrapped so the suite counts its compiles and records the ops
in the graphs it was handed.
"""
from __future__ import annotations

import contextlib
import difflib
import importlib.metadata
from dataclasses import dataclass, field
from typing import Any, Callable

import torch

from opspec.bridge import decomp_table, torch_ops
from opspec.conform import evidence
from opspec.spec import references
from opspec.spec.errors import one_line

EXPORT = "export"
ONNXRUNTIME = "onnxruntime"
IR_ROUNDTRIP = "ir-roundtrip"
PROGRAM_BACKENDS = (EXPORT, ONNXRUNTIME, IR_ROUNDTRIP)


class UnknownBackend(LookupError):
    """The name is neither registered with torch nor an importable ``module:callable``."""


class MissingExtra(UnknownBackend):
    """A backend opspec knows, whose optional extra (onnx, openvino, executorch) is not installed."""


class CompileError(Exception):
    """The backend failed while building the program (tracing, lowering, code generation)."""


@dataclass
class Backend:
    """One backend, with what it was handed and how often it compiled."""

    name: str
    compile_fn: Callable[["Backend", Callable, list], Callable] = field(repr=False)
    version: str = ""
    dynamic: bool = True
    compiles: int = 0
    handed: set[str] = field(default_factory=set)
    front_end: list[str] = field(default_factory=list)  # front-end layers seen while compiling (aot_autograd)
    duck_shapes: bool = True
    package: str = ""  # the distribution the backend comes from
    delegated: set[str] = field(default_factory=set)  # ops a partitioner handed to an inner delegate (XNNPACK)
    # an adapter's own front-end layers, as (layer, reference backend) pairs for attribution.stages
    stages: Callable[[], list] | None = field(default=None, repr=False)
    inner: Callable | None = field(default=None, repr=False)  # the torch.compile backend callable
    table: dict = field(default_factory=dict, repr=False)  # export: the opset's decomposition table

    def compile(self, fn: Callable, example_inputs: list) -> Callable:
        """A callable equivalent to ``fn`` over tensors like ``example_inputs``, built by the backend.

        Backends that compile lazily (``torch.compile``) raise CompileError at the first call.
        """
        return self.compile_fn(self, fn, example_inputs)

    def describe(self) -> dict[str, str]:
        described = {"name": self.name, "version": self.version}
        if self.package:
            described["package"] = self.package
        return described


# ---- torch.compile backends ----

def _dynamo_config(duck_shapes: bool = True) -> None:
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
        self.backend.handed |= set(torch_ops.graph_ops(gm.graph))
        # exceptions pass through untouched: dynamo restarts analysis on some of its own,
        # and wraps the rest in BackendCompilerFailed, which _dynamo_compile turns into CompileError
        with contextlib.ExitStack() as watching:
            watching.enter_context(evidence.watching_aot(self.backend.front_end))
            if self.backend.name == "inductor":
                watching.enter_context(evidence.watching_inductor())
            compiled = self.inner(gm, example_inputs)
        seen = evidence.inspect_returned(compiled, gm)
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


def _dynamo_compile(backend: Backend, fn: Callable, example_inputs: list) -> Callable:
    import torch._dynamo

    compiled = torch.compile(_fresh_function(fn), backend=_Recording(backend, backend.inner), dynamic=backend.dynamic, fullgraph=True)

    def run(*inputs):
        try:
            return compiled(*inputs)
        except torch._dynamo.exc.TorchDynamoException as err:
            raise CompileError(one_line(err, cause=True)) from err

    return run


def _eager_compile(backend: Backend, fn: Callable, example_inputs: list) -> Callable:
    backend.compiles += 1
    return fn


# ---- export: torch.export + the opset's decomposition table ----

def _dynamic_shapes(example_inputs: list) -> tuple | None:
    from torch.export import Dim

    if not example_inputs:  # creation ops: nothing to make dynamic
        return None
    # one entry per forward argument; the program takes its tensors as *inputs, one tuple
    return (tuple({i: Dim.AUTO for i in range(t.dim())} for t in example_inputs),)


class ProgramModule(torch.nn.Module):
    """A function over tensors as the nn.Module that torch.export and torch.onnx.export take."""

    def __init__(self, fn: Callable):
        super().__init__()
        self.fn = fn

    def forward(self, *inputs):
        return self.fn(*inputs)


def _export(fn: Callable, example_inputs: list):
    return torch.export.export(ProgramModule(fn), tuple(example_inputs), dynamic_shapes=_dynamic_shapes(example_inputs),
                               strict=False)


def _export_compile(backend: Backend, fn: Callable, example_inputs: list) -> Callable:
    backend.compiles += 1
    try:
        program = _export(fn, example_inputs).run_decompositions(backend.table)
        module = program.module()
    except Exception as err:
        raise CompileError(one_line(err, cause=True)) from err
    backend.handed |= set(torch_ops.graph_ops(program.graph))
    return module


# ---- ir-roundtrip: the exported graph as flat JSON records, rebuilt from schemas ----

def _ir_compile(backend: Backend, fn: Callable, example_inputs: list) -> Callable:
    from torch.utils import _pytree

    from opspec.conform import ir

    backend.compiles += 1
    try:
        exported = _export(fn, example_inputs).run_decompositions(backend.table)
    except Exception as err:  # the front end, before any record exists: as the export backend fails
        raise CompileError(f"torch.export: {one_line(err, cause=True)}") from err
    backend.handed |= set(torch_ops.graph_ops(exported.graph))
    try:
        extracted = ir.program_of(exported)
        program = ir.Program.from_json(extracted.to_json(), extracted.constants)  # only what survived JSON runs
    except Exception as err:
        raise CompileError(f"ir: {one_line(err, cause=True)}") from err
    _, spec = _pytree.tree_flatten(fn(*example_inputs))

    def run(*inputs):
        return _pytree.tree_unflatten(program.run(*inputs), spec)

    return run


# ---- onnxruntime: torch.onnx.export(dynamo=True) run by ONNX Runtime ----

def _onnx_compile(backend: Backend, fn: Callable, example_inputs: list) -> Callable:
    import warnings

    from torch.utils import _pytree

    backend.compiles += 1
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            program = torch.onnx.export(ProgramModule(fn), tuple(example_inputs), dynamo=True, verbose=False,
                                        dynamic_shapes=_dynamic_shapes(example_inputs), report=False)
            program.initialize_inference_session()
    except Exception as err:
        raise CompileError(one_line(err, cause=True)) from err
    if program.exported_program is not None:
        backend.handed |= set(torch_ops.graph_ops(program.exported_program.graph))
    _, spec = _pytree.tree_flatten(fn(*example_inputs))

    def run(*inputs):
        outputs = program(*inputs)
        return _pytree.tree_unflatten(list(outputs), spec)

    return run


# ---- resolution ----

def _version_of(*distributions: str) -> str:
    found = []
    for name in distributions:
        try:
            found.append(f"{name} {importlib.metadata.version(name)}")
        except importlib.metadata.PackageNotFoundError:
            continue
    return ", ".join(found)


def known_names() -> list[str]:
    from torch._dynamo.backends.registry import list_backends

    from opspec.conform.adapters import ADAPTERS

    return sorted({*list_backends(exclude_tags=()), "eager", *PROGRAM_BACKENDS, *ADAPTERS})


def resolve(spec: str, opset=None, *, dynamic: bool = True) -> Backend:
    """The backend ``spec`` names; UnknownBackend (one line) when there is none."""
    backend = _resolve(spec, opset, dynamic)
    backend.duck_shapes = _manifest_duck_shapes(backend.name)
    _dynamo_config(backend.duck_shapes)
    return backend


def _resolve(spec: str, opset, dynamic: bool) -> Backend:
    torch_version = f"torch {torch.__version__}"
    if spec == "eager":
        return Backend("eager", _eager_compile, torch_version, dynamic, package="torch")
    if spec == EXPORT:
        table = decomp_table.decomposition_table(opset) if opset is not None else {}
        return Backend(EXPORT, _export_compile, torch_version, dynamic, table=table, package="torch")
    if spec == IR_ROUNDTRIP:
        table = decomp_table.decomposition_table(opset) if opset is not None else {}
        return Backend(IR_ROUNDTRIP, _ir_compile, torch_version, dynamic, table=table, package="torch")
    if spec == ONNXRUNTIME:
        try:
            import onnxruntime  # noqa: F401
            import onnxscript  # noqa: F401
        except ImportError as err:
            raise MissingExtra(f"backend onnxruntime needs the onnx extra: pip install 'opspec[onnx]' ({err})") from None
        return Backend(ONNXRUNTIME, _onnx_compile, _version_of("onnxruntime", "onnxscript", "onnx") + f", {torch_version}",
                       dynamic, package="onnxruntime")
    from opspec.conform import adapters

    if spec in adapters.ADAPTERS:
        try:
            return adapters.factory(spec)(dynamic)
        except adapters.MissingPackage as err:
            raise MissingExtra(str(err)) from None
    if ":" in spec:
        inner = _load_callable(spec)
        distribution = _distribution_of(references.split(spec)[0].split(".")[0])
        version = _version_of(distribution) if distribution else ""
        return Backend(spec, _dynamo_compile, f"{version}, {torch_version}" if version else f"unversioned, {torch_version}",
                       dynamic, inner=inner, package=distribution or "")
    from torch._dynamo.backends.registry import list_backends, lookup_backend

    names = list_backends(exclude_tags=())
    if spec not in names:
        close = difflib.get_close_matches(spec, known_names(), n=1, cutoff=0.6)
        hint = f" (did you mean {close[0]}?)" if close else ""
        raise UnknownBackend(f"unknown backend {spec!r}{hint}; known: {', '.join(known_names())}, or pkg.module:callable")
    inner = lookup_backend(spec)
    distribution = _entry_point_distribution(spec) or "torch"
    version = torch_version if distribution == "torch" else f"{_version_of(distribution)}, {torch_version}"
    return Backend(spec, _dynamo_compile, version, dynamic, inner=inner, package=distribution)


def _distribution_of(module: str) -> str | None:
    """The installed distribution that provides the top-level ``module`` (None for a plain file on sys.path)."""
    found = importlib.metadata.packages_distributions().get(module)
    return found[0] if found else None


def _entry_point_distribution(name: str) -> str | None:
    """The distribution registering ``name`` under ``torch_dynamo_backends`` (third-party backends)."""
    for entry in importlib.metadata.entry_points(group="torch_dynamo_backends"):
        if entry.name == name and entry.dist is not None:
            return entry.dist.name
    return None


def _manifest_duck_shapes(name: str) -> bool:
    from opspec.conform import lowering
    from opspec.spec import manifests

    path = lowering.manifest_for(name)
    if path is None:
        return True
    try:
        return manifests.load_manifest(path).duck_shapes
    except Exception:  # a broken manifest is reported by the lowering section, not here
        return True


def _load_callable(spec: str) -> Callable[..., Any]:
    try:
        return references.load_callable(spec)
    except references.ImplementationError as err:
        raise UnknownBackend(f"backend {spec}: {err}") from None
