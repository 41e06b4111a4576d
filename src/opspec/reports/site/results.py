"""Read published conformance results (conformance/results/*.json) without trusting their shape.

The report format is young; anything that is not understood becomes a note on
the scoreboard rather than a failed build.
"""
from __future__ import annotations

import json
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from opspec.results.vocabulary import status_key
from opspec.spec.errors import first_line
from opspec.spec.manifests import LIBRARY

LIST_KEYS = ("results", "cases", "tests", "records")
OP_KEYS = ("op", "operator", "name")
STATUS_KEYS = ("status", "outcome", "result")


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


def _text(entry: dict, keys: tuple[str, ...], default: str = "", limit: int = 200) -> str:
    for key in keys:
        value = entry.get(key)
        if isinstance(value, (str, int, float)) and str(value).strip():
            return str(value).strip()[:limit]
    return default


def _coverage(section: Any) -> Coverage | None:
    if not isinstance(section, dict):
        return None
    lowered, run, percent = (section.get(k) for k in ("lowered", "ops_run", "coverage_percent"))
    if not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in (lowered, run, percent)):
        return None
    library = section.get("library", 0)  # lowered too: the lowering calls a library kernel (reports since it was counted)
    library = library if isinstance(library, int) and not isinstance(library, bool) else 0
    return Coverage(_text(section, ("manifest",), "its manifest"), int(lowered) + library, int(run), float(percent))


def _functionalization(section: Any) -> Functionalization | None:
    if not isinstance(section, dict) or not isinstance(section.get("summary"), dict):
        return None
    summary = {k: v for k, v in section["summary"].items() if isinstance(v, int) and not isinstance(v, bool)}
    groups: dict[tuple[str, str], list[str]] = {}
    for item in section.get("results", []) if isinstance(section.get("results"), list) else []:
        if not isinstance(item, dict) or item.get("status") in ("pass", "skip"):
            continue
        finding = item.get("finding") if isinstance(item.get("finding"), dict) else {}
        why = _text(finding, ("reason",)) or _text(item, ("message",))
        program = f"{_text(item, ('variant',), '?')} {_text(item, ('target',))}/{_text(item, ('view',))}"
        key = (_text(item, ("status",), "unknown"), first_line(why))
        groups.setdefault(key, []).append(program)
    return Functionalization(summary, [(status, why, programs) for (status, why), programs in groups.items()])


def _ran_instead(item: dict, lowering_entry: Any) -> str:
    """What ran instead of the backend's code, by the one set of classes the manifests use: the report's lowering
    note where its manifest decided the op from this evidence, else the class read from the case's own evidence."""
    from opspec.conform import lowering_evidence

    if item.get("executed") not in lowering_evidence.PYTORCH_RAN or not isinstance(item.get("evidence"), dict):
        return ""
    if item.get("lowering") == "library":  # this case's dtype: the backend's own lowering called a library kernel
        return f"{LIBRARY[0]}: {', '.join(item['evidence'].get('pytorch_ops') or ())}"[:300]
    if isinstance(lowering_entry, dict) and lowering_entry.get("status") == "fallback" and lowering_entry.get("note") \
            and item.get("lowering") in (None, "fallback"):
        return str(lowering_entry["note"]).removeprefix(f"on {item.get('device')}: ")[:300]
    kind, ran = lowering_evidence.case_kind(item, ())
    return lowering_evidence.Verdict("fallback", kind, ran).reason()


def _date(data: dict, path: Path) -> str:
    """When the run happened: the report's own field, else the date its file was last committed."""
    for key in ("date", "finished", "started", "created", "timestamp"):
        value = data.get(key)
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


def _report(data: dict, path: Path, backend: str, manifests: dict[str, str]) -> Report:
    about = data["backend"] if isinstance(data.get("backend"), dict) else {}
    version = _text(about, ("version",)) or _text(data, ("backend_version",))
    package = _text(about, ("package",))
    if package and package not in version:
        version = f"{package} {version}".strip()
    duration = data.get("duration_s")
    return Report(
        name=path.stem, backend=backend, backend_version=version or "not recorded",
        device=_text(about, ("device",)) or _text(data, ("device",), "any"),
        torch=_text(data, ("torch",), "not recorded"), opspec=_text(data, ("opspec",), "not recorded"),
        opset=_text(data, ("opset",)), date=_date(data, path),
        dtypes=tuple(str(d) for d in data.get("dtypes", ()) if isinstance(d, str)) if isinstance(data.get("dtypes"), list) else (),
        duration_s=float(duration) if isinstance(duration, (int, float)) and not isinstance(duration, bool) else None,
        manifest_description=manifests.get(backend, ""),
        device_name=_text(data, ("device_name",)),
        blame={k: v for k, v in data["blame"].items() if isinstance(v, int) and not isinstance(v, bool)}
        if isinstance(data.get("blame"), dict) else {},
        target=_text(about, ("target",)), runtime=_text(about, ("runtime",)), build=_text(about, ("build",)),
        executed={k: v for k, v in data["executed"].items() if isinstance(v, int) and not isinstance(v, bool) and v}
        if isinstance(data.get("executed"), dict) else {},
        spliced=tuple(_splice_line(entry) for entry in data.get("spliced") or () if isinstance(entry, dict))
        if isinstance(data.get("spliced"), list) else (),
    )


