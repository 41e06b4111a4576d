"""``aten::empty_like`` without ``aten::empty_permuted``.

torch 2.13's core-table entry for empty_like traces to ``empty_permuted``, which is not
a core op; this version keeps the result's layout with the core ``empty_strided`` (or
``empty.memory_format`` when an explicit memory format is asked for).  The values are
uninitialized either way: only shape, dtype, device and strides are meaningful.
"""
from __future__ import annotations

import torch

from opspec.decompositions._common import aten


def _dense_strides(t: torch.Tensor):
    """self's strides when they describe a non-overlapping, dense layout; None otherwise."""
    sizes, strides = list(t.shape), list(t.stride())
    order = sorted(range(t.dim()), key=lambda i: (strides[i], -i))
    expected = 1
    for i in order:
        if sizes[i] == 1:
            continue
        if strides[i] != expected:
            return None
        expected *= sizes[i]
    return strides


def empty_like(self, *, dtype=None, layout=None, device=None, pin_memory=None, memory_format=None):
    """Uninitialized tensor shaped like self; preserve_format keeps dense strides, as eager does."""
    dtype = self.dtype if dtype is None else dtype
    layout = self.layout if layout is None else layout
    device = self.device if device is None else device
    if memory_format in (None, torch.preserve_format):
        strides = _dense_strides(self)
        if strides is not None:
            return aten.empty_strided.default(
                list(self.shape), strides, dtype=dtype, layout=layout, device=device, pin_memory=pin_memory
            )
        memory_format = torch.contiguous_format
    return aten.empty.memory_format(
        list(self.shape), dtype=dtype, layout=layout, device=device, pin_memory=pin_memory, memory_format=memory_format
    )
