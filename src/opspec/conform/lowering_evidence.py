"""One truth about lowering: a manifest's verdicts for the ops a conformance report ran come from that report.

``opspec conform`` records, per case (op, dtype, device), who executed the op (the
``evidence`` of :mod:`opspec.conform.evidence`). Here that evidence decides each op's place
in the backend's manifest on each device the report covers, so the manifest, the
report's lowering section and ``opspec coverage`` (which reads the manifest) cannot
disagree. Ops no report ran keep the verdict ``tools/measure_lowering.py`` measured.

Per case: PyTorch ran the op (``executed`` pytorch or partial) -> fallback, with what ran
instead and its class (:data:`opspec.spec.manifests.FALLBACK_KINDS`), unless every kernel that
ran outside the backend's generated code is a library kernel its lowering calls (the manifest's
``library_kernels``: Inductor's extern GEMM and convolution) -> library, a lowering counted apart;
the backend's target or its runtime ran it (a right answer, or a wrong one it computed itself) ->
lowered; no evidence (nothing ran, or the compile failed before the backend showed what it would
do) -> no verdict. Per op and device: fallback when any dtype fell back, else library when any
dtype called a library kernel, else lowered; where not every dtype did, the entry names those
that did (``fallback_dtypes`` and ``library_dtypes`` of a lowered entry, ``dtypes`` of a fallback
one), so a case in another dtype is lowered by the manifest's word too. An op measured lowered
at its default arguments that falls back when a call sets some of them (``fallback_args``) keeps
that entry: a report's drawn calls set those arguments or not, so its evidence either way is what
the entry says. Only manifests and JSON are read here, no torch.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping

from opspec.results.model import CaseRecord, Report, ReportFormatError
from opspec.spec.manifests import FALLBACK_KINDS, LIBRARY

PYTORCH_RAN = ("pytorch", "partial")
# the backend's own code ran it: its target, its runtime around the target, or "backend" in reports older than the levels
BACKEND_RAN = ("target", "runtime", "backend")
NO_EVIDENCE_OUTCOMES = ("compile-error",)  # the backend failed before it showed what it would run
DEVICES = ("cpu", "cuda")  # the devices a manifest can speak for


@dataclass(frozen=True)
class Verdict:
    """What the evidence says about one op on one device."""
    status: str  # lowered | library | fallback
    kind: str = ""  # a FALLBACK_KINDS key, for a fallback
    ran_instead: tuple[str, ...] = ()
    dtypes: tuple[str, ...] = ()  # the dtypes that fell back, when not every dtype run did
    library: tuple[str, ...] = ()  # the library kernels the lowering called in the dtypes that did not fall back
    library_dtypes: tuple[str, ...] = ()  # the dtypes that called them, when not every dtype run did

    def reason(self) -> str:
        """The manifest's reason: the class and what ran instead (in which dtypes, when not all)."""
        label = FALLBACK_KINDS[self.kind][0]
        ran = ", ".join(self.ran_instead) or "a PyTorch kernel the evidence does not name"
        if self.kind == "partial":
            return f"{label}: {ran} ran in PyTorch and the rest in the backend{_in(self.dtypes)}"
        return f"{label}: {ran} ran instead{_in(self.dtypes)}"

    def library_reason(self) -> str:
        """What the lowering called (in which dtypes, when not all)."""
        return f"{LIBRARY[0]}: {', '.join(self.library)}{_in(self.library_dtypes)}"


def _in(dtypes: tuple[str, ...]) -> str:
    return f" in {', '.join(dtypes)}" if dtypes else ""


def case_kind(record: CaseRecord, library: Mapping[str, str]) -> tuple[str, tuple[str, ...]]:
    """(class, what ran) for a case PyTorch ran: ``library`` when each kernel was a library kernel the lowering
    calls (``library``: op -> the kernel as the backend's program calls it), else a FALLBACK_KINDS key."""
    evidence = record.evidence
    ran = tuple(evidence.pytorch_ops or ()) if evidence is not None else ()
    named = tuple(f"{library[op]} ({op})" if op in library else op for op in ran)
    if ran and all(op in library for op in ran):
        return "library", named
    if record.executed == "partial":
        return "partial", named
    if evidence is not None and evidence.source == "partition":
        return "partition", named
    return "aten-kernel", named


def _executed(record: CaseRecord) -> str | None:
    """Who ran the case's op: the record's word, else its evidence's (records written before ``executed`` was)."""
    return record.executed or (record.evidence.executed if record.evidence is not None else None)


