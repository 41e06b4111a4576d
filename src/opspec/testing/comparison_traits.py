"""The ops the comparison rule treats apart, as the accuracy data states them (``opset/accuracy.yaml``).

``near_zero``: eager kernels that keep relative precision for tiny results, whose float32/float64 results below
the absolute tolerance are also held to a relative bound (:func:`opspec.testing.compare.compare`'s near_zero).
``ill_conditioned``: ops whose float32 results also meet a float64 run and its spread
(:func:`opspec.testing.compare.float64_spread`). Each entry carries its reason in the data; this module only
reads the names, once, when first asked.
"""
from __future__ import annotations

import functools
from collections.abc import Iterator, Set


@functools.lru_cache(maxsize=1)
def _named() -> dict[str, frozenset[str]]:
    from opspec.spec import accuracy

    contracts = accuracy.bundled_contracts()
    return {"near_zero": frozenset(n.op for n in contracts.near_zero),
            "ill_conditioned": frozenset(n.op for n in contracts.ill_conditioned)}


class OpsNamed(Set):
    """The ops one key of the accuracy data names: a set read from the file on first use."""

    def __init__(self, key: str):
        self.key = key

    def _ops(self) -> frozenset[str]:
        return _named()[self.key]

    def __contains__(self, op: object) -> bool:
        return op in self._ops()

    def __iter__(self) -> Iterator[str]:
        return iter(sorted(self._ops()))

    def __len__(self) -> int:
        return len(self._ops())

    def __repr__(self) -> str:
        return f"OpsNamed({self.key!r}: {sorted(self._ops())})"


NEAR_ZERO = OpsNamed("near_zero")
ILL_CONDITIONED = OpsNamed("ill_conditioned")
