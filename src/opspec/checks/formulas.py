"""Executable formulas: a description's ``formula_check`` evaluated against the eager kernel.

In ``opset/descriptions.yaml`` an op's ``formula`` (for people) may carry
``formula_check``, a Python expression over the op's arguments (by schema name;
tensors in float64; ``torch`` and ``math`` in scope) that evaluates to the op's
output (or its first output), or ``formula_prose`` saying why it is not executable.
The expression runs on inputs drawn by the strategy layer in float64 and on the
op's special-case inputs, and is compared with the kernel by the project's
comparison rule within a modest float64 tolerance; NaN must sit where the kernel's is.
"""
from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import torch

from opspec.bridge import torch_ops
from opspec.checks.formula_verdicts import Verdict, first_message
from opspec.spec import special_cases as spec_cases
from opspec.spec.errors import Finding, one_line
from opspec.spec.formulas import Formula, syntax_findings
from opspec.spec.yamlio import DataError
from opspec.spec.model import Opset, TestingHints, Tolerance
from opspec.testing import compare, native_warnings, special_cases as rows, strategies
from opspec.testing.strategies import Call
from opspec.testing.strategies.call import map_tensors
from opspec.testing.strategies.schema_args import arguments_of

DRAWN = 12  # drawn calls per formula: a formula that is wrong is usually wrong almost everywhere
# Relative agreement to 1e-6 shows a float64 formula computes what the kernel does; the absolute part stays
# at float64's rounding near 1, so a formula that returns 0 for expm1(1e-10) is not hidden by it.
RTOL, ATOL = 1e-6, 1e-15
FORMULA_TOLERANCE = Tolerance(
    "a formula in float64 is not the kernel's algorithm: agreement to about 1e-6 relative shows they compute the same",
    {"float64": (RTOL, ATOL)},
)


# __import__ is for torch, not formulas: its C++ imports some of its own modules on first use (torch.storage at the
# first tensor made from Python values) through the calling frame's builtins; without it that first use inside a
# formula fails, and a verdict would depend on what the process happened to run before.
BUILTINS = {f.__name__: f for f in (abs, min, max, float, int, bool, sum, len, range, tuple, list, pow, round,
                                    __import__)}


def _named_arguments(call: Call) -> dict[str, Any]:
    """The call's arguments by schema name, omitted ones at their defaults."""
    _, arguments = arguments_of(call.overload()._schema)
    named = {a.name: a.default for a in arguments if a.has_default}
    positional = [a for a in arguments if not a.kwarg_only]
    named.update({a.name: value for a, value in zip(positional, call.args)})
    named.update(call.kwargs)
    return named


def evaluate(formula: Formula, call: Call) -> Any:
    """The formula's value on ``call``'s inputs (tensors as float64)."""
    scope = {"torch": torch, "math": math}
    scope.update(map_tensors(lambda t: t.to(torch.float64) if t.is_floating_point() else t, _named_arguments(call.copy())))
    return eval(formula.expression, {"__builtins__": BUILTINS, **scope})  # data from the opset, reviewed like code


def _as_output(value: Any, like: torch.Tensor) -> torch.Tensor:
    """The formula's value in the kernel output's form: a tensor of its dtype (float64 stays float64)."""
    tensor = torch.as_tensor(value)
    target = torch.float64 if like.dtype.is_floating_point else like.dtype
    return tensor.to(target).expand_as(like) if tensor.dim() == 0 and like.dim() > 0 else tensor.to(target)


