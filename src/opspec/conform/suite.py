"""A whole run: cases in order, expectations applied, records journaled, one report at the end."""
from __future__ import annotations

import random
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, TextIO

from opspec.conform import evidence, report
from opspec.conform import expectations as expectations_mod
from opspec.conform.backends import Declaration
from opspec.conform.cases import Case
from opspec.conform.pool import Pool
from opspec.results.model import CaseRecord, Header, Report


class RunAborted(RuntimeError):
    """Without --isolate a crash or hang ends the run: one line naming the case; the journal is kept."""


@dataclass
class Plan:
    cases: list[Case]
    header: Header
    report_path: Path
    expectations: expectations_mod.Expectations = field(default_factory=expectations_mod.Expectations)
    previous: list[CaseRecord] = field(default_factory=list)  # records carried over by --resume
    keep_going: bool = False  # --isolate: a crash or timeout is recorded and the run goes on
    previous_duration_s: float = 0.0  # time the resumed run had spent
    shuffle: int | None = None  # --shuffle SEED: run the cases in this seed's order (the report keeps the plan's)
    declaration: Declaration | None = None  # the backend, looked up once by the plan (None: nothing declared)


def execute(plan: Plan, executor: Pool, out: TextIO | None = None,
            clock: Callable[[], float] = time.perf_counter) -> Report:
    """Run every case not already recorded; return the final report (written atomically to the plan's path)."""
    out = out or sys.stdout
    started = clock()
    done = {r.case for r in plan.previous}
    wanted = set(plan.cases)
    # expectations may have changed since: judge carried records by their raw outcome again
    static = plan.declaration.static_evidence() if plan.declaration is not None else None
    carried = [expectations_mod.reapply(evidence.carried(r, static), plan.expectations.lookup(r.case))
               for r in plan.previous if r.case in wanted]
    todo = [case for case in plan.cases if case not in done]
    if plan.shuffle is not None:
        random.Random(plan.shuffle).shuffle(todo)
    journal = report.Journal(report.journal_path(plan.report_path), plan.header, carried)
    records = list(carried)
    if carried:
        print(f"resuming: {len(carried)} cases already recorded, {len(todo)} to run", file=out)

    def judge(worker, case: Case) -> CaseRecord:
        expectation = plan.expectations.lookup(case)
        if expectation is not None and expectation.status == "skip":
            return expectations_mod.skipped(case, expectation)
        record = CaseRecord.from_dict(worker.run(case))  # the worker's result: a record once expectations apply
        if _lost(record) and not plan.keep_going:
            executor.stop()  # at once, in this worker's thread: it takes no further case
            return record  # the run stops on it: recorded nowhere, so --resume runs it again
        return expectations_mod.apply(record, expectation)

    aborted = None
    try:
        for case, record in executor.run(todo, judge):
            if _lost(record) and not plan.keep_going:
                aborted = aborted or (case, record)  # no new cases start; those running finish and are journaled
                continue
            journal.append(record)
            records.append(record)
            print(report.progress_line(len(records), len(plan.cases), record), file=out, flush=True)
    except BaseException:
        journal.close()
        raise
    finally:
        executor.close()
    if aborted is not None:
        journal.close()
        case, record = aborted
        raise RunAborted(f"{case.op} {case.dtype} {case.device}: {record.status}: {record.message} "
                         f"(rerun with --isolate to record it and go on; finished cases are in "
                         f"{journal.path}, continue with --resume {journal.path})")
    final = report.final(plan.header, records, order=plan.cases, warnings=[*plan.expectations.warnings, *expectations_mod.stale(records)],
                         duration_s=clock() - started + plan.previous_duration_s, declaration=plan.declaration)
    report.write(plan.report_path, final)
    journal.close(remove=True)
    return final


def _lost(record: CaseRecord) -> bool:
    """The worker died or hung on the case (a device fault is recorded by a live worker, which is then
    replaced: that run can go on)."""
    return record.status in ("crash", "timeout") and not record.message.startswith("device fault")


def exit_code(final: Report) -> int:
    return 0 if all(r.clean for r in final.records) else 1
