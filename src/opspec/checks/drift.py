"""``opspec drift``: how the opset and the installed torch disagree.

Four kinds of drift, the first three of which the opset must answer for:
- core-tag drift: overloads torch tags ``core`` that the opset lacks, and the reverse;
- schema drift: a core op whose schema torch now prints differently;
- rule drift: a decomposition that, traced on drawn inputs, produces ops its rule
  does not declare (or that torch no longer provides);
- closure gaps (informational): non-core ops that survive torch's own default
  decomposition table, i.e. ops a backend meets although they are not core.

Where the opset differs from torch's tag on purpose (an op a proposal made core, or
removed or decomposed, after the first version), the difference is listed as an
opset decision with its proposal, not as drift.

Ops and rules whose recorded ``torch`` range excludes the installed torch are listed
as absent and not checked; each other rule is traced on its own, so one rule torch
cannot serve drifts alone.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Callable

from opspec.bridge import decomp_table, torch_ops, versions
from opspec.spec.model import DecompositionRule, Opset, TestingHints, version_key

SAMPLES_PER_RULE = 4
SAMPLES_PER_CLOSURE_PROBE = 2


@dataclass
class RuleDrift:
    op: str
    traced_samples: int = 0
    produced: list[str] = field(default_factory=list)
    undeclared: list[str] = field(default_factory=list)  # produced but not in targets
    unused: list[str] = field(default_factory=list)  # declared but never produced
    problem: str = ""  # why it could not be traced, if it could not

    @property
    def drifted(self) -> bool:
        return bool(self.undeclared or self.problem)


@dataclass
class ClosureGap:
    op: str  # the non-core op that survives
    produced_by: list[str]  # table entries whose decomposition leaves it behind


@dataclass
class DriftReport:
    torch_version: str
    opset_version: str
    core_added: dict[str, str] = field(default_factory=dict)  # tagged in torch, missing from the opset
    core_removed: list[str] = field(default_factory=list)  # in the opset, not tagged (or gone) in torch
    decisions: list[dict[str, Any]] = field(default_factory=list)  # differences from the tag a proposal decided
    schema_changed: list[dict[str, str]] = field(default_factory=list)
    rules: list[RuleDrift] = field(default_factory=list)
    table_changes: list[dict[str, str]] = field(default_factory=list)
    closure_gaps: list[ClosureGap] = field(default_factory=list)
    absent: list[dict[str, str]] = field(default_factory=list)  # recorded as absent in this torch: not checked
    closure_probed: int = 0
    closure_untraced: int = 0

    @property
    def drifted(self) -> bool:
        return bool(
            self.core_added
            or self.core_removed
            or self.schema_changed
            or self.table_changes
            or any(rule.drifted for rule in self.rules)
        )

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["drifted"] = self.drifted
        return data


def compute(opset: Opset, *, closure: bool = False, progress: Callable[[str], None] | None = None) -> DriftReport:
    torch = torch_ops.torch_module()
    report = DriftReport(torch.__version__, opset.version)
    tagged = torch_ops.core_tagged()
    live = torch_ops.all_aten_schemas()
    ours = {op.name: op for op in opset.active_ops()}
    absent_ops = {op.name: absence for op in ours.values() if (absence := versions.op_absence(op)) and absence.recorded}
    absent_rules = {rule.op: absence for rule in opset.rules if (absence := versions.rule_absence(rule)) and absence.recorded}
    report.absent = [{"op": absence.name, "reason": absence.reason} for absence in (*absent_ops.values(), *absent_rules.values())]

    decided = opset_decisions(opset)
    report.decisions = [
        {"op": name, **decision} for name, decision in sorted(decided.items())
        if (name in ours) != (name in tagged) and (name in ours or name in live)
    ]
    report.core_added = {name: schema for name, schema in tagged.items() if name not in ours and name not in decided}
    report.core_removed = sorted(name for name in ours if name not in tagged and name not in decided and name not in absent_ops)
    for name, op in ours.items():
        if name in absent_ops:
            continue
        if name in live and live[name] != op.schema:
            report.schema_changed.append({"op": name, "opset": op.schema, "torch": live[name]})

    report.table_changes = [change for change in _table_changes(opset) if change["op"] not in absent_rules]
    core = set(ours)
    for rule in opset.rules:
        if rule.op in absent_rules:
            continue
        if progress:
            progress(f"tracing {rule.op}")
        report.rules.append(trace_rule(opset, rule, core))
    if closure:
        _closure_gaps(report, core, progress)
    return report


def opset_decisions(opset: Opset) -> dict[str, dict[str, Any]]:
    """Ops whose place in the set a proposal decided after the first version: op -> what and which proposals.

    The first version is the baseline (torch's tag plus the founding review); an op that
    became core later, or left the set or got a default rule later, did so by proposal.
    """
    first = min((op.since for op in opset.ops), default=opset.version, key=version_key)
    decided: dict[str, dict[str, Any]] = {}
    for op in opset.ops:
        if op.status == "removed" and op.removed:
            decided[op.name] = {"decision": "removed from the core set", "since": op.removed, "proposals": list(op.proposals[-1:])}
        elif op.since != first and op.proposals:
            decided[op.name] = {"decision": "core", "since": op.since, "proposals": list(op.proposals[:1])}
    for rule in opset.default_rules():
        if rule.since and rule.since != first and rule.proposals and rule.op not in decided:
            decided[rule.op] = {"decision": "decomposed", "since": rule.since, "proposals": list(rule.proposals[:1])}
    return decided


def _table_changes(opset: Opset) -> list[dict[str, str]]:
    """Rules that say 'torch' where torch no longer has a decomposition, or stopped defaulting to one."""
    changes = []
    core_table = torch_ops.core_decomposition_table()
    registered = torch_ops.registered_decompositions()
    for rule in opset.rules:
        if rule.uses_torch and rule.op not in core_table and rule.op not in registered:
            changes.append({"op": rule.op, "change": "torch no longer registers a decomposition for it"})
        elif rule.uses_torch and rule.kind == "default" and rule.origin == "torch-core-table" and rule.op not in core_table:
            changes.append({"op": rule.op, "change": "no longer in torch's core decomposition table"})
    return changes


def _sample_calls(schema: str, hints: TestingHints, count: int, seed: int) -> list:
    """Valid calls drawn by the shared strategy layer, float32 first, on CPU."""
    import torch

    from opspec.testing import strategies

    dtype_names = list(hints.dtypes) or ["float32"]
    name = "float32" if "float32" in dtype_names else dtype_names[0]
    strategy = strategies.calls(schema, hints, getattr(torch, name), "cpu")
    return strategies.draw_examples(strategy, count, seed)


def trace_rule(opset: Opset, rule: DecompositionRule, core: set[str], samples: int = SAMPLES_PER_RULE) -> RuleDrift:
    with torch_ops.quiet():  # torch warns about some drawn inputs (var with no degrees of freedom): not drift
        return _trace_rule(opset, rule, core, samples)


def _trace_rule(opset: Opset, rule: DecompositionRule, core: set[str], samples: int) -> RuleDrift:
    result = RuleDrift(rule.op)
    live = torch_ops.all_aten_schemas()
    absence = versions.rule_absence(rule)
    if absence:
        result.problem = absence.reason
        return result
    try:
        table = decomp_table.table_by_name(opset)
        table[rule.op] = decomp_table.implementation(rule)
        torch_table = decomp_table.as_torch_table(table)
        op = torch_ops.resolve(rule.op)
        calls = _sample_calls(live[rule.op], rule.testing, 10 * samples, seed=0)  # some draws are invalid calls
    except Exception as err:  # drift reports what it could not do instead of stopping
        result.problem = f"{type(err).__name__}: {err}".splitlines()[0]
        return result
    produced: set[str] = set()
    for call in calls:
        if result.traced_samples == samples:
            break
        try:
            call.run(op)
        except Exception:
            continue  # the kernel refuses this draw: not a valid call, so nothing to trace
        fresh = call.copy()
        try:
            produced |= set(torch_ops.trace_ops(op, fresh.args, fresh.kwargs, torch_table))
            result.traced_samples += 1
        except Exception as err:
            result.problem = f"tracing failed: {type(err).__name__}: {err}".splitlines()[0]
    if not result.traced_samples and not result.problem:
        result.problem = "no drawn call was accepted by the kernel"
    result.produced = sorted(produced)
    result.undeclared = sorted(produced - set(versions.targets(rule)))
    result.unused = sorted(set(rule.targets) - produced) if result.traced_samples else []
    return result


def _closure_gaps(report: DriftReport, core: set[str], progress) -> None:
    """Trace torch's own table entry by entry and collect the non-core ops left standing.

    Probes draw calls from schemas alone, and some torch kernels crash on arguments they
    do not check, so the probes run in a child process; when it dies, the entry it was
    probing is counted as untraceable and a new child carries on with the next one.
    """
    import multiprocessing

    live = torch_ops.all_aten_schemas()
    names = [
        name
        for name in sorted(torch_ops.core_decomposition_table())
        if name not in core and name in live and torch_ops.is_functional(live[name])
    ]
    report.closure_probed = len(names)
    leftovers: dict[str, set[str]] = {}
    context = multiprocessing.get_context("fork")
    start = 0
    while start < len(names):
        receiver, sender = context.Pipe(duplex=False)
        child = context.Process(target=_probe_entries, args=(names[start:], core, sender), daemon=True)
        child.start()
        sender.close()
        current = start
        while True:
            try:
                kind, name, payload = receiver.recv()
            except EOFError:  # the child died while probing names[current]
                report.closure_untraced += 1
                current += 1
                break
            if kind == "done":
                current = len(names)
                break
            current = names.index(name, current)
            if progress and kind == "start":
                progress(f"closure {name}")
            if kind == "result":
                if payload is None:
                    report.closure_untraced += 1
                else:
                    for survivor in payload:
                        leftovers.setdefault(survivor, set()).add(name)
                current += 1
        child.join()
        start = current
    report.closure_gaps = [ClosureGap(op, sorted(sources)) for op, sources in sorted(leftovers.items())]


def _probe_entries(names: list[str], core: set[str], sender) -> None:
    """Child process: for each entry, send ("start", name) and then its non-core survivors (None if untraceable)."""
    torch_table = decomp_table.as_torch_table(torch_ops.core_decomposition_table())
    live = torch_ops.all_aten_schemas()
    for name in names:
        sender.send(("start", name, None))
        try:
            op = torch_ops.resolve(name)
            calls = _sample_calls(live[name], TestingHints(), 3 * SAMPLES_PER_CLOSURE_PROBE, seed=0)
        except Exception:
            sender.send(("result", name, None))
            continue
        produced: set[str] | None = None
        traced = 0
        for call in calls:
            if traced == SAMPLES_PER_CLOSURE_PROBE:
                break
            try:
                found = set(torch_ops.trace_ops(op, call.args, call.kwargs, torch_table, fake=True))
            except Exception:
                continue  # not a valid call
            produced = (produced or set()) | found
            traced += 1
        sender.send(("result", name, sorted(produced - core) if produced is not None else None))
    sender.send(("done", "", None))
    sender.close()


def render_text(report: DriftReport) -> str:
    lines = [f"opset {report.opset_version} against torch {report.torch_version}"]

    def section(title: str, items: list[str]) -> None:
        lines.append(f"\n{title}: {len(items) if items else 'none'}")
        lines.extend(f"  {item}" for item in items)

    section("core-tag additions (tagged core in torch, missing from the opset)", [f"{n}  {s}" for n, s in report.core_added.items()])
    section("core-tag removals (in the opset, not tagged core in torch)", report.core_removed)
    section(
        "opset decisions (differ from torch's tag on purpose)",
        [f"{d['op']}: {d['decision']} by opspec decision, proposal {', '.join(f'{n:04d}' for n in d['proposals'])} (opset {d['since']})"
         for d in report.decisions],
    )
    section("schema changes", [f"{c['op']}\n    opset: {c['opset']}\n    torch: {c['torch']}" for c in report.schema_changed])
    section("decomposition table changes", [f"{c['op']}: {c['change']}" for c in report.table_changes])
    section("absent in this torch, as recorded (not checked)", [f"{a['op']}: {a['reason']}" for a in report.absent])
    drifted = [r for r in report.rules if r.drifted]
    section(
        f"decomposition drift ({len(report.rules)} rules traced)",
        [f"{r.op}: " + (f"produces undeclared {', '.join(r.undeclared)}" if r.undeclared else r.problem) for r in drifted],
    )
    if report.closure_probed:
        section(
            f"closure gaps: non-core ops surviving torch's default decomposition "
            f"({report.closure_probed} table entries probed, {report.closure_untraced} not traceable with drawn inputs)",
            [f"{gap.op}  <- {', '.join(gap.produced_by[:4])}{' ...' if len(gap.produced_by) > 4 else ''}" for gap in report.closure_gaps],
        )
    else:
        lines.append("\nclosure gaps: not probed (opspec drift --closure)")
    lines.append("\nresult: " + ("DRIFT" if report.drifted else "no drift in core tags, schemas or rules"))
    return "\n".join(lines)
