"""What a proposal is: its types, statuses, required sections and the change actions each type may carry.

Pure data, no I/O. The JSON Schema (opset/schema/proposal.schema.json) says the same
things for the front matter's shape; this module holds what the checks need in Python.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

TYPES = ("add-op", "deprecate-op", "remove-op", "decompose-op", "schema-change", "testing-change", "decide-family", "process")
STATUSES = ("draft", "review", "accepted", "rejected", "withdrawn", "deferred", "implemented", "superseded")
OPEN_STATUSES = ("draft", "review", "accepted", "deferred")
SECTIONS = ("Summary", "Motivation", "Specification", "Compatibility", "Alternatives", "Unresolved questions")

# Front-matter keys in the order the template writes them; edits insert missing keys in this order.
FIELDS = (
    "id", "title", "authors", "type", "status", "created", "updated", "discussion", "resolution",
    "target_version", "released_in", "requires", "replaces", "superseded_by", "decision", "evidence", "changes",
)
# Statuses that say a decision was taken, and so need its record (`decision`).
DECIDED_STATUSES = ("accepted", "rejected", "implemented", "superseded")

# Which change actions a proposal of each type may carry. A process proposal edits no data.
ACTIONS_BY_TYPE: Mapping[str, frozenset[str]] = {
    "add-op": frozenset({"add-op", "remove-rule"}),  # a new core op stops being decomposed
    "deprecate-op": frozenset({"deprecate-op", "add-rule"}),  # a deprecated op may gain a lowering
    "remove-op": frozenset({"remove-op", "remove-rule"}),
    "decompose-op": frozenset({"add-rule", "change-rule"}),
    "schema-change": frozenset({"change-schema"}),
    "testing-change": frozenset({"change-testing"}),  # a rule's hints change with the rule (change-rule)
    # one rationale for a family of ops, each answered on its own: made core, decomposed, or out of scope
    "decide-family": frozenset({"add-op", "add-rule", "remove-rule", "declare-out-of-scope"}),
    "process": frozenset(),
}

FILENAME_RE = re.compile(r"^(?P<num>[0-9]{4})-(?P<slug>[a-z0-9]+(?:-[a-z0-9]+)*)\.md$")


def slugify(title: str, limit: int = 48) -> str:
    words = re.findall(r"[a-z0-9]+", title.lower())
    slug = ""
    for word in words:
        candidate = f"{slug}-{word}" if slug else word
        if len(candidate) > limit:
            break
        slug = candidate
    return slug or "proposal"


def file_number(path: Path) -> int | None:
    match = FILENAME_RE.match(path.name)
    return int(match["num"]) if match else None


@dataclass(frozen=True)
class Proposal:
    """A parsed proposal whose front matter passed the schema."""

    path: Path
    id: int
    title: str
    authors: tuple[str, ...]
    type: str
    status: str
    created: str
    updated: str
    changes: tuple[Mapping[str, Any], ...]
    body: str
    discussion: str | None = None
    resolution: str | None = None
    target_version: str | None = None
    released_in: str | None = None
    requires: tuple[int, ...] = ()
    replaces: tuple[int, ...] = ()
    superseded_by: int | None = None
    decision: Mapping[str, Any] | None = None
    evidence: tuple[Mapping[str, Any], ...] = ()
    meta: Mapping[str, Any] = field(default_factory=dict, compare=False, repr=False)

    @classmethod
    def from_meta(cls, path: Path, meta: Mapping[str, Any], body: str) -> "Proposal":
        return cls(
            path=path,
            id=meta["id"],
            title=meta["title"],
            authors=tuple(meta["authors"]),
            type=meta["type"],
            status=meta["status"],
            created=meta["created"],
            updated=meta["updated"],
            changes=tuple(meta.get("changes") or ()),
            body=body,
            discussion=meta.get("discussion"),
            resolution=meta.get("resolution"),
            target_version=meta.get("target_version"),
            released_in=meta.get("released_in"),
            requires=tuple(meta.get("requires") or ()),
            replaces=tuple(meta.get("replaces") or ()),
            superseded_by=meta.get("superseded_by"),
            decision=meta.get("decision"),
            evidence=tuple(meta.get("evidence") or ()),
            meta=meta,
        )

    @property
    def label(self) -> str:
        return f"{self.id:04d}"

    def touched_ops(self) -> tuple[str, ...]:
        names = []
        for change in self.changes:
            name = change.get("op") or (change.get("rule") or {}).get("op")
            if name and name not in names:
                names.append(name)
        return tuple(names)
