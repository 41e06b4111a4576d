"""What a proposal's change does to an opset version: the one rule `proposal check` and `release` share.

A :class:`Draft` holds one version's op and rule entries as the YAML has them.
:func:`apply_proposal` applies a proposal's changes to it in order, each change
seeing the ones before it; a change that cannot apply is a :class:`Problem` and
leaves the draft as it was. `proposal check` runs it on a copy of the version a
proposal targets, to report; `release` runs it on the version it builds, to write.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping

OP_KEYS = ("name", "schema", "category", "status", "since", "deprecated", "removed", "proposals", "rationale",
           "equivalents", "exceptions", "testing")
OUT_OF_SCOPE_KEYS = ("name", "family", "reason", "since", "proposals")
RULE_KEYS = ("op", "kind", "targets", "formula", "rationale", "implementation", "origin", "since", "proposals",
             "random", "testing")
STAMPED = ("since", "proposals")  # rule keys the release writes; a proposal leaves them out


@dataclass
class Draft:
    """One version's entries by name, as raw YAML mappings; ``version`` is the version being written."""

    version: str
    ops: dict[str, dict] = field(default_factory=dict)
    rules: dict[str, dict] = field(default_factory=dict)
    out_of_scope: dict[str, dict] = field(default_factory=dict)

    @classmethod
    def of(cls, version: str, ops: list[dict], rules: list[dict], out_of_scope: list[dict] = ()) -> "Draft":
        return cls(version, {entry["name"]: entry for entry in ops}, {entry["op"]: entry for entry in rules},
                   {entry["name"]: entry for entry in out_of_scope})

    def is_core(self, name: str) -> bool:
        entry = self.ops.get(name)
        return bool(entry) and entry.get("status") != "removed"

    def ops_list(self) -> list[dict]:
        return [self.ops[name] for name in sorted(self.ops)]

    def rules_list(self) -> list[dict]:
        return [self.rules[name] for name in sorted(self.rules)]

    def out_of_scope_list(self) -> list[dict]:
        return [self.out_of_scope[name] for name in sorted(self.out_of_scope)]


@dataclass(frozen=True)
class Problem:
    """Why one change cannot apply; ``key`` is the field of the change it is about."""

    position: int
    key: str
    message: str


def subject(change: Mapping[str, Any]) -> tuple[str, str]:
    """(family, name): the op or the rule a change edits."""
    action = change["action"]
    if action.endswith("-rule"):
        return "rule", change.get("op") or change.get("rule", {}).get("op")
    return "op", change["op"]


def apply_proposal(draft: Draft, number: int, changes: list[Mapping[str, Any]],
                   torch_schemas: Mapping[str, str] | None) -> tuple[list[str], list[Problem]]:
    """Apply one proposal's changes in order: (what each applied change did, why the others could not apply).

    ``torch_schemas`` (qualified name -> schema) is the installed torch's registry;
    None or empty when torch is not consulted, and then nothing is checked against it.
    """
    done: list[str] = []
    problems: list[Problem] = []
    seen: set[tuple[str, str]] = set()
    for position, change in enumerate(changes):
        family, name = subject(change)
        if (family, name) in seen:
            problems.append(Problem(position, "op" if "op" in change else "rule", f"{name} is changed twice in one proposal"))
            continue
        seen.add((family, name))
        found = [Problem(position, key, message) for key, message in _problems(draft, change, name, torch_schemas or {})]
        if found:
            problems += found
            continue
        done.append(_apply(draft, number, change, name, torch_schemas or {}))
    return done, problems


