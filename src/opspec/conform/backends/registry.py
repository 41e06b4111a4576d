"""The one list of backends, and how a name given on the command line becomes a :class:`Backend`.

A name is looked up, in this order:
1. the declarations in this package (one module each, listed in ``BUILT_IN``);
2. ``pkg.module:callable``: a ``torch.compile`` backend callable, imported;
3. the ``opspec_backends`` entry-point group: a third-party package registers
   its backend there (a :class:`Declaration`, or a ``torch.compile`` backend callable);
4. torch's own registry (``torch._dynamo.list_backends()``, which includes the
   ``torch_dynamo_backends`` entry-point group).
"""
from __future__ import annotations

import difflib
import importlib.metadata
from pathlib import Path

from opspec.conform.backends import (
    aot_eager,
    dynamo,
    eager,
    executorch,
    export,
    inductor,
    ir_roundtrip,
    onnxruntime,
    openvino,
    xla,
)
from opspec.conform.backends.base import Backend, Declaration, UnknownBackend
from opspec.spec import manifests, references

ENTRY_POINTS = "opspec_backends"  # the group a third-party package registers its backend under
BUILT_IN: dict[str, Declaration] = {
    d.name: d for module in (eager, aot_eager, inductor, export, ir_roundtrip, onnxruntime, openvino, executorch, xla)
    for d in module.DECLARATIONS
}


def lookup(name: str) -> Declaration | None:
    """The declaration of ``name``, built in or registered; None when nothing declares it.

    Entry points and ``module:callable`` are imported; an optional package a built-in needs is not."""
    if name in BUILT_IN:
        return BUILT_IN[name]
    if ":" in name:
        return _from_callable(name)
    entry = _entry_point(name)
    if entry is not None:
        return _from_entry_point(entry)
    from torch._dynamo.backends.registry import list_backends

    if name in list_backends(exclude_tags=()):
        return dynamo.declare(name, package=_torch_entry_point_distribution(name) or "torch")
    return None


def find(spec: str) -> Declaration:
    """The declaration ``spec`` names: the one registry look-up of a run. UnknownBackend (one line, with the
    known names and a close match) when nothing declares it."""
    declaration = lookup(spec)
    if declaration is None:
        close = difflib.get_close_matches(spec, known_names(), n=1, cutoff=0.6)
        hint = f" (did you mean {close[0]}?)" if close else ""
        raise UnknownBackend(f"unknown backend {spec!r}{hint}; known: {', '.join(known_names())}, or pkg.module:callable")
    return declaration


def build(declaration: Declaration, opset=None, *, dynamic: bool = True) -> Backend:
    """The declared backend, ready to compile (no look-up); MissingExtra (one line) when its extra is missing."""
    declaration.check_extra()
    backend = declaration.build(declaration, opset, dynamic)
    backend.declaration = declaration
    backend.duck_shapes = _duck_shapes(declaration)
    dynamo.configure(backend.duck_shapes)
    return backend


def resolve(spec: str, opset=None, *, dynamic: bool = True) -> Backend:
    """The backend ``spec`` names, ready to compile; UnknownBackend or MissingExtra (one line) when there is none."""
    return build(find(spec), opset, dynamic=dynamic)


def known_names() -> list[str]:
    from torch._dynamo.backends.registry import list_backends

    registered = {entry.name for entry in importlib.metadata.entry_points(group=ENTRY_POINTS)}
    return sorted({*list_backends(exclude_tags=()), *BUILT_IN, *registered})


def _from_callable(spec: str) -> Declaration:
    try:
        inner = references.load_callable(spec)
    except references.ImplementationError as err:
        raise UnknownBackend(f"backend {spec}: {err}") from None
    return dynamo.declare(spec, inner, package=_distribution_of(references.split(spec)[0].split(".")[0]) or "")


def _entry_point(name: str) -> importlib.metadata.EntryPoint | None:
    for entry in importlib.metadata.entry_points(group=ENTRY_POINTS):
        if entry.name == name:
            return entry
    return None


def _from_entry_point(entry: importlib.metadata.EntryPoint) -> Declaration:
    """What a package registered: its Declaration as it is, or a ``torch.compile`` backend callable."""
    try:
        loaded = entry.load()
    except Exception as err:  # noqa: BLE001 - a broken plug-in is one line naming it
        raise UnknownBackend(f"backend {entry.name}: entry point {entry.value} ({ENTRY_POINTS}) does not load: "
                             f"{type(err).__name__}: {err}") from None
    if isinstance(loaded, Declaration):
        if loaded.name != entry.name:
            raise UnknownBackend(f"backend {entry.name}: entry point {entry.value} declares {loaded.name!r}")
        return loaded
    if not callable(loaded):
        raise UnknownBackend(f"backend {entry.name}: entry point {entry.value} is neither a Declaration nor callable")
    return dynamo.declare(entry.name, loaded, package=entry.dist.name if entry.dist is not None else "")


def _distribution_of(module: str) -> str | None:
    """The installed distribution that provides the top-level ``module`` (None for a plain file on sys.path)."""
    found = importlib.metadata.packages_distributions().get(module)
    return found[0] if found else None


def _torch_entry_point_distribution(name: str) -> str | None:
    """The distribution registering ``name`` under ``torch_dynamo_backends`` (third-party backends)."""
    for entry in importlib.metadata.entry_points(group="torch_dynamo_backends"):
        if entry.name == name and entry.dist is not None:
            return entry.dist.name
    return None


def _duck_shapes(declaration: Declaration) -> bool:
    path = declaration.manifest_path()
    if path is None:
        return True
    try:
        return manifests.load_manifest(path).duck_shapes
    except Exception:  # noqa: BLE001 - a broken manifest is reported by the lowering section, not here
        return True
