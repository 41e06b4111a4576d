"""Per-backend expectations: cases known to fail (xfail) or not to be run (skip).

``conformance/expectations/NAME.yaml``, schema ``expectations.schema.json``.
Entries match a case by fnmatch globs over the op (with or without ``aten::``),
the dtype and the device; the first entry that matches applies. A pattern that
matches no op of the opset is a warning, with its file and line.
"""
from __future__ import annotations

import fnmatch
import functools
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from opspec.conform.cases import Case, op_matches
from opspec.spec import load, resources, yamlio
from opspec.spec.model import Opset

SCHEMA = "expectations.schema.json"


@dataclass(frozen=True)
class Expectation:
    op: str
    status: str  # xfail | skip
    reason: str
    dtypes: tuple[str, ...] = ()
    devices: tuple[str, ...] = ()
    link: str = ""
    where: str = ""  # file:line, for messages

    def matches(self, case: Case) -> bool:
        return (op_matches(case.op, self.op)
                and (not self.dtypes or any(fnmatch.fnmatchcase(case.dtype, d) for d in self.dtypes))
                and (not self.devices or case.device in self.devices))

    def as_dict(self) -> dict[str, Any]:
        entry = {"status": self.status, "reason": self.reason, "where": self.where}
        if self.link:
            entry["link"] = self.link
        return entry


@dataclass(frozen=True)
class Expectations:
    entries: tuple[Expectation, ...] = ()
    path: str = ""
    warnings: tuple[str, ...] = ()

    def lookup(self, case: Case) -> Expectation | None:
        return next((e for e in self.entries if e.matches(case)), None)


expectations_dir = resources.expectations_dir


def default_path(backend: str) -> Path | None:
    path = expectations_dir() / f"{backend}.yaml"
    return path if path.is_file() else None


def read(path: Path, opset: Opset) -> Expectations:
    """Parse, schema-check and resolve one file; OpsetError (file:line: message) when it is unusable."""
    data = load.read_checked(path, SCHEMA, "expectations")
    entries, warnings = [], []
    names = [op.name for op in opset.active_ops()]
    for item in data["expectations"]:
        mark = yamlio.mark_of(item)
        entry = Expectation(op=item["op"], status=item["status"], reason=item["reason"],
                            dtypes=tuple(item.get("dtypes", ())), devices=tuple(item.get("devices", ())),
                            link=item.get("link", ""), where=f"{mark.path}:{mark.line}")
        if not any(op_matches(name, entry.op) for name in names):
            warnings.append(f"{mark}: expectation {entry.op!r} matches no op of opset {opset.version}")
        entries.append(entry)
    return Expectations(tuple(entries), str(path), tuple(warnings))


def apply(record: dict[str, Any], expectation: Expectation | None) -> dict[str, Any]:
    """The record's final status: an xfail turns a failure into xfail and a pass into xpass (stale)."""
    record["outcome"] = record["status"]
    if expectation is None:
        return record
    record["expectation"] = expectation.as_dict()
    if expectation.status == "xfail":
        record["status"] = "xpass" if record["outcome"] == "pass" else "xfail"
        if record["status"] == "xpass":
            record["message"] = f"stale expectation at {expectation.where}: the case passes"
    return record


def skipped(case: Case, expectation: Expectation) -> dict[str, Any]:
    """The record of a case an expectation says not to run."""
    record = {**case.as_dict(), "status": "skip", "outcome": "skip", "message": expectation.reason,
              "examples": 0, "compiles": 0, "duration_s": 0.0}
    record["expectation"] = expectation.as_dict()
    return record


def reapply(record: dict[str, Any], expectation: Expectation | None) -> dict[str, Any]:
    """A record from an earlier run, judged by today's expectations (its raw outcome is kept)."""
    fresh = {k: v for k, v in record.items() if k != "expectation"}
    fresh["status"] = record.get("outcome", record["status"])
    if fresh["status"] == "pass" and record["status"] == "xpass":
        fresh["message"] = ""
    if expectation is not None and expectation.status == "skip":
        fresh["expectation"] = expectation.as_dict()
        fresh["outcome"] = fresh["status"]
        fresh["status"] = "skip" if fresh["status"] != "pass" else "xpass"
        return fresh
    return apply(fresh, expectation)
