"""``pkg.module:name`` references: how the opset, a backend or a model names Python code.

The one importer of user code: whatever the module does on import, a failure
comes back as one line naming the reference, never as a traceback.
"""
from __future__ import annotations

import importlib
from typing import Callable


class ImplementationError(LookupError):
    """A ``pkg.module:name`` reference cannot be imported or does not name a callable."""


def split(reference: str, kind: str = "function") -> tuple[str, str]:
    """(module, attribute) of ``pkg.module:name``; ImplementationError when it is not of that form."""
    module_name, sep, attribute = reference.partition(":")
    if not sep or not module_name or not attribute:
        raise ImplementationError(f"must be pkg.module:{kind}, got {reference!r}")
    return module_name, attribute


def load_callable(reference: str, kind: str = "function") -> Callable:
    """Import ``pkg.module:name`` and return the callable it names."""
    module_name, attribute = split(reference, kind)
    try:
        module = importlib.import_module(module_name)
    except Exception as err:  # the user's module may fail in any way; report it, do not crash
        raise ImplementationError(f"cannot import {module_name}: {type(err).__name__}: {err}") from None
    function = getattr(module, attribute, None)
    if not callable(function):
        raise ImplementationError(f"{module_name} has no {kind} {attribute}")
    return function
