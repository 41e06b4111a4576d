"""The report a run or a merge finishes with: its records in the plan's order, each section computed over them.

Torch-free, so ``opspec report merge`` finishes a report where torch is not installed.
The lowering section applies the backend's manifest: the one its declaration names
(``declared``), else the bundled one of its name.
"""
from __future__ import annotations

from pathlib import Path
from typing import Iterable

from opspec.conform import lowering as lowering_mod
from opspec.results import tally
from opspec.results.model import Case, CaseRecord, Header, Report

FORMAT = 1
SCHEMA_URL = "https://opspec.dev/schema/conformance_report.schema.json"


def finish(header: Header, records: Iterable[CaseRecord], *, order: list[Case], warnings: Iterable[str],
           duration_s: float, manifests_dir: Path | None = None, declared: Path | None = None) -> Report:
    position = {case: i for i, case in enumerate(order)}
    records = sorted(records, key=lambda r: position.get(r.case, len(position)))
    dtypes = lowering_mod.dtypes_of(records)
    lowering, lowering_warnings = lowering_mod.for_run(header, [r.op for r in records], manifests_dir, declared, dtypes)
    records = [lowering_mod.marked(record, lowering) for record in records]
    return Report(
        header=header.replace(schema=SCHEMA_URL, duration_s=round(duration_s, 1)),
        records=tuple(records),
        summary=tally.summary(records),
        executed=tally.executed_counts(records),
        blame=tally.blame_counts(records),
        root_causes=tuple(tally.root_causes(records)),
        lowering=lowering,
        warnings=(*warnings, *lowering_warnings),
    )
