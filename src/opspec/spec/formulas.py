"""A description's executable formula (``formula_check`` in ``opset/descriptions.yaml``), read with its place.

Reading and the syntax check need no torch; evaluating a formula against the kernel is
:mod:`opspec.checks.formulas`.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from opspec.spec import load
from opspec.spec.errors import Finding
from opspec.spec.yamlio import Mark, mark_of


@dataclass(frozen=True)
class Formula:
    op: str
    expression: str
    mark: Mark


def syntax_findings(root: Path) -> tuple[list[Formula], list[Finding]]:
    """The descriptions' executable formulas, and each that is no Python expression (no torch needed)."""
    path = Path(root) / load.DESCRIPTIONS
    if not path.is_file():
        return [], []
    loaded = load.read(path, "descriptions.schema.json", prose=True)
    if loaded.findings:
        return [], loaded.findings
    formulas, findings = [], []
    for op, entry in loaded.data["ops"].items():
        if "formula_check" not in entry:
            continue
        formula = Formula(op, entry["formula_check"], mark_of(entry, "formula_check", default=loaded.data.mark))
        try:
            compile(formula.expression, str(path), "eval")
        except SyntaxError as err:
            findings.append(Finding(formula.mark, f"{op}: formula_check is not a Python expression: {err.msg}"))
            continue
        formulas.append(formula)
    return formulas, findings
