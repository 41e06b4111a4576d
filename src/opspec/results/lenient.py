"""Reports read as far as they can be: a published report from another tool, or malformed in part.

The site publishes every file in ``conformance/results``; one it cannot fully read should
cost a note, not the build. :func:`read` takes what a strict :meth:`Report.from_dict`
would refuse: the case list under another name, an op or status under another key, a
case without dtype or device (left blank here, for the reader to default), a part
that is not the shape the schema gives it (left out) or lacks a field the schema
requires (None). An opspec report reads as it does strictly.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

from opspec.results.model import (
    CaseRecord,
    Functionalization,
    Header,
    Lowering,
    Node,
    Report,
    ReportFormatError,
    RootCause,
    resolve_shared,
)

LIST_KEYS = ("results", "cases", "tests", "records")  # where other tools keep their list of cases
OP_KEYS = ("op", "operator", "name")
STATUS_KEYS = ("status", "outcome", "result")


@dataclass(frozen=True)
class Read:
    """What was read of a document: its report, and how many of its entries named no op (left out)."""
    report: Report
    left_out: int


def read(data: Any, name: str = "") -> Read:
    """The report in ``data`` as far as it can be read; ``name`` is the backend's name where the document gives
    none. ReportFormatError where it holds no list of cases at all."""
    if not isinstance(data, Mapping):
        raise ReportFormatError("expected a JSON object")
    entries = next((data[key] for key in LIST_KEYS if isinstance(data.get(key), list)), None)
    if entries is None:
        raise ReportFormatError("no list of results found")
    if data.get("shared") is not None:  # a published report: the values its records name by key
        entries = resolve_shared(entries, data["shared"], lenient=True)
    records = [_record(entry) for entry in entries if _op_of(entry) is not None]
    report = Report(header=_header(data, name), records=tuple(records), summary=data.get("summary"),
                    executed=data.get("executed"), blame=data.get("blame"), root_causes=_root_causes(data),
                    lowering=_section(Lowering, data.get("lowering")),
                    functionalization=_section(Functionalization, data.get("functionalization")),
                    warnings=tuple(data["warnings"]) if isinstance(data.get("warnings"), list) else (),
                    key_order=tuple(data))
    return Read(report, len(entries) - len(records))


def _text(value: Any) -> str | None:
    """A value that reads as text (a string, or a number), as a string; None for anything else or blank."""
    if isinstance(value, (str, int, float)) and str(value).strip():
        return str(value)
    return None


def _first_text(entry: Mapping[str, Any], keys: tuple[str, ...]) -> str | None:
    return next((text for key in keys if (text := _text(entry.get(key))) is not None), None)


def _op_of(entry: Any) -> str | None:
    return _first_text(entry, OP_KEYS) if isinstance(entry, Mapping) else None


def _record(entry: Mapping[str, Any]) -> CaseRecord:
    """A case, its op and status found under any of their names and its dtype and device blank where it has none."""
    fields = {**entry, "op": _op_of(entry), "status": _first_text(entry, STATUS_KEYS) or "",
              "dtype": _text(entry.get("dtype")) or "", "device": _text(entry.get("device")) or ""}
    return CaseRecord.from_dict(fields, lenient=True)


def _header(data: Mapping[str, Any], name: str) -> Header:
    """The header, its backend an object as read, else named by the document's backend or name, else ``name``."""
    head = {key: value for key, value in data.items() if key not in (*Report.SECTIONS, *LIST_KEYS)}
    backend = data.get("backend")
    if not isinstance(backend, Mapping):
        head["backend"] = _text(backend) or _first_text(data, ("name",)) or name
    return Header.from_dict(head, lenient=True)


def _section(cls: type[Node], value: Any) -> Any:
    """A computed section, or None where the document has none or one that is not an object."""
    return cls.from_dict(value, lenient=True) if isinstance(value, Mapping) else None


def _root_causes(data: Mapping[str, Any]) -> tuple[RootCause, ...] | None:
    causes = data.get("root_causes")
    if not isinstance(causes, list):
        return None
    return tuple(RootCause.from_dict(cause, lenient=True) for cause in causes if isinstance(cause, Mapping))

