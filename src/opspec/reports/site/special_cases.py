"""Special-case tables for op pages: each row's class, claim, inputs, result, latitude, and where it was checked.

"Checked on" lists the torch versions where the version matrix
(``benchmarks/results/version_matrix.json``, step ``special_cases``) found the row to
hold, a GPU leg as ``2.11.0 (cuda)``, and the torch the site was built with when the
build ran the rows itself.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from opspec.reports.site import errata
from opspec.spec.special_cases import SpecialCase, row_key


@dataclass(frozen=True)
class Row:
    klass: str
    says: str
    inputs: str
    result: str
    latitude: str
    checked: str
    backends: str = ""  # each published report's verdict on the row
    anchor: str = ""  # the row's place on the page by its claim, which errata link to
    id: str = ""  # the row's stable id, its citation FILE#id and its anchor on the page


def literal(value: Any) -> str:
    """A YAML value in flow style, as the data file writes it: ``[nan, -0.0]``, ``{values: [1], dtype: int64}``."""
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k}: {literal(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(literal(v) for v in value) + "]"
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    return repr(value) if isinstance(value, float) else str(value)


def result_text(case: SpecialCase) -> str:
    if case.undefined:
        return f"undefined (an error or any result): {case.undefined}"
    if case.raises:
        return f"raises {case.raises}" + (f" matching {case.match!r}" if case.match else "")
    if case.expect_each is not None:
        return "(" + ", ".join("—" if e is None else literal(e) for e in case.expect_each) + ")"
    return literal(case.expect) + (f" within rtol {case.rtol:g}" if case.rtol else "")


def matrix_versions(path: Path) -> dict[str, list[str]]:
    """row key -> the torch versions where the version matrix found the row to hold (nothing when there is no matrix)."""
    try:
        versions = json.loads(path.read_text(encoding="utf-8"))["versions"]
        assert isinstance(versions, dict)
    except (OSError, ValueError, KeyError, TypeError, AssertionError):
        return {}
    found: dict[str, list[str]] = {}
    for version, entry in sorted(versions.items(), key=lambda item: tuple(int(p) if p.isdigit() else 0 for p in item[0].split("."))):
        step = entry.get("special_cases") if isinstance(entry, dict) else None
        for key in (step or {}).get("held", []) if isinstance(step, dict) else []:
            device = entry.get("device", "cpu")  # a GPU leg is named for its device beside the CPU entries
            found.setdefault(key, []).append(str(entry.get("torch", version)).split("+")[0] + ("" if device == "cpu" else f" ({device})"))
    return found


def backend_verdicts(case: SpecialCase, records) -> str:
    """Each published report's verdict on the row, each report named once: the status of its cases that failed on
    the row (in which dtypes, where another of its cases held it), else held (a case ran every row right);
    reports whose cases ran no rows say nothing."""
    failed: dict[str, dict[str, list[str]]] = {}  # report -> status -> dtypes
    for r in records:
        if r.failed_row == case.says:
            failed.setdefault(r.report, {}).setdefault(r.status, []).append(r.dtype)
    held = sorted({r.report for r in records if r.rows_held} - set(failed))
    partly = {r.report for r in records if r.rows_held}

    def named(report: str) -> str:
        statuses = failed[report]
        return f"{report}: " + ", ".join(
            status + (f" in {', '.join(sorted(set(dtypes)))}" if report in partly else "") for status, dtypes in sorted(statuses.items()))

    return "; ".join([*(f"fails on {named(report)}" for report in sorted(failed)),
                      *([f"held on {', '.join(held)}"] if held else [])]) or "—"


def rows_for(cases: tuple[SpecialCase, ...], matrix: dict[str, list[str]], built: dict[str, str], torch: str | None,
             records=()) -> list[Row]:
    """Table rows; ``built`` is each row's status on the torch the site was built with (empty when not run);
    ``records``: the op's published conformance records, for each backend's verdict on the row."""
    table = []
    for case in cases:
        key = row_key(case)
        checked = []
        if matrix.get(key):
            checked.append("torch " + ", ".join(matrix[key]) + " (version matrix)")
        status = built.get(key)
        if torch and status == "holds":
            checked.append(f"torch {torch} (when this page was built)")
        elif torch and status == "false":
            checked.append(f"FALSE on torch {torch}: opspec validate reports it")
        elif torch and status == "outside":
            checked.append(f"not on torch {torch}: the row holds for torch {case.torch}")
        if case.torch:
            checked.append(f"holds for torch {case.torch}: {case.reason}")
        if case.devices:
            checked.append(f"devices {', '.join(case.devices)} only")
        table.append(Row(
            klass=case.klass, says=case.says,
            inputs=", ".join(f"{name}={literal(value)}" for name, value in case.inputs.items()),
            result=result_text(case) + (f" in {', '.join(case.dtypes)}" if case.dtypes else ""),
            latitude=(", ".join(map(literal, case.latitude.allowed)) + f": {case.latitude.reason}") if case.latitude else "—",
            checked="; ".join(checked) or "not checked yet (unchecked prose)",
            backends=backend_verdicts(case, records),
            anchor=errata.row_anchor(case.says),
            id=case.id,
        ))
    return table
