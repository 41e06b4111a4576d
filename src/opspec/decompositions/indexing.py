"""Rules for indexing entries with a data-dependent result size, over core ``index.Tensor``.

torch registers no decomposition for ``masked_select``; a boolean index does the same
selection (row-major order, a 1-d result) and backends already meet it as ``index.Tensor``.
"""
from __future__ import annotations

import math

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


def nonzero_static(self: torch.Tensor, *, size: int, fill_value: int = -1) -> torch.Tensor:
    """The first ``size`` rows of nonzero(self), padded with ``fill_value``, with a shape known before the data.

    Each non-zero element's row is the running count of non-zero elements before it (cumsum); its coordinates
    are its row-major position unravelled by the strides. Elements that miss the result (zeros, and non-zeros
    past ``size``) are written to rows of their own below ``size`` and cut off, so no two writes of the scatter
    meet and the result does not depend on the order a backend writes in."""
    torch._check(size >= 0, lambda: "nonzero_static: 'size' must be an non-negative integer")  # the kernel's words
    count, rank = self.numel(), self.dim()
    if rank == 0:
        # a 0-dim tensor has no coordinates to give: every one of the ``size`` rows is empty
        return aten.full.default([size, 0], fill_value, dtype=torch.int64, device=self.device)
    # ne keeps self's strides; the flags are read in row-major order, so they are made contiguous first
    nonzero = aten.clone.default(aten.ne.Scalar(self, 0), memory_format=torch.contiguous_format)
    flags = aten.view.default(nonzero, [count])
    slot = aten.sub.Scalar(aten.cumsum.default(flags, 0, dtype=torch.int64), 1)
    position = aten.arange.start_step(0, count, 1, dtype=torch.int64, device=self.device)
    kept = aten.logical_and.default(flags, aten.lt.Scalar(slot, size))
    row = aten.where.self(kept, slot, aten.add.Scalar(position, size))
    strides = [math.prod(self.shape[d + 1:]) for d in range(rank)]
    coordinates = aten.cat.default(
        [aten.unsqueeze.default(aten.remainder.Scalar(aten.div.Scalar_mode(position, stride, rounding_mode="floor"),
                                                      extent), 1)
         for stride, extent in zip(strides, self.shape)], 1)
    written = aten.scatter.src(
        aten.full.default([size + count, rank], fill_value, dtype=torch.int64, device=self.device), 0,
        aten.expand.default(aten.unsqueeze.default(row, 1), [count, rank]), coordinates)
    return aten.slice.Tensor(written, 0, 0, size)
