"""Per-backend expectations: cases known to fail (xfail) or not to be run (skip).

``conformance/expectations/NAME.yaml``, schema ``expectations.schema.json``.
Entries match a case by fnmatch globs over the op (with or without ``aten::``),
the dtype and the device, and by a PEP 440 specifier over the installed torch
(``torch: "<2.14"``), and by globs over the name of the hardware the case runs on
(``hardware: ["Intel(R) Xeon(R)*"]``: the CPU's model or the GPU's name, as reports
record it in ``device_name``); the first entry that matches applies. A pattern that matches
no op of the opset is a warning, with its file and line. An xfail entry whose cases
pass is stale: each case says so, and :func:`stale` sums it up per entry and device.
"""
from __future__ import annotations

import fnmatch
import functools
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from packaging.specifiers import SpecifierSet

from opspec.bridge import versions
from opspec.conform import hardware
from opspec.conform.cases import Case, op_matches
from opspec.conform.lowering import shown
from opspec.results import tally
from opspec.results.model import CaseRecord
from opspec.spec import load, resources, yamlio
from opspec.spec.load import Finding, OpsetError
from opspec.spec.model import Opset, specifier_holds, torch_specifier

SCHEMA = "expectations.schema.json"


@dataclass(frozen=True)
class Expectation:
    op: str
    status: str  # xfail | skip
    reason: str
    dtypes: tuple[str, ...] = ()
    devices: tuple[str, ...] = ()
    torch: SpecifierSet | None = None  # None: every torch version
    tests: tuple[str, ...] = ()  # the decomposition suite's tests it is for (values, closure, random_rule); all when empty
    hardware: tuple[str, ...] = ()  # globs over the hardware's name; all hardware when empty
    link: str = ""
    attribution: str = ""  # backend | frontend | opspec, where the file says
    where: str = ""  # file:line, for messages

    def matches(self, case: Case, torch_version: str, hardware_name: str = "") -> bool:
        return (op_matches(case.op, self.op)
                and (not self.dtypes or any(fnmatch.fnmatchcase(case.dtype, d) for d in self.dtypes))
                and (not self.devices or case.device in self.devices)
                and (self.torch is None or specifier_holds(self.torch, torch_version))
                and (not self.hardware or any(fnmatch.fnmatchcase(machine, h) for h in self.hardware
                                              for machine in hardware_name.split(hardware.JOINED))))

    def as_dict(self) -> dict[str, Any]:
        entry = {"status": self.status, "reason": self.reason, "where": self.where}
        if self.link:
            entry["link"] = self.link
        if self.torch is not None:
            entry["torch"] = str(self.torch)
        if self.hardware:
            entry["hardware"] = list(self.hardware)
        if self.attribution:
            entry["attribution"] = self.attribution
        return entry


@dataclass(frozen=True)
class Expectations:
    entries: tuple[Expectation, ...] = ()
    path: str = ""
    warnings: tuple[str, ...] = ()
    torch_version: str = ""  # the torch the entries are matched against (the installed one)
    hardware_name: str = ""  # the hardware they are matched against; empty: this machine's, for the case's device

    @functools.cached_property
    def _limited_by_hardware(self) -> bool:  # once per file, not once per case
        return any(e.hardware for e in self.entries)

    def lookup(self, case: Case, hardware_name: str = "") -> Expectation | None:
        """The first entry that matches ``case``; ``hardware_name``, where given, is the machine this case ran on
        (a case spliced in from another machine, a part of a merge) instead of the one all cases are matched against."""
        version = self.torch_version or versions.installed()
        machine = hardware_name or self.hardware_name or (hardware.name(case.device) if self._limited_by_hardware else "")
        return next((e for e in self.entries if e.matches(case, version, machine)), None)


expectations_dir = resources.expectations_dir


def default_path(backend: str) -> Path | None:
    path = expectations_dir() / f"{backend}.yaml"
    return path if path.is_file() else None


def read(path: Path, opset: Opset, torch_version: str | None = None, hardware_name: str = "") -> Expectations:
    """Parse, schema-check and resolve one file; OpsetError (file:line: message) when it is unusable.

    Entries are matched against ``torch_version`` (default: the installed torch) and
    ``hardware_name`` (default: this machine's hardware for each case's device)."""
    data = load.read_checked(path, SCHEMA, "expectations")
    entries, warnings, problems = [], [], []
    names = [op.name for op in opset.active_ops()]
    for item in data["expectations"]:
        mark = yamlio.mark_of(item)
        try:
            torch_range = torch_specifier(item["torch"]) if "torch" in item else None
        except ValueError as err:
            problems.append(Finding(yamlio.mark_of(item, "torch", default=mark), f"expectation {item['op']!r}: {err}"))
            continue
        entry = Expectation(op=item["op"], status=item["status"], reason=item["reason"],
                            dtypes=tuple(item.get("dtypes", ())), devices=tuple(item.get("devices", ())),
                            torch=torch_range, tests=tuple(item.get("tests", ())), link=item.get("link", ""),
                            hardware=tuple(item.get("hardware", ())),
                            attribution=item.get("attribution", ""),
                            where=f"{shown(Path(mark.path))}:{mark.line}")
        if not any(op_matches(name, entry.op) for name in names):
            warnings.append(f"{entry.where}:{mark.col}: expectation {entry.op!r} matches no op of opset {opset.version}")
        entries.append(entry)
    if problems:
        raise OpsetError(problems)
    return Expectations(tuple(entries), str(path), tuple(warnings), torch_version or versions.installed(), hardware_name)


def apply(record: dict[str, Any], expectation: Expectation | None) -> dict[str, Any]:
    """The record's final status: an xfail turns a failure into xfail and a pass into xpass (stale)."""
    record["outcome"] = record["status"]
    if expectation is None:
        return record
    record["expectation"] = expectation.as_dict()
    if expectation.status == "xfail":
        record["status"] = "xpass" if record["outcome"] == "pass" else "xfail"
        if record["status"] == "xpass":
            record["message"] = f"stale expectation at {expectation.where}: the case passes on {record.get('device', '?')}"
    return record


def stale(records: list[dict[str, Any]]) -> list[str]:
    """One line per (xfail entry, device) with passing cases (``results.tally.stale_expectations``), for records
    still held as dicts while a run collects them."""
    return tally.stale_expectations(CaseRecord.from_dict(record) for record in records)


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
