"""Rules for indexing entries with a data-dependent result size, over core ``index.Tensor``.

torch registers no decomposition for ``masked_select``; a boolean index does the same
selection (row-major order, a 1-d result) and backends already meet it as ``index.Tensor``.
"""
from __future__ import annotations

import torch

from opspec.decompositions._common import aten


def masked_select(self: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """self[mask] after broadcasting both; a 0-dim pair is indexed as one element, so the result stays 1-d."""
    shape = list(torch.broadcast_shapes(self.shape, mask.shape)) or [1]
    return aten.index.Tensor(aten.expand.default(self, shape), [aten.expand.default(mask, shape)])


def unfold(self: torch.Tensor, dimension: int, size: int, step: int) -> torch.Tensor:
    """Windows of ``size`` elements every ``step`` along ``dimension``, as a copy: one index_select of the computed
    window indices, the window axis moved last. torch's own rule is an ``as_strided`` view, which exposes raw
    strides to backends without a strided memory model."""
    if self.dim() == 0:
        # a 0-dim tensor unfolds as a 1-element dimension and gives a 1-d result
        return aten.view.default(unfold(aten.view.default(self, [1]), 0, size, step), [size])
    dim = dimension % self.dim()
    count = (self.shape[dim] - size) // step + 1
    starts = aten.arange.start_step(0, count * step, step, dtype=torch.int64, device=self.device)
    offsets = aten.arange.start_step(0, size, 1, dtype=torch.int64, device=self.device)
    index = aten.add.Tensor(aten.unsqueeze.default(starts, 1), aten.unsqueeze.default(offsets, 0))
    picked = aten.index_select.default(self, dim, aten.view.default(index, [count * size]))
    shape = list(self.shape)
    windows = aten.view.default(picked, shape[:dim] + [count, size] + shape[dim + 1:])
    order = [d for d in range(len(shape) + 1) if d != dim + 1] + [dim + 1]
    return aten.permute.default(windows, order)
