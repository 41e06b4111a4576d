"""Closure of an opset version: the non-core ops a backend still meets after the version's own table.

Every functional entry of the version's decomposition table (torch's core table with the
version's default rules laid over it) that is not core is traced on drawn calls with that
table, on fake tensors, and functionalized as ``torch.export`` does: an in-place op a torch
decomposition emits (``_fused_rms_norm``'s ``add_``) is turned back into its functional
form and listed apart, with the torch decomposition that emits it, instead of counting as
a gap. What survives and is not core is a gap of the version, unless the version declares
it out of scope by decision.

A backward entry whose drawn calls cannot be traced (its arguments must agree with a
forward call) is traced under its autograd context: its forward op is run with gradients
on drawn calls, the backward call autograd makes is captured, and that call is traced.

Probes draw calls from schemas alone, and some torch kernels crash or hang on arguments
they do not check, so the probes run in child processes (forked from a forkserver, never
from the threaded parent), one per core up to :data:`WORKERS`, whose output goes to a log
file. Each probe has ``PROBE_TIMEOUT_S`` in the child and a little more in the parent: a
child that dies or does not answer is killed, the entry is recorded as ``crash`` or
``timeout``, and a fresh child carries on with the next entry. An entry no call could trace
is ``untraceable``, with the last reason.
"""
from __future__ import annotations

import os
import re
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from opspec.bridge import decomp_table, torch_ops
from opspec.spec.errors import one_line
from opspec.spec.model import Opset, TestingHints, version_key

SAMPLES_PER_PROBE = 2
DRAWS_PER_PROBE = 3 * SAMPLES_PER_PROBE
PROBE_TIMEOUT_S = 20.0  # one table entry: a few fake-tensor traces, well under a second when healthy
PROBE_GRACE_S = 10.0  # the parent waits this much longer before it kills the child
PROBE_STARTUP_S = 300.0  # a fresh probe process imports torch and builds the table first
WORKERS = 4  # probe processes at most; never more than the cores this process may use
BACKWARD_SUFFIX = re.compile(r"_backward(?:_data|_input|_weight)?$")


@dataclass
class ClosureGap:
    op: str  # the non-core op that survives
    produced_by: list[str]  # table entries whose decomposition leaves it behind
    decision: str = ""  # how the version, or a later release, decided it ("out of scope by decision ..."); open if ""
    proposals: list[int] = field(default_factory=list)  # open proposals whose changes name it

    @property
    def open(self) -> bool:
        return not self.decision


@dataclass
class Functionalized:
    """An in-place op a torch decomposition emits; functionalization turns it into its functional form."""

    op: str
    produced_by: list[str]  # table entries whose trace met it
    upstream: list[str]  # what emits it: "aten::x (python.function)", a table entry, or "aten::y's composite kernel"


@dataclass
class Closure:
    table: str  # whose table the entries were traced with
    probed: int = 0
    gaps: list[ClosureGap] = field(default_factory=list)
    functionalized: list[Functionalized] = field(default_factory=list)
    failures: list[dict[str, str]] = field(default_factory=list)  # op, kind (untraceable|timeout|crash), message
    contexts: dict[str, str] = field(default_factory=dict)  # entry -> how it was traced, where not on drawn calls
    log: str = ""  # torch's output and full tracebacks of the probes

    @property
    def open_gaps(self) -> list[ClosureGap]:
        return [gap for gap in self.gaps if gap.open]


def probe_names(opset: Opset) -> list[str]:
    """The functional, non-core entries of the version's table, as torch registers them."""
    live = torch_ops.all_aten_schemas()
    core = opset.core_names()
    return [name for name in sorted(decomp_table.table_by_name(opset))
            if name not in core and name in live and torch_ops.is_functional(live[name])]


