"""Errata: corrections to the prose of released opset versions (``opset/errata.yaml``).

A released version is sealed by its digest, but its prose can still be wrong about torch.
An erratum names the version(s), the entry (a core op, or a decomposition rule by its op),
the prose field, the sealed text that is wrong (``was``, a substring of the field), the text
that replaces it where the prose is shown (``now``), and the evidence that shows the truth, so
the correction is itself checked: special-case rows, checked against torch like every row; for
prose about how a backend handles the op, the backend's lowering manifest, which is measured
from its conformance runs; for what rows cannot state (strides, a precondition torch does not
check), a claim of the prose audit (``tools/audit_prose.py``) that runs the corrected text on
torch. The sealed files are never edited; readers apply the errata when they show the prose, and
the next release carries the corrected text.
"""
from __future__ import annotations

import copy
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Mapping

from opspec.spec import load, resources, yamlio
from opspec.spec import special_cases as spec_cases
from opspec.spec.manifests import BackendManifest
from opspec.spec.errors import Finding
from opspec.spec.model import Opset, version_key
from opspec.spec.yamlio import DataError, Mark

FILE = "errata.yaml"
SCHEMA = "errata.schema.json"
# Fields holding a list of items: the items' own prose key.
_LIST_FIELDS = {"exceptions.reason": ("exceptions", "reason"), "torch_targets.reason": ("torch_targets", "reason")}


@dataclass(frozen=True)
class RowRef:
    """A special-case row cited as ``FILE#id`` (``row:``), or, as errata written before rows had ids do, by file
    name and claim."""

    file: str
    says: str  # "" where the row is cited by id
    mark: Mark
    id: str = ""

    @property
    def text(self) -> str:
        return f"opset/special_cases/{self.file}#{self.id}" if self.id else f"opset/special_cases/{self.file}: {self.says}"


@dataclass(frozen=True)
class LoweringRef:
    """A backend's lowering manifest cited for where it places the erratum's op (lowered, fallback, unsupported)."""

    backend: str
    lowering: str
    mark: Mark  # where `lowering` stands
    backend_mark: Mark

    @property
    def text(self) -> str:
        return f"conformance/backends/{self.backend}.yaml: {self.lowering}"


@dataclass(frozen=True)
class AuditRef:
    """A claim of the prose audit (``tools/audit_prose.py``) about the corrected text, by its quote: the audit runs
    it on torch and fails while it does not hold (or no claim of the entry's field has this quote)."""

    quote: str
    mark: Mark

    @property
    def text(self) -> str:
        return f"tools/audit_prose.py, run on torch: {self.quote}"


Evidence = RowRef | LoweringRef | AuditRef


def _evidence(item: Mapping[str, Any], mark: Mark) -> Evidence:
    if "audit" in item:
        return AuditRef(item["audit"], yamlio.mark_of(item, "audit", mark))
    if "backend" in item:
        return LoweringRef(item["backend"], item["lowering"], yamlio.mark_of(item, "lowering", mark),
                           yamlio.mark_of(item, "backend", mark))
    if "row" in item:
        file, _, row_id = item["row"].partition("#")
        return RowRef(file, "", yamlio.mark_of(item, "row", mark), row_id)
    return RowRef(item["file"], item["says"], yamlio.mark_of(item, "says", mark))


@dataclass(frozen=True)
class Erratum:
    versions: tuple[str, ...]
    kind: str  # "op" (a core op entry) or "rule" (a decomposition rule)
    name: str
    field: str
    was: str
    now: str
    shown_by: tuple[Evidence, ...]
    published: str
    reason: str | None
    mark: Mark
    marks: Mapping[str, Mark]  # key -> where it stands, for findings at the key

    @classmethod
    def from_dict(cls, data: Any) -> "Erratum":
        kind = "op" if "op" in data else "rule"
        rows = data["shown_by"]
        return cls(
            versions=tuple(data["versions"]), kind=kind, name=data[kind], field=data["field"],
            was=data["was"], now=data["now"],
            shown_by=tuple(_evidence(item, yamlio.mark_of(rows, index)) for index, item in enumerate(rows)),
            published=data["published"], reason=data.get("reason"), mark=yamlio.mark_of(data),
            marks={key: yamlio.mark_of(data, key) for key in data},
        )

    def at(self, key: str) -> Mark:
        return self.marks.get(key, self.mark)

    @property
    def where(self) -> str:
        """``opset/errata.yaml:LINE``, as the repository spells it, whichever copy of the data was read."""
        return f"opset/{FILE}:{self.mark.line}"


