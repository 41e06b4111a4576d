"""The conformance report as frozen types: :class:`Report`, its :class:`Header` and one :class:`CaseRecord` per case.

Each type reads a JSON object with ``from_dict`` and writes it back with ``to_dict``;
``to_dict(from_dict(d)) == d`` for every report the schema admits. The fields the schema
(``conformance_report.schema.json``) names are typed attributes; a key a type does not
name is kept verbatim in its ``extra``, and a typed key written as ``null`` is
remembered in ``nulls``, so nothing a report carries is lost on the way through.
Lists become tuples; objects the model does not type further stay plain mappings.
Each object remembers the order its keys were read in (``key_order``): ``to_dict``
writes the model's order, ``to_dict(as_read=True)`` the order read, so a tool that
rewrites one part of a committed report leaves every other byte as it was.
Statuses are not checked against the vocabulary: a report from another tool may
use words of its own, and readers show them. ``from_dict(d, lenient=True)`` reads
what a strict read refuses: a part not of the shape the schema gives it is left
out, a required field missing reads None (``results.lenient``, for the site).
A published report (``results.publish``) writes values many records share once, in its
``shared`` section, each record naming its value by key: reading puts them back in the
records (``Report.shared`` remembers which fields), and ``to_dict`` writes them so again.
"""
from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Iterable, Iterator, Mapping

from opspec.results import vocabulary
from opspec.spec.gc_paused import gc_paused


class ReportFormatError(ValueError):
    """A document that is not a conformance report (or a part that is malformed): one line saying where."""


# ---- the codec every type shares ----

def _frozen(value: Any) -> Any:
    """JSON lists as tuples, all the way down (objects stay mappings)."""
    if isinstance(value, list):
        return tuple(_frozen(v) for v in value)
    if isinstance(value, dict):
        return {k: _frozen(v) for k, v in value.items()}
    return value


def _plain(value: Any) -> Any:
    """The JSON form again: tuples as lists, mappings as dicts."""
    if isinstance(value, (tuple, list)):
        return [_plain(v) for v in value]
    if isinstance(value, Mapping):
        return {k: _plain(v) for k, v in value.items()}
    return value


def nested(kind: str, of: type, **kwargs) -> Any:
    """A field holding one typed object (``one``), a list of them (``many``) or an object of them by key (``map``)."""
    return field(metadata={"nested": (kind, of)}, **kwargs)


def renamed(key: str, **kwargs) -> Any:
    """A field whose JSON key is not a Python name (``$schema``)."""
    return field(metadata={"key": key}, **kwargs)


