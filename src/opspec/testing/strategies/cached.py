"""Strategy constructors memoised by their arguments.

Building a strategy validates it; inside a composite that runs per draw, so
reusing one instance per argument tuple cuts drawing time several-fold.
"""
from __future__ import annotations

import functools

from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

booleans = st.booleans()
integers = functools.lru_cache(maxsize=4096, typed=True)(st.integers)


@functools.lru_cache(maxsize=1024)
def _floats(keyed: tuple) -> st.SearchStrategy:
    return st.floats(**{name: value for name, (_, value) in keyed})


def floats(min_value=None, max_value=None, **kwargs) -> st.SearchStrategy:
    # keyed by repr: -0.0 == 0.0, so a plain cache would hand st.floats(min_value=0.0) to a
    # caller asking for min_value=-0.0, and draws would depend on which test ran first
    arguments = {"min_value": min_value, "max_value": max_value, **kwargs}
    return _floats(tuple(sorted((name, (repr(value), value)) for name, value in arguments.items())))


permutations = functools.lru_cache(maxsize=64, typed=True)(lambda n: st.permutations(range(n)))
array_shapes = functools.lru_cache(maxsize=1024, typed=True)(hnp.array_shapes)
mutually_broadcastable_shapes = functools.lru_cache(maxsize=1024, typed=True)(hnp.mutually_broadcastable_shapes)


@functools.lru_cache(maxsize=4096)
def _sampled(typed_options: tuple):
    return st.sampled_from([option for *_, option in typed_options])


def sampled_from(options) -> st.SearchStrategy:
    # keyed with each option's type: (0, 1) and (False, True) are equal tuples but different choices
    # and floats by repr, so that 0.0 and -0.0 stay different choices
    typed_options = tuple((type(option), repr(option) if isinstance(option, float) else option, option) for option in options)
    try:
        return _sampled(typed_options)
    except TypeError:  # unhashable options (lists): build afresh
        return st.sampled_from(list(options))
