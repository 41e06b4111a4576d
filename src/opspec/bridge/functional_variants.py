"""The mutating variants of functional core ops: ``add_.Tensor`` and ``add.out`` for ``add.Tensor``.

The core op set is functional, but programs call the in-place and ``out=`` forms
too, and functionalization must turn them back into the core op. A variant is
found by its signature, the way torchgen groups native functions:

- in-place: an overload of ``name_`` whose arguments have the functional op's
  names and types (only alias annotations differ);
- out: an overload of ``name`` whose arguments, less its keyword-only written
  tensors (``Tensor(a!) out``), are the functional op's, where the tensor-options
  keywords (``dtype``, ``layout``, ``device``, ``pin_memory``) are dropped from
  both: the ``out`` tensor carries them.
"""
from __future__ import annotations

import functools
from collections import defaultdict
from dataclasses import dataclass
from typing import Iterable, Literal

from opspec.bridge import torch_ops

Kind = Literal["inplace", "out"]
TENSOR_OPTIONS = frozenset({"dtype", "layout", "device", "pin_memory"})


@dataclass(frozen=True)
class Variant:
    """``name`` mutates what ``functional`` returns: its first argument (inplace) or its ``out`` arguments."""

    functional: str  # aten::add.Tensor
    name: str  # aten::add_.Tensor, aten::add.out
    kind: Kind
    outs: tuple[str, ...] = ()  # the written keyword arguments of an out variant, in schema order

    @property
    def id(self) -> str:
        return self.name.removeprefix("aten::")


def _signature(arguments: Iterable, *, drop_options: bool) -> list[tuple[str, str]]:
    return [(a.name, str(a.type)) for a in arguments if not (drop_options and a.name in TENSOR_OPTIONS)]


def _is_out(argument) -> bool:
    return argument.kwarg_only and argument.alias_info is not None and argument.alias_info.is_write


@functools.lru_cache(maxsize=None)
def _schemas_by_name() -> dict[str, list]:
    torch = torch_ops.torch_module()
    grouped: dict[str, list] = defaultdict(list)
    for schema in torch._C._jit_get_all_schemas():
        if schema.name.startswith("aten::"):
            grouped[schema.name].append(schema)
    return grouped


def variants_of(functional: str) -> list[Variant]:
    """The in-place and out variants torch registers for one functional overload; none for a mutating one."""
    base, _, overload = functional.partition(".")
    by_name = _schemas_by_name()
    schema = next((s for s in by_name.get(base, []) if s.overload_name == overload), None)
    if schema is None or schema.is_mutable:
        return []
    found: list[Variant] = []
    exact = _signature(schema.arguments, drop_options=False)
    for candidate in by_name.get(base + "_", []):
        if _signature(candidate.arguments, drop_options=False) == exact:
            found.append(Variant(functional, torch_ops.qualified_name(candidate), "inplace"))
    loose = _signature(schema.arguments, drop_options=True)
    for candidate in by_name.get(base, []):
        outs = tuple(a.name for a in candidate.arguments if _is_out(a))
        rest = [a for a in candidate.arguments if not _is_out(a)]
        if outs and len(outs) == len(candidate.returns) and _signature(rest, drop_options=True) == loose:
            found.append(Variant(functional, torch_ops.qualified_name(candidate), "out", outs))
    return sorted(found, key=lambda v: (v.kind, v.name))


def variants(ops: Iterable[str]) -> list[Variant]:
    """Every variant of the given functional ops, in their order."""
    return [variant for op in ops for variant in variants_of(op)]