class Node:
    """What the report's types share: the codec, ``extra`` (keys not typed), ``nulls`` (typed keys written null)
    and ``key_order`` (the keys as read)."""

    extra: Mapping[str, Any]
    nulls: frozenset[str]
    key_order: tuple[str, ...]
    _UNTYPED: ClassVar[tuple[str, ...]] = ("extra", "nulls", "key_order")

    @classmethod
    @functools.cache
    def _fields(cls) -> tuple[tuple[str, str, tuple[str, type] | None], ...]:
        return tuple((f.name, f.metadata.get("key", f.name), f.metadata.get("nested"))
                     for f in dataclasses.fields(cls) if f.name not in cls._UNTYPED)

    @classmethod
    @functools.cache
    def _required(cls) -> tuple[str, ...]:
        return tuple(f.name for f in dataclasses.fields(cls) if f.name not in cls._UNTYPED
                     and f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], *, lenient: bool = False):
        if not isinstance(data, Mapping):
            raise ReportFormatError(f"{cls.__name__}: an object expected, not {type(data).__name__}")
        values: dict[str, Any] = dict.fromkeys(cls._required()) if lenient else {}
        nulls = []
        typed = set()
        for name, key, how in cls._fields():
            typed.add(key)
            if key not in data:
                continue
            raw = data[key]
            if raw is None:
                nulls.append(name)
                if name in cls._required():  # written, as null (an accuracy program that measured nothing)
                    values[name] = None
            elif how is None:
                values[name] = _frozen(raw)
            else:
                try:
                    values[name] = _decode(raw, *how, where=f"{cls.__name__}.{key}", lenient=lenient)
                except ReportFormatError:
                    if not lenient:
                        raise
        try:
            return cls(**values, extra={k: v for k, v in data.items() if k not in typed}, nulls=frozenset(nulls),
                       key_order=tuple(data))
        except TypeError as err:  # a required key missing
            raise ReportFormatError(f"{cls.__name__}: {err}") from None

    def written(self, name: str) -> bool:
        """Whether the field was written, as a value or as null."""
        return getattr(self, name) is not None or name in self.nulls

    def replace(self, **changes: Any):
        return dataclasses.replace(self, **changes)

    def without(self, *names: str):
        """The object with these fields not written at all (neither a value nor null)."""
        return dataclasses.replace(self, **dict.fromkeys(names), nulls=self.nulls - set(names))

    def to_dict(self, *, as_read: bool = False) -> dict[str, Any]:
        """The JSON object: keys in the model's order, or with ``as_read`` in the order they were read (keys the
        object did not hold when read come last)."""
        out: dict[str, Any] = {}
        for name, key, how in self._fields():
            value = getattr(self, name)
            if value is None:
                if name in self.nulls:
                    out[key] = None
            elif how is None:
                out[key] = _plain(value)
            else:
                out[key] = _encode(value, how[0], as_read)
        out.update(self.extra)
        return _in_order(out, self.key_order) if as_read else out


def as_written(value: Any) -> Any:
    """A field's value as a report writes it: an object of the model as its JSON object, a tuple as a list."""
    return value.to_dict() if isinstance(value, Node) else _plain(value)


def _in_order(out: dict[str, Any], order: tuple[str, ...]) -> dict[str, Any]:
    """``out`` with the keys named in ``order`` first, in that order, then its others in their own (as a JSON
    object updated in place keeps its keys where they were and adds new ones at its end)."""
    ordered = {key: out[key] for key in order if key in out}
    ordered.update(out)
    return ordered


def _decode(raw: Any, kind: str, of: type, *, where: str, lenient: bool = False) -> Any:
    try:
        if kind == "one":
            return of.from_dict(raw, lenient=lenient)
        if kind == "many":
            return tuple(item for _, item in _each(of, ((None, item) for item in raw), lenient))
        return dict(_each(of, raw.items(), lenient))
    except ReportFormatError as err:
        raise ReportFormatError(f"{where}: {err}") from None
    except (TypeError, AttributeError):
        raise ReportFormatError(f"{where}: not the shape the report schema gives it") from None


def _each(of: type, pairs: Iterable[tuple[Any, Any]], lenient: bool) -> Iterator[tuple[Any, Any]]:
    """(key, item read) for each of ``pairs``; lenient, an item not of its shape is left out."""
    for key, item in pairs:
        try:
            yield key, of.from_dict(item, lenient=lenient)
        except ReportFormatError:
            if not lenient:
                raise


def _encode(value: Any, kind: str, as_read: bool) -> Any:
    if kind == "one":
        return value.to_dict(as_read=as_read)
    if kind == "many":
        return [item.to_dict(as_read=as_read) for item in value]
    return {key: item.to_dict(as_read=as_read) for key, item in value.items()}


def _untyped() -> Any:
    return field(default_factory=dict, repr=False)


def _no_nulls() -> Any:
    return field(default=frozenset(), repr=False)


def _as_read() -> Any:
    return field(default=(), repr=False, compare=False)


# ---- a case ----

@dataclass(frozen=True)
class Case:
    """One case of a run: an op in one dtype on one device (a report holds each at most once)."""
    op: str
    dtype: str
    device: str

    @property
    def id(self) -> str:
        return f"{self.op.removeprefix('aten::')}-{self.dtype}-{self.device}"

    @property
    def name(self) -> str:
        """``aten::op dtype device``: as root causes, history and messages name a case."""
        return f"{self.op} {self.dtype} {self.device}"

    def as_dict(self) -> dict[str, str]:
        return {"op": self.op, "dtype": self.dtype, "device": self.device}

    def seed(self, base: int) -> int:
        """A seed of its own per case, stable across runs and processes."""
        return (base * 1_000_003 + zlib.crc32(self.id.encode())) % (2**32)


