"""Special-case rows held against a backend: every row of the op, run through a compiled program, judged exactly.

A case's drawn examples compare the backend with eager within tolerances; its special
cases (``opset/special_cases``) state the exact result where semantics branch, and
``judge`` holds the backend to them (NaN where NaN, the sign of a zero the row writes,
the row's latitude allowed and named). A row's call becomes an example like a drawn
one. The rows in the case's dtype ride on the case's first drawn program (:class:`Ride`):
the backend compiles one graph holding the drawn call and every row's call, so they cost
no compile of their own, which is what keeps a default run's time near what it was
without them. Rows that cannot ride (a write, a shape query, a ride that did not build)
are grouped by key and run on a program the case already built where one fits, else
together, every call in one program (one more compile). A row a shared program gets
wrong runs again alone, in a program of its own, for its verdict and its repro.

Which rows run in a case: those checked in the case's dtype, and no others. A case is
one op in one dtype: a row in int64 belongs to the int64 case and runs when that dtype
is run (``--dtypes``), so a float32 verdict never comes from a row a backend cannot
compile in another dtype.
Rows that raise are left to ``opspec validate`` (a backend may refuse earlier or
later than eager); a row torch itself fails on the installed version, or that does
not apply to it (``applies``), is not held against the backend.
"""
from __future__ import annotations

import dataclasses
import functools
from pathlib import Path
from dataclasses import dataclass
from typing import Any, Callable

import torch
from torch.utils import _pytree

from opspec.conform import cases, evidence
from opspec.conform.backends import CompileError
from opspec.spec.errors import detail_lines, one_line
from opspec.spec import row_refs
from opspec.spec import special_cases as spec_cases
from opspec.spec.special_cases import OUT_OF_CONTRACT, SpecialCase, load_special_cases
from opspec.testing import special_cases as sc
from opspec.testing import strategies, subnormal_latitude
from opspec.testing.strategies import Call


@dataclass
class RowRun:
    row: SpecialCase | None  # None: a batch of rows run as one example
    dtype: str
    example: cases.Example
    compiled_for: cases.Example | None = None  # the example whose program the row ran on (None: its own)
    distance: int = 0  # how far from the backend's target its program ran the op (evidence.DISTANCE)


# failures of a shared program set aside (its units then run alone): a process that saw one may carry it
swallowed = [0]


@functools.lru_cache(maxsize=1)
def all_rows() -> dict[str, tuple[SpecialCase, ...]]:
    return load_special_cases()


def rows_for(op, dtype: str, device: str) -> list[RowRun]:
    """The rows this case holds the backend to: those checked in the case's dtype, as examples in it."""
    hinted = [cases.dtype_name(d) for d in strategies.dtypes_under_test(op.name, op.testing)]
    runs = []
    for row in all_rows().get(op.name, ()):
        if row.raises or row.klass == OUT_OF_CONTRACT or not sc.applies(row, torch.__version__, device):
            continue
        if dtype not in sc.case_dtypes(row, hinted):
            continue
        try:
            args, kwargs = sc.materialize(row, op.name, dtype, device)
        except Exception:  # noqa: BLE001 - a row that cannot be run is opspec validate's finding
            continue
        example = cases.Example.of(Call(op.name, args, kwargs))
        if not sc.judge(row, dtype, _output(example, _run(example.program(), example)), latitude=False).ok:
            continue  # torch itself gives another result here: the checker's finding, not the backend's
        runs.append(RowRun(row, dtype, example))
    return runs


def where(row: SpecialCase) -> str:
    """The row's citation as the repository spells it (``opset/special_cases/FILE#id``), whichever copy of the data
    (checkout or wheel) was read."""
    return row.cite


