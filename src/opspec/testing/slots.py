"""Where an input tensor goes in a call's skeleton: the arguments with each tensor replaced by its index.

A program is built once from a skeleton and run on many inputs; the comparison layer reads the
same skeletons to tell which argument of a call each tensor is.
"""
from __future__ import annotations

from typing import Any


class Slot:
    """Where the i-th input tensor goes in a skeleton."""

    __slots__ = ("index",)

    def __init__(self, index: int):
        self.index = index

    def __repr__(self) -> str:
        return f"<{self.index}>"


def split_tensors(args: Any, kwargs: Any, inputs: list | None = None) -> tuple[Any, Any, list]:
    """(args, kwargs, inputs): the call with each tensor replaced by a ``Slot`` into ``inputs``, which it is
    appended to (tensors already there keep their slots)."""
    from opspec.testing.strategies.call import map_tensors

    inputs = [] if inputs is None else inputs

    def take(tensor) -> Slot:
        inputs.append(tensor)
        return Slot(len(inputs) - 1)

    return map_tensors(take, args), map_tensors(take, kwargs), inputs