@dataclass(frozen=True)
class Expectation(Node):
    """The expectation entry that applied to a case."""
    status: str
    reason: str
    link: str | None = None
    attribution: str | None = None
    where: str | None = None  # FILE:LINE or FILE#id of the entry
    torch: str | None = None
    hardware: tuple[str, ...] | None = None
    extra: Mapping[str, Any] = _untyped()
    nulls: frozenset[str] = _no_nulls()
    key_order: tuple[str, ...] = _as_read()


@dataclass(frozen=True)
class Evidence(Node):
    """How it is known who executed a case's op."""
    executed: str
    source: str
    target_ops: tuple[str, ...] | None = None
    runtime_ops: tuple[str, ...] | None = None
    kernels: int | None = None
    pytorch_ops: tuple[str, ...] | None = None
    note: str | None = None
    extra: Mapping[str, Any] = _untyped()
    nulls: frozenset[str] = _no_nulls()
    key_order: tuple[str, ...] = _as_read()


@dataclass(frozen=True)
class SpecialCases(Node):
    """The op's special-case rows in a case: how many applied, how many ran, the latitude a pass used."""
    rows: int | None = None
    run: int | None = None
    latitude: tuple[str, ...] | None = None
    extra: Mapping[str, Any] = _untyped()
    nulls: frozenset[str] = _no_nulls()
    key_order: tuple[str, ...] = _as_read()


@dataclass(frozen=True)
class SpecialCase(Node):
    """The special-case row a case failed on."""
    row: str | None = None
    says: str | None = None
    dtype: str | None = None
    extra: Mapping[str, Any] = _untyped()
    nulls: frozenset[str] = _no_nulls()
    key_order: tuple[str, ...] = _as_read()


@dataclass(frozen=True)
class FirstRun(Node):
    """A failing case's first run, where it ended otherwise than the run alone that is recorded."""
    status: str
    message: str
    extra: Mapping[str, Any] = _untyped()
    nulls: frozenset[str] = _no_nulls()
    key_order: tuple[str, ...] = _as_read()


@dataclass(frozen=True)
class Log(Node):
    """The case's share of the run's log file."""
    bytes: int
    cut_bytes: int
    repeated_lines: int | None = None
    extra: Mapping[str, Any] = _untyped()
    nulls: frozenset[str] = _no_nulls()
    key_order: tuple[str, ...] = _as_read()


@dataclass(frozen=True)
class Accuracy(Node):
    """The backend's program of the op over an accuracy contract's inputs, judged against the contract.
    ``max_ulp`` and the errors in ``worst`` are numbers, or ``"inf"``."""
    contract: Mapping[str, Any]
    max_ulp: float | str | None
    inputs: int
    worst: tuple[Mapping[str, Any], ...]
    exhaustive: bool | None = None
    seed: int | None = None
    examples_max_ulp: float | str | None = None
    flushed: int | None = None
    executed: str | None = None
    program: str | None = None
    extra: Mapping[str, Any] = _untyped()
    nulls: frozenset[str] = _no_nulls()
    key_order: tuple[str, ...] = _as_read()


