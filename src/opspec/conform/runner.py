"""Running one case against a backend, in this process: draw, compile, run, compare.

The verdict is the case's *outcome* before expectations: ``pass``, ``fallback``
(right, but PyTorch computed it: see :mod:`.evidence`), ``fail``,
``compile-error``, ``run-error`` or ``skip`` (no valid inputs could be drawn).
Every outcome but ``pass`` names who failed (:mod:`.attribution`).
``crash`` and ``timeout`` come from :mod:`.isolation`, ``xfail``/``xpass``
and expected skips from :mod:`.expectations`.
"""
from __future__ import annotations

import contextlib
import functools
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

import torch

from opspec.bridge import versions
from opspec.conform import (
    attribution,
    backends,
    case_accuracy,
    cases,
    evidence,
    properties,
    replay,
    special_rows,
    torch_logs,
)
from opspec.conform.cases import Case, Example
from opspec.results.vocabulary import PASSING
from opspec.spec import atomic, load
from opspec.spec.accuracy import UlpContract
from opspec.testing import compare, contract_compare, kernel_errors
from opspec.testing.strategies import Call

EVIDENCE_HOOK = "the site's page Conform your own backend, section Evidence"


def right_answer_message(found: evidence.Evidence, declaration: backends.Declaration | None) -> str:
    """Why a right answer is not a pass: who computed it instead of the backend's declared target."""
    target = declaration.target if declaration is not None else "the backend"
    if found.executed in evidence.FALLBACK:
        ran = ", ".join(found.pytorch_ops) or "the op"
        return f"right answer, computed by PyTorch: {ran} ran outside the backend ({found.source})"
    if found.executed == "runtime":
        runtime = declaration.runtime if declaration is not None and declaration.runtime else "the backend's runtime"
        inside = f"; in {target}: {', '.join(found.target_ops)}" if found.target_ops else f"; nothing ran in {target}"
        return f"right answer, computed by {runtime}, not {target}: {', '.join(found.runtime_ops)}{inside}"
    if declaration is not None and declaration.evidence == "none":
        return f"right answer, unverified: {declaration.evidence_note or 'the backend declares that nothing can tell'}"
    if found.source == "hook":  # it has a hook: what it said did not cover the op
        return (f"right answer, unverified: the backend's evidence hook, executed_ops(), named no op of the case's "
                f"programs ({found.note or 'it named nothing'})")
    if found.source != "none":  # seen another way (its partitions, its generated code): no hook is missing
        return f"right answer, unverified: {found.note or 'what the backend returned names no op of the case'}" \
               f" (seen from its {found.source})"
    return (f"right answer, unverified: {found.note or 'the backend reported nothing about what it executed'}; a "
            f"backend says who computed each op through its evidence hook, executed_ops() (see {EVIDENCE_HOOK})")


@dataclass(frozen=True)
class Settings:
    """Everything a worker needs to rebuild the runner: plain data, picklable."""

    backend: str
    opset: str | None = None
    max_examples: int = 4
    max_compiles: int = 2
    seed: int = 0
    dynamic: bool = True
    repro_dir: str | None = None  # each example's repro is written here before it runs; kept where it fails
    log_file: str | None = None  # torch's logs (guards, recompiles) go here, not to the terminal
    inputs: str | None = None  # a recorded-call file (opspec-ir JSON): its calls replace the drawn examples
    edges: bool = True  # edge inputs and branch settings on top of the random draws (cases.draw)
    special_cases: bool = True  # the op's special-case rows, judged exactly (special_rows)


WARM_OPSET = "OPSPEC_WARM_OPSET"  # the opset version the workers' forkserver preloads
TAINTED = "_worker_tainted"  # a result's mark for its worker's parent, taken off before the result is kept
# A case's result as the worker sends it back: the fields of its record before expectations are applied. Plain data,
# so it crosses the pipe; the suite reads it as a CaseRecord (results.model) and conform.expectations judges it.
Result = dict[str, Any]


@functools.lru_cache(maxsize=None)
def cached_opset(version: str | None):
    return load.load_opset(version)


