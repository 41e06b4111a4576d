"""Executable formulas: a description's ``formula_check`` evaluated against the eager kernel.

In ``opset/descriptions.yaml`` an op's ``formula`` (for people) may carry
``formula_check``, a Python expression over the op's arguments (by schema name;
tensors in float64; ``torch`` and ``math`` in scope) that evaluates to the op's
output (or its first output), or ``formula_prose`` saying why it is not executable.
The expression runs on inputs drawn by the strategy layer in every dtype the op
declares (float64 most, complex and integer ones too; integer calls again with each
number argument fractional, where the schema admits a float there) and on the op's
special-case inputs. Floating tensors reach it as float64 and complex ones as
complex128; its value, rounded to the kernel's output dtype, is compared with the
kernel by the project's comparison rule: within a modest tolerance in float64, the
dtype's own elsewhere, exactly for integers and bools; NaN must sit where the kernel's is.
"""
from __future__ import annotations

import functools
import math
from pathlib import Path
from typing import Any

import torch
from hypothesis import strategies as st

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

DRAWN = 12  # drawn float64 calls per formula: a formula that is wrong is usually wrong almost everywhere
DRAWN_OTHER = 2  # drawn calls in each other declared dtype: what differs there is the dtype's rules, not the values
FRACTIONS = (0.5, -2.5)  # a number argument of an integer call: eager truncates or refuses where a formula may not
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
                                    enumerate, zip, __import__)}


def _named_arguments(call: Call) -> dict[str, Any]:
    """The call's arguments by schema name, omitted ones at their defaults."""
    _, arguments = arguments_of(call.overload()._schema)
    named = {a.name: a.default for a in arguments if a.has_default}
    positional = [a for a in arguments if not a.kwarg_only]
    named.update({a.name: value for a, value in zip(positional, call.args)})
    named.update(call.kwargs)
    return named


def _widened(tensor: torch.Tensor) -> torch.Tensor:
    if tensor.is_complex():
        return tensor.to(torch.complex128)
    return tensor.to(torch.float64) if tensor.is_floating_point() else tensor


def evaluate(formula: Formula, call: Call, widen: bool = True) -> Any:
    """The formula's value on ``call``'s inputs (floating tensors as float64, complex ones as complex128, unless
    ``widen`` is false: then in their own dtypes)."""
    scope = {"torch": torch, "math": math}
    scope.update(map_tensors(_widened if widen else (lambda t: t), _named_arguments(call.copy())))
    return eval(_compiled(formula.expression), {"__builtins__": BUILTINS, **scope})  # data from the opset, reviewed like code


@functools.lru_cache(maxsize=None)
def _compiled(expression: str):
    """The expression compiled once: a formula is evaluated on every drawn call and row."""
    return compile(expression, "<formula_check>", "eval")


def _as_output(value: Any, like: torch.Tensor) -> torch.Tensor:
    """The formula's value in the kernel output's form: a tensor of its dtype, rounded once."""
    tensor = torch.as_tensor(value)
    if tensor.is_complex() and not like.is_complex():
        tensor = tensor.real if bool((tensor.imag == 0).all()) else tensor  # a complex value for a real output stays wrong
    tensor = tensor.to(like.dtype) if not (tensor.is_complex() and not like.is_complex()) else tensor
    return tensor.expand_as(like) if tensor.dim() == 0 and like.dim() > 0 else tensor


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
        exact = evaluate(formula, call)
        value = _past_range(exact, _as_output(exact, first), first)
    except Exception as err:
        return f"the formula raises {one_line(err, 200)}"
    kernel = first
    verdict = compare.compare(value, kernel, tolerance=FORMULA_TOLERANCE)
    if verdict.ok or _holds_in_own_dtype(formula, call, first):
        return None
    if value.shape == kernel.shape and value.dtype == kernel.dtype and value.numel():
        rtol, atol = (RTOL, ATOL) if kernel.dtype == torch.float64 else compare.tolerance_for(kernel.dtype)
        differs = ~(torch.isclose(value, kernel, rtol=rtol, atol=atol, equal_nan=True))
        if bool(differs.any()):
            index = tuple(int(i) for i in differs.nonzero()[0])
            return (f"at index {list(index)} the formula gives {rows.show(value[index])}, "
                    f"the kernel {rows.show(kernel[index])}")
    return " ".join(verdict.message.split())[:300]


