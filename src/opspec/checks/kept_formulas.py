"""The formula checks of ``opspec validate``, each formula's verdicts kept under a key of what decides them.

A formula is checked on drawn inputs and on its op's special-case rows' inputs
(:mod:`opspec.checks.formulas`). The two verdicts are kept apart: the first under the
formula's text and the op's testing hints, the second under the formula's text and what
the rows' calls are made of (inputs, dtypes, whether they raise). An edit to a row's
inputs re-checks the rows' calls only; one to its expected result, or to prose, re-checks
nothing. torch and hypothesis are imported only when some verdict must be computed.
"""
from __future__ import annotations

from typing import Mapping

from opspec.checks.beside import Claims
from opspec.checks.formula_verdicts import first_message
from opspec.checks.part_cache import PartStore, part_key
from opspec.spec.errors import Finding
from opspec.spec.formulas import Formula
from opspec.spec.gc_paused import heap_frozen
from opspec.spec.model import Opset


Written = tuple[list[Formula], list[Finding]]  # the descriptions' formulas and their syntax problems (syntax_findings)


def findings(written: Written, opset: Opset, cases: Mapping[str, tuple], parts: PartStore,
             done: Mapping[int, str | None] | None = None) -> list[Finding]:
    """Every formula_check against the kernel (``written``: as :func:`opspec.spec.formulas.syntax_findings` read
    them, without torch); ``cases``: the root's special-case rows as read; ``done``: the messages some process
    already computed, by the formula's position (:func:`claimed`)."""
    formulas, problems = written
    if problems:
        return problems
    hints, done = _hints(opset), done or {}
    found = []
    for position, formula in enumerate(formulas):
        message = done[position] if position in done else _message(formula, hints, cases, parts)
        if message:
            found.append(Finding(formula.mark, message))
    return found


def claimed(written: Written, opset: Opset, cases: Mapping[str, tuple], parts: PartStore,
            claims: Claims) -> dict[int, str | None]:
    """The messages of the formulas this process claims, by position, until none is left: the parts for
    :func:`findings`' ``done``."""
    formulas, problems = written
    if problems:
        return {}
    hints = _hints(opset)
    messages = {}
    while (position := claims.take()) < len(formulas):
        messages[position] = _message(formulas[position], hints, cases, parts)
    return messages


def pending(written: Written, opset: Opset, parts: PartStore) -> bool:
    """Whether some formula's verdict on drawn inputs is not kept in ``parts`` (then :func:`findings` runs kernels)."""
    formulas, problems = written
    hints = _hints(opset)
    return not problems and any(not parts.holds(_drawn_key(formula, hints.get(formula.op))) for formula in formulas)


def _hints(opset: Opset) -> dict:
    return {**{r.op: r.testing for r in opset.rules}, **{o.name: o.testing for o in opset.ops}}


def _drawn_key(formula: Formula, hints) -> str:
    return part_key("formula on drawn inputs of every declared dtype", formula.op, formula.expression, repr(hints))


def _message(formula: Formula, every_hints: dict, cases: Mapping[str, tuple], parts: PartStore) -> str | None:
    """The formula's finding on drawn inputs and on its op's rows (None: it holds), each verdict kept in ``parts``."""
    hints, rows = every_hints.get(formula.op), cases.get(formula.op, ())
    drawn = parts.recall(_drawn_key(formula, hints), lambda: _checked("drawn_verdict", formula, hints))
    if drawn and drawn[0] == "error":
        return drawn[1]  # the rows' inputs cannot change what is reported
    written = [repr((bool(row.raises), row.klass, row.dtypes, row.inputs)) for row in rows]  # what makes a row's call
    on_rows = parts.recall(part_key("formula on special-case inputs", formula.op, formula.expression, *written),
                           lambda: _checked("rows_verdict", formula, rows))
    return first_message(drawn, on_rows)


def _checked(verdict: str, formula: Formula, data):
    """One verdict computed: torch and hypothesis imported here, kernels on one thread with their warnings held."""
    from opspec.bridge import torch_ops
    from opspec.checks import formulas
    from opspec.testing import native_warnings

    # Drawn inputs reach the kernels' edges (var of one element: their C++ warnings are noise), on small tensors.
    with native_warnings.held_back(), torch_ops.single_threaded(), heap_frozen():
        return getattr(formulas, verdict)(formula, data)
