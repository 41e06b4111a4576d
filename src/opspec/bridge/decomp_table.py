"""The opset's decomposition table as torch sees it: qualified names -> callables.

The opset's table is torch's core table with the opset's own rules laid over it:
a rule implemented in opspec replaces torch's entry, and a rule torch lacks adds
one. Optional rules (lowerings of core ops) join only when asked for. The table is
built entry by entry: a rule the installed torch cannot serve (see
:mod:`opspec.bridge.versions`) is left out, keeping torch's own entry if it has one,
and only that rule reports the problem when it is checked.
"""
from __future__ import annotations

from typing import Callable

from opspec.bridge import torch_ops, versions
from opspec.spec.model import DecompositionRule, Opset
from opspec.spec.references import ImplementationError, load_callable


def implementation(rule: DecompositionRule) -> Callable:
    if rule.uses_torch:
        for table in (torch_ops.core_decomposition_table(), torch_ops.registered_decompositions()):
            if rule.op in table:
                return table[rule.op]
        raise ImplementationError(f"torch registers no decomposition for {rule.op}")
    return load_callable(rule.implementation)


def table_by_name(opset: Opset, *, include_optional: bool = False) -> dict[str, Callable]:
    table = dict(torch_ops.core_decomposition_table())
    for rule in opset.rules:
        if rule.kind != "default" and not include_optional:
            continue
        if versions.rule_absence(rule):
            continue
        try:
            table[rule.op] = implementation(rule)
        except ImplementationError:
            continue  # the rule's own check names the problem; the other entries stay usable
    return table


def as_torch_table(by_name: dict[str, Callable]) -> dict:
    """Key a name-keyed table by OpOverload, the form make_fx and export accept."""
    return {torch_ops.resolve(name): fn for name, fn in by_name.items()}


def decomposition_table(opset: Opset, *, include_optional: bool = False) -> dict:
    return as_torch_table(table_by_name(opset, include_optional=include_optional))