def verdicts(report: Report, library: Mapping[str, str] | None = None) -> dict[str, dict[str, Verdict]]:
    """op -> device -> what the report's evidence says; ops without evidence are absent. ``library``: the
    manifest's ``library_kernels``."""
    library = dict(library or {})
    seen: dict[tuple[str, str], dict[str, tuple[str, str, tuple[str, ...]] | None]] = {}
    for record in report.records:
        device = record.device or report.device
        if not isinstance(device, str):
            continue
        executed = _executed(record)
        if executed in PYTORCH_RAN:
            kind, ran = case_kind(record, library)
            seen.setdefault((record.op, device), {})[record.dtype] = ("library" if kind == "library" else "fallback",
                                                                      kind, ran)
        elif executed in BACKEND_RAN and record.outcome not in NO_EVIDENCE_OUTCOMES:
            seen.setdefault((record.op, device), {})[record.dtype] = ("lowered", "", ())
    found: dict[str, dict[str, Verdict]] = {}
    for (op, device), by_dtype in sorted(seen.items()):
        fell_back = {dtype: v for dtype, v in by_dtype.items() if v[0] == "fallback"}
        called = {dtype: v for dtype, v in by_dtype.items() if v[0] == "library"}
        library_part = {}
        if called:
            library_part = {"library": tuple(dict.fromkeys(name for v in called.values() for name in v[2])),
                            "library_dtypes": tuple(sorted(called)) if len(called) < len(by_dtype) else ()}
        if fell_back:
            kinds = [v[1] for v in fell_back.values()]
            ran = tuple(dict.fromkeys(name for v in fell_back.values() for name in v[2]))
            partly = tuple(sorted(fell_back)) if len(fell_back) < len(by_dtype) else ()
            # the most common class; a tie goes to the first name in order, not to the set's hash order
            verdict = Verdict("fallback", max(sorted(set(kinds)), key=kinds.count), ran, partly, **library_part)
        else:
            verdict = Verdict("library" if called else "lowered", **library_part)
        found.setdefault(op, {})[device] = verdict
    return found


def _op(entry: Any) -> str:
    return entry["op"] if isinstance(entry, dict) else entry


def apply(data: dict[str, Any], found: dict[str, dict[str, Verdict]], evidence: list[str]) -> tuple[dict[str, Any], list[str]]:
    """The manifest ``data`` with every op of ``found`` placed by its evidence, and one line per op that moved."""
    static: dict[str, tuple[str, Any]] = {}
    for key in ("lowered", "fallback", "unsupported"):
        for entry in data.get(key) or ():
            static[_op(entry)] = (key, entry)
    placed: dict[str, list[Any]] = {"lowered": [], "fallback": [], "unsupported": []}
    moved = []
    for op in sorted(set(static) | set(found)):
        was, entry = static.get(op, ("undeclared", op))
        by_device = found.get(op)
        if by_device is None:
            placed[was].append(entry)
            continue
        if was == "lowered" and _falls_back_with_args(entry):
            # measured lowered at its defaults and falling back when named arguments are set: a report's drawn calls
            # set them, so its fallbacks are what the entry already says
            placed["lowered"].append(entry)
            continue
        statuses = {v.status for v in by_device.values()}
        # an op measured lowered keeps that word on the devices no report ran it on: it falls back only where seen
        everywhere = was != "lowered" or set(by_device) >= set(DEVICES)
        if statuses == {"fallback"} and everywhere and not any(v.library for v in by_device.values()) \
                and len({(v.kind, v.ran_instead, v.dtypes) for v in by_device.values()}) == 1:
            verdict = next(iter(by_device.values()))
            why = _why(was, entry)
            new = {"op": op, "reason": verdict.reason(), "kind": verdict.kind,
                   **({"ran_instead": list(verdict.ran_instead)} if verdict.ran_instead else {}),
                   **({"dtypes": list(verdict.dtypes)} if verdict.dtypes else {}),
                   **({"note": why} if why else {})}
            placed["fallback"].append(new)
            now = "fallback"
        else:
            new = _lowered_entry(op, was, entry, by_device)
            placed["lowered"].append(new)
            now = "; ".join(["lowered", *(f"{label} on " + ", ".join(sorted(d for d, v in by_device.items() if v.status == status))
                                          for status, label in (("library", "calls a library kernel"), ("fallback", "falls back"))
                                          if status in statuses)])
        if _compact(new) != entry:
            moved.append(f"{op}: {was} -> {now}")
    out = {k: v for k, v in data.items() if k not in ("lowered", "fallback", "unsupported", "evidence")}
    seen_on = {d for e in placed["lowered"] if isinstance(e, dict) for key in ("fallback_on", "library_on") for d in e.get(key, {})}
    if seen_on - set(out.get("devices", ())):  # a per-device fact names a device the manifest lists
        out["devices"] = [d for d in DEVICES if d in seen_on | set(out.get("devices", ()))]
    position = list(data).index("lowered") if "lowered" in data else len(out)
    items = list(out.items())
    items.insert(position, ("evidence", list(evidence)))
    result = dict(items)
    result.update(lowered=[_compact(e) for e in placed["lowered"]], fallback=placed["fallback"])
    if placed["unsupported"]:
        result["unsupported"] = placed["unsupported"]
    return result, moved


