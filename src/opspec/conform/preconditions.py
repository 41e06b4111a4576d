"""Calls whose result torch does not define, so a drawn call that is one tests nothing.

The eager kernel accepts these calls and returns *something*, but another kernel (the
same op on another device, or a backend's) may return something else and be just as
right. Comparing with eager there would turn chance into a verdict, so such calls are
not drawn. Each predicate says True for a call whose result is defined; one that
cannot tell (the kernel would refuse the call anyway) says True and leaves the refusal
to the kernel.
"""
from __future__ import annotations

from typing import Callable

import torch

from opspec.testing.strategies.call import Call


def _written_once(counts: Callable[[], torch.Tensor]) -> bool:
    try:
        return bool((counts() <= 1).all())
    except (RuntimeError, IndexError, ValueError):  # the kernel refuses the call itself
        return True


def _index_put_defined(call: Call) -> bool:
    """torch.Tensor.index_put_: with accumulate=False, duplicate indices leave the winner undefined."""
    if call.argument(3, "accumulate", False):
        return True
    self, indices = call.args[0], call.argument(1, "indices", [])
    indices = [None if i is None else i.cpu() for i in indices]
    ones = torch.ones((), dtype=torch.int64)
    return _written_once(lambda: torch.ops.aten.index_put_.default(
        torch.zeros(self.shape, dtype=torch.int64), indices, ones, True))


def _scatter_src_defined(call: Call) -> bool:
    """torch.Tensor.scatter_: where index names one position twice, which src element lands is undefined."""
    self, dim, index = call.args[0], call.argument(1, "dim", 0), call.argument(2, "index", None)
    return _written_once(lambda: torch.zeros(self.shape, dtype=torch.int64).scatter_add_(
        dim, index.cpu(), torch.ones(index.shape, dtype=torch.int64)))


def _topk_defined(call: Call) -> bool:
    """topk of a 0-d tensor with k = 0: the CPU kernel returns the input, the CUDA kernel (torch 2.11)
    a tensor it never wrote (other values on every run)."""
    return not (call.args[0].dim() == 0 and call.argument(1, "k", None) == 0)


PRECONDITIONS: dict[str, Callable[[Call], bool]] = {
    # _local_scalar_dense reads element 0 of any tensor: only a one-element tensor has a defined answer
    "aten::_local_scalar_dense": lambda call: call.args[0].numel() == 1,
    "aten::index_put": _index_put_defined,
    "aten::scatter.src": _scatter_src_defined,
    "aten::topk": _topk_defined,
}


def defined(call: Call) -> bool:
    """Whether torch defines the result of ``call`` (ops without a precondition: always)."""
    check = PRECONDITIONS.get(call.op)
    return check is None or check(call)
