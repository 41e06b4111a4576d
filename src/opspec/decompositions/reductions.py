"""Reductions the review decomposes but torch 2.13 leaves without a core-table entry.

``aten::max()``/``aten::min()`` (full reductions returning one 0-dim tensor) are
``amax``/``amin`` over every dimension; ``var_mean.correction`` is ``var.correction``
paired with ``mean.dim``.  torch's registered ``var_mean`` reference traces to
``prims`` instead, hence these versions written against core ATen only.
"""
from __future__ import annotations

import torch

from opspec.decompositions._common import aten


def max_default(self: torch.Tensor) -> torch.Tensor:
    """aten::max(Tensor self): amax over all dimensions (an empty dim list means all)."""
    return aten.amax.default(self, [])


def min_default(self: torch.Tensor) -> torch.Tensor:
    """aten::min(Tensor self): amin over all dimensions."""
    return aten.amin.default(self, [])


def var_mean_correction(self: torch.Tensor, dim=None, *, correction=None, keepdim: bool = False):
    """(var, mean) over dim; both reductions see the same dim, correction and keepdim."""
    var = aten.var.correction(self, dim, correction=correction, keepdim=keepdim)
    mean = aten.mean.dim(self, dim, keepdim)
    return var, mean
