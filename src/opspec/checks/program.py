"""An exported program (``torch.export.save``'s ``.pt2``) against an opset version: what each of its ops is there.

Every op the graph calls is one of:

- ``core``: an active core op of the version, with the version's schema;
- ``deprecated``: still core, but deprecated, with the version that removes it (or the earliest the
  compatibility policy allows);
- ``bookkeeping``: an assertion or range constraint the version's bookkeeping policy covers;
- ``decomposable``: not core, but the version's decomposition table rewrites it (``opspec upgrade`` applies it);
- ``schema-mismatch``: core, but the program's op has another schema than the version records;
- ``out-of-scope``: the version declares it out of scope by decision (the proposal and the reason);
- ``closure-gap``: a functional aten op torch emits that the version neither makes core nor decomposes,
  with the open proposals that cover it (``opspec drift --closure`` lists the version's gaps);
- ``unknown``: none of these: not an op the installed torch registers as a functional aten op.

A program passes when nothing is decomposable, out of scope, a closure gap, unknown or an
incompatible schema mismatch.
Programs may carry their recorded inputs and outputs (:data:`RECORDED`), which golden
programs and ``opspec upgrade`` use; loading reads them back.
"""
from __future__ import annotations

import base64
import contextlib
import io
import logging
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from opspec.bridge import schemas, torch_ops
from opspec.checks.coverage import count_ops
from opspec.spec.compatibility import Policy
from opspec.spec.errors import one_line
from opspec.spec.model import Opset, VersionInfo, version_key

RECORDED = "opspec/recorded.b64"  # extra file of the .pt2: base64 of torch.save({"args", "kwargs", "outputs", ...})
CORE, DEPRECATED, BOOKKEEPING, DECOMPOSABLE, MISMATCH, OUT_OF_SCOPE, CLOSURE_GAP, UNKNOWN = (
    "core", "deprecated", "bookkeeping", "decomposable", "schema-mismatch", "out-of-scope", "closure-gap", "unknown")


class ProgramError(Exception):
    """The file is not a program torch.export can load; the message is one line naming the file."""


@dataclass
class Program:
    path: Path
    exported: Any  # torch.export.ExportedProgram
    recorded: dict[str, Any] | None = None  # args, kwargs, outputs (and what golden programs add)

    def inputs(self) -> tuple[tuple, dict]:
        """The recorded inputs, else the example inputs torch.export saved with the program."""
        if self.recorded is not None:
            return tuple(self.recorded["args"]), dict(self.recorded.get("kwargs") or {})
        example = getattr(self.exported, "example_inputs", None)
        if example is None:
            raise ProgramError(f"{self.path}: the program has no recorded or example inputs to run it on")
        return tuple(example[0]), dict(example[1])


def load_program(path: Path) -> Program:
    torch = torch_ops.torch_module()
    extra = {RECORDED: ""}
    # torch logs a traceback before raising on a bad archive, and notes about symbols while deserializing;
    # the one-line error says enough
    quiet = [logging.getLogger(name) for name in ("torch.export", "torch._export")]
    levels = [log.level for log in quiet]
    for log in quiet:
        log.setLevel(logging.CRITICAL)
    try:
        with warnings.catch_warnings(), contextlib.redirect_stderr(io.StringIO()):
            warnings.simplefilter("ignore")
            exported = torch.export.load(str(path), extra_files=extra)
    except Exception as err:
        raise ProgramError(f"{path}: not a program torch.export can load ({one_line(err, 200)})") from None
    finally:
        for log, level in zip(quiet, levels):
            log.setLevel(level)
    recorded = None
    if extra.get(RECORDED):
        try:
            recorded = torch.load(io.BytesIO(base64.b64decode(extra[RECORDED])), weights_only=True)
        except Exception as err:
            raise ProgramError(f"{path}: its recorded inputs cannot be read ({one_line(err, 200)})") from None
    return Program(Path(path), exported, recorded)


def recorded_text(recorded: dict[str, Any]) -> str:
    """The extra file's text for ``torch.export.save(..., extra_files={RECORDED: ...})``."""
    buffer = io.BytesIO()
    torch_ops.torch_module().save(recorded, buffer)
    return base64.b64encode(buffer.getvalue()).decode("ascii")


@dataclass(frozen=True)
class OpFinding:
    op: str
    count: int
    kind: str
    detail: str = ""
    fails: bool = False

    def to_dict(self) -> dict[str, Any]:
        return {"op": self.op, "count": self.count, "kind": self.kind, "detail": self.detail, "fails": self.fails}


@dataclass
class Report:
    program: str
    opset: str
    ops: list[OpFinding] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def exit_code(self) -> int:
        return 1 if any(f.fails for f in self.ops) else 0

    def counts(self) -> dict[str, int]:
        found: dict[str, int] = {}
        for finding in self.ops:
            found[finding.kind] = found.get(finding.kind, 0) + 1
        return found

    def to_dict(self) -> dict[str, Any]:
        return {"program": self.program, "opset": self.opset, "ops": [f.to_dict() for f in self.ops],
                "counts": self.counts(), "notes": self.notes, "exit_code": self.exit_code}


def program_schemas(graph_module) -> dict[str, str]:
    """Qualified op name -> the schema the program's calls were made with."""
    found = {}
    for submodule in graph_module.modules():
        graph = getattr(submodule, "graph", None)
        for node in graph.nodes if graph is not None else ():
            if node.op == "call_function" and hasattr(node.target, "_schema"):
                found[torch_ops.op_name(node.target)] = str(node.target._schema)
    return found


