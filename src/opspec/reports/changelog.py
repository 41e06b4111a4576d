"""What changed between two opset versions, each change linked to the proposals behind it.

One computation, two renderings: Markdown (the site's changelog, `opspec diff`)
and JSON (for tools).
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, fields
from typing import Callable, Iterable

from opspec.spec import errata as errata_mod
from opspec.spec.model import CoreOp, DecompositionRule, Opset, TestingHints

SECTIONS = (
    ("added", "Added ops"),
    ("deprecated", "Deprecated ops"),
    ("removed", "Removed ops"),
    ("schema-changed", "Schema changes"),
    ("testing-changed", "Testing hints changed"),
    ("rule-added", "Decomposition rules added"),
    ("rule-changed", "Decomposition rules changed"),
    ("rule-removed", "Decomposition rules removed"),
    ("out-of-scope", "Declared out of scope"),
    ("corrected", "Prose corrected by errata"),
)
RULE_FIELDS = ("kind", "targets", "formula", "implementation", "random")
HINT_FIELDS = tuple(f.name for f in fields(TestingHints))  # what a testing change may have changed


@dataclass(frozen=True)
class Change:
    kind: str
    op: str
    detail: str
    proposals: tuple[int, ...] = ()


@dataclass(frozen=True)
class Changelog:
    old: str | None
    new: str
    changes: tuple[Change, ...]
    decisions: tuple[tuple[int, str], ...] = ()  # (id, title) of process proposals released in ``new``: no data change

    def of_kind(self, kind: str) -> list[Change]:
        return [c for c in self.changes if c.kind == kind]


def _new_ids(old: Iterable[int], new: Iterable[int]) -> tuple[int, ...]:
    fresh = tuple(sorted(set(new) - set(old)))
    return fresh or tuple(sorted(set(new)))


def diff(old: Opset | None, new: Opset, attributions: dict[tuple[str, str], tuple[int, ...]] | None = None,
         decisions: Iterable[tuple[int, str]] = (), errata: Iterable[errata_mod.Erratum] = ()) -> Changelog:
    """Changes from ``old`` to ``new``. ``attributions`` maps (kind, op) to proposal ids for
    changes the data cannot carry (a removed rule leaves no entry to hold its proposal);
    ``decisions`` are the process proposals released in ``new`` (see :func:`decisions_from`);
    an entry whose only change is ``old``'s ``errata`` applied is listed as corrected, not as a change."""
    attributions = attributions or {}
    errata = tuple(errata)

    def corrected_only(kind: str, name: str, before, after) -> str | None:
        """Where the entry changed by the errata the release applied alone: the errata of the old version that do not
        name the new one (an erratum naming both was published after the release), for the changelog line."""
        applied = errata_mod.for_entry(errata, old.version, kind, name) if old else {}
        later = errata_mod.for_entry(errata, new.version, kind, name)
        taken = {field: [e for e in found if e not in later.get(field, ())] for field, found in applied.items()}
        taken = {field: found for field, found in taken.items() if found}
        if taken and errata_mod.with_corrections(before.raw, taken) == dict(after.raw):
            return ", ".join(f"{field} ({', '.join(e.where for e in found)})" for field, found in sorted(taken.items()))
        return None
    old_ops: dict[str, CoreOp] = old.ops_by_name if old else {}
    old_rules: dict[str, DecompositionRule] = old.rules_by_op if old else {}
    changes: list[Change] = []

    def add(kind: str, op: str, detail: str, ids: tuple[int, ...]) -> None:
        ids = tuple(sorted(set(ids) | set(attributions.get((kind, op), ()))))
        changes.append(Change(kind, op, detail, ids))

    for name, op in sorted(new.ops_by_name.items()):
        before = old_ops.get(name)
        was_core = before is not None and before.status != "removed"
        ids = _new_ids(before.proposals if before else (), op.proposals)
        if op.status != "removed" and not was_core:
            add("added", name, op.category, ids)
            if op.status == "deprecated":
                add("deprecated", name, f"deprecated in {op.deprecated}", ids)
            continue
        if before is None:
            continue
        fixed = corrected_only("op", name, before, op)
        if fixed:
            add("corrected", name, fixed, ())
            continue
        if op.status == "deprecated" and before.status == "active":
            add("deprecated", name, f"deprecated in {op.deprecated}", ids)
        if op.status == "removed" and before.status != "removed":
            add("removed", name, f"removed in {op.removed}", ids)
        if op.schema != before.schema and op.status != "removed":
            add("schema-changed", name, f"{before.schema} → {op.schema}", ids)
        if op.testing != before.testing and op.status != "removed":
            changed = [f for f in HINT_FIELDS if getattr(op.testing, f) != getattr(before.testing, f)]
            add("testing-changed", name, f"new {', '.join(changed)}", ids)
    for name, before in sorted(old_ops.items()):
        if name not in new.ops_by_name and before.status != "removed":
            add("removed", name, "entry dropped", ())
    for name, rule in sorted(new.rules_by_op.items()):
        before = old_rules.get(name)
        if before is None:
            add("rule-added", name, _rule_detail(rule), _new_ids((), rule.proposals))
        elif fixed := corrected_only("rule", name, before, rule):
            add("corrected", name, f"rule: {fixed}", ())
        elif any(getattr(rule, f) != getattr(before, f) for f in RULE_FIELDS):
            add("rule-changed", name, _rule_detail(rule), _new_ids(before.proposals, rule.proposals))
    for name, before in sorted(old_rules.items()):
        if name not in new.rules_by_op:
            add("rule-removed", name, _rule_detail(before), ())
    old_out = old.out_of_scope_by_name if old else {}
    for name, entry in sorted(new.out_of_scope_by_name.items()):
        if name not in old_out:
            add("out-of-scope", name, f"{entry.family}: {entry.reason}", entry.proposals)
    return Changelog(old.version if old else None, new.version, tuple(changes), tuple(decisions))


