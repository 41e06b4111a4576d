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

from packaging.specifiers import SpecifierSet

from opspec.bridge import versions
from opspec.conform import hardware
from opspec.conform.cases import Case, op_matches
from opspec.conform.lowering import shown
from opspec.results import model, tally
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

    def as_record(self) -> model.Expectation:
        """The entry as a case's record names it: its status and reason, where it is, and the limits it has."""
        return model.Expectation(status=self.status, reason=self.reason, where=self.where, link=self.link or None,
                                 torch=str(self.torch) if self.torch is not None else None,
                                 hardware=self.hardware or None, attribution=self.attribution or None)


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
    for yaml_entry in data["expectations"]:  # the file's own entries, not a report's records
        mark = yamlio.mark_of(yaml_entry)
        try:
            torch_range = torch_specifier(yaml_entry["torch"]) if "torch" in yaml_entry else None
        except ValueError as err:
            problems.append(Finding(yamlio.mark_of(yaml_entry, "torch", default=mark),
                                    f"expectation {yaml_entry['op']!r}: {err}"))
            continue
        entry = Expectation(op=yaml_entry["op"], status=yaml_entry["status"], reason=yaml_entry["reason"],
                            dtypes=tuple(yaml_entry.get("dtypes", ())), devices=tuple(yaml_entry.get("devices", ())),
                            torch=torch_range, tests=tuple(yaml_entry.get("tests", ())),
                            link=yaml_entry.get("link", ""), hardware=tuple(yaml_entry.get("hardware", ())),
                            attribution=yaml_entry.get("attribution", ""),
                            where=f"{shown(Path(mark.path))}:{mark.line}")
        if not any(op_matches(name, entry.op) for name in names):
            warnings.append(f"{entry.where}:{mark.col}: expectation {entry.op!r} matches no op of opset {opset.version}")
        entries.append(entry)
    if problems:
        raise OpsetError(problems)
    return Expectations(tuple(entries), str(path), tuple(warnings), torch_version or versions.installed(), hardware_name)


def apply(outcome: CaseRecord, expectation: Expectation | None) -> CaseRecord:
    """The record of a case's outcome with its final status: an xfail turns a failure into xfail and a pass into
    xpass (stale)."""
    record = outcome.replace(outcome=outcome.status)
    if expectation is None:
        return record
    record = record.replace(expectation=expectation.as_record())
    if expectation.status != "xfail":
        return record
    if record.outcome != "pass":
        return record.replace(status="xfail")
    return record.replace(status="xpass",
                          message=f"stale expectation at {expectation.where}: the case passes on {record.device}")


def stale(records: list[CaseRecord]) -> list[str]:
    """One line per (xfail entry, device) with passing cases (``results.tally.stale_expectations``)."""
    return tally.stale_expectations(records)


def skipped(case: Case, expectation: Expectation) -> CaseRecord:
    """The record of a case an expectation says not to run."""
    return CaseRecord(op=case.op, dtype=case.dtype, device=case.device, status="skip", outcome="skip",
                      message=expectation.reason, examples=0, compiles=0, duration_s=0.0,
                      expectation=expectation.as_record())


def reapply(record: CaseRecord, expectation: Expectation | None) -> CaseRecord:
    """A record from an earlier run, judged by today's expectations (its raw outcome is kept)."""
    fresh = record.without("expectation").replace(status=record.final_outcome)
    if fresh.status == "pass" and record.status == "xpass":
        fresh = fresh.replace(message="")
    if expectation is not None and expectation.status == "skip":
        return fresh.replace(expectation=expectation.as_record(), outcome=fresh.status,
                             status="skip" if fresh.status != "pass" else "xpass")
    return apply(fresh, expectation)