def _splice_line(entry: dict) -> str:
    """One re-run spliced into a report: how many cases of which ops, when, where."""
    ops = [str(op).removeprefix("aten::") for op in entry.get("ops") or ()]
    named = ", ".join(ops[:6]) + (f" and {len(ops) - 6} more" if len(ops) > 6 else "")
    where = ", ".join(str(x) for x in (str(entry.get("measured", ""))[:10], entry.get("device_name")) if x)
    return f"{entry.get('cases', '?')} cases of {named}" + (f" ({where})" if where else "")


def read(folder: Path, manifests: dict[str, str] | None = None) -> Results:
    """Every report in ``folder``; ``manifests`` maps a backend to its manifest's description."""
    results = Results()
    if not folder.is_dir():
        return results
    for path in sorted(folder.glob("*.json")):
        results.files += 1
        try:
            data: Any = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as err:
            results.notes.append(f"{path.name}: not readable JSON ({type(err).__name__})")
            continue
        if not isinstance(data, dict):
            results.notes.append(f"{path.name}: expected a JSON object")
            continue
        backend = _text(data, ("backend", "name"), path.stem)
        if isinstance(data.get("backend"), dict):
            backend = _text(data["backend"], ("name",), path.stem)
        items = next((data[k] for k in LIST_KEYS if isinstance(data.get(k), list)), None)
        if items is None:
            results.notes.append(f"{path.name}: no list of results found")
            continue
        functionalization = _functionalization(data.get("functionalization"))
        if functionalization is not None:
            results.functionalization[backend] = functionalization
        coverage = _coverage(data.get("lowering"))
        if coverage is not None:
            results.coverage[backend] = coverage
        report = _report(data, path, backend, manifests or {})
        results.reports.append(report)
        skipped = 0
        for item in items:
            if not isinstance(item, dict) or not _text(item, OP_KEYS):
                skipped += 1
                continue
            expectation = item.get("expectation") if isinstance(item.get("expectation"), dict) else {}
            attribution = item.get("blame") or item.get("attribution")
            if isinstance(attribution, dict):
                attribution = _text(attribution, ("who", "layer", "component", "name"))
            if isinstance(attribution, str) and _text(item, ("blame_stage",)):
                attribution = f"{attribution} ({_text(item, ('blame_stage',))})"
            repro = item.get("repro")
            lowering_entry = ((data.get("lowering") or {}).get("ops") or {}).get(_text(item, OP_KEYS)) \
                if isinstance(data.get("lowering"), dict) else None
            results.records.append(Record(
                backend=backend,
                op=_text(item, OP_KEYS),
                dtype=_text(item, ("dtype",), "any"),
                device=_text(item, ("device",), report.device),
                status=_text(item, STATUS_KEYS, "unknown"),
                lowering=_text(item, ("lowering",)),
                report=path.stem,
                outcome=_text(item, ("outcome",)),
                message=str(item.get("message") or "")[:2000],
                reason=_text(expectation, ("reason",), limit=1000) or _text(item, ("reason",), limit=1000),
                repro=repro if isinstance(repro, str) else "",
                attribution=attribution if isinstance(attribution, str) else "",
                executed=_text(item, ("executed",)),
                rows_held=_rows_held(item),
                failed_row=_text(item["special_case"], ("says",)) if isinstance(item.get("special_case"), dict) else "",
                ran_instead=_ran_instead(item, lowering_entry),
            ))
        if skipped:
            results.notes.append(f"{path.name}: {skipped} entries without an op were skipped")
    return results


def _rows_held(item: dict) -> bool:
    """A right answer (whoever computed it) whose special-case rows all ran."""
    rows = item.get("special_cases")
    right = item.get("outcome", item.get("status")) in ("pass", "undelegated", "fallback", "unverified")
    return right and isinstance(rows, dict) and bool(rows.get("rows")) and rows.get("run") == rows.get("rows")