def run(opset: Opset, progress: Callable[[str], None] | None = None, *, covered: dict[str, list[int]] | None = None,
        names: list[str] | None = None, probe: Callable | None = None, timeout: float | None = None,
        workers: int | None = None, root: Path | None = None) -> Closure:
    """Probe ``names`` (default :func:`probe_names`) with the version's table; ``covered`` maps an op to the
    open proposals whose changes name it; ``root`` is the opset folder the children load the version from."""
    from opspec.spec import resources

    names = probe_names(opset) if names is None else names
    closure = Closure(f"opset {opset.version}", probed=len(names), log=_log_path())
    workers = max(1, min(workers or WORKERS, len(os.sched_getaffinity(0)), len(names) or 1))
    source = (opset.version, str(root or resources.opset_root()))
    state = _Collected(len(names), progress)
    shares = [names[i::workers] for i in range(workers)]
    threads = [threading.Thread(target=_probe_share, args=(share, sorted(opset.core_names()), source, closure.log,
                                                           probe or _probe, PROBE_TIMEOUT_S if timeout is None else timeout,
                                                           state))
               for share in shares if share]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    decided = {entry.name: entry for entry in opset.out_of_scope}
    later = later_decisions(opset, root)
    covered = covered or {}
    for op, sources in sorted(state.leftovers.items()):
        entry = decided.get(op)
        decision = later.get(op, "")
        if entry is not None:
            decision = f"out of scope by decision{_proposals(entry.proposals)}: {entry.reason}"
        closure.gaps.append(ClosureGap(op, sorted(sources), decision, sorted(covered.get(op, ()))))
    closure.functionalized = [Functionalized(op, sorted(sources), sorted(state.upstream.get(op, ())))
                              for op, sources in sorted(state.inplace.items())]
    closure.failures = sorted(state.failures, key=lambda f: f["op"])
    closure.contexts = dict(sorted(state.contexts.items()))
    return closure


def later_decisions(opset: Opset, root: Path | None = None) -> dict[str, str]:
    """op -> how the first version released after ``opset`` decided it (core, a rule, or out of scope), for the ops
    that version covers and ``opset`` does not: a gap a later release closed is decided, and upgrading closes it."""
    from opspec.spec import load

    newer = [info.version for info in load.load_versions(root)
             if info.status == "released" and version_key(info.version) > version_key(opset.version)]
    found: dict[str, str] = {}
    for version in newer:
        later = load.load_opset(version, root)
        named = {**{op.name: ("core", op.raw) for op in later.ops if op.status == "active"},
                 **{rule.op: (f"decomposed by a {rule.kind} rule", rule.raw) for rule in later.rules},
                 **{op.name: (f"out of scope: {op.reason}", {"proposals": op.proposals}) for op in later.out_of_scope}}
        for op, (how, raw) in named.items():
            if op not in found and op not in opset.core_names() and op not in opset.rules_by_op:
                found[op] = f"decided in {version}{_proposals(raw.get('proposals') or ())}: {how}"
    return found


def _proposals(numbers) -> str:
    return f" (proposal {', '.join(f'{n:04d}' for n in numbers)})" if numbers else ""


class _Collected:
    """What the probe threads found, merged under one lock, and the progress they report."""

    def __init__(self, total: int, progress):
        self.lock = threading.Lock()
        self.total, self.done, self.progress = total, 0, progress
        self.leftovers: dict[str, set[str]] = {}
        self.inplace: dict[str, set[str]] = {}
        self.upstream: dict[str, set[str]] = {}
        self.failures: list[dict[str, str]] = []
        self.contexts: dict[str, str] = {}

    def started(self, name: str) -> None:
        with self.lock:
            self.done += 1
            if self.progress:
                self.progress(f"closure {self.done}/{self.total} {name}")

    def failed(self, name: str, kind: str, message: str) -> None:
        with self.lock:
            self.failures.append({"op": name, "kind": kind, "message": message})

    def result(self, name: str, payload: dict[str, Any]) -> None:
        with self.lock:
            for survivor in payload.get("survivors", ()):
                self.leftovers.setdefault(survivor, set()).add(name)
            for op, owners in payload.get("inplace", {}).items():
                self.inplace.setdefault(op, set()).add(name)
                self.upstream.setdefault(op, set()).update(owners)
            if payload.get("context"):
                self.contexts[name] = payload["context"]


