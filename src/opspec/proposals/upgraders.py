"""Upgraders: how a program's calls of a changed or deprecated op are rewritten, stored as data in its proposal.

A ``change-schema`` or ``deprecate-op`` change carries ``upgrader: {op, arguments}``:
the op each call becomes (a deprecation's replacement, or the op itself under its
new schema) and, for each argument of that op, the old call's argument it takes
(by name) or a fixed value (``{value: V}``). The compatibility policy's rule
``upgrader-required`` makes it a condition of acceptance; ``opspec upgrade``
applies the upgraders of every version it moves a program through.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Mapping

from opspec.proposals.model import Proposal
from opspec.spec.model import version_key

UPGRADED_ACTIONS = ("change-schema", "deprecate-op")


@dataclass(frozen=True)
class Upgrader:
    source: str  # the op whose calls are rewritten
    target: str  # the op they become
    arguments: Mapping[str, Any]  # target argument -> old argument's name, or {"value": V}
    proposal: int
    version: str  # the version that made the change

    @classmethod
    def from_change(cls, change: Mapping[str, Any], proposal: int, version: str) -> "Upgrader":
        data = change["upgrader"]
        return cls(change["op"], data["op"], dict(data["arguments"]), proposal, version)

    @property
    def renames(self) -> bool:
        return self.target != self.source


def missing(p: Proposal) -> list[int]:
    """Positions of the changes that need an upgrader and lack one."""
    return [i for i, c in enumerate(p.changes) if c["action"] in UPGRADED_ACTIONS and "upgrader" not in c]


def problems(change: Mapping[str, Any], torch_schemas: Mapping[str, str]) -> list[str]:
    """Why an upgrader cannot rewrite the old op's calls, judged on the installed torch's schemas."""
    from opspec.bridge import schemas

    upgrader = change.get("upgrader")
    if not upgrader or not torch_schemas:
        return []
    target = upgrader["op"]
    if target not in torch_schemas:
        return [f"upgrader: torch has no operator {target}"]
    target_arguments = schemas.parse(torch_schemas[target]).arguments
    # a schema change rewrites calls written for the op's previous schema, whose arguments torch no longer prints
    old_names = None if change["action"] == "change-schema" else \
        {a.name for a in schemas.parse(torch_schemas[change["op"]]).arguments} if change["op"] in torch_schemas else set()
    found = []
    for name, source in upgrader["arguments"].items():
        if name not in {a.name for a in target_arguments}:
            found.append(f"upgrader: {target} has no argument {name!r}")
        if isinstance(source, str) and old_names is not None and source not in old_names:
            found.append(f"upgrader: {change['op']} has no argument {source!r} for {name!r} to take")
    for argument in target_arguments:
        if not argument.has_default_value() and argument.name not in upgrader["arguments"]:
            found.append(f"upgrader: {target}'s argument {argument.name!r} has no default; say where it comes from")
    return found


def implemented(proposals: list[Proposal], after: str | None, upto: str) -> list[Upgrader]:
    """The upgraders of changes released in versions after ``after`` (None: any) up to ``upto``, oldest first."""
    found = []
    for p in sorted(proposals, key=lambda p: (version_key(p.released_in or "0000.01"), p.id)):
        if p.status not in ("implemented", "superseded") or not p.released_in:
            continue
        if version_key(p.released_in) > version_key(upto) or (after and version_key(p.released_in) <= version_key(after)):
            continue
        found += [Upgrader.from_change(c, p.id, p.released_in) for c in p.changes if "upgrader" in c]
    return found


def as_function(upgrader: Upgrader) -> Callable:
    """The rewrite as a decomposition: binds an old call by the old op's schema and calls the target op."""
    from opspec.bridge import torch_ops

    source, target = torch_ops.resolve(upgrader.source), torch_ops.resolve(upgrader.target)
    parameters = source._schema.arguments

    def upgraded(*args, **kwargs):
        bound = {}
        for position, parameter in enumerate(parameters):
            if position < len(args):
                bound[parameter.name] = args[position]
            elif parameter.name in kwargs:
                bound[parameter.name] = kwargs[parameter.name]
            elif parameter.has_default_value():
                bound[parameter.name] = parameter.default_value
        call = {name: bound[source_name] if isinstance(source_name, str) else source_name["value"]
                for name, source_name in upgrader.arguments.items()
                if not isinstance(source_name, str) or source_name in bound}
        return target(**call)

    upgraded.__name__ = f"upgrade_{upgrader.source.replace('::', '_').replace('.', '_')}"
    return upgraded
