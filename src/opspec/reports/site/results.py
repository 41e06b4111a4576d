"""Read published conformance results (conformance/results/*.json) without trusting their shape.

Each file is read through the report model, as far as it can be (``results.lenient``):
anything that is not understood becomes a note on the scoreboard rather than a failed build.
"""
from __future__ import annotations

import json
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

from opspec.results import lenient, model
from opspec.results.vocabulary import status_key
from opspec.spec.errors import first_line
from opspec.spec.gc_paused import gc_paused
from opspec.spec.manifests import LIBRARY

@dataclass(frozen=True)
class Record:
    backend: str
    op: str
    dtype: str
    device: str
    status: str
    lowering: str = ""  # lowered / fallback / undeclared, when the report has a lowering section
    report: str = ""  # the report file's stem, e.g. inductor-cpu
    outcome: str = ""  # what happened before an expectation was applied (an xfail's compile-error)
    message: str = ""
    reason: str = ""  # the expectation's reason, for xfail and skip
    repro: str = ""
    attribution: str = ""  # who a non-pass is put on (frontend, backend, opspec), when the report says
    executed: str = ""  # who computed the op: target, runtime, pytorch, partial or unknown, when the report says
    rows_held: bool = False  # every special-case row of the op ran and held (a right answer with rows run)
    failed_row: str = ""  # the special-case row the case failed on ("says" of the row), when it failed on one
    ran_instead: str = ""  # for a case PyTorch ran: the class and the kernels that ran instead of the backend's code


@dataclass(frozen=True)
class Report:
    """One result file's identity: what ran, where, with which versions, and when."""
    name: str  # file stem
    backend: str
    backend_version: str
    device: str
    torch: str
    opspec: str
    opset: str
    date: str
    dtypes: tuple[str, ...]
    duration_s: float | None
    manifest_description: str = ""
    device_name: str = ""  # the hardware, when the report names it
    blame: dict[str, int] = field(default_factory=dict)  # non-passes by who failed, when the report counts them
    target: str = ""  # what computes an op for a pass (the backend's declared target), when the report says
    runtime: str = ""  # the backend's runtime outside its target, when it has one
    build: str = ""  # how its code was built unlike a plain run (inductor: patterned uninitialized locals)
    executed: dict[str, int] = field(default_factory=dict)  # cases by who computed the op, when the report counts them
    spliced: tuple[str, ...] = ()  # later partial re-runs whose records replaced the first run's, one line each


@dataclass(frozen=True)
class Coverage:
    """A report's lowering section, reduced to its headline."""
    manifest: str
    lowered: int
    ops_run: int
    percent: float


@dataclass(frozen=True)
class Functionalization:
    """A report's functionalization section: its counts, and the programs that did not pass."""
    summary: dict[str, int]
    not_passing: list[tuple[str, str, list[str]]]  # (status, finding or message, ["variant target/view", ...])

    STATUSES = ("pass", "xfail", "skip", "xpass", "not-functional", "fail", "export-error", "run-error", "no-program")

    @property
    def counts(self) -> str:
        return ", ".join(f"{self.summary[s]} {s}" for s in self.STATUSES if self.summary.get(s))


@dataclass
class Results:
    records: list[Record] = field(default_factory=list)
    reports: list[Report] = field(default_factory=list)
    coverage: dict[str, Coverage] = field(default_factory=dict)  # backend -> its lowering headline
    functionalization: dict[str, Functionalization] = field(default_factory=dict)  # backend -> its section
    notes: list[str] = field(default_factory=list)
    files: int = 0
    _groups: dict = field(default_factory=dict, init=False, repr=False, compare=False)

    def backends(self) -> list[str]:
        return sorted({r.backend for r in self.records})

    def for_op(self, op: str) -> list[Record]:
        return list(self._grouped("op").get(op, ()))

    def for_report(self, name: str) -> list[Record]:
        return list(self._grouped("report").get(name, ()))

    def _grouped(self, key: str) -> dict[str, list[Record]]:
        """Records by one field, in their order: each op page asks for its own, and scanning all ~20,000 records
        for each took seconds. Grouped again when the records have changed."""
        version = (id(self.records), len(self.records))
        if self._groups.get(key, (None,))[0] != version:
            groups: dict[str, list[Record]] = {}
            for record in self.records:
                groups.setdefault(getattr(record, key), []).append(record)
            self._groups[key] = (version, groups)
        return self._groups[key][1]

    def statuses(self) -> list[str]:
        return sorted({r.status for r in self.records}, key=status_key)