def _probe_share(names: list[str], core: list[str], source, log: str, probe: Callable, timeout: float,
                 state: _Collected) -> None:
    """One worker: its entries in order, a fresh child after each crash or hang."""
    start = 0
    while start < len(names):
        child = ProbeChild(names[start:], core, source, log, probe, timeout)
        current = start
        ready = child.receive(PROBE_STARTUP_S)  # importing torch and building the table, on a loaded machine
        if not isinstance(ready, tuple):
            child.kill()
            state.started(names[current])
            state.failed(names[current], "crash" if ready == "died" else "timeout",
                         f"the probe process did not start ({child.exit_reason()})")
            start = current + 1
            continue
        while current < len(names):
            name = names[current]
            message = child.receive(timeout + PROBE_GRACE_S)
            if message is None:  # silent past the deadline: hung (a futex wait, a kernel loop)
                child.kill()
                state.failed(name, "timeout", f"no answer within {timeout + PROBE_GRACE_S:g}s; probe process killed")
                current += 1
                break
            if message == "died":
                state.failed(name, "crash", f"probe process died ({child.exit_reason()})")
                current += 1
                break
            kind, got, payload = message
            if kind == "start":
                state.started(got)
                continue
            if kind == "result":
                state.result(got, payload)
            else:  # "untraceable" or "timeout", with one line of why
                state.failed(got, kind, payload)
            current += 1
        child.close()
        start = current


def _log_path() -> str:
    import tempfile

    handle, path = tempfile.mkstemp(prefix="opspec-drift-closure-", suffix=".log")
    os.close(handle)
    return path


class ProbeChild:
    """A probe process and the pipe its messages come back on."""

    def __init__(self, names: list[str], core: list[str], source, log_path: str, probe: Callable, timeout: float):
        import multiprocessing

        context = multiprocessing.get_context("forkserver")
        self.receiver, sender = context.Pipe(duplex=False)
        self.process = context.Process(target=_probe_entries, args=(names, core, source, sender, log_path, probe, timeout),
                                       daemon=True)
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


