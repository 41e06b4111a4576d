"""Draft proposals from a drift report: each way torch moved becomes one reviewable draft.

- an overload torch newly tags ``core`` -> an add-op draft carrying torch's schema (and dropping the rule
  that decomposes it, when there is one);
- a core op whose schema torch now prints differently -> a schema-change draft with the new schema;
- a core op torch no longer tags -> a deprecate-op draft;
- a rule whose torch decomposition is gone (or left torch's core table) -> a decompose-op
  draft that replaces the rule, its implementation left for the author to write.

The drafts keep ``TODO`` where only a person can answer (rationale, category,
implementation), so `opspec proposal check` refuses them until that is written.
Ops a draft already covers (an open proposal touching the op) are skipped.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from opspec.proposals import check as checking
from opspec.proposals.model import OPEN_STATUSES
from opspec.proposals.scaffold import create


@dataclass(frozen=True)
class Drafted:
    path: Path
    type: str
    op: str


def _measured(report: Any, fact: str) -> str:
    return (f"Measured by `opspec drift` (opset {report.opset_version} against torch {report.torch_version}): "
            f"{fact}")


def draft_all(report: Any, directory: Path, rules: dict[str, dict], author: str | None = None,
              date: str | None = None) -> list[Drafted]:
    """Write one draft per drift item not already covered by an open proposal; return what was written.

    ``report`` is a :class:`opspec.checks.drift.DriftReport`; ``rules`` maps an op to its rule
    as written in the opset (the decompose-op draft starts from it).
    """
    covered = set()
    for parsed in checking.load_all(directory):
        p = parsed.proposal
        if p is not None and p.status in OPEN_STATUSES:
            covered.update(p.touched_ops())
    written: list[Drafted] = []

    def draft(type_: str, op: str, title: str, **known) -> None:
        if op in covered:
            return
        covered.add(op)
        path = create(directory, type=type_, title=title, op=op, author=author, date=date, **known)
        written.append(Drafted(path, type_, op))

    for op, schema in sorted(report.core_added.items()):
        rule = rules.get(op)
        dropped = {}
        if rule and rule.get("kind") != "optional":  # a default rule decomposes the op away: the draft drops it
            dropped = {"removed_rule": rule, "testing": rule.get("testing") or {}}
        draft("add-op", op, f"Add {_short(op)} to the core set", schema=schema, **dropped,
              motivation=_measured(report, f"torch tags `{op}` core; the opset does not hold it. Its schema: `{schema}`."))
    for change in report.schema_changed:
        op = change["op"]
        draft("schema-change", op, f"Follow torch's new schema of {_short(op)}", schema=change["torch"],
              motivation=_measured(report, f"the schema of `{op}` changed from `{change['opset']}` to `{change['torch']}`."))
    for op in report.core_removed:
        draft("deprecate-op", op, f"Deprecate {_short(op)}",
              motivation=_measured(report, f"torch no longer tags `{op}` core (or no longer has it)."))
    for change in report.table_changes:
        op = change["op"]
        rule = dict(rules.get(op) or {"op": op})
        for stamped in ("since", "proposals"):
            rule.pop(stamped, None)
        rule["implementation"] = f"opspec.decompositions.TODO:{_short(op).split('.')[0]}"  # schema-valid, still refused
        rule["origin"] = "opspec"
        draft("decompose-op", op, f"Keep decomposing {_short(op)} with opspec's own rule", rule=rule,
              motivation=_measured(report, f"`{op}`: {change['change']}."))
    return written


def _short(op: str) -> str:
    return op.removeprefix("aten::")
