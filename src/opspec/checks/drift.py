"""``opspec drift``: how the opset and the installed torch disagree.

Four kinds of drift, the first three of which the opset must answer for:
- core-tag drift: overloads torch tags ``core`` that the opset lacks, and the reverse;
- schema drift: a core op whose schema torch now prints differently;
- rule drift: a decomposition that, traced on drawn inputs, produces ops its rule
  does not declare (or that torch no longer provides);
- closure gaps (informational): non-core ops that survive the version's own
  decomposition table (torch's core table with the version's rules laid over it,
  functionalized), i.e. ops a backend meets although they are not core; those the
  version declares out of scope are listed as decided (:mod:`opspec.checks.closure`).

Where the opset differs from torch's tag on purpose (an op a proposal made core, or
removed or decomposed, after the first version), the difference is listed as an
opset decision with its proposal, not as drift.

Ops and rules whose recorded ``torch`` range excludes the installed torch are listed
as absent and not checked; each other rule is traced on its own, so one rule torch
cannot serve drifts alone.
"""
from __future__ import annotations

import os
from dataclasses import asdict, dataclass, field
from typing import Any, Callable

from opspec.bridge import torch_ops, versions
from opspec.checks.beside import Beside, BesideFailed, Claims, can_fork
from opspec.checks.closure import Closure, ClosureGap, Functionalized
from opspec.spec.errors import one_line
from opspec.spec.model import DecompositionRule, Opset, version_key

# what torch raises when a traced decomposition reads a value it only has symbolically
DATA_DEPENDENT_ERRORS = ("GuardOnDataDependentSymNode", "DataDependentOutputException")
SAMPLES_PER_RULE = 4  # in float32 (or the rule's first dtype)
SAMPLES_PER_OTHER_DTYPE = 1  # in each other dtype the rule is tested in
DRAW_BATCHES = 3  # of 10 calls per wanted sample, after a first batch of as many calls as samples wanted


@dataclass
class RuleDrift:
    op: str
    traced_samples: int = 0
    produced: list[str] = field(default_factory=list)
    undeclared: list[str] = field(default_factory=list)  # produced but not in targets
    unused: list[str] = field(default_factory=list)  # declared but never produced
    problem: str = ""  # why it could not be traced, if it could not
    recorded: str = ""  # a call it could not trace because this torch's decomposition reads a value, as recorded

    @property
    def drifted(self) -> bool:
        return bool(self.undeclared or self.problem)


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
    closure_gaps: list[ClosureGap] = field(default_factory=list)  # open ones and those decided out of scope
    closure_functionalized: list[Functionalized] = field(default_factory=list)  # in-place ops torch's decompositions emit
    absent: list[dict[str, str]] = field(default_factory=list)  # recorded as absent in this torch: not checked
    untagged: list[dict[str, str]] = field(default_factory=list)  # recorded as not tagged core in this torch: checked
    closure_probed: int = 0
    closure_untraced: int = 0
    closure_failures: list[dict[str, str]] = field(default_factory=list)  # op, kind (untraceable|timeout|crash), message
    closure_log: str = ""  # torch's output and full tracebacks of the probes
    closure_table: str = ""  # whose table the entries were traced with
    closure_contexts: dict[str, str] = field(default_factory=dict)  # entry -> how it was traced, where not on drawn calls

    @property
    def drifted(self) -> bool:
        return bool(
            self.core_added
            or self.core_removed
            or self.schema_changed
            or self.table_changes
            or any(rule.drifted for rule in self.rules)
        )

    @property
    def closure_open(self) -> list[ClosureGap]:
        return [gap for gap in self.closure_gaps if gap.open]

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["drifted"] = self.drifted
        data["closure_open"] = len(self.closure_open)
        return data

    def take_closure(self, closure: Closure) -> None:
        self.closure_probed, self.closure_gaps = closure.probed, closure.gaps
        self.closure_functionalized, self.closure_failures = closure.functionalized, closure.failures
        self.closure_untraced, self.closure_log = len(closure.failures), closure.log
        self.closure_table, self.closure_contexts = closure.table, closure.contexts