def check_on(formula: Formula, call: Call) -> str | None:
    """Why the formula disagrees with the kernel on ``call`` (None when it agrees or the kernel refuses the call)."""
    try:
        with torch.no_grad():
            output = call.run()
    except Exception:
        return None  # not a valid call of the op: nothing to compare
    first = output[0] if isinstance(output, (tuple, list)) else output
    if not isinstance(first, torch.Tensor):
        first = torch.as_tensor(first)
    try:
        value = _as_output(evaluate(formula, call), first)
    except Exception as err:
        return f"the formula raises {one_line(err, 200)}"
    kernel = first.to(torch.float64) if first.is_floating_point() else first
    verdict = compare.compare(value, kernel, tolerance=FORMULA_TOLERANCE)
    if verdict.ok:
        return None
    if value.shape == kernel.shape and value.numel():
        differs = ~(torch.isclose(value, kernel, rtol=RTOL, atol=ATOL, equal_nan=True))
        if bool(differs.any()):
            index = tuple(int(i) for i in differs.nonzero()[0])
            return (f"at index {list(index)} the formula gives {rows.show(value[index])}, "
                    f"the kernel {rows.show(kernel[index])}")
    return " ".join(verdict.message.split())[:300]


def _inputs(op: str, hints: TestingHints | None, cases: tuple) -> list[Call]:
    """Drawn float64 calls, then the special-case rows' inputs that exist in float64."""
    return _drawn_calls(op, hints) + _row_calls(op, cases)


def _drawn_calls(op: str, hints: TestingHints | None) -> list[Call]:
    schema = torch_ops.resolve(op)._schema
    return strategies.draw_examples(strategies.calls(schema, hints, torch.float64), DRAWN)


def _row_calls(op: str, cases: tuple) -> list[Call]:
    calls = []
    for case in cases:
        if case.raises or "float64" not in rows.case_dtypes(case, ["float64"]):
            continue
        try:
            args, kwargs = rows.materialize(case, op, "float64")
        except rows.CaseError:
            continue  # validate reports a row that cannot run
        calls.append(Call(op, args, kwargs))
    return calls


def _describe(call: Call) -> str:
    shown = [f"{name}={rows.show(value, 120)}" for name, value in _named_arguments(call).items()]
    return ", ".join(shown)


def drawn_verdict(formula: Formula, hints: TestingHints | None = None) -> Verdict | None:
    """The formula on the inputs drawn from the op's schema and ``hints``."""
    return _verdict(formula, lambda: _drawn_calls(formula.op, hints))


def rows_verdict(formula: Formula, cases: tuple = ()) -> Verdict | None:
    """The formula on the inputs of the op's special-case rows (``cases``)."""
    return _verdict(formula, lambda: _row_calls(formula.op, cases))


def _verdict(formula: Formula, make_calls) -> Verdict | None:
    try:
        calls = make_calls()
    except Exception as err:  # unknown op, or no strategy for its schema
        return "error", f"{formula.op}: cannot draw inputs to check formula_check: {one_line(err, 200)}"
    for call in calls:
        problem = check_on(formula, call)
        if problem:
            return "problem", f"{formula.op}: formula_check disagrees with the kernel on {_describe(call)}: {problem}"
    return None


def check_formula(formula: Formula, hints: TestingHints | None = None, cases: tuple = ()) -> Finding | None:
    """The first input where the formula and the kernel disagree, as a finding at ``formula_check``."""
    drawn = drawn_verdict(formula, hints)
    message = first_message(drawn, None if drawn and drawn[0] == "error" else rows_verdict(formula, cases))
    return Finding(formula.mark, message) if message else None


def validate_findings(root: Path, opset: Opset | None, cases: dict[str, tuple] | None = None) -> list[Finding]:
    """Every formula_check against the kernel (its syntax is checked without torch: :mod:`opspec.spec.formulas`);
    ``cases``: the root's special-case rows as already read. ``opspec validate`` keeps each verdict:
    :mod:`opspec.checks.kept_formulas`."""
    formulas, findings = syntax_findings(root)
    if findings:
        return findings
    hints = {} if opset is None else {**{r.op: r.testing for r in opset.rules}, **{o.name: o.testing for o in opset.ops}}
    if cases is None:
        try:
            cases = spec_cases.load_special_cases(root)
        except DataError:
            cases = {}  # reported by the special-case check
    # Drawn inputs reach the kernels' edges (var of one element: their C++ warnings are noise), on small tensors.
    with native_warnings.held_back(), torch_ops.single_threaded():
        for formula in formulas:
            finding = check_formula(formula, hints.get(formula.op), cases.get(formula.op, ()))
            if finding:
                findings.append(finding)
    return findings
