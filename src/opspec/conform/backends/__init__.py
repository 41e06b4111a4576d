"""Backends under test, one declaration each (one module per backend here), in one registry.

A backend is named three ways on the command line:
- a declared name (``eager``, ``aot_eager``, ``inductor``, ``export``,
  ``ir-roundtrip``, ``onnxruntime``, ``openvino``, ``openvino-single-op``,
  ``executorch``, ``executorch-xnnpack``, ``xla``, ``openxla``), or one a package registers under the
  ``opspec_backends`` entry-point group, or any name torch's registry knows
  (``torch._dynamo.list_backends()``, third-party ``torch_dynamo_backends`` too);
- ``pkg.module:callable`` with the ``(GraphModule, example_inputs) -> callable`` signature.

Each declaration (:class:`Declaration`) says how the backend builds a program,
how it reports who executed each op, its front-end layers for attribution, the
optional extra it needs, and its default expectations and manifest. Adding a
backend is one module here, listed in :mod:`.registry`, or one entry point in
another package.
"""
from opspec.conform.backends.base import Backend, CompileError, Declaration, MissingExtra, UnknownBackend
from opspec.conform.backends.registry import ENTRY_POINTS, build, find, known_names, lookup, resolve

__all__ = ["Backend", "CompileError", "Declaration", "ENTRY_POINTS", "MissingExtra", "UnknownBackend", "build", "find",
           "known_names", "lookup", "resolve"]
