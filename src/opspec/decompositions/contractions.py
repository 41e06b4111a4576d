"""``aten::_trilinear`` (behind ``nn.functional.bilinear``) as broadcast products and a sum.

torch 2.13 registers no decomposition for it.  The review's formula repeats ``i2``;
the correct one unsqueezes each input at its expand dims and multiplies all three:
``(i1.unsqueeze(expand1) * i2.unsqueeze(expand2) * i3.unsqueeze(expand3)).sum(sumdim)``.
"""
from __future__ import annotations

import torch

from ._common import aten


def _unsqueeze_all(t: torch.Tensor, dims) -> torch.Tensor:
    for d in sorted(dims):
        t = aten.unsqueeze.default(t, d)
    return t


def trilinear(i1, i2, i3, expand1, expand2, expand3, sumdim, unroll_dim: int = 1):
    """unroll_dim only steers how eager loops over the product; it does not change the value."""
    product = aten.mul.Tensor(
        aten.mul.Tensor(_unsqueeze_all(i1, expand1), _unsqueeze_all(i2, expand2)),
        _unsqueeze_all(i3, expand3),
    )
    if len(sumdim) == 0:
        return product
    return aten.sum.dim_IntList(product, list(sumdim), False)