class CaseRunner:
    def __init__(self, settings: Settings):
        self.settings = settings
        self.opset = cached_opset(settings.opset)
        self.backend = backends.resolve(settings.backend, self.opset, dynamic=settings.dynamic)
        self.alone, self.suspect = False, None
        if settings.log_file:  # the worker points stderr at the log, or at the running case's capture
            torch_logs.to_stderr()

    def run(self, case: Case, alone: bool = False, suspect: str | None = None) -> Result:
        """The case's result. ``alone``: nothing shares a program (no rows riding on a drawn program, no rows
        batched or run together), and the repro of each drawn example and row is written before it runs: the
        run that confirms a failure, so its result is the first unit that fails on its own, replayable alone.
        ``suspect``: the row the first run failed on, tried first among the rows (one compile, where it fails
        again, instead of one per row before it)."""
        started = time.perf_counter()
        self.alone, self.suspect = alone, suspect
        swallowed = special_rows.swallowed[0]
        torch._dynamo.reset()  # fresh dynamo state: no case sees another's caches or recompile counts
        compiles_before = self.backend.compiles
        self.backend.handed, self.backend.front_end, self.backend.delegated = set(), [], set()
        self.failing: tuple[Example, Example] | None = None  # (failing example, the one its program was built for)
        self.failing_accuracy: UlpContract | None = None  # the contract the accuracy program broke
        static = self.backend.static_evidence()
        # a backend whose evidence follows from what it is (its kernels are PyTorch's by design, or it has no way
        # back to PyTorch) is not watched: what its programs show would only send calls to run again on their own
        with (contextlib.nullcontext(None) if static is not None else evidence.collecting()) as seen:
            try:
                result = self._run(case, seen)
            except kernel_errors.DeviceFault as err:
                result = {"status": "crash", "message": f"{err}; the worker is replaced"}
            except Exception as err:  # a suite bug must cost one case, not the run
                result = {"status": "run-error", "message": f"{attribution.INTERNAL}: {type(err).__name__}: {err}"}
                if kernel_errors.mentions_device_fault(err):
                    result = {"status": "crash", "message": f"device fault: {kernel_errors.first_line(err)}; the worker is replaced"}
            if result["status"] in ("compile-error", "run-error") and device_fault(result.get("message", "")):
                result = {**result, "status": "crash", "message": f"device fault: {result['message']}; the worker is replaced"}
        result.setdefault("message", "")
        result.update(case.as_dict())
        result["compiles"] = self.backend.compiles - compiles_before
        result["handed_ops"] = sorted(self.backend.handed)
        found = static or evidence.judge(case.op, seen)
        result["evidence"] = found.as_dict()
        result["executed"] = found.executed
        if result["status"] == "pass":
            result["status"] = evidence.PASSING_STATUS[found.executed]
            if result["status"] == "pass":
                result.pop("repro", None)
            else:  # a right answer the target did not compute: the repro shows it
                result["message"] = right_answer_message(found, self.backend.declaration)
                repro_file = self._repro_file(case)
                if repro_file is not None:
                    atomic.write_text(repro_file, result["repro"])
                    result["repro_file"] = str(repro_file)
        if result["status"] == "crash":  # a device fault: replaying on a poisoned device proves nothing
            result.update(attribution.device_fault().as_dict())
        elif result["status"] not in PASSING:
            result.update(self._blame(case, result).as_dict())
        if self.backend.delegated:
            result["delegated_ops"] = sorted(self.backend.delegated)
        if special_rows.swallowed[0] != swallowed:  # a shared program failed and was set aside: the process may
            result[TAINTED] = True                  # carry that failure, so it takes no further case
        result["duration_s"] = round(time.perf_counter() - started, 3)
        return result

    def _blame(self, case: Case, result: Result,
               announce: Callable[[str, str], None] = lambda layer, name: None) -> attribution.Blame:
        failing = self.failing
        rule = self.opset.rules_by_op.get(case.op)
        own_rule = rule is not None and not rule.uses_torch

        def reproduces(layer: str, reference: backends.Backend) -> str | None:
            if self.failing_accuracy is not None:  # the layer on the same accuracy program, held to the contract
                announce(layer, reference.name)
                return case_accuracy.reproduces(reference, self.failing_accuracy, case.device,
                                                case.seed(self.settings.seed))
            if failing is None:
                return None
            announce(layer, reference.name)
            op, seed = self.opset.ops_by_name[case.op], case.seed(self.settings.seed)
            example, built_by = failing
            compiled: dict = {}
            row = result.get("special_case")
            try:
                if row is not None:  # a special-case row: the layer is held to the row, as the backend was
                    failed = special_rows.failure(reference, example, row["row"], row["dtype"], row.get("says"),
                                                  built_by=built_by)
                    return failed["status"] if failed is not None else None
                if built_by is not example:  # as the run did: built for an earlier example, run on this one
                    replay.judge_example(reference, built_by, op, seed, compiled=compiled)
                    compiled[example.key] = compiled.get(built_by.key)
                outcome = replay.judge_example(reference, example, op, seed, compiled=compiled)
            except Exception as err:  # noqa: BLE001 - the reference itself broke: it reproduces
                return type(err).__name__
            return outcome["status"] if isinstance(outcome, dict) else None

        try:
            return attribution.attribute(result["status"], result.get("message", ""), self.backend, reproduces,
                                         own_rule)
        except Exception as err:  # noqa: BLE001 - attribution must not cost the result
            return attribution.Blame("opspec", "harness", f"attribution raised {type(err).__name__}: {err}")

    def attribute_lost(self, case: Case, result: Result, repro: str,
                       announce: Callable[[str, str], None]) -> dict[str, str]:
        """Who failed, for a case whose worker died: its repro's example through the reference layers.
        ``announce(layer, reference)`` is called before each, so a parent that loses this worker too knows where."""
        torch._dynamo.reset()
        self.backend.front_end = []
        loaded = replay.load_repro(repro)
        if "accuracy_samples" in loaded["CASE"]:  # the worker died in the case's accuracy program
            self.failing_accuracy = contract_compare.contract_for(case.op, case.dtype)
            return self._blame(case, result, announce).as_dict()
        example = cases.Example.of(Call(case.op, tuple(loaded["args"]), dict(loaded["kwargs"])))
        built_by = example
        if "compiled_for" in loaded["CASE"]:
            first_args, first_kwargs = loaded["CASE"]["compiled_for"]
            built_by = cases.Example.of(Call(case.op, tuple(first_args), dict(first_kwargs)))
        self.failing, self.failing_accuracy = (example, built_by), None
        return self._blame(case, result, announce).as_dict()

    def _run(self, case: Case, seen: list | None = None) -> Result:
        op = self.opset.ops_by_name[case.op]
        absence = versions.op_absence(op)
        if absence:  # the installed torch lacks the op (or the schema the opset records)
            return {"status": "skip", "message": absence.reason, "examples": 0}
        seed = case.seed(self.settings.seed)
        try:
            if self.settings.inputs:
                examples = [Example.of(call) for call in recorded_calls(self.settings.inputs, case)]
            else:
                examples = cases.draw(op, case.dtype, case.device, max_examples=self.settings.max_examples,
                                      max_compiles=self.settings.max_compiles, seed=seed,
                                      edges=self.settings.edges)
        except cases.NoValidCall as err:
            return {"status": "skip", "message": str(err), "examples": 0}
        except kernel_errors.DeviceFault:
            raise
        except Exception as err:  # hypothesis could not satisfy the strategy
            if kernel_errors.mentions_device_fault(err):  # or a draw faulted the device, wrapped on its way out
                raise kernel_errors.DeviceFault(f"device fault: {kernel_errors.first_line(err)}") from err
            return {"status": "skip", "message": f"no valid inputs could be drawn: {type(err).__name__}: {err}"}
        if not examples:
            return {"status": "skip", "message": "the eager kernel rejected every drawn input", "examples": 0}
        checker = properties.CHECKERS.get(op.name)
        contract = contract_compare.contract_for(op.name, case.dtype)
        compiled: dict[tuple, Any] = {}
        verdicts: list[compare.Comparison] = []
        repro_file = self._repro_file(case)
        built_by: dict[tuple, Example] = {}  # the example each compiled program was built for
        level_repro, level_distance = None, 0  # the program that ran the op farthest from the target
        rows_on = self.settings.special_cases and not self.settings.inputs and \
            (checker is None or op.name in properties.DETERMINED)
        # the rows in the case's dtype ride on the first drawn program, so they cost no compile of their own
        alone = self.alone
        ride = special_rows.Ride(self.backend, op, case) if rows_on and not examples[0].written and not alone \
            else None
        for number, example in enumerate(examples, 1):
            source = self.repro(example, case, seed, built_by.setdefault(example.key, example))
            if repro_file is not None:  # before it runs: a crash leaves the inputs that caused it
                atomic.write_text(repro_file, source)
            before = len(seen) if seen is not None else 0
            riding = ride is not None and not ride.used
            on_ride = ride is not None and ride.shared is not None and compiled.get(example.key) is ride.shared
            outcome = replay.judge_example(ride or self.backend, example, op, seed, compiled=compiled)
            if (riding or on_ride) and ride.results is not None and isinstance(outcome, dict):
                # judged alone, as its repro will judge it: the shared program is the rows' business
                compiled[example.key] = None
                outcome = replay.judge_example(self.backend, example, op, seed, compiled=compiled)
                ride.rebuilt = True  # the key's program is now this example's own
            if ride is not None and ride.rebuilt:  # later examples of the key run on this example's program: say so
                ride.rebuilt = False
                built_by[example.key] = example
                source = self.repro(example, case, seed, example)
                if repro_file is not None:
                    atomic.write_text(repro_file, source)
            distance = evidence.distance(case.op, seen[before:]) if seen is not None else 0
            if riding and ride.results is not None:
                ride.distance = distance  # the drawn call or a row: check() finds out which
            elif distance > level_distance:
                level_repro, level_distance = source, distance
            if isinstance(outcome, dict):
                self.failing = (example, built_by[example.key])
                if "max_ulp" in outcome:  # a drawn example broke the accuracy contract
                    outcome["accuracy"] = case_accuracy.section(contract, None, outcome.pop("max_ulp"),
                                                                "not run: a drawn example broke the contract")
                outcome["repro"] = source
                if repro_file is not None:
                    outcome["repro_file"] = str(repro_file)
                outcome["examples"] = len(verdicts) + 1
                outcome["decided_by"] = f"drawn example {number} of {len(examples)}"
                return outcome
            verdicts.append(outcome)
        rows = None
        if ride is not None and ride.distance:  # the shared program ran the op away from the target: the drawn
            before = len(seen)                   # call alone says whether it did
            first = examples[0]
            replay.judge_example(self.backend, first, op, seed, compiled={})
            distance = evidence.distance(case.op, seen[before:])
            if distance >= ride.distance:
                level_repro, level_distance = self.repro(first, case, seed), distance
            ride.distance = 0 if distance >= ride.distance else ride.distance
        if rows_on:
            def before(run: special_rows.RowRun) -> None:  # alone: the row's repro is on disk before it runs
                if repro_file is not None:
                    atomic.write_text(repro_file, self.repro(run.example, case, seed, built_by=run.compiled_for,
                                                             row=(special_rows.where(run.row), run.dtype, run.row.says)))

            failed, run, rows = special_rows.check(self.backend, op, case, compiled, budget=0 if ride else
                                                   self.settings.max_compiles, built_by=built_by, ride=ride,
                                                   before=before if alone else None, suspect=self.suspect)
            if failed is not None:
                self.failing = (run.example, run.compiled_for or run.example)
                row = (special_rows.where(run.row), run.dtype, run.row.says) if run.row is not None else None
                failed["repro"] = f"# {failed['message']}\n" + self.repro(run.example, case, seed,
                                                                           built_by=run.compiled_for, row=row)
                if repro_file is not None:
                    atomic.write_text(repro_file, failed["repro"])
                    failed["repro_file"] = str(repro_file)
                failed["examples"] = len(verdicts)
                if row is not None:  # a batch of rows that errs as one call is judged as an input, not a row
                    failed["special_case"] = {"row": row[0], "says": row[2], "dtype": run.dtype}
                failed["decided_by"] = f"special case {row[0]} ({run.dtype})" if row is not None else \
                    f"special-case rows run as one call ({run.dtype})"
                return failed
            if run is not None and run.distance > level_distance:  # a row's program ran it farther from the target
                level_repro = self.repro(run.example, case, seed, built_by=run.compiled_for,
                                         row=(special_rows.where(run.row), run.dtype, run.row.says) if run.row else None)
        accuracy = None
        if contract is not None and not self.settings.inputs:
            accuracy = self._accuracy(contract, case, seed, verdicts, seen, repro_file)
            if accuracy.failed is not None:
                return accuracy.failed
        if repro_file is not None:
            repro_file.unlink(missing_ok=True)
        # a repro stays with the result should the evidence make the case less than a pass: the program that showed it
        result = {"status": "pass", "examples": len(verdicts), "repro": level_repro or source}
        result.update(replay.metrics(verdicts))
        result["property_checked"] = checker is not None
        if rows is not None:
            result["special_cases"] = rows
        if accuracy is not None:
            result["accuracy"] = accuracy.section
        return result

    def _accuracy(self, contract: UlpContract, case: Case, seed: int,
                  verdicts: list[compare.Comparison], seen: list | None,
                  repro_file: Path | None) -> case_accuracy.Verdict:
        """The case's accuracy program through the backend (case_accuracy); a verdict that does not pass is a
        finished result with its repro. What its program shows of who computed the op is recorded beside the
        measurement and set aside: the drawn calls say who computed the case, as they did before."""
        if repro_file is not None:  # before it runs: a crash leaves the program that caused it
            atomic.write_text(repro_file, self.accuracy_repro(case, seed, None))
        before = len(seen) if seen is not None else 0
        drawn = [v.max_ulp for v in verdicts if v.max_ulp is not None]
        verdict = case_accuracy.judge(self.backend, contract, case.device, seed, max(drawn, default=None))
        if seen is not None and len(seen) > before:
            verdict.section["executed"] = evidence.judge(case.op, seen[before:]).executed
            del seen[before:]
        if verdict.failed is None:
            return verdict
        self.failing, self.failing_accuracy = None, contract
        failed = {**verdict.failed, "accuracy": verdict.section, "examples": len(verdicts),
                  "decided_by": "accuracy program",
                  "repro": self.accuracy_repro(case, seed, verdict.section)}
        if repro_file is not None:
            atomic.write_text(repro_file, failed["repro"])
            failed["repro_file"] = str(repro_file)
        verdict.failed = failed
        return verdict

    def _repro_file(self, case: Case) -> Path | None:
        if not self.settings.repro_dir:
            return None
        return Path(self.settings.repro_dir) / f"{case.id}.py"

    def accuracy_repro(self, case: Case, seed: int, section: dict[str, Any] | None) -> str:
        """Standalone source that measures the case's accuracy program again, its worst inputs shown."""
        example = case_accuracy.repro_example(case.op, section, case.dtype)
        return replay.source(example, case=case, backend=self.backend.name, opset=self.opset.version, seed=seed,
                             dynamic=self.settings.dynamic, accuracy=case_accuracy.CASE_SAMPLES)

    def repro(self, example: Example, case: Case, seed: int, built_by: Example | None = None,
              row: tuple[str, str] | None = None) -> str:
        """Standalone source: the exact inputs, the program the backend compiled, and the verdict on replay."""
        return replay.source(example, case=case, backend=self.backend.name, opset=self.opset.version, seed=seed,
                             dynamic=self.settings.dynamic, built_by=built_by, row=row)


def recorded_calls(path: str, case: Case) -> list:
    """The calls of a recorded-call file that belong to ``case`` (its op, its first tensor's dtype)."""
    from opspec.conform import ir
    from opspec.testing.strategies import Call

    calls = []
    for data in ir.read_calls(path):
        op, args, kwargs = ir.call_from_json(data, case.device)
        call = Call(op, args, kwargs)
        tensors = call.tensors()
        if op == case.op and (not tensors or cases.dtype_name(tensors[0].dtype) == case.dtype):
            calls.append(call)
    return calls


def device_fault(message: str) -> bool:
    """A result's message that says the device context is poisoned (see kernel_errors.DEVICE_FAULTS)."""
    return any(pattern in message for pattern in kernel_errors.DEVICE_FAULTS)