def _problems(draft: Draft, change: Mapping[str, Any], name: str, torch: Mapping[str, str]) -> list[tuple[str, str]]:
    action, version = change["action"], draft.version
    found: list[tuple[str, str]] = []
    if action in ("add-op", "add-rule") and name in draft.out_of_scope:
        found.append(("op" if action == "add-op" else "rule", f"{name} is out of scope in {version} by proposal "
                      f"{', '.join(f'{n:04d}' for n in draft.out_of_scope[name].get('proposals', ()))}"))
    if action == "add-op":
        if draft.is_core(name):
            found.append(("op", f"{name} is already core in {version}"))
        elif torch and name not in torch:
            found.append(("op", f"torch has no operator {name}"))
        elif torch and "schema" in change and change["schema"] != torch[name]:
            found.append(("schema", f"schema does not match torch: torch has {torch[name]}"))
        rule = draft.rules.get(name)
        if rule and rule.get("kind") == "default":
            found.append(("op", f"{name} is decomposed by a default rule in {version}; add a remove-rule change for it "
                                "before this one"))
    elif action == "deprecate-op":
        if not draft.is_core(name):
            found.append(("op", f"{name} is not a core op in {version}"))
        elif draft.ops[name].get("status") != "active":
            found.append(("op", f"{name} is already {draft.ops[name].get('status')} in {version}"))
        replacement = change.get("replacement")
        if replacement and not draft.is_core(replacement):
            found.append(("replacement", f"replacement {replacement} is not core in {version}"))
    elif action == "remove-op":
        if not draft.is_core(name):
            found.append(("op", f"{name} is not a core op in {version}"))
        elif draft.ops[name].get("status") != "deprecated":
            found.append(("op", f"{name} must be deprecated in an earlier version before it is removed"))
    elif action == "change-schema":
        if not draft.is_core(name):
            found.append(("op", f"{name} is not a core op in {version}"))
        elif draft.ops[name].get("schema") == change["schema"]:
            found.append(("schema", f"schema of {name} is unchanged"))
        if torch and change["schema"] != torch.get(name):
            found.append(("schema", f"schema does not match the installed torch ({torch.get(name, 'no such operator')})"))
    elif action == "change-testing":
        if not draft.is_core(name):
            found.append(("op", f"{name} is not a core op in {version}"))
        elif draft.ops[name].get("testing", {}) == change["testing"]:
            found.append(("testing", f"testing hints of {name} are unchanged"))
    elif action in ("add-rule", "change-rule"):
        rule = change["rule"]
        if action == "add-rule" and name in draft.rules:
            found.append(("rule", f"{name} already has a rule in {version}; use change-rule"))
        if action == "change-rule" and name not in draft.rules:
            found.append(("rule", f"{name} has no rule in {version} to change"))
        if rule.get("kind") == "default" and draft.is_core(name):
            found.append(("rule", f"{name} is core in {version}; a default rule would decompose it away (use kind: optional)"))
        if torch and name not in torch:
            found.append(("rule", f"torch has no operator {name}"))
        for target in rule.get("targets", ()):
            if not draft.is_core(target):
                found.append(("targets", f"target {target} is not core in {version}"))
    elif action == "remove-rule":
        if name not in draft.rules:
            found.append(("op", f"{name} has no rule in {version}"))
    elif action == "declare-out-of-scope":
        if draft.is_core(name):
            found.append(("op", f"{name} is core in {version}; deprecate and remove it instead"))
        elif draft.rules.get(name, {}).get("kind") == "default":
            found.append(("op", f"{name} is decomposed by a default rule in {version}; add a remove-rule change for it "
                                "before this one"))
        if name in draft.out_of_scope:
            found.append(("op", f"{name} is already out of scope in {version}"))
        if torch and name not in torch:
            found.append(("op", f"torch has no operator {name}"))
    else:
        found.append(("action", f"unknown action {action}"))
    return found


def _apply(draft: Draft, number: int, change: Mapping[str, Any], name: str, torch: Mapping[str, str]) -> str:
    """Edit the draft for a change that has no problems; what it did, in words."""
    action, version = change["action"], draft.version
    if action == "add-op":
        entry = {"name": name, "schema": torch.get(name, change.get("schema", "")), "category": change["category"],
                 "status": "active", "since": version, "proposals": [number], "rationale": change["rationale"]}
        for key in ("equivalents", "testing"):
            if key in change:
                entry[key] = change[key]
        draft.ops[name] = entry
        return f"added {name}"
    if action in ("deprecate-op", "remove-op", "change-schema", "change-testing"):
        entry = draft.ops[name]
        if action == "deprecate-op":
            entry = stamp(stamp(entry, "status", "deprecated", OP_KEYS), "deprecated", version, OP_KEYS)
            done = f"deprecated {name}"
        elif action == "remove-op":
            entry = stamp(stamp(entry, "status", "removed", OP_KEYS), "removed", version, OP_KEYS)
            done = f"removed {name}"
        elif action == "change-schema":
            entry = stamp(entry, "schema", change["schema"], OP_KEYS)
            done = f"changed the schema of {name}"
        else:
            entry = stamp(entry, "testing", change["testing"], OP_KEYS)
            done = f"changed the testing hints of {name}"
        draft.ops[name] = stamp(entry, "proposals", sorted({*(entry.get("proposals") or ()), number}), OP_KEYS)
        return done
    if action == "declare-out-of-scope":
        draft.out_of_scope[name] = {"name": name, "family": change["family"], "reason": change["rationale"],
                                    "since": version, "proposals": [number]}
        return f"declared {name} out of scope"
    if action in ("add-rule", "change-rule"):
        rule = {k: v for k, v in change["rule"].items() if k not in STAMPED}
        if action == "add-rule":
            rule = stamp(stamp(rule, "since", version, RULE_KEYS), "proposals", [number], RULE_KEYS)
        else:
            old = draft.rules[name]
            if "since" in old:
                rule = stamp(rule, "since", old["since"], RULE_KEYS)
            rule = stamp(rule, "proposals", sorted({*(old.get("proposals") or ()), number}), RULE_KEYS)
        draft.rules[name] = rule
        return f"{'added' if action == 'add-rule' else 'changed'} the rule for {name}"
    del draft.rules[name]
    return f"removed the rule for {name}"


def stamp(entry: Mapping[str, Any], key: str, value: Any, canonical: tuple[str, ...]) -> dict:
    """``entry`` with ``key`` set; a new key goes before the first existing key ranked after it."""
    if key in entry:
        updated = dict(entry)
        updated[key] = value
        return updated
    rank = {k: i for i, k in enumerate(canonical)}
    mine = rank.get(key, len(rank))
    result: dict = {}
    placed = False
    for existing, existing_value in entry.items():
        if not placed and rank.get(existing, -1) > mine:
            result[key] = value
            placed = True
        result[existing] = existing_value
    if not placed:
        result[key] = value
    return result
