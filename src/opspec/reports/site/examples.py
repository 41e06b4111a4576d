"""Worked examples on op pages, run with torch when the site is built so their output cannot go stale.

An example is a few Python statements from ``opset/descriptions.yaml`` ending in
one expression. It may use only ``torch`` and names it assigns, only literals,
calls, attribute access and simple arithmetic (no imports, no dunder attributes),
and it must call its op by its full name, ``torch.ops.aten.NAME.OVERLOAD(...)``.
"""
from __future__ import annotations

import ast
from dataclasses import dataclass

from opspec.spec.errors import one_line

ALLOWED_NODES = (
    ast.Module, ast.Expr, ast.Assign, ast.Call, ast.Attribute, ast.Name, ast.Load, ast.Store, ast.Constant,
    ast.List, ast.Tuple, ast.keyword, ast.UnaryOp, ast.USub, ast.UAdd, ast.BinOp, ast.Add, ast.Sub, ast.Mult,
    ast.Div, ast.Subscript, ast.Slice,
)

NAMES = {"torch", "float", "int", "bool"}  # float("nan"), float("inf")


class ExampleError(Exception):
    """An example that is not allowed, fails, or does not call its op; the message says which and why."""


@dataclass(frozen=True)
class Example:
    code: str
    output: str


def check(code: str) -> str | None:
    """Why ``code`` is not an acceptable example, or None."""
    try:
        tree = ast.parse(code)
    except SyntaxError as err:
        return f"not Python: {err.msg} (line {err.lineno})"
    if not tree.body or not isinstance(tree.body[-1], ast.Expr):
        return "the last statement must be an expression (its value is the printed output)"
    assigned = {target.id for node in ast.walk(tree) if isinstance(node, ast.Assign)
                for target in ast.walk(node) if isinstance(target, ast.Name) and isinstance(target.ctx, ast.Store)}
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and node.id not in NAMES | assigned:
            return f"name {node.id} is not allowed in an example (only {', '.join(sorted(NAMES))} and names it assigns)"
        if not isinstance(node, ALLOWED_NODES):
            return f"{type(node).__name__} is not allowed in an example"
        if isinstance(node, ast.Attribute) and node.attr.startswith("__"):
            return f"attribute {node.attr} is not allowed in an example"
    return None


def _callee(node: ast.AST) -> str:
    """``torch.ops.aten.add.Tensor`` for a call of that attribute chain, else ""."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    return ".".join([node.id, *reversed(parts)]) if isinstance(node, ast.Name) else ""


def calls_op(name: str, code: str) -> bool:
    base, _, overload = name.removeprefix("aten::").partition(".")
    wanted = f"torch.ops.aten.{base}.{overload or 'default'}"
    return any(isinstance(node, ast.Call) and _callee(node.func) == wanted for node in ast.walk(ast.parse(code)))


def run(name: str, code: str) -> Example:
    """Run the example of op ``name``; ExampleError when it is refused, fails or never calls the op."""
    import torch

    problem = check(code)
    if problem:
        raise ExampleError(problem)
    if not calls_op(name, code):
        raise ExampleError(f"it does not call {name} as torch.ops.aten.NAME.OVERLOAD(...)")
    tree = ast.parse(code)
    last = ast.Expression(tree.body.pop().value)
    scope = {"torch": torch}
    try:
        exec(compile(tree, f"<example of {name}>", "exec"), scope)  # noqa: S102 - checked by check() above
        value = eval(compile(last, f"<example of {name}>", "eval"), scope)  # noqa: S307
    except Exception as err:  # noqa: BLE001 - any failure of an example is reported, not raised raw
        raise ExampleError(one_line(err)) from None
    return Example(code.strip("\n"), _format(value))


def _format(value) -> str:
    import torch

    with torch._tensor_str.printoptions(**print_options(value)):
        return repr(value)


def _floats(value) -> list[float]:
    """Every finite, nonzero magnitude among the floating tensors in ``value`` (nested in tuples and lists)."""
    import torch

    if isinstance(value, torch.Tensor):
        if not (value.is_floating_point() or value.is_complex()):
            return []
        data = torch.view_as_real(value.detach().cpu()) if value.is_complex() else value.detach().cpu()
        data = data.to(torch.float64).abs().flatten()
        return data[torch.isfinite(data) & (data != 0)].tolist()
    if isinstance(value, (tuple, list)):
        return [x for item in value for x in _floats(item)]
    return []


def print_options(value) -> dict:
    """Print options that show an example's point: four decimals where they keep four significant digits of
    every value, else scientific notation (``expm1(1e-10)`` prints ``1.0000e-10``, not ``0.0000``)."""
    magnitudes = _floats(value)
    if not magnitudes or (min(magnitudes) >= 1e-1 and max(magnitudes) < 1e8):
        return {"precision": 4, "sci_mode": False}
    if min(magnitudes) >= 1e-3 and max(magnitudes) < 1e4:  # small but not tiny: more decimals, still plain
        return {"precision": 6, "sci_mode": False}
    return {"precision": 4, "sci_mode": True}
