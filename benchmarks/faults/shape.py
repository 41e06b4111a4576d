"""Wrong decompositions of shape, view and concatenation ops."""
from __future__ import annotations

import torch


def stack_normalizes_dim_by_input_rank(tensors, dim=0):
    """Wraps a negative dim with the inputs' rank instead of the output's (rank + 1)."""
    rank = tensors[0].dim()
    dim = dim % max(rank, 1) if dim < 0 else dim
    return torch.cat([t.unsqueeze(dim) for t in tensors], dim)


def unsqueeze_list_insert(self, dim):
    """list.insert(dim, 1): insert(-1, ...) goes before the last element, unsqueeze(-1) after it."""
    shape = list(self.shape)
    shape.insert(dim, 1)
    return self.reshape(shape)


def squeeze_dim_indexes_shape(self, dim):
    """Reads self.shape[dim]: raises on a 0-dim tensor, which squeeze accepts (dim 0 or -1)."""
    shape = list(self.shape)
    if shape[dim] == 1:
        del shape[dim]
    return self.reshape(shape)


def t_as_transpose(self):
    """transpose(0, 1): t() also accepts 1-d and 0-d tensors (and returns them unchanged)."""
    return self.transpose(0, 1)


def cat_drops_empty(tensors, dim=0):
    """Filters out empty inputs first: when all are empty, cat of nothing raises."""
    return torch.cat([t for t in tensors if t.numel() > 0], dim)


def roll_modulo_size(self, shifts, dims=()):
    """shift % size: divides by zero for an empty dim, which roll accepts."""
    if len(dims) == 0:
        return roll_modulo_size(self.reshape(-1), shifts, [0]).reshape(self.shape)
    result = self
    for shift, dim in zip(shifts, dims):
        size = result.shape[dim]
        shift = shift % size
        result = torch.cat([result.narrow(dim, size - shift, shift), result.narrow(dim, 0, size - shift)], dim)
    return result


def addcmul_in_place(self, tensor1, tensor2, *, value=1):
    """Accumulates into a copy of self in place: fails when self must broadcast up."""
    return self.clone().add_(tensor1 * tensor2, alpha=value)
