"""What ``opspec show`` adds after an op's entry: what it computes, its formula, every special-case row and its
accuracy contract, as text for the terminal or records for ``--format json``."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from opspec.spec import accuracy as spec_accuracy
from opspec.spec.accuracy import Contracts
from opspec.spec.model import OpDescription
from opspec.spec.special_cases import SpecialCase


@dataclass(frozen=True)
class OpSpec:
    description: OpDescription | None
    rows: tuple[SpecialCase, ...]
    contracts: Contracts

    def records(self, op: str) -> dict[str, Any]:
        return {
            "description": _description_record(self.description) if self.description else None,
            "special_cases": [_row_record(row) for row in self.rows],
            "accuracy": [_contract_record(c) for c in self.contracts.ulp if c.op == op],
            "error_models": [{"dtypes": list(m.dtypes), "bound": m.bound, "symbols": dict(m.symbols),
                              "reason": m.reason} for m in self.contracts.error_models if m.op == op],
        }

    def lines(self, op: str) -> list[str]:
        lines: list[str] = []
        if self.description:
            lines.append(f"  computes:   {self.description.description.strip()}")
            if self.description.formula:
                lines.append(f"  formula:    {self.description.formula.strip()}")
            if self.description.formula_check:
                lines.append(f"  checked as: {self.description.formula_check.strip()}  (opspec validate, against torch)")
            elif self.description.formula_prose:
                lines.append(f"  unchecked:  {self.description.formula_prose.strip()}")
        if self.rows:
            lines.append(f"  special cases ({len(self.rows)}):")
            for row in self.rows:
                lines.append(f"    {_where(row)} [{row.klass}] {row.says}")
                lines.append(f"      {_inputs_text(row)} -> {_outcome_text(row)}")
        contracts = [c for c in self.contracts.ulp if c.op == op]
        if contracts:
            lines.append("  accuracy (max ULP against the exact result rounded once; eager CPU measured):")
            for c in contracts:
                measured = f"measured {c.measured.max_ulp:g}" if c.measured else "not measured"
                flush = ", subnormal results may flush" if c.subnormals.results == "may-flush" else ""
                domain = "; ".join(f"{arg} in {' or '.join(map(str, ivs))}" for arg, ivs in c.domain.items())
                lines.append(f"    {c.dtype:9} {c.max_ulp:g} ULP over {domain}{flush} ({measured})")
        for m in (m for m in self.contracts.error_models if m.op == op):
            lines.append(f"  error model ({', '.join(m.dtypes)}): {m.bound}")
        return lines


def read(opset_root: Path, op: str, descriptions: dict[str, OpDescription],
         rows: dict[str, tuple[SpecialCase, ...]]) -> OpSpec:
    contracts, findings = spec_accuracy.read(spec_accuracy.path_of(opset_root))
    return OpSpec(descriptions.get(op), tuple(rows.get(op, ())), Contracts() if findings else contracts)


def _where(row: SpecialCase) -> str:
    return f"{row.file}#{row.id}"


def _inputs_text(row: SpecialCase) -> str:
    dtypes = f" [{', '.join(row.dtypes)}]" if row.dtypes else ""
    return ", ".join(f"{name}={value!r}" for name, value in row.inputs.items()) + dtypes


def _outcome_text(row: SpecialCase) -> str:
    if row.undefined:
        return f"undefined (an error or any result): {row.undefined}"
    if row.raises:
        return f"raises {row.raises}" + (f" matching {row.match!r}" if row.match else "")
    if row.expect_each is not None:
        return f"each of {list(row.expect_each)!r}"
    text = repr(row.expect)
    if row.latitude:
        text += f" (or {list(row.latitude.allowed)!r}: {row.latitude.reason})"
    return text


def _row_record(row: SpecialCase) -> dict[str, Any]:
    record = {"id": row.id, "where": row.cite, "class": row.klass, "says": row.says,
              "inputs": row.inputs, "dtypes": list(row.dtypes)}
    if row.undefined:
        record["undefined"] = row.undefined
    elif row.raises:
        record.update(raises=row.raises, match=row.match)
    elif row.expect_each is not None:
        record["expect_each"] = list(row.expect_each)
    else:
        record["expect"] = row.expect
    if row.latitude:
        record["latitude"] = {"allowed": list(row.latitude.allowed), "reason": row.latitude.reason}
    return record


def _description_record(d: OpDescription) -> dict[str, str]:
    return {key: value for key, value in (("description", d.description), ("formula", d.formula),
                                          ("formula_check", d.formula_check), ("formula_prose", d.formula_prose)) if value}


def _contract_record(c) -> dict[str, Any]:
    return {"dtype": c.dtype, "max_ulp": c.max_ulp,
            "domain": {arg: [str(iv) for iv in ivs] for arg, ivs in c.domain.items()},
            "subnormals": {"inputs": c.subnormals.inputs, "results": c.subnormals.results},
            "measured": None if c.measured is None else {"torch": c.measured.torch, "device": c.measured.device,
                                                         "max_ulp": c.measured.max_ulp, "inputs": c.measured.inputs}}
