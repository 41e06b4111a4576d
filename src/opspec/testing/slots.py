"""Where an input tensor goes in a call's skeleton: the arguments with each tensor replaced by its index.

A program is built once from a skeleton and run on many inputs; the comparison layer reads the
same skeletons to tell which argument of a call each tensor is.
"""
from __future__ import annotations


class Slot:
    """Where the i-th input tensor goes in a skeleton."""

    __slots__ = ("index",)

    def __init__(self, index: int):
        self.index = index

    def __repr__(self) -> str:
        return f"<{self.index}>"