def _shown(value: Any, default: str = "", limit: int = 200) -> str:
    """A value that reads as text (a string or a number), stripped and cut to ``limit``; ``default`` for any other."""
    if isinstance(value, (str, int, float)) and str(value).strip():
        return str(value).strip()[:limit]
    return default


def _text(entry: Mapping[str, Any], keys: tuple[str, ...], default: str = "", limit: int = 200) -> str:
    """The first of ``keys`` in an object the model leaves untyped (a blame another tool wrote as an object, a
    finding) that reads as text."""
    return next((text for key in keys if (text := _shown(entry.get(key), limit=limit))), default)


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _counts(section: Any, *, nonzero: bool = False) -> dict[str, int]:
    """A section of counts (blame, executed), its numbers alone; nothing where it is not one."""
    if not isinstance(section, Mapping):
        return {}
    return {k: v for k, v in section.items() if isinstance(v, int) and not isinstance(v, bool) and (v or not nonzero)}


def _coverage(section: model.Lowering | None) -> Coverage | None:
    if section is None:
        return None
    lowered, run, percent = section.lowered, section.ops_run, section.coverage_percent
    if not all(_number(v) for v in (lowered, run, percent)):
        return None
    # lowered too: the lowering calls a library kernel (reports since it was counted)
    library = section.library if isinstance(section.library, int) and not isinstance(section.library, bool) else 0
    return Coverage(_shown(section.manifest, "its manifest"), int(lowered) + library, int(run), float(percent))


def _functionalization(section: model.Functionalization | None) -> Functionalization | None:
    if section is None or not isinstance(section.summary, Mapping):
        return None
    summary = _counts(section.summary)
    groups: dict[tuple[str, str], list[str]] = {}
    for program in section.results:
        if program.status in ("pass", "skip"):
            continue
        finding = program.finding if isinstance(program.finding, Mapping) else {}
        why = _text(finding, ("reason",)) or _shown(program.message)
        name = f"{_shown(program.variant, '?')} {_shown(program.target)}/{_shown(program.view)}"
        groups.setdefault((_shown(program.status, "unknown"), first_line(why)), []).append(name)
    return Functionalization(summary, [(status, why, programs) for (status, why), programs in groups.items()])


def _ran_instead(record: model.CaseRecord, lowering_entry: model.LoweringOp | None) -> str:
    """What ran instead of the backend's code, by the one set of classes the manifests use: the report's lowering
    note where its manifest decided the op from this evidence, else the class read from the case's own evidence."""
    from opspec.conform import lowering_evidence

    if record.executed not in lowering_evidence.PYTORCH_RAN or record.evidence is None:
        return ""
    if record.lowering == "library":  # this case's dtype: the backend's own lowering called a library kernel
        return f"{LIBRARY[0]}: {', '.join(record.evidence.pytorch_ops or ())}"[:300]
    if lowering_entry is not None and lowering_entry.status == "fallback" and lowering_entry.note \
            and record.lowering in (None, "fallback"):
        return str(lowering_entry.note).removeprefix(f"on {record.device}: ")[:300]
    kind, ran = lowering_evidence.case_kind(record, ())
    return lowering_evidence.Verdict("fallback", kind, ran).reason()


def _date(header: model.Header, path: Path) -> str:
    """When the run happened: the report's own field, else the date its file was last committed."""
    for key in ("date", "finished", "started", "created", "timestamp"):
        value = header.extra.get(key)
        if isinstance(value, str) and value.strip():
            return value.strip()[:10]
    try:
        run = subprocess.run(["git", "log", "-1", "--format=%cs", "--", path.name], cwd=path.parent,
                             capture_output=True, text=True, timeout=10)
        if run.returncode == 0 and run.stdout.strip():
            return run.stdout.strip() + " (committed)"
    except (OSError, subprocess.SubprocessError):
        pass
    return "not recorded"


