"""Where opspec's bundled data lives: inside the installed wheel, or in the source checkout.

A wheel carries the opset, the backend manifests and the expectation files as the
``opspec._opset``, ``opspec._backends`` and ``opspec._expectations`` packages; an
editable install or a plain checkout reads the repository's folders directly.
"""
from __future__ import annotations

import functools
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1]
CHECKOUT = PACKAGE.parents[1]
TEMPLATES = PACKAGE / "reports" / "templates"


def _bundled(packaged: str, checkout: str, marker: str | None = None) -> Path | None:
    for candidate in (PACKAGE / packaged, CHECKOUT / checkout):
        if (candidate / marker).is_file() if marker else candidate.is_dir():
            return candidate
    return None


@functools.lru_cache(maxsize=None)
def opset_root() -> Path:
    """The directory holding ``versions.yaml``, one folder per version, and ``schema/``."""
    root = _bundled("_opset", "opset", marker="versions.yaml")
    if root is None:
        raise FileNotFoundError("opspec's opset data is missing from this installation")
    return root


def schema_dir() -> Path:
    return opset_root() / "schema"


@functools.lru_cache(maxsize=None)
def backends_dir() -> Path:
    """The bundled backend manifests (``conformance/backends`` in a checkout)."""
    return _bundled("_backends", "conformance/backends") or CHECKOUT / "conformance" / "backends"


@functools.lru_cache(maxsize=None)
def expectations_dir() -> Path:
    """The bundled expectation files (``conformance/expectations`` in a checkout)."""
    return _bundled("_expectations", "conformance/expectations") or CHECKOUT / "conformance" / "expectations"


@functools.lru_cache(maxsize=None)
def costs_dir() -> Path:
    """The bundled cost table that ``--shard`` balances by (``conformance/costs`` in a checkout)."""
    return _bundled("_costs", "conformance/costs") or CHECKOUT / "conformance" / "costs"