@dataclass(frozen=True)
class CaseRecord(Node):
    """One case's verdict: ``status`` after expectations, ``outcome`` before them."""
    op: str
    dtype: str
    device: str
    status: str
    message: str = ""
    outcome: str | None = None
    examples: int | None = None
    compiles: int | None = None
    handed_ops: tuple[str, ...] | None = None
    delegated_ops: tuple[str, ...] | None = None
    max_abs_error: float | None = None
    max_rel_error: float | None = None
    kernel_error: float | None = None
    tolerance: tuple[float, float] | None = None  # (rtol, atol)
    flushed: int | None = None  # subnormals only the opset's subnormal policy let pass
    special_cases: SpecialCases | None = nested("one", SpecialCases, default=None)
    special_case: SpecialCase | None = nested("one", SpecialCase, default=None)
    decided_by: str | None = None
    first_run: FirstRun | None = nested("one", FirstRun, default=None)
    diagnostic: tuple[str, ...] | None = None
    log: Log | None = nested("one", Log, default=None)
    property_checked: bool | None = None
    accuracy: Accuracy | None = nested("one", Accuracy, default=None)
    repro: str | None = None
    repro_file: str | None = None
    executed: str | None = None
    evidence: Evidence | None = nested("one", Evidence, default=None)
    blame: str | None = None
    blame_stage: str | None = None
    blame_reason: str | None = None
    duration_s: float | None = None
    device_name: str | None = None
    lowering: str | None = None
    expectation: Expectation | None = nested("one", Expectation, default=None)
    extra: Mapping[str, Any] = _untyped()
    nulls: frozenset[str] = _no_nulls()
    key_order: tuple[str, ...] = _as_read()

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], *, lenient: bool = False) -> CaseRecord:
        record = super().from_dict(data, lenient=lenient)
        if not all(isinstance(getattr(record, k), str) for k in ("op", "dtype", "device", "status")):
            raise ReportFormatError(f"CaseRecord: op, dtype, device and status must be strings ({dict(data)!r:.120})")
        return record

    @property
    def case(self) -> Case:
        return Case(self.op, self.dtype, self.device)

    @property
    def final_outcome(self) -> str:
        """What the backend did, before expectations (records written before ``outcome`` existed: the status)."""
        return self.outcome if self.outcome is not None else self.status

    @property
    def clean(self) -> bool:
        """Leaves the exit code at 0: a right answer, an expected failure or a skip."""
        return self.status in vocabulary.CLEAN

    @property
    def passed(self) -> bool:
        return self.status in vocabulary.PASSING


# ---- the header ----

@dataclass(frozen=True)
class Backend(Node):
    """The backend as the run described it."""
    name: str
    version: str = ""
    package: str | None = None
    target: str | None = None
    runtime: str | None = None
    build: str | None = None
    extra: Mapping[str, Any] = _untyped()
    nulls: frozenset[str] = _no_nulls()
    key_order: tuple[str, ...] = _as_read()
    name_only: bool = field(default=False, repr=False)  # reports written before backends were described name it alone
    _UNTYPED: ClassVar[tuple[str, ...]] = ("extra", "nulls", "key_order", "name_only")

    @classmethod
    def from_dict(cls, data: Mapping[str, Any] | str, *, lenient: bool = False) -> Backend:
        return cls(name=data, name_only=True) if isinstance(data, str) else super().from_dict(data, lenient=lenient)

    def to_dict(self, *, as_read: bool = False) -> Any:
        return self.name if self.name_only else super().to_dict(as_read=as_read)


@dataclass(frozen=True)
class Shard(Node):
    """``--shard K/N``: the report holds the K-th of N parts of the run's cases."""
    index: int
    count: int
    costs: str | None = None
    cases: int | None = None
    extra: Mapping[str, Any] = _untyped()
    nulls: frozenset[str] = _no_nulls()
    key_order: tuple[str, ...] = _as_read()

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"


@dataclass(frozen=True)
class Part(Node):
    """One shard report a merged report joins, with what described its own machine and run."""
    report: str
    shard: str
    cases: int
    python: str | None = None
    platform: str | None = None
    device_name: str | None = None
    duration_s: float | None = None
    jobs: int | None = None
    shuffle: int | None = None
    extra: Mapping[str, Any] = _untyped()
    nulls: frozenset[str] = _no_nulls()
    key_order: tuple[str, ...] = _as_read()


@dataclass(frozen=True)
class Splice(Node):
    """A later partial re-run whose records replaced the report's own for its cases."""
    ops: tuple[str, ...]
    cases: int
    measured: str
    duration_s: float | None = None
    device_name: str | None = None
    extra: Mapping[str, Any] = _untyped()
    nulls: frozenset[str] = _no_nulls()
    key_order: tuple[str, ...] = _as_read()