def path(root: Path | None = None) -> Path:
    return Path(root or resources.opset_root()) / FILE


def read(root: Path | None = None) -> tuple[list[Erratum], list[Finding], bool]:
    """(errata, findings, usable): the file's errata when it is clean; a missing file holds none.
    ``usable`` is False when the file cannot be parsed at all."""
    where = path(root)
    if not where.is_file():
        return [], [], True
    loaded = load.read(where, SCHEMA, prose=True)
    if loaded.data is None:
        return [], loaded.findings, False
    if loaded.findings:
        return [], loaded.findings, True
    return [Erratum.from_dict(entry) for entry in loaded.data["errata"]], [], True


def load_errata(root: Path | None = None) -> tuple[Erratum, ...]:
    """Every erratum, schema-checked; DataError naming file:line on bad data."""
    errata, findings, _ = read(root)
    if findings:
        raise DataError(findings[0].mark, findings[0].message)
    return tuple(errata)


def field_texts(raw: Mapping[str, Any], field: str) -> list[str]:
    """The sealed text(s) of ``field`` in an entry's raw data (one per item for list fields)."""
    if field in _LIST_FIELDS:
        items, key = _LIST_FIELDS[field]
        return [item[key] for item in raw.get(items) or () if isinstance(item.get(key), str)]
    node: Any = raw
    for step in field.split("."):
        node = node.get(step) if isinstance(node, Mapping) else None
    return [node] if isinstance(node, str) else []


def entry_of(opset: Opset, erratum: Erratum):
    """The core op or rule the erratum corrects in ``opset`` (None when the version has none)."""
    return (opset.ops_by_name if erratum.kind == "op" else opset.rules_by_op).get(erratum.name)


def findings(errata: Iterable[Erratum], opsets: Mapping[str, Opset],
             cases: Mapping[str, tuple[spec_cases.SpecialCase, ...]],
             manifests: Mapping[str, BackendManifest] | None = None) -> list[Finding]:
    """Each erratum against the data: released versions that hold the entry, ``was`` in the sealed field,
    every cited row a row of the entry's op, every cited manifest placing the op as cited (``manifests``:
    backend -> its bundled manifest), every cited audit claim quoting ``now`` (the audit itself runs it on torch)."""
    found = []
    for erratum in errata:
        if erratum.was == erratum.now:
            found.append(Finding(erratum.at("now"), f"{erratum.name}: now is the same text as was"))
        for version in erratum.versions:
            opset = opsets.get(version)
            if opset is None:
                known = ", ".join(opsets)
                found.append(Finding(erratum.at("versions"), f"{erratum.name}: unknown opset version {version} (known: {known})"))
                continue
            if opset.info.status != "released":
                found.append(Finding(erratum.at("versions"), f"{erratum.name}: opset {version} is a draft, not sealed; "
                                                             "correct its files instead of writing an erratum"))
                continue
            entry = entry_of(opset, erratum)
            if entry is None:
                what = "core op" if erratum.kind == "op" else "decomposition rule for"
                found.append(Finding(erratum.at(erratum.kind), f"opset {version} has no {what} {erratum.name}"))
                continue
            texts = field_texts(entry.raw, erratum.field)
            if not texts:
                found.append(Finding(erratum.at("field"), f"{erratum.name}: opset {version} has no {erratum.field}"))
            elif not any(erratum.was in text for text in texts):
                found.append(Finding(erratum.at("was"), f"{erratum.name}: was is not in the {erratum.field} of opset "
                                                        f"{version}, which says: {texts[0]!r}"))
        found += _resealed(erratum, opsets)
        for cited in erratum.shown_by:
            if isinstance(cited, LoweringRef):
                found += _lowering_findings(erratum.name, cited, manifests or {})
            elif isinstance(cited, AuditRef):
                if cited.quote not in erratum.now:
                    found.append(Finding(cited.mark, f"{erratum.name}: the audit claim cited is not in now: {cited.quote!r}"))
            elif cited.id and find_cited(cases, cited, erratum.name) is None:
                found.append(Finding(cited.mark, f"{erratum.name}: no special-case row of it is {cited.file}#{cited.id}"))
            elif not cited.id and spec_cases.find_row(cases, cited.file, cited.says, erratum.name) is None:
                found.append(Finding(cited.mark, f"{erratum.name}: no special-case row of it in {cited.file} says {cited.says!r}"))
    return found