def _rule_detail(rule: DecompositionRule) -> str:
    return f"{rule.kind}: {rule.formula} → {', '.join(rule.targets)}"


def to_json(log: Changelog) -> dict:
    return {"from": log.old, "to": log.new, "changes": [asdict(c) | {"proposals": list(c.proposals)} for c in log.changes],
            "decisions": [{"proposal": number, "title": title} for number, title in log.decisions]}


def to_markdown(
    log: Changelog,
    link: Callable[[int], str | None] = lambda n: None,
    op_link: Callable[[str], str | None] = lambda name: None,
    heading: str = "##",
    escape: Callable[[str], str] = lambda text: text,
) -> str:
    """Markdown for one version. ``link``/``op_link`` give URLs (None: plain text); ``escape`` guards free text."""
    title = f"{heading} {log.new}" + (f" (changes since {log.old})" if log.old else " (first version)")
    lines = [title, ""]
    if not log.changes and not log.decisions:
        lines += ["No changes." if log.old else "No ops recorded.", ""]
    for kind, label in SECTIONS:
        items = log.of_kind(kind)
        if not items:
            continue
        lines += [f"{heading}# {label}", ""]
        for change in items:
            target = op_link(change.op)
            name = f"[`{change.op}`]({target})" if target else f"`{change.op}`"
            refs = []
            for number in change.proposals:
                url = link(number)
                refs.append(f"[proposal {number:04d}]({url})" if url else f"proposal {number:04d}")
            suffix = f" ({', '.join(refs)})" if refs else ""
            lines.append(f"- {name}: {escape(change.detail)}{suffix}")
        lines.append("")
    if log.decisions:
        lines += [f"{heading}# Process decisions (no data change)", ""]
        for number, title in log.decisions:
            url = link(number)
            ref = f"[proposal {number:04d}]({url})" if url else f"proposal {number:04d}"
            lines.append(f"- {ref}: {escape(title)}")
        lines.append("")
    return "\n".join(lines)


def attributions_from(proposals: Iterable, version: str) -> dict[tuple[str, str], tuple[int, ...]]:
    """(change kind, op) -> ids of the proposals released in ``version`` that made that change."""
    kinds = {"add-op": "added", "deprecate-op": "deprecated", "remove-op": "removed", "change-schema": "schema-changed",
             "change-testing": "testing-changed",
             "add-rule": "rule-added", "change-rule": "rule-changed", "remove-rule": "rule-removed",
             "declare-out-of-scope": "out-of-scope"}
    found: dict[tuple[str, str], set[int]] = {}
    for p in proposals:
        if p.released_in != version:
            continue
        for change in p.changes:
            name = change.get("op") or change.get("rule", {}).get("op")
            found.setdefault((kinds[change["action"]], name), set()).add(p.id)
    return {key: tuple(sorted(ids)) for key, ids in found.items()}


def decisions_from(proposals: Iterable, version: str) -> list[tuple[int, str]]:
    """(id, title) of the proposals released in ``version`` that change no data (process proposals)."""
    return sorted((p.id, p.title) for p in proposals if p.released_in == version and not p.changes)
