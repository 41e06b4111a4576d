"""An op's arguments as a table: types and defaults from its schema, values from its testing hints.

The schema string is parsed with torchgen's ``FunctionSchema`` (pure Python, shipped
with torch, no ``import torch``), the same model torch's code generator uses.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from opspec.spec.model import TestingHints

TYPE_NOTES = {
    "Tensor": "a tensor",
    "Scalar": "a number (bool, int, float or complex)",
    "SymInt": "an int (may be symbolic in a traced graph)",
    "ScalarType": "a dtype",
    "MemoryFormat": "a memory format",
    "Layout": "a layout",
    "Device": "a device",
    "str": "a string",
    "bool": "a bool",
    "int": "an int",
    "float": "a float",
}
SCALAR_TYPES = ("uint8", "int8", "int16", "int32", "int64", "float16", "float32", "float64", "complex32", "complex64",
                "complex128", "bool", "qint8", "quint8", "qint32", "bfloat16")
MEMORY_FORMATS = ("contiguous_format", "preserve_format", "channels_last", "channels_last_3d")


@dataclass(frozen=True)
class Argument:
    name: str
    type: str
    default: str  # "" when the argument is required
    keyword_only: bool
    values: str  # what values are valid or tested, in words


@dataclass(frozen=True)
class Signature:
    arguments: tuple[Argument, ...]
    returns: tuple[tuple[str, str], ...]  # (name or "", type)


def _default(text: str | None, type_text: str) -> str:
    if text is None:
        return ""
    if "ScalarType" in type_text and re.fullmatch(r"\d+", text):
        return f"torch.{SCALAR_TYPES[int(text)]}"  # torch prints the enum's number
    if "MemoryFormat" in type_text and re.fullmatch(r"\d+", text):
        return f"torch.{MEMORY_FORMATS[int(text)]}"
    return text


def _type_words(type_text: str) -> str:
    optional = type_text.endswith("?")
    base = type_text.rstrip("?")
    words = ""
    match = re.fullmatch(r"(\w+)(\?)?\[(\d*)\]", base)
    if match:
        element, inner_optional, size = match.groups()
        noun = TYPE_NOTES.get(element, element)
        words = f"a list of {size + ' ' if size else ''}{noun.split(' ', 1)[1] if ' ' in noun else noun}s"
        if inner_optional:
            words += " (entries may be None)"
        if size and element in ("int", "SymInt"):
            words += f"; a single int stands for {size} equal entries"
    else:
        words = TYPE_NOTES.get(base, base)
    return words + ("; may be None" if optional else "")


def _hint_words(name: str, hints: TestingHints, is_tensor: bool) -> list[str]:
    words = []
    if name in hints.choices:
        words.append("tested with " + ", ".join(str(value) for value in hints.choices[name]))
    if name in hints.domain:
        words.append(f"values in {hints.domain[name]}")
    if name in hints.ranks:
        low, high = hints.ranks[name]
        words.append(f"rank {low}" if low == high else f"rank {low} to {high}")
    if name in hints.shapes:
        words.append("shape [" + ", ".join(str(s) for s in hints.shapes[name]) + "]")
    if is_tensor and hints.dtypes:
        words.append("dtypes " + ", ".join(hints.dtypes))
    return words


def parse(schema: str, hints: TestingHints | None = None) -> Signature:
    """The arguments and returns of ``schema`` (``aten::name.overload(...) -> ...``)."""
    from torchgen.model import FunctionSchema

    hints = hints or TestingHints()
    parsed = FunctionSchema.parse(schema.split("::", 1)[-1])
    keyword_only = {a.name for a in parsed.arguments.flat_kwarg_only}
    arguments = []
    for argument in parsed.arguments.flat_all:
        type_text = str(argument.type)
        words = [_type_words(type_text)]
        if argument.annotation is not None and argument.annotation.is_write:
            words.append("written in place")
        elif argument.annotation is not None:
            words.append("the output aliases it")
        words += _hint_words(argument.name, hints, "Tensor" in type_text)
        arguments.append(Argument(
            name=argument.name, type=type_text + (f"({argument.annotation})" if argument.annotation else ""),
            default=_default(argument.default, type_text), keyword_only=argument.name in keyword_only,
            values="; ".join(words),
        ))
    returns = tuple((r.name or "", str(r.type) + (f"({r.annotation})" if r.annotation else "")) for r in parsed.returns)
    return Signature(tuple(arguments), returns)
