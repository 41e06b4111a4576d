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

import os
from dataclasses import asdict, dataclass, field
from typing import Any, Callable

from opspec.bridge import decomp_table, torch_ops, versions
from opspec.spec.errors import one_line
from opspec.spec.model import DecompositionRule, Opset, TestingHints, version_key

SAMPLES_PER_RULE = 4  # in float32 (or the rule's first dtype)
SAMPLES_PER_OTHER_DTYPE = 1  # in each other dtype the rule is tested in
DRAW_BATCHES = 3  # of 10 calls per wanted sample, until the first dtype has its samples
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
    untagged: list[dict[str, str]] = field(default_factory=list)  # recorded as not tagged core in this torch: checked
    closure_probed: int = 0
    closure_untraced: int = 0
    closure_failures: list[dict[str, str]] = field(default_factory=list)  # op, kind (untraceable|timeout|crash), message
    closure_log: str = ""  # torch's output and full tracebacks of the probes

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
    core = set(ours)
    for index, rule in enumerate(opset.rules, 1):
        if rule.op in absent_rules:
            continue
        if progress:
            progress(f"rules {index}/{len(opset.rules)} {rule.op}")
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


def _sample_calls(schema: str, hints: TestingHints, count: int, seed: int, dtype_name: str | None = None) -> list:
    """Valid calls drawn by the shared strategy layer on CPU, in ``dtype_name`` (default: float32 or the first hinted)."""
    import torch

    from opspec.testing import strategies

    dtype_names = list(hints.dtypes) or ["float32"]
    name = dtype_name or ("float32" if "float32" in dtype_names else dtype_names[0])
    strategy = strategies.calls(schema, hints, getattr(torch, name), "cpu")
    return strategies.draw_examples(strategy, count, seed)


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
        # rules whose kernels accept few drawn calls get more batches in their first dtype
        seeds = range(DRAW_BATCHES) if dtype == primary else range(1)
        traced = 0
        for call in _drawn(decomp_check.draw_calls(subject, dtype, "cpu"), 10 * wanted, seeds):
            if traced == wanted:
                break
            try:
                call.run(subject.kernel)
            except Exception:
                continue  # the kernel refuses this draw: not a valid call, so nothing to trace
            fresh = call.copy()
            try:
                produced |= set(torch_ops.trace_ops(subject.candidate, fresh.args, fresh.kwargs, subject.table))
                traced += 1
            except Exception as err:
                result.problem = f"tracing failed ({dtype_label(dtype)}): {one_line(err)}"
        result.traced_samples += traced
    if not result.traced_samples and not result.problem:
        result.problem = "no drawn call was accepted by the kernel"
    result.produced = sorted(produced)
    result.undeclared = sorted(produced - set(versions.targets(rule)))
    result.unused = sorted(set(rule.targets) - produced) if result.traced_samples else []
    return result


def _drawn(strategy, count: int, seeds):
    """Batches of drawn calls, one per seed, lazily; none where the strategy cannot build calls
    (the closure tests skip that dtype too)."""
    from opspec.testing import strategies

    for seed in seeds:
        try:
            batch = strategies.draw_examples(strategy, count, seed)
        except Exception:
            return
        yield from batch


def dtype_label(dtype) -> str:
    return str(dtype).removeprefix("torch.")


def _closure_gaps(report: DriftReport, core: set[str], progress, names: list[str] | None = None,
                  probe: Callable | None = None, timeout: float | None = None) -> None:
    """Trace torch's own table entry by entry and collect the non-core ops left standing.

    Probes draw calls from schemas alone, and some torch kernels crash or hang on arguments
    they do not check, so the probes run in a child process (forked from a forkserver, never
    from this threaded process) whose output goes to a log file. Each probe has
    ``PROBE_TIMEOUT_S`` in the child and a little more in the parent: a child that dies or
    does not answer is killed, the entry is recorded as ``crash`` or ``timeout``, and a fresh
    child carries on with the next entry. An entry no drawn call could trace is ``untraceable``.
    """
    live = torch_ops.all_aten_schemas()
    if names is None:
        names = [
            name
            for name in sorted(torch_ops.core_decomposition_table())
            if name not in core and name in live and torch_ops.is_functional(live[name])
        ]
    timeout = PROBE_TIMEOUT_S if timeout is None else timeout
    report.closure_probed = len(names)
    report.closure_log = _closure_log_path()
    leftovers: dict[str, set[str]] = {}
    start = 0
    while start < len(names):
        child = ProbeChild(names[start:], core, report.closure_log, probe or _probe, timeout)
        current = start
        ready = child.receive(PROBE_STARTUP_S)  # importing torch and building the table, on a loaded machine
        if not isinstance(ready, tuple):
            child.kill()
            report.closure_failures.append({"op": names[current], "kind": "crash" if ready == "died" else "timeout",
                                            "message": f"the probe process did not start ({child.exit_reason()})"})
            start = current + 1
            continue
        while current < len(names):
            name = names[current]
            message = child.receive(timeout + PROBE_GRACE_S)
            if message is None:  # silent past the deadline: hung (a futex wait, a kernel loop)
                child.kill()
                report.closure_failures.append({"op": name, "kind": "timeout",
                                                "message": f"no answer within {timeout + PROBE_GRACE_S:g}s; probe process killed"})
                current += 1
                break
            if message == "died":
                report.closure_failures.append({"op": name, "kind": "crash", "message": f"probe process died ({child.exit_reason()})"})
                current += 1
                break
            kind, got, payload = message
            if kind == "start":
                if progress:
                    progress(f"closure {current + 1}/{len(names)} {got}")
                continue
            if kind == "result":
                for survivor in payload:
                    leftovers.setdefault(survivor, set()).add(got)
            else:  # "untraceable" or "timeout", with one line of why
                report.closure_failures.append({"op": got, "kind": kind, "message": payload})
            current += 1
        child.close()
        start = current
    report.closure_untraced = len(report.closure_failures)
    report.closure_gaps = [ClosureGap(op, sorted(sources)) for op, sources in sorted(leftovers.items())]


