"""``aten::_trilinear`` (behind ``nn.functional.bilinear``) as broadcast products and a sum.

torch 2.13 registers no decomposition for it.  The review's formula repeats ``i2``;
the correct one unsqueezes each input at its expand dims and multiplies all three:
``(i1.unsqueeze(expand1) * i2.unsqueeze(expand2) * i3.unsqueeze(expand3)).sum(sumdim)``.
"""
from __future__ import annotations

import torch

from opspec.decompositions._common import aten, cast, compute_dtype


def _unsqueeze_all(t: torch.Tensor, dims) -> torch.Tensor:
    for d in sorted(dims):
        t = aten.unsqueeze.default(t, d)
    return t


def trilinear(i1, i2, i3, expand1, expand2, expand3, sumdim, unroll_dim: int = 1):
    """unroll_dim only steers how eager loops over the product; it does not change the value.

    Half-precision inputs are multiplied and summed in float32 (eager accumulates its
    matmuls in float32 too); the sum keeps the input dtype, as eager does for integers.
    """
    out_dtype = i1.dtype  # eager returns i1.dtype even for mixed inputs
    work = compute_dtype(out_dtype)
    product = aten.mul.Tensor(
        aten.mul.Tensor(_unsqueeze_all(cast(i1, work), expand1), _unsqueeze_all(cast(i2, work), expand2)),
        _unsqueeze_all(cast(i3, work), expand3),
    )
    if len(sumdim) != 0:
        product = aten.sum.dim_IntList(product, list(sumdim), False, dtype=work)
    return cast(product, out_dtype)
