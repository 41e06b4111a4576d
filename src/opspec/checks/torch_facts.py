"""What ``opspec validate`` asks of the installed torch, measured once and kept as plain data.

Every fact here is a function of the installed torch (its version, build and the
machine, which the part store's key covers), so a run whose other parts are all kept
reads these and never imports torch. Each fact comes from the bridge call that answers
it everywhere else (``torch_ops``, ``versions``): findings are the same, kept or measured.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping

from opspec.checks.part_cache import PartStore

SYMBOLIC_RETURNS = ("SymInt", "SymBool", "int", "bool", "float", "SymFloat")
KEY = "torch facts"  # the part they are kept under


@dataclass(frozen=True)
class ParsedSchema:
    """What the checks read from ``torch._C.parse_schema`` of an overload's printed schema."""

    name: str  # the overload the schema string names (``torch_ops.qualified_name``)
    functional: bool  # writes to no argument (``torch_ops.is_functional``)
    symbolic: bool  # returns only sizes and scalars, no tensor
    arguments: tuple[str, ...]


@dataclass(frozen=True)
class TorchFacts:
    version: str  # torch.__version__, as findings quote it
    installed: str  # its public version (``versions.installed``)
    schemas: Mapping[str, str]  # every aten overload -> its printed schema, in torch's registry order
    parsed: Mapping[str, ParsedSchema]  # the same overloads, their schemas parsed
    core_table: frozenset[str]  # ops in torch's core decomposition table
    registered: frozenset[str]  # ops with any registered decomposition
    cuda: bool  # a CUDA device is usable: the special-case rows run there too
    pointwise: frozenset[str] = frozenset()  # overloads torch tags pointwise (the accuracy contracts' scope)

    @classmethod
    def measure(cls) -> "TorchFacts":
        from opspec.bridge import torch_ops, versions

        torch = torch_ops.torch_module()
        schemas = torch_ops.all_aten_schemas()
        return cls(
            version=str(torch.__version__),  # a str subclass of torch's: kept as plain text
            installed=versions.installed(),
            schemas=dict(schemas),
            parsed={name: _parsed(torch, text) for name, text in schemas.items()},
            core_table=frozenset(torch_ops.core_decomposition_table()),
            registered=frozenset(torch_ops.registered_decompositions()),
            cuda=bool(torch.cuda.is_available()),
            pointwise=torch_ops.pointwise_tagged(tuple(schemas)),
        )


def _parsed(torch, text: str) -> ParsedSchema:
    from opspec.bridge import torch_ops

    schema = torch._C.parse_schema(text)
    return ParsedSchema(
        name=torch_ops.qualified_name(schema),
        functional=torch_ops.is_functional(text),
        symbolic=all(str(ret.type) in SYMBOLIC_RETURNS for ret in schema.returns),
        arguments=tuple(arg.name for arg in schema.arguments),
    )


def recall(parts: PartStore) -> TorchFacts:
    """The facts ``parts`` keeps (its key covers the installed torch), else measured and kept."""
    return parts.recall(KEY, TorchFacts.measure)
