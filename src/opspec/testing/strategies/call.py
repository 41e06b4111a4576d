"""One drawn call of an operator, and the Python source that replays it exactly."""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Callable

import torch

from opspec.testing.strategies.values import copy_preserving_layout, storage_view


@dataclass(frozen=True)
class Call:
    """``op(*args, **kwargs)`` for the qualified overload ``op`` (``aten::add.Tensor``)."""

    op: str
    args: tuple = ()
    kwargs: dict = field(default_factory=dict)

    def argument(self, position: int, name: str, default: Any = None) -> Any:
        """The argument at ``position`` in the schema, passed by position or by ``name``, else ``default``."""
        return self.args[position] if len(self.args) > position else self.kwargs.get(name, default)

    def overload(self):
        from opspec.bridge.torch_ops import resolve

        return resolve(self.op)

    def run(self, fn: Callable | None = None):
        """Call ``fn`` (the eager kernel by default) on fresh copies, so in-place ops do not leak."""
        fresh = self.copy()
        return (fn or self.overload())(*fresh.args, **fresh.kwargs)

    def copy(self) -> "Call":
        """The same call with every tensor copied, strides and storage offset kept."""
        return Call(self.op, map_tensors(copy_preserving_layout, self.args), map_tensors(copy_preserving_layout, self.kwargs))

    def tensors(self) -> list[torch.Tensor]:
        found: list[torch.Tensor] = []
        map_tensors(lambda t: found.append(t) or t, (self.args, self.kwargs))
        return found

    def repro(self) -> str:
        """Standalone source that rebuilds the exact inputs and calls the op."""
        return Repro(self).source()


def map_tensors(fn: Callable[[torch.Tensor], Any], value: Any) -> Any:
    if isinstance(value, torch.Tensor):
        return fn(value)
    if isinstance(value, tuple):
        return tuple(map_tensors(fn, v) for v in value)
    if isinstance(value, list):
        return [map_tensors(fn, v) for v in value]
    if isinstance(value, dict):
        return {k: map_tensors(fn, v) for k, v in value.items()}
    return value


def python_literal(value: Any) -> str:
    """Source for a non-tensor argument, NaN and infinities included."""
    if isinstance(value, bool) or value is None:
        return repr(value)
    if isinstance(value, int):
        return repr(value)
    if isinstance(value, float):
        if math.isnan(value):
            return "nan"
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        return repr(value)
    if isinstance(value, complex):
        return f"complex({python_literal(value.real)}, {python_literal(value.imag)})"
    if isinstance(value, torch.dtype):
        return str(value)  # "torch.float32"
    if isinstance(value, (torch.layout, torch.memory_format)):
        return str(value)  # "torch.strided", "torch.contiguous_format"
    if isinstance(value, torch.device):
        return f"torch.device({str(value)!r})"
    if isinstance(value, str):
        return repr(value)
    if isinstance(value, (list, tuple)):
        inner = ", ".join(python_literal(v) for v in value)
        return f"[{inner}]" if isinstance(value, list) else f"({inner}{',' if len(value) == 1 else ''})"
    raise TypeError(f"no literal for {type(value).__name__}")


class Repro:
    """Writes one assignment per tensor, then the call with the tensors named."""

    def __init__(self, call: Call):
        self.call = call
        self.lines: list[str] = []

    def source(self) -> str:
        args = [self.expression(v, f"arg{i}") for i, v in enumerate(self.call.args)]
        kwargs = [f"{k}={self.expression(v, k)}" for k, v in self.call.kwargs.items()]
        namespace, _, rest = self.call.op.partition("::")
        name, _, overload = rest.partition(".")
        target = f"torch.ops.{namespace}.{name}.{overload or 'default'}"
        header = ["import torch", "", "nan, inf = float('nan'), float('inf')"]
        body = self.lines + [f"result = {target}({', '.join(args + kwargs)})", "print(result)"]
        return "\n".join(header + body) + "\n"

    def expression(self, value: Any, name: str) -> str:
        if isinstance(value, torch.Tensor):
            variable = name if name.isidentifier() and name not in ("torch", "result", "nan", "inf") else f"{name}_"
            self.lines.append(f"{variable} = {tensor_source(value)}")
            return variable
        if isinstance(value, (list, tuple)) and any(isinstance(v, torch.Tensor) for v in value):
            inner = ", ".join(self.expression(v, f"{name}{i}") for i, v in enumerate(value))
            return f"[{inner}]"
        return python_literal(value)


def tensor_source(tensor: torch.Tensor) -> str:
    """An expression that rebuilds ``tensor``: values, dtype, shape, strides, storage offset, device."""
    device = "" if tensor.device.type == "cpu" else f".to({str(tensor.device)!r})"
    if tensor.numel() == 0:
        return f"torch.empty({tuple(tensor.shape)}, dtype={tensor.dtype}){device}"
    if tensor.is_contiguous() and tensor.storage_offset() == 0 and storage_view(tensor).numel() == tensor.numel():
        flat = tensor.detach().cpu().reshape(-1)
        reshape = f".reshape({tuple(tensor.shape)})" if tensor.dim() != 1 else ""
        return f"torch.tensor({_values(flat)}, dtype={tensor.dtype}){device}{reshape}"
    flat = storage_view(tensor.detach()).cpu()
    return (f"torch.tensor({_values(flat)}, dtype={tensor.dtype}){device}"
            f".as_strided({tuple(tensor.shape)}, {tuple(tensor.stride())}, {tensor.storage_offset()})")


def _values(flat: torch.Tensor) -> str:
    if flat.dtype in (torch.float16, torch.bfloat16):
        flat = flat.float()  # tolist() of these is exact through float32
    return python_literal(flat.tolist())
