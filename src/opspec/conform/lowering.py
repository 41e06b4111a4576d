"""The report's ``lowering`` section: per op run, whether the backend's manifest says it lowers it or falls back.

The manifest is found by the backend's name (``conformance/backends/NAME.yaml``);
backends without one get no section. Only manifests and YAML are read here, no torch.
"""
from __future__ import annotations

import re
import textwrap
from collections import Counter
from pathlib import Path
from typing import Collection, Iterable, Mapping

from opspec.results.model import CaseRecord, Header, Lowering, LoweringOp, Report
from opspec.results.vocabulary import LOWERING, OWN_LOWERING
from opspec.spec import manifests
from opspec.spec.load import OpsetError

STATUSES = LOWERING
OWN = OWN_LOWERING  # the backend's own lowering: generated code, or a library kernel it calls
WARNING_PREFIX = "lowering: "  # marks the warnings of this section, so the summary can show them
_MANIFEST_NAME = re.compile(r"[a-z][a-z0-9_-]*")  # as the manifest schema spells a backend


def manifest_for(backend: str, directory: Path | None = None) -> Path | None:
    """The bundled manifest of ``backend``; None when it has none (``pkg.module:callable`` backends never do)."""
    if not _MANIFEST_NAME.fullmatch(backend):
        return None
    try:
        return manifests.manifest_path(backend, directory)
    except manifests.UnknownBackend:
        return None


def shown(path: Path) -> str:
    """The path as a reader of the report can use it: relative to here when it lies below."""
    try:
        return str(path.resolve().relative_to(Path.cwd()))
    except ValueError:
        return str(path)


def section(manifest: manifests.BackendManifest, manifest_shown: str, ops: Iterable[str],
            device: str | None = None, dtypes: Mapping[str, Collection[str]] | None = None) -> Lowering:
    """Counts, coverage and per-op status over the distinct ``ops`` of a run on ``device``; ``dtypes``: the dtypes
    each op ran in (None: any). An op is a fallback for the run when one of its dtypes falls back; where its
    dtypes differ, ``by_dtype`` says which."""
    dtypes = dtypes or {}
    entries = {op: _entry(manifest, op, device, dtypes.get(op)) for op in dict.fromkeys(ops)}
    counts = Counter(entry.status for entry in entries.values())
    run = len(entries)
    return Lowering(manifest=manifest_shown, measured_with=manifest.measured_with, ops_run=run,
                    **{status: counts[status] for status in STATUSES},
                    coverage_percent=round(100 * sum(counts[s] for s in OWN) / run, 1) if run else 0.0, ops=entries)


def _entry(manifest: manifests.BackendManifest, op: str, device: str | None,
           dtypes: Collection[str] | None) -> LoweringOp:
    """The op's status over the dtypes it ran in, with each dtype's where they differ."""
    status, note = manifest.status_over(op, device, dtypes)
    each = {dtype: manifest.status(op, device, dtype=dtype)[0] for dtype in sorted(dtypes or ())}
    return LoweringOp(status=status, note=note, by_dtype=each if len(set(each.values())) > 1 else None)


def for_run(head: Header, ops: Iterable[str], directory: Path | None = None,
            declared: Path | None = None, dtypes: Mapping[str, Collection[str]] | None = None
            ) -> tuple[Lowering | None, list[str]]:
    """(section or None, warnings) for a run with this header over these ops (``dtypes``: the dtypes each ran in);
    ``declared``: the manifest the backend's declaration names, else the bundled one found by name (in
    ``directory`` when given)."""
    path = declared if declared is not None and directory is None else manifest_for(head.backend_name, directory)
    if path is None:
        return None, []
    where = shown(path)
    try:
        manifest = manifests.load_manifest(path)
    except OpsetError as err:
        problem = str(err.findings[0]) if err.findings else f"{where}: unreadable"
        return None, [f"{WARNING_PREFIX}{problem}; the report has no lowering section"]
    if manifest.opset != head.opset:
        return None, [f"{WARNING_PREFIX}{where} describes opset {manifest.opset}, not {head.opset}; "
                      f"the report has no lowering section"]
    return section(manifest, where, ops, head.device, dtypes), []


def dtypes_of(records: Iterable[CaseRecord]) -> dict[str, set[str]]:
    """The dtypes each op ran in, from a run's records."""
    found: dict[str, set[str]] = {}
    for record in records:
        found.setdefault(record.op, set()).add(record.dtype)
    return found


def marked(record: CaseRecord, lowering: Lowering | None) -> CaseRecord:
    """The record with its op's status in the manifest, in its dtype; without a section, without one (a resumed run
    may carry one)."""
    if lowering is None:
        return record.without("lowering")
    entry = lowering.ops[record.op]
    return record.replace(lowering=(entry.by_dtype or {}).get(record.dtype, entry.status))


def summary_lines(report: Report) -> list[str]:
    """The terminal summary's lowering part."""
    lowering = report.lowering
    if lowering is None:
        notes = [w for w in report.warnings if w.startswith(WARNING_PREFIX)]
        return notes or [f"lowering: no manifest exists for backend {report.backend_name}, "
                         f"so the report has no lowering section"]
    library = lowering.library or 0  # reports from before library calls were counted have none
    line = (f"lowering (manifest {lowering.manifest}): {lowering.lowered + library} of {lowering.ops_run} ops lowered "
            f"({lowering.coverage_percent:.1f}%")
    line += f"; {library} of them as library calls), " if library else "), "
    line += f"{lowering.fallback} fall back"
    if lowering.unsupported:
        line += f", {lowering.unsupported} unsupported"
    if lowering.undeclared:
        line += f", {lowering.undeclared} undeclared"
    lines = [line]
    for status, label in (("library", "library calls"), ("fallback", "fall back"), ("unsupported", "unsupported"),
                          ("undeclared", "undeclared")):
        lines += _listed(label, [op for op, entry in lowering.ops.items() if entry.status == status])
    return lines


def _listed(label: str, ops: list[str]) -> list[str]:
    if not ops:
        return []
    names = ", ".join(op.removeprefix("aten::") for op in ops)
    return textwrap.wrap(f"{label}: {names}", width=110, initial_indent="  ", subsequent_indent="    ")