def compute(opset: Opset, *, closure: bool = False, progress: Callable[[str], None] | None = None,
            covered: dict[str, list[int]] | None = None) -> DriftReport:
    """``covered`` maps an op to the open proposals whose changes name it, for the closure gaps."""
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
    untagged = {name: reason for name in ours if name not in tagged and (reason := versions.untagged(name))}
    report.untagged = [{"op": name, "reason": reason} for name, reason in sorted(untagged.items())]
    report.core_removed = sorted(name for name in ours if name not in tagged and name not in decided and name not in absent_ops
                                 and name not in untagged)
    for name, op in ours.items():
        if name in absent_ops:
            continue
        if name in live and live[name] != op.schema:
            report.schema_changed.append({"op": name, "opset": op.schema, "torch": live[name]})

    report.table_changes = [change for change in _table_changes(opset) if change["op"] not in absent_rules]
    report.rules = _traced(opset, [rule for rule in opset.rules if rule.op not in absent_rules], set(ours), progress)
    if closure:
        from opspec.checks import closure as closing

        report.take_closure(closing.run(opset, progress, covered=covered))
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


def _traced(opset: Opset, rules: list[DecompositionRule], core: set[str],
            progress: Callable[[str], None] | None) -> list[RuleDrift]:
    """Each rule traced, in the rules' order: a forked child and this process each take the next untraced rule, so
    the two cores end together. A rule the child took and never answered (it died) is traced here."""
    claims, parent = Claims(), os.getpid()

    def trace_claimed() -> dict[int, RuleDrift]:
        done = {}
        while (position := claims.take()) < len(rules):
            if progress and os.getpid() == parent:  # this process tells: the rules it takes run through the whole list
                progress(f"rules {position + 1}/{len(rules)} {rules[position].op}")
            done[position] = trace_rule(opset, rules[position], core)
        return done

    child = Beside(trace_claimed) if can_fork() and len(rules) > 1 else None
    done = trace_claimed()
    if child is not None:
        try:
            done.update(child.result())
        except BesideFailed:
            pass
    return [done[position] if position in done else trace_rule(opset, rule, core) for position, rule in enumerate(rules)]


def trace_rule(opset: Opset, rule: DecompositionRule, core: set[str], samples: int | None = None) -> RuleDrift:
    """Trace the rule as the closure tests do: its subject's table, every dtype it is tested in,
    drawn layouts included, so a rule the closure tests fail on drifts here too."""
    with torch_ops.quiet():  # torch warns about some drawn inputs (var with no degrees of freedom): not drift
        return _trace_rule(opset, rule, core, SAMPLES_PER_RULE if samples is None else samples)


def _trace_rule(opset: Opset, rule: DecompositionRule, core: set[str], samples: int) -> RuleDrift:
    from opspec.checks import decomp_check

    result = RuleDrift(rule.op)
    absence = versions.rule_absence(rule)
    if absence:
        result.problem = absence.reason
        return result
    try:
        subject = decomp_check.subject_for_rule(opset, rule)
        dtypes = decomp_check.dtypes_for(subject)
    except Exception as err:  # drift reports what it could not do instead of stopping
        result.problem = one_line(err)
        return result
    produced: set[str] = set()
    primary = next((d for d in dtypes if dtype_label(d) == "float32"), dtypes[0] if dtypes else None)
    for dtype in dtypes:
        wanted = samples if dtype == primary else SAMPLES_PER_OTHER_DTYPE  # other dtypes add casts, rarely more
        if not wanted:
            continue
        # Most kernels accept every drawn call: a first batch of just the calls wanted, then larger ones for the
        # kernels that refuse some (more of them in the first dtype). Drawing is most of drift's time.
        larger = DRAW_BATCHES if dtype == primary else 1
        batches = [(0, wanted), (1, 3 * wanted), *((seed, 10 * wanted) for seed in range(2, 2 + larger))]
        traced = 0
        for call in _drawn(decomp_check.draw_calls(subject, dtype, "cpu"), batches):
            try:
                call.run(subject.kernel)
            except Exception:
                continue  # the kernel refuses this draw: not a valid call, so nothing to trace
            fresh = call.copy()
            try:
                produced |= set(torch_ops.trace_ops(subject.candidate, fresh.args, fresh.kwargs, subject.table))
                traced += 1
            except Exception as err:
                recorded = versions.host_read(rule.op) if _reads_a_value(err) else None
                if recorded:
                    result.recorded = result.recorded or f"{dtype_label(dtype)}: {recorded}"
                else:
                    result.problem = f"tracing failed ({dtype_label(dtype)}): {one_line(err)}"
            if traced == wanted:
                break  # before the next call is asked for: it may start another batch
        result.traced_samples += traced
    if not result.traced_samples and not result.problem:  # a recorded value read excuses a call, not the whole rule
        result.problem = ("no drawn call could be traced: each read a value, as recorded" if result.recorded
                          else "no drawn call was accepted by the kernel")
    result.produced = sorted(produced)
    result.undeclared = sorted(produced - set(versions.targets(rule)))
    result.unused = sorted(set(rule.targets) - produced) if result.traced_samples else []
    return result


