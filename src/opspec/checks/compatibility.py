"""The compatibility policy applied to one version and the version before it: the rules a change breaks.

``opspec release`` runs it on the version it is about to seal, ``opspec validate``
on every pair of consecutive versions; both print the rule's id and where the
policy states it. Entries are the raw YAML mappings (``name``, ``status``,
``schema``, ``deprecated``), as the release's draft and the loaded files hold them.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Mapping

from opspec.spec.compatibility import Policy, months_between


@dataclass(frozen=True)
class Violation:
    op: str
    rule: str  # the rule's citation: id (file:line)
    message: str

    def __str__(self) -> str:
        return f"{self.op}: {self.message}; breaks the compatibility rule {self.rule}"


def schema_differences() -> Callable[[str, str], list]:
    from opspec.bridge import schemas  # torch

    return schemas.differences


def transition(policy: Policy, old_version: str, old_ops: Mapping[str, Mapping[str, Any]], new_version: str,
               new_ops: Mapping[str, Mapping[str, Any]],
               differences: Callable[[str, str], list] | None = None) -> list[Violation]:
    """What ``new_version`` breaks relative to ``old_version``; ``differences`` None: schemas are not judged (no torch)."""
    found: list[Violation] = []
    for name, old in sorted(old_ops.items()):
        old_status = old.get("status")
        if old_status == "removed":
            continue
        new = new_ops.get(name)
        new_status = new.get("status") if new else "removed"
        if new_status == "removed":
            if old_status != "deprecated":
                found.append(Violation(name, policy.removal.cite(),
                                       f"removed in {new_version} but active in {old_version}: deprecate it first"))
                continue
            since = old.get("deprecated") or old_version
            months = months_between(since, new_version)
            if months < policy.deprecation_months:
                found.append(Violation(name, policy.deprecation.cite(), (
                    f"removed in {new_version}, {months} month{'' if months == 1 else 's'} after its deprecation in "
                    f"{since}; the policy keeps a deprecated op {policy.deprecation_months} months, so {since}'s "
                    f"deprecation allows removal from {policy.earliest_removal(since)}")))
            continue
        if differences is None or not new or old.get("schema") == new.get("schema"):
            continue
        broken = [d for d in differences(old["schema"], new["schema"]) if not policy.is_compatible(d.kind)]
        if broken:
            found.append(Violation(name, policy.schema_changes.cite(), (
                f"schema changes incompatibly from {old_version} to {new_version} ({'; '.join(map(str, broken))}); "
                f"an incompatible change needs a new op, not a schema change")))
    return found
