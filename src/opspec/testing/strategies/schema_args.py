"""A schema's arguments as plain records, read from torch's FunctionSchema."""
from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any

import torch

from opspec.bridge.torch_ops import qualified_name


class _Missing:
    def __repr__(self) -> str:
        return "NO_DEFAULT"


NO_DEFAULT: Any = _Missing()
TENSOR_TYPES = ("Tensor", "Optional[Tensor]", "List[Tensor]", "List[Optional[Tensor]]")


@dataclass(frozen=True)
class Argument:
    name: str
    type: str  # torch's spelling of the declared type: "Tensor", "Optional[int]", "List[int]", "number", ...
    length: int | None  # N of int[N]
    default: Any
    kwarg_only: bool
    writes: bool  # Tensor(a!): the op mutates it

    @property
    def has_default(self) -> bool:
        return self.default is not NO_DEFAULT

    @property
    def is_tensor(self) -> bool:
        return self.type in TENSOR_TYPES

    @property
    def optional(self) -> bool:
        return self.type.startswith("Optional[")

    @property
    def base_type(self) -> str:
        return self.type[len("Optional["):-1] if self.optional else self.type


def parse(schema: "str | torch._C.FunctionSchema") -> "torch._C.FunctionSchema":
    return torch._C.parse_schema(schema) if isinstance(schema, str) else schema


@functools.lru_cache(maxsize=None)
def _arguments(schema_text: str) -> tuple[str, tuple[Argument, ...]]:
    schema = torch._C.parse_schema(schema_text)
    arguments = tuple(
        Argument(
            name=a.name,
            type=str(a.real_type),
            length=a.N,
            default=a.default_value if a.has_default_value() else NO_DEFAULT,
            kwarg_only=a.kwarg_only,
            writes=a.alias_info is not None and a.alias_info.is_write,
        )
        for a in schema.arguments
    )
    return qualified_name(schema), arguments


def arguments_of(schema: "str | torch._C.FunctionSchema") -> tuple[str, tuple[Argument, ...]]:
    """(qualified op name, its arguments in declaration order)."""
    return _arguments(str(schema))
