"""How two schemas of one op differ, judged with torch's FunctionSchema (``torch._C.parse_schema``).

Each difference is a *kind* the compatibility policy names (``opset/compatibility.yaml``):
arguments are matched by name, so a rename, a reorder, a new or dropped argument, a
changed type, default, keyword-only flag or alias annotation are each told apart;
returns are compared as a whole. Whether a kind is compatible is the policy's to say.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from opspec.bridge import torch_ops


@dataclass(frozen=True)
class Difference:
    kind: str
    detail: str

    def __str__(self) -> str:
        return f"{self.kind}: {self.detail}"


class SchemaError(ValueError):
    """A schema string torch cannot parse."""


def parse(schema: str):
    torch = torch_ops.torch_module()
    try:
        return torch._C.parse_schema(schema)
    except RuntimeError as err:
        raise SchemaError(f"torch cannot parse schema {schema!r}: {str(err).strip().splitlines()[0]}") from None


def _alias(argument) -> tuple:
    info = argument.alias_info
    return (info.is_write, tuple(sorted(info.before_set))) if info is not None else ()


def _argument_text(argument) -> str:
    return f"`{argument.name}` ({argument.type})"


def differences(old: str, new: str) -> list[Difference]:
    """Every difference from ``old`` to ``new``; empty when torch parses both to the same schema."""
    if old == new:
        return []
    before, after = parse(old), parse(new)
    if before == after:
        # torch parses int and SymInt alike: the only textual change it does not see is that widening
        if re.sub(r"\bSymInt\b", "int", old) == re.sub(r"\bSymInt\b", "int", new):
            return [Difference("widen-to-symint", "int becomes SymInt")]
        return []
    found: list[Difference] = []
    if (before.name, before.overload_name) != (after.name, after.overload_name):
        found.append(Difference("rename-op", f"{before.name}.{before.overload_name} becomes {after.name}.{after.overload_name}"))
    old_args = {a.name: (i, a) for i, a in enumerate(before.arguments)}
    new_args = {a.name: (i, a) for i, a in enumerate(after.arguments)}
    removed = [a for name, (_, a) in old_args.items() if name not in new_args]
    added = [a for name, (_, a) in new_args.items() if name not in old_args]
    if len(removed) == len(added) and removed and all(str(r.type) == str(a.type) for r, a in zip(removed, added)) and \
            [old_args[r.name][0] for r in removed] == [new_args[a.name][0] for a in added]:
        for r, a in zip(removed, added):  # same place, same type, new name
            found.append(Difference("rename-argument", f"`{r.name}` becomes `{a.name}`"))
    else:
        found += [Difference("remove-argument", f"{_argument_text(a)} is dropped") for a in removed]
        for a in added:
            kind = "add-defaulted-argument" if a.has_default_value() else "add-required-argument"
            found.append(Difference(kind, f"{_argument_text(a)} is added"))
        if added:
            last_old = max((new_args[name][0] for name in old_args if name in new_args and not new_args[name][1].kwarg_only),
                           default=-1)
            for a in added:
                if new_args[a.name][0] < last_old and not a.kwarg_only:
                    found.append(Difference("reorder-arguments", f"{_argument_text(a)} is inserted before existing arguments"))
    shared = [name for name in old_args if name in new_args]
    positional = [name for name in shared if not old_args[name][1].kwarg_only]
    if positional != sorted(positional, key=lambda name: new_args[name][0]):
        found.append(Difference("reorder-arguments", "positional arguments change order"))
    for name in shared:
        a, b = old_args[name][1], new_args[name][1]
        if str(a.type) != str(b.type):
            found.append(Difference("change-argument-type", f"`{name}` changes from {a.type} to {b.type}"))
        if (a.has_default_value(), a.default_value) != (b.has_default_value(), b.default_value):
            found.append(Difference("change-default", f"`{name}` default {a.default_value!r} becomes {b.default_value!r}"))
        if a.kwarg_only != b.kwarg_only:
            found.append(Difference("change-keyword-only", f"`{name}` becomes {'keyword-only' if b.kwarg_only else 'positional'}"))
        if _alias(a) != _alias(b):
            found.append(Difference("change-mutability", f"`{name}` alias annotation changes"))
    returns = lambda schema: [(str(r.type), _alias(r)) for r in schema.returns]  # noqa: E731
    if returns(before) != returns(after):
        found.append(Difference("change-returns", f"returns {returns(before)} become {returns(after)}"))
    if not found:  # torch parses them apart for a reason none of the kinds above names
        found.append(Difference("change-argument-type", "the schemas differ in a way torch does not name"))
    return found