def _falls_back_with_args(entry: Any) -> bool:
    return isinstance(entry, dict) and bool(entry.get("fallback_args"))


def _why(was: str, entry: Any) -> str:
    """The measuring rule's explanation kept beside the evidence: its note, or its reason before evidence replaced it."""
    if not isinstance(entry, dict):
        return ""
    if entry.get("note"):
        return entry["note"]
    return entry.get("reason", "") if was == "fallback" and "kind" not in entry else ""


def _lowered_entry(op: str, was: str, entry: Any, by_device: dict[str, Verdict]) -> dict[str, Any]:
    """A lowered entry: the static one where it was lowered (less the device facts the evidence replaces)."""
    if was == "lowered":
        new = dict(entry) if isinstance(entry, dict) else {"op": op}
    elif isinstance(entry, dict) and "kind" in entry:  # placed by earlier evidence, not by the static rule
        new = {"op": op}
    else:
        ran = ", ".join(sorted(d for d, v in by_device.items() if v.status != "fallback"))
        new = {"op": op, "note": f"tools/measure_lowering.py's static rule has it {was}, but the backend ran it in every "
                                 f"case of the conformance report on {ran}" if ran else
                                 f"tools/measure_lowering.py's static rule has it {was}; the conformance reports' "
                                 f"evidence decides it on each device"}
    for key, dtypes_key, holds, reason, dtypes in (
            ("fallback_on", "fallback_dtypes", lambda v: v.status == "fallback", Verdict.reason, lambda v: v.dtypes),
            ("library_on", "library_dtypes", lambda v: bool(v.library), Verdict.library_reason, lambda v: v.library_dtypes)):
        on = {d: r for d, r in (new.pop(key, None) or {}).items() if d not in by_device}
        only_in = {d: t for d, t in (new.pop(dtypes_key, None) or {}).items() if d not in by_device and d in on}
        on.update({d: reason(v) for d, v in sorted(by_device.items()) if holds(v)})
        only_in.update({d: list(dtypes(v)) for d, v in sorted(by_device.items()) if holds(v) and dtypes(v)})
        if on:
            new[key] = dict(sorted(on.items()))
        if only_in:  # the dtypes that showed it where not all did: the others are lowered there
            new[dtypes_key] = dict(sorted(only_in.items()))
    return new


def _compact(entry: Any) -> Any:
    """An entry with nothing but its op is written as the bare name, as the measuring tool writes it."""
    return entry["op"] if isinstance(entry, dict) and set(entry) == {"op"} else entry


def disagreements(manifest, report: Report, library: Mapping[str, str] | None = None) -> list[str]:
    """Ops whose status in the manifest is not what ``report``'s evidence says on that device: lowered, a library
    call or fallback in one and another in the other, or run by the backend but unsupported or undeclared in the
    manifest (one line each)."""
    problems = []
    for op, by_device in verdicts(report, manifest.library_kernels if library is None else library).items():
        if op in manifest.fallback_args:  # lowered at the defaults, fallback with the named arguments: either fits
            continue
        for device, verdict in by_device.items():
            status, _ = manifest.status(op, device)
            if status != verdict.status:
                problems.append(f"{op} on {device}: {status} in {manifest.path or manifest.backend}, "
                                f"{verdict.status} by the report's evidence")
    return problems


def reports_for(backend: str, opset: str, results: Path) -> list[Path]:
    """The committed reports of ``backend`` (``BACKEND-DEVICE.json``) on ``opset``: the evidence for its manifest."""
    found = []
    for path in sorted(results.glob(f"{backend}-*.json")):
        try:
            report = Report.load(path)
        except ReportFormatError:
            continue
        if report.backend_name == backend and report.opset == opset and path.stem == f"{backend}-{report.device}":
            found.append(path)
    return found


def from_reports(data: dict[str, Any], reports: list[Path], root: Path) -> tuple[dict[str, Any], list[str]]:
    """Manifest ``data`` with the evidence of ``reports`` applied (paths shown relative to ``root``)."""
    found: dict[str, dict[str, Verdict]] = {}
    for path in reports:
        for op, by_device in verdicts(Report.load(path), data.get("library_kernels")).items():
            found.setdefault(op, {}).update(by_device)
    shown = [path.resolve().relative_to(root.resolve()).as_posix() if path.resolve().is_relative_to(root.resolve())
             else str(path) for path in reports]
    return apply(data, found, shown)
