"""Views for the terminal: filtered op lists, one op in full, a model's coverage table."""
from __future__ import annotations

import difflib
from typing import TYPE_CHECKING, Any, Iterable

from opspec.spec import errata as errata_mod
from opspec.spec.errata import AuditRef, Erratum, Evidence, LoweringRef
from opspec.spec.model import CoreOp, DecompositionRule, Opset, canonical_op_name

if TYPE_CHECKING:
    from opspec.checks.coverage import Report as CoverageReport


def filter_ops(opset: Opset, status: str | None = None, category: str | None = None) -> list[CoreOp]:
    return [
        op
        for op in opset.ops
        if (status is None or op.status == status) and (category is None or op.category == category)
    ]


def op_record(op: CoreOp) -> dict[str, Any]:
    """The op as plain JSON-ready data, in the YAML's own key order."""
    return {key: value for key, value in op.raw.items()}


def rule_record(rule: DecompositionRule) -> dict[str, Any]:
    return {key: value for key, value in rule.raw.items()}


def table(rows: list[list[str]], headers: list[str]) -> str:
    """Plain aligned columns; the last column is never padded so long schemas do not wrap rows."""
    widths = [max(len(str(row[i])) for row in [headers, *rows]) for i in range(len(headers) - 1)]
    lines = []
    for row in [headers, ["-" * len(h) for h in headers], *rows]:
        cells = [str(cell).ljust(width) for cell, width in zip(row, widths)] + [str(row[-1])]
        lines.append("  ".join(cells).rstrip())
    return "\n".join(lines)


def ops_table(ops: list[CoreOp]) -> str:
    rows = [[op.name, op.category, op.status, op.since, _signature(op)] for op in ops]
    return table(rows, ["op", "category", "status", "since", "signature"])


def _signature(op: CoreOp) -> str:
    """Schema without the repeated name: ``(Tensor self, ...) -> Tensor``."""
    return op.schema[op.schema.index("(") :]


def lookup(opset: Opset, name: str) -> CoreOp | DecompositionRule:
    """An op or rule by name; accepts ``add.Tensor``, ``aten::add.Tensor`` and ``aten.add.Tensor``."""
    wanted = canonical_op_name(name)
    ops, rules = opset.ops_by_name, opset.rules_by_op
    if wanted in ops:
        return ops[wanted]
    if wanted in rules:
        return rules[wanted]
    if f"{wanted}.default" in ops:
        return ops[f"{wanted}.default"]
    known = list(ops) + list(rules)
    close = difflib.get_close_matches(wanted, known, n=3, cutoff=0.6)
    hint = f"; did you mean {', '.join(close)}?" if close else ""
    raise KeyError(f"{name} is neither a core op nor a decomposed op of opset {opset.version}{hint}")


def describe(opset: Opset, item: CoreOp | DecompositionRule, errata: Iterable[Erratum] = ()) -> str:
    """A human-readable page for one op or rule; prose an erratum corrects is shown corrected, each erratum below it."""
    lines: list[str] = []
    corrections = errata_mod.for_entry(errata, opset.version, "op" if isinstance(item, CoreOp) else "rule",
                                       item.name if isinstance(item, CoreOp) else item.op)

    def prose(field: str, label: str, text: str, width: int = 11) -> None:
        applied = [e for e in corrections.get(field, ()) if e.was in text]
        lines.append(f"  {label:{width}} {errata_mod.corrected(text, applied)}")
        lines.extend(erratum_lines(applied, opset.version, " " * (width + 3)))

    if isinstance(item, CoreOp):
        lines += [
            f"{item.name}  [core, {item.status}, since {item.since}]",
            f"  schema:     {item.schema}",
            f"  category:   {item.category}",
        ]
        if item.deprecated:
            lines.append(f"  deprecated: {item.deprecated}")
        if item.removed:
            lines.append(f"  removed:    {item.removed}")
        prose("rationale", "rationale:", item.rationale)
        for key, value in item.equivalents.items():
            if key == "notes":
                prose("equivalents.notes", "notes:", value)
            else:
                lines.append(f"  {key + ':':11} {value}")
        for exception in item.exceptions:
            prose("exceptions.reason", f"exception ({exception.kind}):", exception.reason)
        rule = opset.rules_by_op.get(item.name)
        if rule:
            lines.append(f"  lowering ({rule.kind}): {rule.formula} -> {', '.join(rule.targets)}")
    else:
        lines.append(f"{item.op}  [decomposed ({item.kind}), origin {item.origin}]")
        prose("formula", "formula:", item.formula, width=15)
        lines += [
            f"  targets:        {', '.join(item.targets)}",
            f"  implementation: {item.implementation}",
        ]
        prose("rationale", "rationale:", item.rationale, width=15)
    hints = item.testing
    if hints.dtypes:
        lines.append(f"  dtypes:     {', '.join(hints.dtypes)}")
    for arg, interval in hints.domain.items():
        lines.append(f"  domain:     {arg} in {interval}")
    if hints.tolerance:
        prose("testing.tolerance.reason", "tolerance:", f"{dict(hints.tolerance.per_dtype)} ({hints.tolerance.reason})")
    if hints.notes:
        prose("testing.notes", "test notes:", hints.notes)
    return "\n".join(lines)