PROBE_TIMEOUT_S = 20.0  # one table entry: a few fake-tensor traces, well under a second when healthy
PROBE_GRACE_S = 10.0  # the parent waits this much longer before it kills the child
PROBE_STARTUP_S = 300.0  # a fresh probe process imports torch and builds the table first


def _closure_log_path() -> str:
    import tempfile

    handle, path = tempfile.mkstemp(prefix="opspec-drift-closure-", suffix=".log")
    os.close(handle)
    return path


class ProbeChild:
    """The probe process and the pipe its messages come back on."""

    def __init__(self, names: list[str], core: set[str], log_path: str, probe: Callable, timeout: float):
        import multiprocessing

        context = multiprocessing.get_context("forkserver")
        self.receiver, sender = context.Pipe(duplex=False)
        self.process = context.Process(target=_probe_entries, args=(names, sorted(core), sender, log_path, probe, timeout), daemon=True)
        self.process.start()
        sender.close()

    def receive(self, timeout: float):
        """The next message, ``"died"`` when the child is gone, None when it stays silent past ``timeout``."""
        try:
            if not self.receiver.poll(timeout):
                return None
            return self.receiver.recv()
        except (EOFError, ConnectionError, OSError):
            self.process.join(10)
            return "died"

    def exit_reason(self) -> str:
        code = self.process.exitcode
        if code is None:
            return "exit status unknown"
        return f"killed by signal {-code}" if code < 0 else f"exit status {code}"

    def kill(self) -> None:
        self.process.kill()
        self.process.join(10)

    def close(self) -> None:
        self.receiver.close()
        self.process.join(10)
        if self.process.is_alive():
            self.kill()


class ProbeTimeout(Exception):
    pass


def _probe_entries(names: list[str], core: list[str], sender, log_path: str, probe: Callable, timeout: float) -> None:
    """Child process: for each entry, send ("start", name) and then its non-core survivors,
    or ("untraceable" | "timeout", name, one line). torch's own output goes to ``log_path``."""
    import signal
    import warnings

    import torch
    import torch._dynamo.utils  # noqa: F401 - fake-tensor tracing needs it; a forked parent had it imported

    log = os.open(log_path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    os.dup2(log, 1)
    os.dup2(log, 2)
    warnings.simplefilter("ignore")
    torch.set_num_threads(1)

    def expire(signum, frame):
        raise ProbeTimeout

    signal.signal(signal.SIGALRM, expire)
    core_set = set(core)
    torch_table = decomp_table.as_torch_table(torch_ops.core_decomposition_table())
    live = torch_ops.all_aten_schemas()
    sender.send(("ready", "", None))
    for name in names:
        sender.send(("start", name, None))
        signal.setitimer(signal.ITIMER_REAL, timeout)
        try:
            kind, payload = probe(name, live.get(name, ""), core_set, torch_table)
        except ProbeTimeout:
            kind, payload = "timeout", f"no result within {timeout:g}s"
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
        sender.send((kind, name, payload))
    sender.send(("done", "", None))
    sender.close()


def _probe(name: str, schema: str, core: set[str], torch_table) -> tuple[str, Any]:
    """("result", non-core survivors) or ("untraceable", why), the full error in the log."""
    import traceback

    try:
        op = torch_ops.resolve(name)
        calls = _sample_calls(schema, TestingHints(), 3 * SAMPLES_PER_CLOSURE_PROBE, seed=0)
    except ProbeTimeout:
        raise
    except Exception as err:
        print(f"== {name}: cannot draw calls\n{traceback.format_exc()}", flush=True)
        return "untraceable", f"cannot draw calls: {one_line(err, 200)}"
    produced: set[str] | None = None
    traced = 0
    last_error = "no drawn call"
    for call in calls:
        if traced == SAMPLES_PER_CLOSURE_PROBE:
            break
        try:
            found = set(torch_ops.trace_ops(op, call.args, call.kwargs, torch_table, fake=True))
        except ProbeTimeout:
            raise
        except Exception as err:  # not a valid call, most often
            print(f"== {name}: tracing a drawn call failed\n{traceback.format_exc()}", flush=True)
            last_error = one_line(err, 200)
            continue
        produced = (produced or set()) | found
        traced += 1
    if produced is None:
        return "untraceable", f"no drawn call could be traced (last: {last_error})"
    return "result", sorted(produced - core)


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
    drifted = [r for r in report.rules if r.drifted]
    section(
        f"decomposition drift ({len(report.rules)} rules traced)",
        [f"{r.op}: " + (f"produces undeclared {', '.join(r.undeclared)}" if r.undeclared else r.problem) for r in drifted],
    )
    if report.closure_probed:
        section(
            f"closure gaps: non-core ops surviving torch's default decomposition "
            f"({report.closure_probed} table entries probed, {report.closure_untraced} not traced)",
            [f"{gap.op}  <- {', '.join(gap.produced_by[:4])}{' ...' if len(gap.produced_by) > 4 else ''}" for gap in report.closure_gaps],
        )
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