@dataclass(frozen=True, kw_only=True)
class Header(Node):
    """What was tested, with what, and how: everything in a report but its computed sections.
    Fields in the order a report writes them."""
    schema: str | None = renamed("$schema", default=None)
    format: int | None = None
    opspec: str | None = None
    torch: str | None = None
    python: str | None = None
    platform: str | None = None
    backend: Backend = nested("one", Backend)
    device: str | None = None  # every report opspec writes has device and opset: one from elsewhere may not
    device_name: str | None = None
    opset: str | None = None
    seed: int | None = None
    max_examples: int | None = None
    max_compiles: int | None = None
    dtypes: tuple[str, ...] | None = None
    ops: tuple[str, ...] | None = None
    expectations: str | None = None
    isolated: bool | None = None
    shuffle: int | None = None
    dynamic: bool | None = None
    special_cases: bool | None = None
    jobs: int | None = None
    shard: Shard | None = nested("one", Shard, default=None)
    parts: tuple[Part, ...] | None = nested("many", Part, default=None)
    spliced: tuple[Splice, ...] | None = nested("many", Splice, default=None)
    duration_s: float | None = None  # written when the run finished: a journal's header has none
    op_seconds: Mapping[str, float] | None = None  # a published report: each op's mean seconds per case
    extra: Mapping[str, Any] = _untyped()
    nulls: frozenset[str] = _no_nulls()
    key_order: tuple[str, ...] = _as_read()

    @property
    def backend_name(self) -> str:
        return self.backend.name


# ---- the computed sections ----

@dataclass(frozen=True)
class RootCause(Node):
    """Cases not passing that share who failed, where, the outcome and the message with its numbers taken out."""
    blame: str
    stage: str
    outcome: str
    cause: str
    count: int
    cases: tuple[str, ...]
    extra: Mapping[str, Any] = _untyped()
    nulls: frozenset[str] = _no_nulls()
    key_order: tuple[str, ...] = _as_read()


@dataclass(frozen=True)
class LoweringOp(Node):
    """An op's status in the backend's manifest; ``by_dtype`` where its dtypes differ."""
    status: str
    note: str = ""
    by_dtype: Mapping[str, str] | None = None
    extra: Mapping[str, Any] = _untyped()
    nulls: frozenset[str] = _no_nulls()
    key_order: tuple[str, ...] = _as_read()


@dataclass(frozen=True)
class Lowering(Node):
    """What the backend's manifest says about the ops run."""
    manifest: str
    measured_with: str | None = None
    ops_run: int | None = None
    lowered: int | None = None
    library: int | None = None
    fallback: int | None = None
    unsupported: int | None = None
    undeclared: int | None = None
    coverage_percent: float | None = None
    ops: Mapping[str, LoweringOp] = nested("map", LoweringOp, default_factory=dict)
    extra: Mapping[str, Any] = _untyped()
    nulls: frozenset[str] = _no_nulls()
    key_order: tuple[str, ...] = _as_read()


@dataclass(frozen=True)
class FunctionalizationRecord(Node):
    """One in-place or out= variant exported while mutating an input or an intermediate."""
    variant: str
    functional: str
    kind: str
    target: str
    view: str
    dtype: str
    device: str
    status: str
    outcome: str
    message: str
    duration_s: float
    graph_ops: tuple[str, ...] | None = None
    note: str | None = None
    finding: Mapping[str, Any] | None = None
    extra: Mapping[str, Any] = _untyped()
    nulls: frozenset[str] = _no_nulls()
    key_order: tuple[str, ...] = _as_read()