def _probe_entries(names: list[str], core: list[str], source, sender, log_path: str, probe: Callable,
                   timeout: float) -> None:
    """Child process: for each entry, send ("start", name) and then what it found, or
    ("untraceable" | "timeout", name, one line). torch's own output goes to ``log_path``."""
    import signal
    import warnings

    import torch
    import torch._dynamo.utils  # noqa: F401 - fake-tensor tracing needs it; a forked parent had it imported

    from opspec.spec import load

    log = os.open(log_path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    os.dup2(log, 1)
    os.dup2(log, 2)
    warnings.simplefilter("ignore")
    torch.set_num_threads(1)

    def expire(signum, frame):
        raise ProbeTimeout

    signal.signal(signal.SIGALRM, expire)
    core_set = set(core)
    version, root = source
    table = decomp_table.decomposition_table(load.load_opset(version, Path(root)))
    live = torch_ops.all_aten_schemas()
    sender.send(("ready", "", None))
    for name in names:
        sender.send(("start", name, None))
        signal.setitimer(signal.ITIMER_REAL, timeout)
        try:
            kind, payload = probe(name, live.get(name, ""), core_set, table)
        except ProbeTimeout:
            kind, payload = "timeout", f"no result within {timeout:g}s"
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
        sender.send((kind, name, payload))
    sender.send(("done", "", None))
    sender.close()


def _probe(name: str, schema: str, core: set[str], table) -> tuple[str, Any]:
    """("result", what the entry leaves behind) or ("untraceable", why), the full error in the log."""
    import traceback

    try:
        op = torch_ops.resolve(name)
        calls = sample_calls(schema, DRAWS_PER_PROBE)
    except ProbeTimeout:
        raise
    except Exception as err:
        print(f"== {name}: cannot draw calls\n{traceback.format_exc()}", flush=True)
        calls, why = [], f"cannot draw calls: {one_line(err, 200)}"
    else:
        why = "no drawn call"
    found, why = _trace_calls(name, op if calls else None, calls, core, table, why)
    if found is None and BACKWARD_SUFFIX.search(torch_ops.split_name(name)[1]):
        captured, context = autograd_calls(name)
        if captured:
            found, why = _trace_calls(name, torch_ops.resolve(name), captured, core, table, why)
            if found is not None:
                found["context"] = context
        else:
            why = f"{why}; under autograd: {context}"
    if found is None:
        return "untraceable", why if why.startswith("cannot") else f"no call could be traced (last: {why})"
    return "result", found


def _trace_calls(name: str, op, calls, core: set[str], table, why: str) -> tuple[dict | None, str]:
    """Trace up to :data:`SAMPLES_PER_PROBE` of ``calls``: (survivors, in-place ops met, and for each the
    decomposition that emits it), or None and the last reason."""
    import traceback

    survivors: set[str] = set()
    inplace: dict[str, set[str]] = {}
    traced = 0
    for call in calls:
        if traced == SAMPLES_PER_PROBE:
            break
        try:
            produced, mutating = trace_functionalized(op, call.args, call.kwargs, table)
        except ProbeTimeout:
            raise
        except Exception as err:  # not a valid call, most often
            print(f"== {name}: tracing a call failed\n{traceback.format_exc()}", flush=True)
            why = one_line(err, 200)
            continue
        survivors |= produced - core
        for mutation, owners in mutating.items():
            inplace.setdefault(mutation, set()).update(owners or {f"{name} (torch's composite kernel)"})
        traced += 1
    if not traced:
        return None, why
    return {"survivors": sorted(survivors), "inplace": {op: sorted(owners) for op, owners in sorted(inplace.items())}}, why


def trace_functionalized(op, args: tuple, kwargs: dict, table) -> tuple[set[str], dict[str, set[str]]]:
    """(ops of the functionalized trace, in-place op the plain trace had -> the decompositions that emitted it)
    of ``op`` under ``table``, on fake tensors; an in-place op no table entry emitted has no owner (a composite
    kernel of torch emitted it).

    make_fx applies a table below functionalization, so a decomposition's in-place ops come out as
    they are; tracing that graph once more under functionalization, with the table, removes them as
    export does (and decomposes the functional ops they become).
    """
    from torch.func import functionalize
    from torch.fx.experimental.proxy_tensor import make_fx

    graph = make_fx(lambda *a: op(*a, **kwargs), decomposition_table=table, tracing_mode="fake")(*args)
    produced = set(torch_ops.graph_ops(graph.graph))
    if all(_functional(name) for name in produced):
        return produced, {}
    owners: dict = {}
    owned = make_fx(lambda *a: op(*a, **kwargs), decomposition_table=_owning(table, owners), tracing_mode="fake")(*args)
    mutating: dict[str, set[str]] = {}
    for node in owned.graph.nodes:
        if node.op == "call_function" and hasattr(node.target, "_schema") and not _functional(torch_ops.op_name(node.target)):
            mutating.setdefault(torch_ops.op_name(node.target), set()).update(owners.get(node, ()))
    graph = make_fx(functionalize(graph, remove="mutations"), decomposition_table=table, tracing_mode="fake")(*args)
    return set(torch_ops.graph_ops(graph.graph)), mutating


def _owning(table, owners: dict) -> dict:
    """``table`` with each entry noting, in ``owners``, the graph nodes it created itself (not its inner entries)."""
    from torch.fx.experimental.proxy_tensor import get_proxy_mode

    def wrapped(key, fn):
        label = f"{torch_ops.op_name(key)} ({_function_name(fn)})"

        def decompose(*args, **kwargs):
            mode = get_proxy_mode()
            graph = mode.tracer.graph if mode is not None else None
            before = set(graph.nodes) if graph is not None else set()
            try:
                return fn(*args, **kwargs)
            finally:
                for node in graph.nodes if graph is not None else ():
                    if node not in before and node not in owners:
                        owners[node] = {label}

        return decompose

    return {key: wrapped(key, fn) for key, fn in table.items()}


def _function_name(fn) -> str:
    fn = getattr(fn, "func", fn)  # functools.partial
    return f"{getattr(fn, '__module__', '?')}.{getattr(fn, '__qualname__', getattr(fn, '__name__', '?'))}"


_FUNCTIONAL: dict[str, bool] = {}


def _functional(name: str) -> bool:
    if name not in _FUNCTIONAL:
        try:
            _FUNCTIONAL[name] = torch_ops.is_functional(torch_ops.schema_of(name))
        except (LookupError, RuntimeError):
            _FUNCTIONAL[name] = True
    return _FUNCTIONAL[name]


def sample_calls(schema: str, count: int, seed: int = 0, hints: TestingHints | None = None) -> list:
    """Valid calls drawn by the shared strategy layer on CPU in float32 (or the first hinted dtype)."""
    import torch

    from opspec.testing import strategies

    hints = hints or TestingHints()
    dtype_names = list(hints.dtypes) or ["float32"]
    name = "float32" if "float32" in dtype_names else dtype_names[0]
    return strategies.draw_examples(strategies.calls(schema, hints, getattr(torch, name), "cpu"), count, seed)


def forward_ops(name: str) -> list[str]:
    """The functional overloads whose derivative may call the backward entry ``name``: its name without
    ``_backward`` (``_data``, ``_input``, ``_weight``), that name with ``_forward``, or without ``_dense``."""
    _, base, _ = torch_ops.split_name(name)
    stem = BACKWARD_SUFFIX.sub("", base)
    if stem == base:
        return []
    stems = {stem, f"{stem}_forward", stem.removesuffix("_dense")}
    live = torch_ops.all_aten_schemas()
    return sorted(n for n, s in live.items() if torch_ops.split_name(n)[1] in stems and torch_ops.is_functional(s))


def autograd_calls(name: str) -> tuple[list, str]:
    """Calls of the backward entry ``name`` that autograd makes when its forward op runs with gradients on drawn
    calls: (calls, "autograd of aten::forward"), or ([], why none were captured)."""
    from opspec.testing.strategies.call import Call

    forwards = forward_ops(name)
    if not forwards:
        return [], "no forward op is named like it"
    target = torch_ops.resolve(name)
    live = torch_ops.all_aten_schemas()
    why = "its forward ops' drawn calls never reach it"
    for forward in forwards:
        try:
            calls = sample_calls(live[forward], DRAWS_PER_PROBE)
            fn = torch_ops.resolve(forward)
        except ProbeTimeout:
            raise
        except Exception as err:
            why = f"{forward}: cannot draw calls: {one_line(err, 120)}"
            continue
        captured = []
        for call in calls:
            try:
                for args, kwargs in _captured(fn, call, target):
                    captured.append(Call(name, args, kwargs))
            except ProbeTimeout:
                raise
            except Exception as err:
                why = f"{forward}: {one_line(err, 120)}"
            if len(captured) >= SAMPLES_PER_PROBE:
                break
        if captured:
            return captured, f"autograd of {forward}"
    return [], why


def _captured(fn, call, target) -> list[tuple[tuple, dict]]:
    """Run ``fn`` on ``call`` with gradients and return the (args, kwargs) of each call autograd made of ``target``."""
    import torch
    from torch.utils._python_dispatch import TorchDispatchMode
    from torch.utils._pytree import tree_map

    def detached(value):
        return value.detach().clone() if isinstance(value, torch.Tensor) else value

    def leaf(value):
        if isinstance(value, torch.Tensor) and value.is_floating_point():
            return value.detach().clone().requires_grad_()
        return value

    seen: list[tuple[tuple, dict]] = []

    class Capture(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            kwargs = kwargs or {}
            if func is target:
                seen.append((tree_map(detached, args), tree_map(detached, kwargs)))
            return func(*args, **kwargs)

    args, kwargs = tree_map(leaf, call.args), tree_map(leaf, call.kwargs)
    inputs = [t for t in torch.utils._pytree.tree_leaves((args, kwargs)) if isinstance(t, torch.Tensor) and t.requires_grad]
    if not inputs:
        return []
    with Capture():
        out = fn(*args, **kwargs)
        outs = [t for t in torch.utils._pytree.tree_leaves(out) if isinstance(t, torch.Tensor) and t.requires_grad]
        if outs:
            torch.autograd.grad(outs, inputs, [torch.ones_like(t) for t in outs], allow_unused=True)
    return seen