def row_at(place: str, says: str | None = None, op: str | None = None) -> SpecialCase:
    """The row :func:`where` names (a repro says which row it replays); a report written before rows had ids cites
    ``FILE:LINE``, and finds its row by file and claim (of ``op``, where rows of several ops say the same).
    LookupError when the data has no such row."""
    rows = [row for name, found in all_rows().items() if op is None or name == op for row in found] \
        or [row for found in all_rows().values() for row in found]
    named = row_refs.split(place)
    for row in rows:
        if named == (row.file, row.id):
            return row
    file = named[0] if named else Path(place.rsplit(":", 1)[0]).name
    found = spec_cases.find_row(all_rows(), file, says, op if op in all_rows() else None) if says is not None else None
    if found is not None:
        return found
    raise LookupError(f"no special-case row at {place}" + (f" saying {says!r}" if says else ""))


def failure(backend, example: cases.Example, place: str, dtype: str, says: str | None = None,
            built_by: cases.Example | None = None) -> dict | None:
    """The row at ``place``, called as ``example`` (its inputs in ``dtype``), through ``backend``, judged as a run
    judges it: a failing record (compile-error, run-error or fail), or None when the row holds. ``built_by``: the
    example whose program the row ran on in the run (None: a program built for ``example`` itself)."""
    compiled: dict = {}
    if built_by is not None and built_by is not example:  # as the run did: built for an earlier example
        try:
            compiled[example.key] = backend.compile(built_by.program(), built_by.fresh_inputs())
        except Exception as err:  # noqa: BLE001 - the backend under test may fail any way
            return {"status": "compile-error", "message": f"special case {place} ({dtype}): {one_line(err)}"}
    failed = run_unit(backend, compiled, (example, [RowRun(row_at(place, says, example.call.op), dtype, example)],
                                          None), [])
    return failed[0] if failed is not None else None


def _run(program, example: cases.Example) -> Any:
    try:
        return program(*example.fresh_inputs())
    except Exception as err:  # noqa: BLE001 - the outcome judged
        return err


def _output(example: cases.Example, result: Any) -> Any:
    """The op's own output: in-place and out= programs also return the tensors they write."""
    if example.written and isinstance(result, tuple):
        return result[0]
    return result



def batchable(op, run: RowRun) -> bool:
    """A pointwise row whose tensors share one dtype (so broadcasting them changes no promotion) and one output."""
    tensors = run.example.inputs
    return (op.category.startswith("pointwise") and not run.example.written and bool(tensors)
            and all(t.numel() for t in tensors) and len({t.dtype for t in tensors}) == 1
            and run.row.expect_each is None)


@dataclass
class Batch:
    """Pointwise rows sharing constants and dtypes, run as one call: each row's tensors broadcast,
    flattened and laid end to end, padded, in a shape a built program takes where one fits."""

    runs: list[RowRun]
    example: cases.Example
    sizes: list[tuple[int, tuple]]  # per row: (elements, broadcast shape)

    def outputs(self, result: torch.Tensor) -> list[torch.Tensor]:
        flat, start, parts = result.reshape(-1), 0, []
        for count, shape in self.sizes:
            parts.append(flat[start:start + count].reshape(shape))
            start += count
        return parts


