"""The eager kernel's answer for each element alone, for pointwise ops of one tensor.

torch's CPU kernels for pointwise ops take a vectorised path over tensors of
several elements and a scalar path otherwise, and at a few special values the two
disagree: ``gelu(+inf)`` is NaN inside a vector and +inf alone, where the special
cases state +inf. Both are torch's answers, so a candidate that matches the
scalar path wherever it leaves the vectorised one is not wrong.
"""
from __future__ import annotations

from typing import Any

import torch

from opspec.testing.strategies.call import Call, map_tensors


def elementwise(call: Call) -> torch.Tensor | None:
    """The kernel run on each element of the call's one floating tensor alone, shaped like its output; None where
    the op is not pointwise over a single tensor, or the kernel refuses an element."""
    overload = call.overload()
    tensors = call.tensors()
    if torch.Tag.pointwise not in overload.tags or len(tensors) != 1 or not tensors[0].dtype.is_floating_point:
        return None
    flat = tensors[0].detach().reshape(-1)
    answers = []
    try:
        for i in range(flat.numel()):
            element = flat[i:i + 1].clone()
            answer = overload(*map_tensors(lambda _: element, call.args), **map_tensors(lambda _: element, call.kwargs))
            if not isinstance(answer, torch.Tensor) or answer.numel() != 1:
                return None
            answers.append(answer.reshape(()))
    except Exception:  # noqa: BLE001 - an element the kernel refuses alone: no second answer
        return None
    return torch.stack(answers).reshape(tensors[0].shape) if answers else None


def accepting(candidate: Any, reference: Any, scalar: torch.Tensor | None, rtol: float, atol: float) -> Any:
    """``reference`` with the scalar path's value wherever the candidate matches it (NaN matching NaN)."""
    if scalar is None or not isinstance(candidate, torch.Tensor) or not isinstance(reference, torch.Tensor) \
            or candidate.shape != scalar.shape or candidate.dtype != scalar.dtype:
        return reference
    agrees = torch.isclose(candidate.detach().cpu(), scalar, rtol=rtol, atol=atol, equal_nan=True)
    return torch.where(agrees, scalar, reference.detach().cpu())
