"""``opspec upgrade``: rewrite an exported program to a later opset version, and prove the rewrite.

What a version decided is applied in one ``run_decompositions`` pass: the version's
decomposition table (the rules it adopted, e.g. ``linalg_vector_norm`` in 2026.12)
plus the upgraders of the accepted proposals released up to it whose op the program
calls (a deprecated op rewritten to its replacement; a schema change's fixed values
written into each call). The result is run on the program's recorded inputs (else the
example inputs torch.export saved) and compared with the original's outputs by the
one comparison rule, then checked against the version as ``check-program`` does; only
a program that passes both is written.
"""
from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from opspec.bridge import decomp_table, torch_ops
from opspec.checks import program as programs
from opspec.proposals import upgraders as upgrading
from opspec.spec import atomic
from opspec.spec.compatibility import Policy
from opspec.spec.errors import one_line
from opspec.spec.model import Opset
from opspec.testing import compare


class UpgradeError(Exception):
    """The program cannot be moved to the version (one line per reason)."""


@dataclass
class Result:
    exported: Any
    applied: list[str] = field(default_factory=list)
    comparison: compare.Comparison | None = None
    report: programs.Report | None = None
    recorded: dict[str, Any] = field(default_factory=dict)


def upgrade(program: programs.Program, opset: Opset, upgraders: list[upgrading.Upgrader],
            later: list = (), policy: Policy | None = None) -> Result:
    torch = torch_ops.torch_module()
    used = set(programs.program_schemas(program.exported.graph_module))
    table = decomp_table.table_by_name(opset)
    applied = []
    exported = program.exported
    args, kwargs = program.inputs()
    # the original's outputs, before any upgrader edits its graph
    reference = program.recorded["outputs"] if program.recorded and "outputs" in program.recorded else \
        _run(exported, args, kwargs, program.path, "the original program")
    for upgrader in upgraders:
        if upgrader.source not in used:
            continue
        label = f"upgrader of proposal {upgrader.proposal:04d} ({upgrader.version})"
        if upgrader.renames:
            table[upgrader.source] = upgrading.as_function(upgrader)
            applied.append(f"{upgrader.source} -> {upgrader.target} ({label})")
        else:
            filled = _fill_fixed_arguments(exported, upgrader)
            applied.append(f"{upgrader.source}: {filled} call(s) given {', '.join(_fixed(upgrader))} ({label})")
    before = programs.check(exported, opset, set(table)).ops
    applied += [f"{f.op} decomposed by {opset.version}'s table" for f in before if f.kind == programs.DECOMPOSABLE]
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", FutureWarning)
            upgraded = exported.run_decompositions(decomp_table.as_torch_table(table))
    except Exception as err:
        raise UpgradeError(f"{program.path}: applying {opset.version}'s decompositions failed: {one_line(err, cause=True)}") from None
    candidate = _run(upgraded, args, kwargs, program.path, "the upgraded program")
    verdict = compare.compare(candidate, reference)
    if not verdict.ok:
        raise UpgradeError(f"{program.path}: the upgraded program's outputs differ from the original's on the recorded "
                           f"inputs: {verdict.message}")
    report = programs.check(upgraded, opset, set(decomp_table.table_by_name(opset)), later, policy, str(program.path))
    if report.exit_code:
        left = "; ".join(f"{f.op}: {f.kind} ({f.detail})" for f in report.ops if f.fails)
        raise UpgradeError(f"{program.path}: nothing {opset.version} decided rewrites what is left: {left}")
    recorded = dict(program.recorded or {}, args=args, kwargs=kwargs, outputs=reference, opset=opset.version,
                    torch=str(torch.__version__))
    return Result(upgraded, applied, verdict, report, recorded)


def _run(exported, args, kwargs, path: Path, what: str):
    try:
        return exported.module()(*args, **kwargs)
    except Exception as err:
        raise UpgradeError(f"{path}: {what} fails on its recorded inputs: {one_line(err, cause=True)}") from None


def _fixed(upgrader: upgrading.Upgrader) -> list[str]:
    return [f"{name}={source['value']!r}" for name, source in upgrader.arguments.items() if not isinstance(source, str)]


def _fill_fixed_arguments(exported, upgrader: upgrading.Upgrader) -> int:
    """A schema change's upgrader on the same op: each call states the fixed values (those keeping the old meaning)."""
    fixed = {name: source["value"] for name, source in upgrader.arguments.items() if not isinstance(source, str)}
    count = 0
    for node in exported.graph.nodes:
        if node.op == "call_function" and hasattr(node.target, "_schema") and torch_ops.op_name(node.target) == upgrader.source:
            names = [a.name for a in node.target._schema.arguments][:len(node.args)]
            node.kwargs = {**{k: v for k, v in fixed.items() if k not in names}, **node.kwargs}
            count += 1
    exported.graph_module.recompile()
    return count


def save(result: Result, path: Path) -> None:
    """Write the upgraded program with its recorded inputs and outputs, atomically."""
    torch = torch_ops.torch_module()
    extra = {programs.RECORDED: programs.recorded_text(result.recorded)}
    atomic.write_with(path, lambda tmp: torch.export.save(result.exported, str(tmp), extra_files=extra))