def check(exported, opset: Opset, table_names: set[str], later: list[tuple[VersionInfo, Opset]] = (),
          policy: Policy | None = None, name: str = "", covered: dict[str, list[int]] | None = None) -> Report:
    """Each op of ``exported`` against ``opset``; ``table_names`` are the ops its decomposition table rewrites;
    ``later`` the versions after it (to name the one that removes a deprecated op); ``covered`` maps an op to
    the open proposals whose changes name it."""
    report = Report(name, opset.version)
    used = program_schemas(exported.graph_module)
    ops = opset.ops_by_name
    for op, count in sorted(count_ops(exported.graph_module).items()):
        entry = ops.get(op)
        if entry is not None and entry.status != "removed":
            report.ops.append(_core_finding(op, count, entry, used.get(op), opset, later, policy))
        elif op in opset.bookkeeping_by_name:
            report.ops.append(OpFinding(op, count, BOOKKEEPING, opset.bookkeeping_by_name[op].backend))
        elif op in table_names:
            rule = opset.rules_by_op.get(op)
            how = (f"rule of proposal {', '.join(f'{n:04d}' for n in rule.proposals)}" if rule and rule.proposals
                   else "its rule" if rule else "torch's core decomposition table, which the opset's table starts from")
            into = f" into {', '.join(rule.targets)}" if rule else ""
            report.ops.append(OpFinding(op, count, DECOMPOSABLE, f"{opset.version} decomposes it ({how}){into}; "
                                                                 f"`opspec upgrade --to {opset.version}` applies it", True))
        elif entry is not None:
            report.ops.append(OpFinding(op, count, UNKNOWN, f"removed from the core set in {entry.removed}", True))
        else:
            report.ops.append(outside(op, count, opset, covered or {}, later))
    if policy is not None and opset.info.released:
        import datetime as _dt

        ends = policy.support_ends(opset.info.released)
        if _dt.date.today().isoformat() > ends:
            report.notes.append(f"opset {opset.version} left support on {ends} (compatibility rule {policy.support.cite()})")
    return report


def outside(op: str, count: int, opset: Opset, covered: dict[str, list[int]], later=()) -> OpFinding:
    """Why an op the version neither makes core nor decomposes is there: a decision, a closure gap (closed by a
    later version of ``later``, or covered by an open proposal), or unknown."""
    decided = opset.out_of_scope_by_name.get(op)
    if decided is not None:
        return OpFinding(op, count, OUT_OF_SCOPE, f"out of scope in {opset.version} by decision (proposal "
                         f"{', '.join(f'{n:04d}' for n in decided.proposals)}, {decided.family}): {decided.reason}", True)
    live = torch_ops.all_aten_schemas().get(op)
    if live is None or not torch_ops.is_functional(live):
        what = "an op that writes to its arguments" if live is not None else f"not an aten op torch {torch_ops.version()} registers"
        return OpFinding(op, count, UNKNOWN, f"not in opset {opset.version}: {what}", True)
    proposals = covered.get(op)
    closed = next(((info.version, newer) for info, newer in later
                   if op in newer.core_names() or op in {rule.op for rule in newer.default_rules()}), None)
    if closed is not None:
        version, newer = closed
        rule = newer.rules_by_op.get(op)
        how = "decomposes it" if rule is not None and op not in newer.core_names() else "makes it core"
        numbers = (rule.proposals if how == "decomposes it" else newer.ops_by_name[op].proposals) or ()
        see = (f"{version} {how}" + (f" (proposal {', '.join(f'{n:04d}' for n in numbers)})" if numbers else "")
               + f": `opspec upgrade --to {version}`")
    elif proposals:
        see = f"proposal {', '.join(f'{n:04d}' for n in proposals)} covers it"
    else:
        see = f"no proposal covers it yet; `opspec drift --closure --opset {opset.version}` lists the version's gaps"
    return OpFinding(op, count, CLOSURE_GAP, f"torch emits it and {opset.version} has no rule for it, nor makes it core "
                                             f"(a closure gap of {opset.version}); {see}", True)


def _core_finding(op: str, count: int, entry, used: str | None, opset: Opset, later, policy: Policy | None) -> OpFinding:
    if used is not None and used != entry.schema:
        found = schemas.differences(entry.schema, used)
        if found:
            compatible = policy is not None and all(policy.is_compatible(d.kind) for d in found)
            return OpFinding(op, count, MISMATCH, f"the program's schema differs from {opset.version}'s "
                             f"({'; '.join(map(str, found))}; {'compatible' if compatible else 'incompatible'})",
                             not compatible)
    if entry.status == "deprecated":
        removal = next((info.version for info, newer in later
                        if newer.ops_by_name.get(op) is not None and newer.ops_by_name[op].status == "removed"), None)
        if removal is None and policy is not None:
            removal = f"{policy.earliest_removal(entry.deprecated or opset.version)} at the earliest"
        return OpFinding(op, count, DEPRECATED, f"deprecated in {entry.deprecated}; removed in {removal or 'a later version'}")
    return OpFinding(op, count, CORE)


def later_versions(version: str, root: Path | None = None) -> list[tuple[VersionInfo, Opset]]:
    from opspec.spec import load

    return [(info, load.load_opset(info.version, root)) for info in load.load_versions(root)
            if version_key(info.version) > version_key(version)]
