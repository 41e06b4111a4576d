"""Draws that depend on the seed and the strategy alone.

Hypothesis (6.13x and later) mixes into its draws, now and then, constants it
finds in the source of the *local* modules the process has imported so far (any
module outside site-packages and the standard library). For opspec that would
make a case's inputs depend on which of its modules the worker had imported
before the case (the cases run before it, ``-j``, ``--shard``) and on whether
opspec is installed editable or from a wheel. While drawing, the local pool is
held empty; Hypothesis's own global constants (0, inf, NaN, ...) still take part.
"""
from __future__ import annotations

import contextlib
from typing import Iterator


@contextlib.contextmanager
def without_local_constants() -> Iterator[None]:
    try:
        from hypothesis.internal.conjecture import providers
    except ImportError:  # a Hypothesis without local constants: nothing to hold
        yield
        return
    previous = getattr(providers, "_get_local_constants", None)
    cache = getattr(providers, "CONSTANTS_CACHE", None)
    if previous is None or cache is None:
        yield
        return
    empty = providers.Constants()
    providers._get_local_constants = lambda: empty
    cache.cache.clear()  # its entries hold the local constants they were computed with
    try:
        yield
    finally:
        providers._get_local_constants = previous
        cache.cache.clear()
