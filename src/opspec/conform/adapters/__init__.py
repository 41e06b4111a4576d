"""Adapters for third-party backends that need more than a name to be run and judged.

Each adapter builds a :class:`opspec.conform.backends.Backend` for a backend
opspec can run only with care: it follows the backend's own entry point, keeps
the backend's silent fallbacks from passing as its results, and says which ops
the backend executed (``executed_ops()`` on the callable it returns: the
execution-evidence contract of :mod:`opspec.conform.backends`).

The packages are optional extras (``pip install 'opspec[openvino]'``,
``'opspec[executorch]'``); an adapter whose package is missing is refused with
one line naming the extra.
"""
from __future__ import annotations

import importlib
from typing import Callable

# name -> "module:factory"; a factory takes (dynamic) and returns a Backend
ADAPTERS: dict[str, str] = {
    "openvino": "opspec.conform.adapters.openvino:default",
    "openvino-single-op": "opspec.conform.adapters.openvino:single_op",
    "executorch": "opspec.conform.adapters.executorch:portable",
    "executorch-xnnpack": "opspec.conform.adapters.executorch:xnnpack",
}


class MissingPackage(LookupError):
    """The adapter's package is not installed: one line naming the extra."""


def factory(name: str) -> Callable:
    module, _, attribute = ADAPTERS[name].partition(":")
    return getattr(importlib.import_module(module), attribute)


def require(module: str, extra: str, adapter: str) -> None:
    """Import ``module`` or raise MissingPackage naming the extra that installs it."""
    try:
        importlib.import_module(module)
    except ImportError as err:
        raise MissingPackage(f"backend {adapter} needs the {extra} extra: pip install 'opspec[{extra}]' "
                             f"-c constraints.txt ({err})") from None