def _layout(total: int, rank: int) -> tuple[int, ...]:
    """A shape of ``rank`` dims, each at least 2 (dynamic shapes keep 0 and 1 apart), holding ``total``."""
    lead = 2 ** (rank - 1)
    return (2,) * (rank - 1) + (max(2, -(-total // lead)),)


def make_batch(op, runs: list[RowRun], compiled: dict) -> Batch:
    first = runs[0].example
    broadcast = [torch.broadcast_tensors(*r.example.inputs) for r in runs]
    sizes = [(b[0].numel(), tuple(b[0].shape)) for b in broadcast]
    total = sum(n for n, _ in sizes)
    ranks = [k[2][0][1] for k in compiled if k[:2] == first.key[:2]
             and all(t[1] >= 1 and all(s >= 2 for s in t[2]) and t[5] == "contiguous" for t in k[2])
             and len({t[1] for t in k[2]}) == 1]
    shape = _layout(total, ranks[0] if ranks else 1)
    count = 1
    for s in shape:
        count *= s
    inputs = []
    for slot in range(len(first.inputs)):
        flat = torch.cat([b[slot].reshape(-1) for b in broadcast])
        pad = flat[-1:].expand(count - total) if count > total else flat[:0]
        inputs.append(torch.cat([flat, pad]).reshape(shape).contiguous())
    call = Call(op.name, cases.fill(first.args, inputs), cases.fill(first.kwargs, inputs))
    return Batch(runs, cases.Example.of(call), sizes)


def rows_and_units(op, case: cases.Case, compiled: dict) -> tuple[list[RowRun], list[tuple]]:
    """The case's rows, and the units they run as: (example, its rows, the Batch or None), pointwise rows that
    share constants and a dtype batched into one call."""
    runs = rows_for(op, case.dtype, case.device)
    groups: dict[tuple, list[RowRun]] = {}
    single: list[RowRun] = []
    for run in runs:
        if batchable(op, run):
            groups.setdefault((run.example.key[:2], run.dtype), []).append(run)
        else:
            single.append(run)
    units: list[tuple[cases.Example, list[RowRun], Batch | None]] = []
    for group in groups.values():
        batch = make_batch(op, group, compiled)
        units.append((batch.example, group, batch))
    units += [(run.example, [run], None) for run in single]
    return runs, units


class Ride:
    """The case's rows riding on its first drawn program, as a backend for ``replay.judge``.

    The first program the runner has the backend compile becomes one graph: the drawn call, then every riding
    unit's call on its own inputs, outputs flattened. Each run of it returns the drawn call's output and keeps
    the units' outputs of the first run (``results``), judged by :func:`check` afterwards. Where the shared
    graph does not build or run, the drawn program is compiled alone and the units run as if none rode
    (``results`` stays None); later programs are the backend's own.
    """

    def __init__(self, backend, op, case: cases.Case):
        self.backend = backend
        self.runs, self.all_units = rows_and_units(op, case, {})
        self.units = [u for u in self.all_units if not u[0].written and u[0].call.op not in cases.SYMBOLIC
                      and _in_dtype(u[0], case.dtype)]
        self.results: list | None = None
        self.shared = None  # the program the backend built for the drawn call and the rows together
        self.distance = 0  # how far from the target the shared program ran the op (set by the runner)
        self.used = not self.units
        self.rebuilt = False  # set when the shared program failed on a call and the program was built for that call

    def compile(self, program, inputs):
        if self.used:
            return self.backend.compile(program, inputs)
        self.used = True
        together, count = _together([u[0] for u in self.units]), len(inputs)

        def row_inputs() -> list:
            # sizes as dynamic as the run's: a backend can be right at an edge with static sizes and wrong with
            # symbolic ones (Inductor from torch 2.10 adds bool tensors with an alpha wrongly only then)
            return [t for u in self.units for t in u[0].fresh_inputs()]

        def shared(*tensors):
            return tuple(_pytree.tree_leaves((program(*tensors[:count]), together(*tensors[count:]))))

        seen, mark = evidence.current(), len(evidence.current() or ())
        try:
            spec = _pytree.tree_flatten((program(*[t.clone() for t in inputs]), together(*row_inputs())))[1]
            built = self.backend.compile(shared, [*inputs, *row_inputs()])
        except Exception:  # noqa: BLE001 - the rows then run on their own; the drawn program is judged alone
            swallowed[0] += 1
            _forget(seen, mark)
            return self.backend.compile(program, inputs)
        plain: list = []

        def run(*tensors):
            if not plain:
                mark = len(seen or ())
                try:
                    drawn, rows = _pytree.tree_unflatten(list(built(*tensors, *row_inputs())), spec)
                except Exception:  # noqa: BLE001 - as above, found again by the program alone
                    swallowed[0] += 1
                    _forget(seen, mark)  # what a program that did not run saw says nothing of the case
                    self.results = None
                    plain.append(self.backend.compile(program, list(tensors)))
                    self.rebuilt = True  # later calls of the key run on the program built for this one
                else:
                    if self.results is None:
                        self.results = list(rows)
                    return drawn
            return plain[0](*tensors)
        self.shared = run
        return run


def _forget(seen: list | None, mark: int) -> None:
    if seen is not None:
        del seen[mark:]


def check(backend, op, case: cases.Case, compiled: dict, budget: int,
          built_by: dict | None = None, ride: Ride | None = None,
          before: Callable[[RowRun], None] | None = None,
          suspect: str | None = None) -> tuple[dict | None, RowRun | None, dict]:
    """(a failing record or None, the row it failed on, a summary); when every row holds, the middle item is the
    row (or batch of rows, as one example) whose program ran the op farthest from the backend's target (its
    runtime, or PyTorch), for the case's repro.

    ``compiled`` maps compile keys to the programs the case already built; rows add theirs, at most
    ``budget`` new programs; rows that would need more are counted in the summary as not run. ``built_by``
    maps compile keys to the example each program was built for (rows add theirs), so a repro rebuilds it.
    ``before``: every row runs alone, in order, with no budget, and ``before(row)`` is called first (the
    runner writes the row's repro, so a crash leaves the row that caused it); the row at ``suspect`` (where)
    runs first.
    """
    seen = evidence.current()
    built_by = {} if built_by is None else built_by
    farthest: list[RowRun] = []  # at most one: the unit whose program ran the op farthest from the target

    def run_together(group: list) -> tuple | None:
        if len(group) < 2:
            return run_watched(group[0]) if group else None
        before = len(seen) if seen is not None else 0
        suspects = _suspects(backend, group, used)
        own = _in_dtype(group[0][0], case.dtype)
        together = evidence.distance(op.name, seen[before:]) if own and seen is not None else 0
        if seen is not None and not own:
            del seen[before:]
        # a program of all their calls that ran the op away from the target: the units alone, until one shows
        wrong = {id(u) for u in suspects}  # units hold tensors: compared by identity
        for unit in [*suspects, *(u for u in group if together and id(u) not in wrong)]:
            if farthest and farthest[0].distance >= together and id(unit) not in wrong:
                break
            failed = run_watched(unit)
            if failed is not None:
                return failed
        return None

    def run_watched(unit) -> tuple | None:
        before = len(seen) if seen is not None else 0
        failed = run_unit(backend, compiled, unit, used, built_by)
        example, group, batch = unit
        if seen is not None and not _in_dtype(example, case.dtype):
            # a row in another dtype (integer semantics, promotion) is judged for its values; who computed it
            # says nothing of this case's dtype (a float32 delegate leaves int64 to the runtime)
            del seen[before:]
        elif failed is None and seen is not None:
            distance = evidence.distance(op.name, seen[before:])
            if distance > (farthest[0].distance if farthest else 0):
                farthest[:] = [RowRun(group[0].row if batch is None else None, group[0].dtype, example,
                                      built_by.get(example.key), distance)]
        return failed

    used: list[str] = []
    if before is not None:
        runs = sorted(rows_for(op, case.dtype, case.device), key=lambda run: where(run.row) != suspect)
        for run in runs:
            owner = built_by.get(run.example.key) if run.example.key in compiled else None
            run = dataclasses.replace(run, compiled_for=owner if owner is not run.example else None)
            before(run)
            failed = run_watched((run.example, [run], None))
            if failed is not None:
                return failed
        return None, (farthest[0] if farthest else None), {"rows": len(runs), "run": len(runs), "latitude": used}
    runs, units = (ride.runs, ride.all_units) if ride is not None else rows_and_units(op, case, compiled)
    ran = 0
    if ride is not None and ride.results is not None:  # rows that rode on the drawn program: judged from it
        ridden = [u for u in units if any(u is r for r in ride.units)]
        units = [u for u in units if not any(u is r for r in ride.units)]
        wrong = []
        for unit, result in zip(ride.units, ride.results):
            noted: list[str] = []
            (wrong.append(unit) if _wrong_rows(unit, result, noted) is not None else used.extend(noted))
        # a unit the shared program got wrong runs alone for its verdict; where the shared program ran the op
        # away from the target, alone too, until one shows it (the drawn call may be what did)
        for unit in [*wrong, *(u for u in ridden if ride.distance and not any(u is w for w in wrong))]:
            if farthest and farthest[0].distance >= ride.distance and not any(unit is w for w in wrong):
                break
            failed = run_watched(unit)
            if failed is not None:
                return failed
        ran += sum(len(u[1]) for u in ridden)
    keys: dict[tuple, int] = {}
    for example, group, _ in units:
        keys[example.key] = keys.get(example.key, 0) + len(group)
    allowed = {k for k in keys if k in compiled}
    allowed |= set(sorted((k for k in keys if k not in compiled), key=lambda k: -keys[k])[:budget])
    rest = []
    for unit in sorted(units, key=lambda u: u[0].key not in compiled):
        if unit[0].key not in allowed:
            rest.append(unit)
            continue
        failed = run_watched(unit)
        if failed is not None:
            return failed
        ran += len(unit[1])
    # the rows beyond the budget: every one of their calls in one program, one compile for all of them;
    # a unit that program gets wrong (or a program that does not build) is run alone for its verdict. Rows that
    # cannot share a program (an op that writes its input, a shape query) run alone: none is left out
    together = [u for u in rest if not u[0].written and u[0].call.op not in cases.SYMBOLIC]
    for unit in [u for u in rest if not any(u is t for t in together)]:
        failed = run_watched(unit)
        if failed is not None:
            return failed
        ran += len(unit[1])
    for group in ([u for u in together if _in_dtype(u[0], case.dtype)],  # in the case's dtype, then the others
                  [u for u in together if not _in_dtype(u[0], case.dtype)]):
        failed = run_together(group)
        if failed is not None:
            return failed
        ran += sum(len(u[1]) for u in group)
    return None, (farthest[0] if farthest else None), {"rows": len(runs), "run": ran, "latitude": used}


def run_unit(backend, compiled: dict, unit, used: list[str], built_by: dict | None = None) -> tuple | None:
    """A failing ``check`` result for one unit (a row, or a batch of pointwise rows), or None when it holds.
    The failing row comes back with ``compiled_for`` set where it ran on a program built for another example."""
    example, group, batch = unit
    place = f"special case {where(group[0].row)} ({group[0].dtype}): {group[0].row.says}"
    built_by = {} if built_by is None else built_by
    built = compiled.get(example.key)
    if built is not None and built_by.get(example.key) is not None and built_by[example.key] is not example:
        group = [dataclasses.replace(run, compiled_for=built_by[example.key]) for run in group]
        unit = (example, group, batch)
    def erred(status: str, message: str, err: BaseException | None = None) -> tuple:
        if batch is not None:  # which row: each alone, as the repro will run it; else the batch's own call
            for run in group:
                failed = run_unit(backend, compiled, (run.example, [run], None), used, built_by)
                if failed is not None:
                    return failed
        if batch is None:
            failed = {"status": status, "message": f"{place}: {message}"}
            if err is not None and detail_lines(err):  # the backend's own diagnostic: its error's further lines
                failed["diagnostic"] = detail_lines(err)
            return failed, group[0], {}
        # no row errs alone: the batch's call is an input like a drawn one, judged and replayed as one (row None)
        rows = ", ".join(where(run.row) for run in group)
        return ({"status": status, "message": f"special-case rows {rows} ({group[0].dtype}) run as one call: {message}"},
                RowRun(None, group[0].dtype, example, group[0].compiled_for), {})

    if built is None:
        built_by[example.key] = example
        try:
            built = compiled[example.key] = backend.compile(example.program(), example.fresh_inputs())
        except CompileError as err:
            return erred("compile-error", str(err), err)
        except Exception as err:  # noqa: BLE001 - the backend under test may fail any way
            return erred("compile-error", one_line(err), err)
    try:
        result = built(*example.fresh_inputs())
    except CompileError as err:  # a backend that compiles at the first call (torch.compile) fails there
        return erred("compile-error", str(err), err)
    except Exception as err:  # noqa: BLE001
        return erred("run-error", one_line(err), err)
    wrong = _wrong_rows(unit, result, used)
    if wrong is not None:
        run, verdict = wrong
        return ({"status": "fail", "message": f"special case {where(run.row)} ({run.dtype}): {run.row.says}: "
                 f"{verdict.detail}"}, run, {})
    return None


def _in_dtype(example: cases.Example, dtype: str) -> bool:
    """Whether the example runs in the case's dtype: its first tensor's, as a case is named (no tensor: yes)."""
    tensors = [t for t in example.inputs if isinstance(t, torch.Tensor)]
    return not tensors or cases.dtype_name(tensors[0].dtype) == dtype


def _wrong_rows(unit, result, used: list[str]):
    """(the first row the unit's result breaks, its judgement), or None; latitudes used are noted."""
    example, group, batch = unit
    try:
        outputs = batch.outputs(result) if batch is not None else [_output(example, result)]
    except Exception:  # noqa: BLE001 - a result of the wrong size breaks the first row
        outputs = [result] * len(group)
    for run, output in zip(group, outputs):
        verdict = sc.judge(run.row, run.dtype, output)
        if not verdict.ok:
            flushed = _under_policy(run, output)
            if flushed is not None:
                used.append(f"{where(run.row)}: {flushed}")
                continue
            return run, verdict
        if verdict.latitude:
            used.append(f"{where(run.row)}: {verdict.latitude}")
    return None


def _under_policy(run: RowRun, output: Any) -> str | None:
    """The latitude the opset's subnormal policy gives a row's wrong output, or None: eager's own answer on the
    row's inputs with their subnormals read as zero, or with the subnormals of both answers read as zero, in the
    dtypes the policy lets flush (a row whose input is a subnormal holds for a backend that keeps subnormals)."""
    example = run.example
    eager = _output(example, _run(example.program(), example))
    if isinstance(eager, BaseException) or isinstance(output, BaseException):
        return None

    def rerun(inputs: list) -> Any:
        return _output(example, example.program()(*inputs))

    verdict = subnormal_latitude.rejudge(output, eager, list(example.fresh_inputs()), rerun, subnormal_latitude.exactly)
    if verdict is None:
        return None
    return f"subnormal policy: {verdict.flushed} subnormal(s) read as zero (opset/accuracy.yaml#subnormals)"


def _together(examples: list[cases.Example]):
    """One program returning every example's call, each with its own constants, and its inputs laid end to end."""
    calls, offset = [], 0
    for example in examples:
        source = cases.program_source(example.call.op, _shifted(example.args, offset), _shifted(example.kwargs, offset), ())
        calls.append(source.split("return ", 1)[1].strip())
        offset += len(example.inputs)
    params = ", ".join(f"t{i}" for i in range(offset))
    source = f"def program({params}):\n    return (\n" + "".join(f"        {call},\n" for call in calls) + "    )\n"
    namespace = cases.program_globals()
    exec(compile(source, f"<opspec special cases {examples[0].call.op}>", "exec"), namespace)  # noqa: S102 - literals
    return namespace["program"]


def _shifted(value: Any, offset: int) -> Any:
    if isinstance(value, cases.Slot):
        return cases.Slot(value.index + offset)
    if isinstance(value, (list, tuple)):
        return type(value)(_shifted(v, offset) for v in value)
    if isinstance(value, dict):
        return {k: _shifted(v, offset) for k, v in value.items()}
    return value


def _suspects(backend, units: list, used: list[str]) -> list:
    """The units one program of all their calls gets wrong; all of them when that program does not build or run."""
    examples = [u[0] for u in units]

    def inputs() -> list:
        return [t for example in examples for t in example.fresh_inputs()]

    noted: list[str] = []
    try:
        results = backend.compile(_together(examples), inputs())(*inputs())
    except Exception:  # noqa: BLE001 - whatever broke is found again unit by unit
        swallowed[0] += 1
        return list(units)
    if not isinstance(results, (tuple, list)) or len(results) != len(units):
        return list(units)
    wrong = [unit for unit, result in zip(units, results) if _wrong_rows(unit, result, noted) is not None]
    used += noted
    return wrong