def _report(report: model.Report, path: Path, backend: str, manifests: dict[str, str]) -> Report:
    header, about = report.header, report.header.backend
    version = _shown(about.version) or _shown(header.extra.get("backend_version"))
    package = _shown(about.package)
    if package and package not in version:
        version = f"{package} {version}".strip()
    dtypes = header.dtypes
    return Report(
        name=path.stem, backend=backend, backend_version=version or "not recorded",
        device=_shown(about.extra.get("device")) or _shown(header.device, "any"),
        torch=_shown(header.torch, "not recorded"), opspec=_shown(header.opspec, "not recorded"),
        opset=_shown(header.opset), date=_date(header, path),
        dtypes=tuple(d for d in dtypes if isinstance(d, str)) if isinstance(dtypes, tuple) else (),
        duration_s=float(header.duration_s) if _number(header.duration_s) else None,
        manifest_description=manifests.get(backend, ""),
        device_name=_shown(header.device_name),
        blame=_counts(report.blame),
        target=_shown(about.target), runtime=_shown(about.runtime), build=_shown(about.build),
        executed=_counts(report.executed, nonzero=True),
        spliced=tuple(_splice_line(splice) for splice in header.spliced or ()),
    )


def _splice_line(splice: model.Splice) -> str:
    """One re-run spliced into a report: how many cases of which ops, when, where."""
    ops = [str(op).removeprefix("aten::") for op in splice.ops or ()]
    named = ", ".join(ops[:6]) + (f" and {len(ops) - 6} more" if len(ops) > 6 else "")
    where = ", ".join(str(x) for x in (_shown(splice.measured)[:10], splice.device_name) if x)
    return f"{splice.cases} cases of {named}" + (f" ({where})" if where else "")


def read(folder: Path, manifests: dict[str, str] | None = None) -> Results:
    """Every report in ``folder``; ``manifests`` maps a backend to its manifest's description."""
    results = Results()
    if not folder.is_dir():
        return results
    for path in sorted(folder.glob("*.json")):
        results.files += 1
        try:
            with gc_paused():  # a published report is some hundred thousand objects: no garbage to look for
                data: Any = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as err:
            results.notes.append(f"{path.name}: not readable JSON ({type(err).__name__})")
            continue
        try:
            with gc_paused():
                found = lenient.read(data, path.stem)
        except model.ReportFormatError as err:
            results.notes.append(f"{path.name}: {err}")
            continue
        _add(results, found.report, path, manifests or {})
        if found.left_out:
            results.notes.append(f"{path.name}: {found.left_out} entries without an op were skipped")
    return results


def _add(results: Results, report: model.Report, path: Path, manifests: dict[str, str]) -> None:
    """One report's identity, sections and cases, into ``results``."""
    backend = _shown(report.header.backend.name, path.stem)
    functionalization = _functionalization(report.functionalization)
    if functionalization is not None:
        results.functionalization[backend] = functionalization
    coverage = _coverage(report.lowering)
    if coverage is not None:
        results.coverage[backend] = coverage
    identity = _report(report, path, backend, manifests)
    results.reports.append(identity)
    lowering_ops = report.lowering.ops if report.lowering is not None else {}
    for record in report.records:
        op = _shown(record.op)
        results.records.append(Record(
            backend=backend,
            op=op,
            dtype=_shown(record.dtype, "any"),
            device=_shown(record.device, identity.device),
            status=_shown(record.status, "unknown"),
            lowering=_shown(record.lowering),
            report=path.stem,
            outcome=_shown(record.outcome),
            message=str(record.message or "")[:2000],
            reason=_shown(record.expectation.reason if record.expectation else None, limit=1000)
            or _shown(record.extra.get("reason"), limit=1000),
            repro=record.repro if isinstance(record.repro, str) else "",
            attribution=_attribution(record),
            executed=_shown(record.executed),
            rows_held=_rows_held(record),
            failed_row=_shown(record.special_case.says) if record.special_case is not None else "",
            ran_instead=_ran_instead(record, lowering_ops.get(op)),
        ))


def _attribution(record: model.CaseRecord) -> str:
    """Who a non-pass is put on, with the stage where the report names one; another tool's word or object read too."""
    attribution = record.blame or record.extra.get("attribution")
    if isinstance(attribution, Mapping):
        attribution = _text(attribution, ("who", "layer", "component", "name"))
    if isinstance(attribution, str) and _shown(record.blame_stage):
        attribution = f"{attribution} ({_shown(record.blame_stage)})"
    return attribution if isinstance(attribution, str) else ""


def _rows_held(record: model.CaseRecord) -> bool:
    """A right answer (whoever computed it) whose special-case rows all ran."""
    rows = record.special_cases
    right = record.final_outcome in ("pass", "undelegated", "fallback", "unverified")
    return right and rows is not None and bool(rows.rows) and rows.run == rows.rows