def _resealed(erratum: Erratum, opsets: Mapping[str, Opset]) -> list[Finding]:
    """A version released after the erratum's newest that still holds ``was``: the mistake was sealed again, so
    the erratum must name that version too (a release applies the errata of the version it starts from)."""
    named = [v for v in erratum.versions if v in opsets]
    if not named:
        return []
    newest = max(named, key=version_key)
    found = []
    for version, opset in opsets.items():
        if version in erratum.versions or opset.info.status != "released" or version_key(version) < version_key(newest):
            continue
        entry = entry_of(opset, erratum)
        if entry is not None and any(erratum.was in text and erratum.now not in text  # now may extend was
                                      for text in field_texts(entry.raw, erratum.field)):
            found.append(Finding(erratum.at("versions"), f"{erratum.name}: opset {version} was released with was in "
                                                         f"its {erratum.field} too; name {version} in versions"))
    return found


def find_cited(cases: Mapping[str, tuple], cited: RowRef, op: str):
    """The row of ``op`` an erratum cites (by id, or by file and claim); None if it has none such."""
    if not cited.id:
        return spec_cases.find_row(cases, cited.file, cited.says, op)
    return next((row for row in cases.get(op, ()) if row.id == cited.id and row.file == cited.file), None)


def _lowering_findings(op: str, cited: LoweringRef, manifests: Mapping[str, BackendManifest]) -> list[Finding]:
    """The cited manifest places ``op`` as cited on each device it was measured on (and with no device named)."""
    manifest = manifests.get(cited.backend)
    if manifest is None:
        known = ", ".join(sorted(manifests)) or "none"
        return [Finding(cited.backend_mark, f"{op}: no lowering manifest for backend {cited.backend!r} (known: {known})")]
    placed = {device: manifest.status(op, device)[0] for device in (None, *manifest.devices)}
    if all(status == cited.lowering for status in placed.values()):
        return []
    statuses = set(placed.values())
    says = statuses.pop() if len(statuses) == 1 else ", ".join(f"{s} on {d or 'no device named'}" for d, s in placed.items())
    return [Finding(cited.mark, f"{op}: the {cited.backend} manifest does not place it {cited.lowering}: it says {says}")]


def for_entry(errata: Iterable[Erratum], version: str, kind: str, name: str) -> dict[str, list[Erratum]]:
    """field -> the errata that correct it, for one entry of one version."""
    found: dict[str, list[Erratum]] = {}
    for erratum in errata:
        if version in erratum.versions and erratum.kind == kind and erratum.name == name:
            found.setdefault(erratum.field, []).append(erratum)
    return found


def with_corrections(raw: Mapping[str, Any], corrections: Mapping[str, list[Erratum]]) -> dict:
    """A copy of an entry's data with each field ``corrections`` names (field -> its errata) corrected: a new
    version starts from the corrected text, so a release never seals a known mistake again."""
    entry = copy.deepcopy(dict(raw))
    for field, found in corrections.items():
        if field in _LIST_FIELDS:
            items, key = _LIST_FIELDS[field]
            holders = [item for item in entry.get(items) or () if isinstance(item, dict)]
        else:
            *parents, key = field.split(".")
            holder: Any = entry
            for step in parents:
                holder = holder.get(step) if isinstance(holder, dict) else None
            holders = [holder] if isinstance(holder, dict) else []
        for holder in holders:
            if isinstance(holder.get(key), str):
                holder[key] = corrected(holder[key], found)
    return entry


def corrected(text: str, errata: Iterable[Erratum]) -> str:
    """The sealed text with each erratum's ``was`` replaced by its ``now``."""
    for erratum in errata:
        text = text.replace(erratum.was, erratum.now)
    return text