def _reads_a_value(err: Exception) -> bool:
    """Whether tracing failed because the decomposition read a traced tensor's value (``.item()``, an index tensor
    used as a Python index)."""
    return "_local_scalar_dense" in str(err) or type(err).__name__ in DATA_DEPENDENT_ERRORS


def _drawn(strategy, batches: list[tuple[int, int]]):
    """Batches of drawn calls, (seed, count) each, lazily; none where the strategy cannot build calls
    (the closure tests skip that dtype too)."""
    from opspec.testing import strategies

    for seed, count in batches:
        try:
            batch = strategies.draw_examples(strategy, count, seed)
        except Exception:
            return
        yield from batch


def dtype_label(dtype) -> str:
    return str(dtype).removeprefix("torch.")


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
    section("not tagged core in this torch, as recorded (checked)", [f"{u['op']}: {u['reason']}" for u in report.untagged])
    section("calls this torch's decomposition cannot trace (it reads a value), as recorded",
            [f"{r.op}: {r.recorded}" for r in report.rules if r.recorded])
    drifted = [r for r in report.rules if r.drifted]
    section(
        f"decomposition drift ({len(report.rules)} rules traced)",
        [f"{r.op}: " + (f"produces undeclared {', '.join(r.undeclared)}" if r.undeclared else r.problem) for r in drifted],
    )
    if report.closure_probed:
        open_gaps, decided = report.closure_open, [gap for gap in report.closure_gaps if not gap.open]
        section(
            f"closure gaps: non-core ops surviving {report.closure_table}'s table "
            f"({report.closure_probed} table entries probed, {report.closure_untraced} not traced)",
            [f"{gap.op}  <- {_few(gap.produced_by)}; "
             + (f"proposal {', '.join(f'{n:04d}' for n in gap.proposals)} covers it" if gap.proposals else "no proposal covers it")
             for gap in open_gaps],
        )
        section("closure: decided (out of scope by this version, or closed by a later release)", [f"{gap.op}  <- {_few(gap.produced_by)}; {gap.decision}" for gap in decided])
        section(
            "closure: in-place ops torch's decompositions emit, functionalized away",
            [f"{f.op}  emitted by {', '.join(f.upstream) or 'a decomposition on the way'}; met from {_few(f.produced_by)}"
             for f in report.closure_functionalized],
        )
        if report.closure_contexts:
            section("closure entries traced under their autograd context",
                    [f"{name}: {context}" for name, context in report.closure_contexts.items()])
        kinds = {}
        for failure in report.closure_failures:
            kinds[failure["kind"]] = kinds.get(failure["kind"], 0) + 1
        section(
            "closure entries not traced (" + (", ".join(f"{n} {k}" for k, n in sorted(kinds.items())) or "none")
            + (f"; full errors in {report.closure_log}" if report.closure_failures else "") + ")",
            [f"{f['op']}: {f['kind']}: {f['message']}" for f in report.closure_failures],
        )
    else:
        lines.append("\nclosure gaps: not probed (opspec drift --closure)")
    lines.append("\nresult: " + ("DRIFT" if report.drifted else "no drift in core tags, schemas or rules"))
    return "\n".join(lines)


def _few(names: list[str], shown: int = 4) -> str:
    return ", ".join(names[:shown]) + (" ..." if len(names) > shown else "")