def erratum_lines(errata: Iterable[Erratum], version: str, indent: str) -> list[str]:
    """Under corrected prose: each erratum, the text as released, and the evidence that shows the truth."""
    lines = []
    for erratum in errata:
        lines.append(f"{indent}ERRATUM ({erratum.published}, {erratum.where}): as released in {version}: \"{erratum.was}\"")
        lines += [f"{indent}  shown by {cited.text}" for cited in erratum.shown_by]
    return lines


def _evidence_record(cited: Evidence) -> dict[str, str]:
    if isinstance(cited, LoweringRef):
        return {"backend": cited.backend, "lowering": cited.lowering}
    if isinstance(cited, AuditRef):
        return {"audit": cited.quote}
    return {"row": f"{cited.file}#{cited.id}"} if cited.id else {"file": cited.file, "says": cited.says}


def erratum_records(errata: Iterable[Erratum], version: str, kind: str, name: str) -> list[dict[str, Any]]:
    """The errata of one entry as JSON-ready data, for ``opspec show --format json``."""
    return [{"field": e.field, "was": e.was, "now": e.now, "published": e.published,
             "shown_by": [_evidence_record(c) for c in e.shown_by]}
            for found in errata_mod.for_entry(errata, version, kind, name).values() for e in found]


def coverage_table(report: "CoverageReport") -> str:
    """The terminal form of an ``opspec coverage`` report: one row per op, a column per backend, flagged ops marked ``!``."""
    backends = list(report.backends)
    headers = ["op", "count", "opset", *backends, "note"]
    rows = []
    for use in report.ops:
        mark = "!" if use.flagged else " "
        notes = [use.note] if use.note else []
        for name in backends:
            status, note = use.backends[name]
            if note:
                notes.append(f"{name}: {note}" if len(backends) > 1 else note)
        rows.append([f"{mark} {use.op}", str(use.count), use.opset, *(use.backends[n][0] for n in backends), "; ".join(notes)])
    total = sum(use.count for use in report.ops)
    outside = sum(1 for use in report.ops if use.opset == "outside")
    bookkeeping = sum(1 for use in report.ops if use.opset == "bookkeeping")
    summary = (f"{len(report.ops)} distinct ops ({total} calls) in opset {report.opset_version}: "
               f"{outside} outside the opset, {bookkeeping} bookkeeping")
    for name in backends:
        summary += f", {len(report.not_lowered(name))} not lowered by {name}"
        if report.library_calls(name):
            summary += f" ({len(report.library_calls(name))} lowered to a library call)"
    # the list in the words of PyTorch/XLA's debugging tool, so its lowering guide's steps start from it
    listed = [f"{name}: Op(s) not lowered: {', '.join(report.not_lowered(name))}"
              for name in backends if report.not_lowered(name)]
    return "\n".join([table(rows, headers), "", summary, *listed])
