"""The compatibility policy (``opset/compatibility.yaml``) as data: rules with ids, and the CalVer arithmetic they use.

No torch: judging a schema change needs torch's FunctionSchema and lives in
:mod:`opspec.bridge.schemas`; applying the rules to two versions lives in
:mod:`opspec.checks.compatibility`.
"""
from __future__ import annotations

import calendar
import datetime as _dt
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

from opspec.spec import load, paths
from opspec.spec.errors import Finding
from opspec.spec.yamlio import Mark, mark_of

FILE = "compatibility.yaml"
SCHEMA = "compatibility.schema.json"


@dataclass(frozen=True)
class Rule:
    id: str
    text: str
    mark: Mark  # where the rule is written, so a refusal can point at it

    def cite(self) -> str:
        return f"{self.id} ({self.mark.path}:{self.mark.line})"


@dataclass(frozen=True)
class SchemaKind:
    kind: str
    compatible: bool
    text: str


@dataclass(frozen=True)
class Policy:
    support: Rule
    support_months: int
    deprecation: Rule
    deprecation_months: int
    removal: Rule
    upgraders: Rule
    schema_changes: Rule
    kinds: Mapping[str, SchemaKind] = field(default_factory=dict)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], path: str) -> "Policy":
        def rule(key: str) -> Rule:
            node = data[key]
            return Rule(node["id"], node["text"], mark_of(data, key, Mark(path, 1, 1)))

        return cls(
            support=rule("support"), support_months=data["support"]["months"],
            deprecation=rule("deprecation"), deprecation_months=data["deprecation"]["minimum_months"],
            removal=rule("removal"), upgraders=rule("upgraders"), schema_changes=rule("schema_changes"),
            kinds={k["kind"]: SchemaKind(k["kind"], k["compatible"], k["text"]) for k in data["schema_changes"]["kinds"]},
        )

    def is_compatible(self, kind: str) -> bool:
        """A kind the policy does not list is not compatible: only what it allows is."""
        known = self.kinds.get(kind)
        return bool(known and known.compatible)

    def earliest_removal(self, deprecated_in: str) -> str:
        return add_months(deprecated_in, self.deprecation_months)

    def support_ends(self, released: str) -> str:
        """The day support ends for a version released on ``released`` (YYYY-MM-DD): that date ``months`` later."""
        day = _dt.date.fromisoformat(released)
        total = day.year * 12 + day.month - 1 + self.support_months
        year, month = total // 12, total % 12 + 1
        return day.replace(year=year, month=month, day=min(day.day, calendar.monthrange(year, month)[1])).isoformat()

def months_between(older: str, newer: str) -> int:
    """CalVer months from ``older`` to ``newer`` (YYYY.MM each)."""
    (y1, m1), (y2, m2) = (map(int, v.split(".")) for v in (older, newer))
    return (y2 - y1) * 12 + (m2 - m1)


def add_months(version: str, months: int) -> str:
    year, month = map(int, version.split("."))
    total = year * 12 + month - 1 + months
    return f"{total // 12:04d}.{total % 12 + 1:02d}"


def policy_path(root: Path) -> Path:
    return root / FILE


def read_policy(root: Path) -> tuple[Policy | None, list[Finding]]:
    """The policy of the opset at ``root``; (None, []) when the file is absent, (None, findings) when it is broken."""
    path = policy_path(root)
    if not path.is_file():
        return None, []
    loaded = load.read(path, SCHEMA)
    if loaded.findings:
        return None, loaded.findings
    return Policy.from_dict(loaded.data, paths.display(path)), []