@dataclass(frozen=True, kw_only=True)
class Functionalization(Node):
    """The ``--functionalization`` suite's section. Fields in the order a report writes them."""
    exported_with: str
    findings: str | None = None
    device: str
    seed: int
    calls_per_variant: int
    duration_s: float
    summary: Mapping[str, int]
    warnings: tuple[str, ...]
    results: tuple[FunctionalizationRecord, ...] = nested("many", FunctionalizationRecord)
    extra: Mapping[str, Any] = _untyped()
    nulls: frozenset[str] = _no_nulls()
    key_order: tuple[str, ...] = _as_read()


# ---- record fields written once (a published report's ``shared`` section) ----

def share_key(value: Any) -> str:
    """The key a value is written under in a report's ``shared`` section: the first 8 hex digits of the SHA-1 of
    its JSON with sorted keys (the same value, the same key, in every run and report)."""
    return hashlib.sha1(_canonical(value).encode()).hexdigest()[:8]


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"))


def resolve_shared(entries: Any, shared: Any, *, lenient: bool = False) -> list[Any]:
    """The records of ``entries`` with each field named in ``shared`` that holds a key replaced by the value
    written under it. ReportFormatError for a key not written (lenient: the field is left out)."""
    if not isinstance(shared, Mapping) or not all(isinstance(table, Mapping) for table in shared.values()):
        if lenient:
            return list(entries)
        raise ReportFormatError("shared: not an object of objects")
    out = []
    for entry in entries:
        if isinstance(entry, Mapping) and any(isinstance(entry.get(name), str) for name in shared):
            entry = dict(entry)
            for name, table in shared.items():
                key = entry.get(name)
                if not isinstance(key, str):
                    continue
                if key in table:
                    entry[name] = table[key]
                elif lenient:
                    del entry[name]
                else:
                    raise ReportFormatError(f"results: {name} {key!r} is not in the shared section")
        out.append(entry)
    return out


def expanded(data: Mapping[str, Any]) -> dict[str, Any]:
    """A report's JSON object as its run wrote it: a published report's shared values put back in its records
    (for readers of the JSON itself; the model reads either)."""
    if not isinstance(data, Mapping) or data.get("shared") is None or not isinstance(data.get("results"), list):
        return dict(data)
    return {**{k: v for k, v in data.items() if k != "shared"},
            "results": resolve_shared(data["results"], data["shared"])}


def factor_shared(records: list[dict[str, Any]], names: Iterable[str]) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """(the ``shared`` section, the records with each field of ``names`` they hold replaced by its key): each
    value written once, the keys of each table in sorted order."""
    tables: dict[str, dict[str, Any]] = {name: {} for name in names}
    out = []
    for record in records:
        record = dict(record)
        for name, table in tables.items():
            if record.get(name) is not None:
                key = share_key(record[name])
                held = table.setdefault(key, record[name])
                if held is not record[name] and _canonical(held) != _canonical(record[name]):
                    raise ReportFormatError(f"shared: two values of {name} share the key {key}")
                record[name] = key
        out.append(record)
    return {name: dict(sorted(table.items())) for name, table in tables.items()}, out


# ---- the report ----

