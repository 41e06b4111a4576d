"""A call's constant arguments against their schema defaults.

Exported models mostly leave arguments at their defaults (``linear`` becomes
``addmm(bias, x, w.t())`` with ``beta`` and ``alpha`` at 1), while drawn calls set
them at random; a backend may lower an op for one and not for the other. This
module says which arguments a call sets away from the default (a drawn call and a
node of an exported graph alike) and rewrites a call with some of its arguments
set to given values (its defaults, or where its semantics branch). Tensor
arguments are data: they are never compared or reset, but the dtypes they hold
are named (``indices:bool``), since a backend may lower a boolean mask otherwise
than integer indices.
"""
from __future__ import annotations

from typing import Any, Mapping

from opspec.testing.strategies.call import Call
from opspec.testing.strategies.schema_args import Argument, arguments_of


def _is_default(value: Any, default: Any) -> bool:
    if isinstance(value, (list, tuple)) and isinstance(default, (list, tuple)):
        return len(value) == len(default) and all(_is_default(v, d) for v, d in zip(value, default))
    if isinstance(value, bool) != isinstance(default, bool):  # True == 1, but it is another setting
        return False
    try:
        return bool(value == default)
    except (RuntimeError, TypeError, ValueError):  # a value that cannot be compared (symbolic) is a setting
        return False


def set_arguments(schema, args: tuple | list, kwargs: Mapping[str, Any]) -> dict[str, Any]:
    """name -> value for the non-tensor arguments with a schema default that the call passes another value for.

    ``schema``: the op's FunctionSchema (or its text). A value that is not a constant (an fx node holding a size
    computed in the graph) counts as set: nothing says it is the default."""
    _, arguments = arguments_of(schema)
    passed = dict(zip((a.name for a in arguments), args))
    passed.update(kwargs)
    return {a.name: passed[a.name] for a in arguments
            if a.has_default and not a.is_tensor and a.name in passed and not _is_default(passed[a.name], a.default)}


def dtype_tokens(schema, args: tuple | list, kwargs: Mapping[str, Any], dtype_of=None) -> set[str]:
    """``NAME:DTYPE`` for each dtype a tensor argument holds (``indices:bool`` for a boolean mask): the inputs'
    side of a call's settings, which a backend may lower for some dtypes only. ``dtype_of(value)`` gives a value's
    dtype or None (default: a tensor's own; for an fx node, read its example value)."""
    def own(value):
        return getattr(value, "dtype", None)

    dtype_of = dtype_of or own
    _, arguments = arguments_of(schema)
    passed = dict(zip((a.name for a in arguments), args))
    passed.update(kwargs)
    tokens = set()
    for argument in arguments:
        if not argument.is_tensor or argument.name not in passed:
            continue
        value = passed[argument.name]
        for item in value if isinstance(value, (list, tuple)) else [value]:
            dtype = None if item is None else dtype_of(item)
            if dtype is not None:
                tokens.add(f"{argument.name}:{str(dtype).removeprefix('torch.')}")
    return tokens


def _schema(call: Call):
    from opspec.bridge.torch_ops import all_aten_schemas

    return all_aten_schemas()[call.op]


def with_settings(call: Call, setting: Mapping[str, Any]) -> Call:
    """The call with the named constants set to the given values (positional ones in place, others as keywords)."""
    positional = [a.name for a in arguments_of(_schema(call))[1] if not a.kwarg_only]
    args, kwargs = list(call.args), dict(call.kwargs)
    for name, value in setting.items():
        position = positional.index(name) if name in positional else None
        if position is not None and position < len(args):
            args[position] = value
        else:
            kwargs[name] = value
    return Call(call.op, tuple(args), kwargs)


def at_defaults(call: Call) -> Call:
    """The call with every argument it sets away from its default put back to the default (the same tensors)."""
    schema = _schema(call)
    defaults: dict[str, Any] = {a.name: a.default for a in arguments_of(schema)[1]}
    return with_settings(call, {name: defaults[name] for name in set_arguments(schema, call.args, call.kwargs)})