def _past_range(exact: Any, value: torch.Tensor, kernel: torch.Tensor) -> torch.Tensor:
    """``value`` with the kernel's answer where the formula's exact value is finite but past the output dtype's
    range: there the formula says only that the result overflows, and whether the kernel's overflow reads as
    inf or NaN (a complex product's, in its order of multiplication) is not the formula's to state."""
    if not (kernel.is_floating_point() or kernel.is_complex()) or kernel.dtype in (torch.float64, torch.complex128):
        return value
    exact = torch.as_tensor(exact)
    if exact.shape != value.shape or not (exact.is_floating_point() or exact.is_complex()):
        return value
    parts = torch.view_as_real(exact) if exact.is_complex() else exact.unsqueeze(-1)
    largest = torch.finfo(kernel.dtype).max
    past = (parts.isfinite() & (parts.abs() > largest)).any(-1)
    return torch.where(past & ~kernel.isfinite(), kernel, value)


def _holds_in_own_dtype(formula: Formula, call: Call, kernel: torch.Tensor) -> bool:
    """Whether the formula computed in the inputs' own narrower floating dtype agrees: a kernel may compute in
    its dtype and overflow where float64 does not (a float32 distance whose squares pass the largest float32)."""
    if not any(t.dtype in (torch.float32, torch.float16, torch.bfloat16, torch.complex64) for t in call.tensors()):
        return False
    try:
        value = _as_output(evaluate(formula, call, widen=False), kernel)
    except Exception:  # noqa: BLE001 - a formula that only runs widened: the widened verdict stands
        return False
    return compare.compare(value, kernel, tolerance=FORMULA_TOLERANCE).ok


def _inputs(op: str, hints: TestingHints | None, cases: tuple) -> list[Call]:
    """Drawn float64 calls, then the special-case rows' inputs that exist in float64."""
    return _drawn_calls(op, hints) + _row_calls(op, cases)


def _drawn_calls(op: str, hints: TestingHints | None) -> list[Call]:
    """Calls in float64, then in each other dtype the op declares; integer calls again with fractional numbers."""
    schema = torch_ops.resolve(op)._schema
    calls = strategies.draw_examples(strategies.calls(schema, hints, torch.float64), DRAWN)
    others = [dtype for dtype in strategies.dtypes_under_test(op, hints) if dtype != torch.float64]
    # One draw of a call in every other dtype at once: each run of hypothesis costs more than the calls it draws.
    together = strategies.draw_examples(st.tuples(*(strategies.calls(schema, hints, dtype) for dtype in others)),
                                        DRAWN_OTHER) if others else []
    for position, dtype in enumerate(others):
        drawn = [example[position] for example in together]
        calls += drawn
        if not (dtype.is_floating_point or dtype.is_complex):
            calls += [fractional for call in drawn for fractional in _fractional(call, schema)]
    return calls


def _fractional(call: Call, schema) -> list[Call]:
    """The call with every ``number`` argument (a Scalar: float admitted) set to each of FRACTIONS."""
    _, arguments = arguments_of(schema)
    numbers = [a for a in arguments if a.base_type == "number"]
    positional = [a.name for a in arguments if not a.kwarg_only]
    found = []
    for fraction in FRACTIONS if numbers else ():
        args = tuple(fraction if i < len(positional) and positional[i] in {a.name for a in numbers} else value
                     for i, value in enumerate(call.args))
        kwargs = {**call.kwargs, **{a.name: fraction for a in numbers if a.name in call.kwargs or a.kwarg_only}}
        found.append(Call(call.op, args, kwargs))
    return found


def _row_calls(op: str, cases: tuple) -> list[Call]:
    calls = []
    for case in cases:
        if case.raises or case.klass == spec_cases.OUT_OF_CONTRACT or "float64" not in rows.case_dtypes(case, ["float64"]):
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