@dataclass(frozen=True)
class Report:
    """One run of the opset against one backend on one device: the header, the computed sections, the records.

    ``summary``, ``executed`` and ``blame`` count by the vocabulary's words (``summary`` adds ``cases``,
    ``compiles``, ``max_compiles_per_case``); a report from before a section existed has it None."""
    header: Header
    records: tuple[CaseRecord, ...]
    summary: Mapping[str, int] | None = None
    executed: Mapping[str, int] | None = None
    blame: Mapping[str, int] | None = None
    root_causes: tuple[RootCause, ...] | None = None
    lowering: Lowering | None = None
    functionalization: Functionalization | None = None
    warnings: tuple[str, ...] = ()
    shared: tuple[str, ...] = ()  # record fields written once in the ``shared`` section, by key (published form)
    key_order: tuple[str, ...] = _as_read()  # the keys of the report's object as read, header and sections

    # the sections a run computes, in the order a report writes them after its header (a functionalization
    # section is added to a finished report, after its warnings; a published report's shared values come last
    # before its records)
    SECTIONS: ClassVar[tuple[str, ...]] = ("summary", "executed", "blame", "root_causes", "lowering", "warnings",
                                           "functionalization", "shared", "results")

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Report:
        if not isinstance(data, Mapping) or not isinstance(data.get("results"), list):
            raise ReportFormatError("not a conformance report (no results list)")
        if not isinstance(data.get("backend"), (dict, str)):
            raise ReportFormatError("not a conformance report (no backend in its header)")
        lowering, functionalization = data.get("lowering"), data.get("functionalization")
        causes = data.get("root_causes")
        shared = data.get("shared")
        entries = data["results"] if shared is None else resolve_shared(data["results"], shared)
        return cls(
            header=Header.from_dict({k: v for k, v in data.items() if k not in cls.SECTIONS}),
            records=tuple(CaseRecord.from_dict(r) for r in entries),
            summary=data.get("summary"),
            executed=data.get("executed"),
            blame=data.get("blame"),
            root_causes=None if causes is None else _decode(causes, "many", RootCause, where="root_causes"),
            lowering=None if lowering is None else Lowering.from_dict(lowering),
            functionalization=None if functionalization is None else Functionalization.from_dict(functionalization),
            warnings=tuple(data.get("warnings") or ()),
            shared=tuple(shared or ()),
            key_order=tuple(data),
        )

    def to_dict(self, *, as_read: bool = False) -> dict[str, Any]:
        """The report's JSON object: keys in the model's order, or with ``as_read`` in the order they were read."""
        out = self.header.to_dict(as_read=as_read)
        for name in ("summary", "executed", "blame"):
            if getattr(self, name) is not None:
                out[name] = dict(getattr(self, name))
        if self.root_causes is not None:
            out["root_causes"] = [cause.to_dict(as_read=as_read) for cause in self.root_causes]
        if self.lowering is not None:
            out["lowering"] = self.lowering.to_dict(as_read=as_read)
        out["warnings"] = list(self.warnings)
        if self.functionalization is not None:
            out["functionalization"] = self.functionalization.to_dict(as_read=as_read)
        records = [record.to_dict(as_read=as_read) for record in self.records]
        if self.shared:
            out["shared"], records = factor_shared(records, self.shared)
        out["results"] = records
        return _in_order(out, self.key_order) if as_read else out

    @classmethod
    def load(cls, path: Path) -> Report:
        """The report in ``path``; ReportFormatError naming the file when it cannot be read as one."""
        try:
            with gc_paused():  # a report is a hundred thousand objects or more, none of them garbage
                data = json.loads(Path(path).read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError) as err:
            raise ReportFormatError(f"{path}: cannot read ({getattr(err, 'strerror', None) or err})") from None
        except json.JSONDecodeError as err:
            raise ReportFormatError(f"{path}:{err.lineno}: not valid JSON") from None
        try:
            with gc_paused():
                return cls.from_dict(data)
        except ReportFormatError as err:
            raise ReportFormatError(f"{path}: {err}") from None

    def dumps(self, *, as_read: bool = False) -> str:
        """The report as ``opspec conform`` writes it: the header indented, one line per case, keys in the model's
        order (``as_read``: in the order they were read)."""
        from opspec.results.json_text import report_text

        return report_text(self.to_dict(as_read=as_read))

    # ---- what readers ask ----

    @property
    def backend_name(self) -> str:
        return self.header.backend.name

    @property
    def device(self) -> str | None:
        return self.header.device

    @property
    def opset(self) -> str | None:
        return self.header.opset

    def statuses(self) -> dict[Case, str]:
        return {record.case: record.status for record in self.records}

    def by_case(self) -> dict[Case, CaseRecord]:
        return {record.case: record for record in self.records}

    def ops(self) -> list[str]:
        """The distinct ops run, in the report's order."""
        return list(dict.fromkeys(record.op for record in self.records))

    def replace(self, **changes: Any) -> Report:
        return dataclasses.replace(self, **changes)

    def with_records(self, records: Iterable[CaseRecord]) -> Report:
        return dataclasses.replace(self, records=tuple(records))
