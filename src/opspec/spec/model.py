"""The opset as frozen dataclasses: what an op, a rule and a version are.

Pure data: no torch, no I/O. ``from_dict`` reads one YAML entry; each op and
rule keeps that entry as ``raw``, key order included, so what is shown or
rewritten reads like the file.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Mapping

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import InvalidVersion, Version

CATEGORIES = (
    "pointwise-unary",
    "pointwise-binary",
    "reduction",
    "shape-view",
    "indexing",
    "convolution-pooling",
    "normalization",
    "creation-random",
    "linear-algebra",
    "misc",
)
STATUSES = ("active", "deprecated", "removed")
VERSION_RE = re.compile(r"^[0-9]{4}\.(0[1-9]|1[0-2])$")


def version_key(version: str) -> tuple[int, int]:
    """Sort key for CalVer ``YYYY.MM``."""
    year, month = version.split(".")
    return int(year), int(month)


@dataclass(frozen=True)
class Interval:
    """An input domain such as ``(0, inf)`` or ``[-1, 1]``."""

    low: float
    high: float
    low_closed: bool
    high_closed: bool

    @classmethod
    def parse(cls, text: str) -> "Interval":
        match = re.fullmatch(r"\s*([\[(])\s*([^,\s]+)\s*,\s*([^\])\s]+)\s*([\])])\s*", text)
        if not match:
            raise ValueError(f"not an interval: {text!r}")
        opening, low, high, closing = match.groups()
        interval = cls(float(low), float(high), opening == "[", closing == "]")
        if interval.low > interval.high:
            raise ValueError(f"empty interval: {text!r}")
        return interval

    def __str__(self) -> str:
        def fmt(value: float) -> str:
            if value in (float("inf"), float("-inf")):
                return "inf" if value > 0 else "-inf"
            return repr(int(value)) if value.is_integer() else repr(value)

        return f"{'[' if self.low_closed else '('}{fmt(self.low)}, {fmt(self.high)}{']' if self.high_closed else ')'}"


def torch_specifier(text: str) -> SpecifierSet:
    """A PEP 440 specifier over torch versions (``>=2.12``, ``>=2.11,<2.14``); ValueError saying what is wrong."""
    try:
        specifier = SpecifierSet(str(text))
    except InvalidSpecifier:
        specifier = None
    if not specifier or not str(text).strip():
        raise ValueError(f"torch: {text!r} is not a version specifier (PEP 440, e.g. '>=2.12' or '>=2.11,<2.14')")
    return specifier


def public_version(version: str) -> Version:
    """``2.13.0+cpu`` -> 2.13.0: a build's local label does not change what it implements."""
    try:
        return Version(Version(version).public)
    except InvalidVersion:
        raise ValueError(f"{version!r} is not a version") from None


def specifier_holds(specifier: SpecifierSet, version: str) -> bool:
    """Whether ``version`` (a release, a pre-release or a nightly) lies in ``specifier``."""
    return specifier.contains(public_version(version), prereleases=True)


@dataclass(frozen=True)
class TorchRange:
    """The torch versions an op or rule holds for, and why it does not hold for the others."""

    specifier: SpecifierSet
    reason: str

    @classmethod
    def from_dict(cls, data: Mapping[str, Any] | None) -> "TorchRange | None":
        return cls(torch_specifier(data["versions"]), data["reason"]) if data else None

    def holds_for(self, version: str) -> bool:
        return specifier_holds(self.specifier, version)

    def __str__(self) -> str:
        return str(self.specifier)


@dataclass(frozen=True)
class TorchTargets:
    """Core ops a rule produces only on some torch versions (torch's own decomposition differs there)."""

    specifier: SpecifierSet
    targets: tuple[str, ...]
    reason: str

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "TorchTargets":
        return cls(torch_specifier(data["versions"]), tuple(data["targets"]), data["reason"])

    def holds_for(self, version: str) -> bool:
        return specifier_holds(self.specifier, version)


@dataclass(frozen=True)
class Tolerance:
    reason: str
    per_dtype: Mapping[str, tuple[float, float]]  # dtype -> (rtol, atol)


@dataclass(frozen=True)
class TestingHints:
    """How to draw valid inputs; every field is optional and narrows what the schema allows."""

    dtypes: tuple[str, ...] = ()
    domain: Mapping[str, Interval] = field(default_factory=dict)
    shapes: Mapping[str, tuple[str | int, ...]] = field(default_factory=dict)
    ranks: Mapping[str, tuple[int, int]] = field(default_factory=dict)
    choices: Mapping[str, tuple[Any, ...]] = field(default_factory=dict)
    tolerance: Tolerance | None = None
    contiguous: bool = False
    notes: str = ""

    @classmethod
    def from_dict(cls, data: Mapping[str, Any] | None) -> "TestingHints":
        if not data:
            return cls()
        tolerance = None
        if "tolerance" in data:
            tol = dict(data["tolerance"])
            reason = tol.pop("reason")
            tolerance = Tolerance(reason, {k: (v["rtol"], v["atol"]) for k, v in tol.items()})
        return cls(
            dtypes=tuple(data.get("dtypes", ())),
            domain={k: Interval.parse(v) for k, v in data.get("domain", {}).items()},
            shapes={k: tuple(v) for k, v in data.get("shapes", {}).items()},
            ranks={k: (v[0], v[1]) for k, v in data.get("ranks", {}).items()},
            choices={k: tuple(v) for k, v in data.get("choices", {}).items()},
            tolerance=tolerance,
            contiguous=bool(data.get("contiguous", False)),
            notes=data.get("notes", ""),
        )


@dataclass(frozen=True)
class OpException:
    """A rule of the core set that this op breaks, on the record."""

    kind: str  # not-functional | also-decomposed | symbolic
    reason: str


@dataclass(frozen=True)
class CoreOp:
    name: str
    schema: str
    category: str
    status: str
    since: str
    rationale: str
    deprecated: str | None = None
    removed: str | None = None
    proposals: tuple[int, ...] = ()
    equivalents: Mapping[str, str] = field(default_factory=dict)
    exceptions: tuple[OpException, ...] = ()
    testing: TestingHints = field(default_factory=TestingHints)
    torch: TorchRange | None = None  # None: every torch opspec supports
    raw: Mapping[str, Any] = field(default_factory=dict, compare=False, repr=False)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "CoreOp":
        return cls(
            name=data["name"],
            schema=data["schema"],
            category=data["category"],
            status=data["status"],
            since=data["since"],
            rationale=data["rationale"],
            deprecated=data.get("deprecated"),
            removed=data.get("removed"),
            proposals=tuple(data.get("proposals", ())),
            equivalents=dict(data.get("equivalents", {})),
            exceptions=tuple(OpException(e["kind"], e["reason"]) for e in data.get("exceptions", ())),
            testing=TestingHints.from_dict(data.get("testing")),
            torch=TorchRange.from_dict(data.get("torch")),
            raw=data,
        )

    def has_exception(self, kind: str) -> bool:
        return any(e.kind == kind for e in self.exceptions)


@dataclass(frozen=True)
class DecompositionRule:
    op: str
    kind: str  # default | optional
    targets: tuple[str, ...]
    formula: str
    rationale: str
    implementation: str  # "torch" or "module:function"
    origin: str
    since: str | None = None
    proposals: tuple[int, ...] = ()
    random: bool = False
    unspecified_values: bool = False
    testing: TestingHints = field(default_factory=TestingHints)
    torch: TorchRange | None = None  # None: every torch opspec supports
    torch_targets: tuple[TorchTargets, ...] = ()  # more targets on some torch versions
    raw: Mapping[str, Any] = field(default_factory=dict, compare=False, repr=False)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "DecompositionRule":
        return cls(
            op=data["op"],
            kind=data["kind"],
            targets=tuple(data["targets"]),
            formula=data["formula"],
            rationale=data["rationale"],
            implementation=data["implementation"],
            origin=data["origin"],
            since=data.get("since"),
            proposals=tuple(data.get("proposals", ())),
            random=bool(data.get("random", False)),
            unspecified_values=bool(data.get("unspecified_values", False)),
            testing=TestingHints.from_dict(data.get("testing")),
            torch=TorchRange.from_dict(data.get("torch")),
            torch_targets=tuple(TorchTargets.from_dict(t) for t in data.get("torch_targets", ())),
            raw=data,
        )

    @property
    def uses_torch(self) -> bool:
        return self.implementation == "torch"


@dataclass(frozen=True)
class OpDescription:
    """What an op computes, for people: plain words, a formula, and an example run when the site is built."""

    op: str
    description: str
    example: str
    formula: str = ""
    formula_check: str = ""  # the formula as a Python expression, checked against the kernel
    formula_prose: str = ""  # why the formula is not executable

    @classmethod
    def from_dict(cls, op: str, data: Mapping[str, Any]) -> "OpDescription":
        return cls(op=op, description=data["description"], example=data["example"], formula=data.get("formula", ""),
                   formula_check=data.get("formula_check", ""), formula_prose=data.get("formula_prose", ""))


@dataclass(frozen=True)
class VersionInfo:
    version: str
    status: str  # draft | released
    torch: str
    released: str | None = None
    digest: str | None = None
    notes: str = ""

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "VersionInfo":
        return cls(
            version=data["version"],
            status=data["status"],
            torch=str(data["torch"]),
            released=data.get("released"),
            digest=data.get("digest"),
            notes=data.get("notes", ""),
        )


@dataclass(frozen=True)
class BookkeepingOp:
    """An op exported graphs carry to check or record a fact (an assertion, a range), not to compute.

    ``backend`` is the policy: ``may-skip`` (the fact is fixed when the graph is
    built; a no-op is a correct implementation) or ``must-honour`` (the fact
    depends on run-time values; the backend checks it or proves it statically).
    """

    name: str
    schema: str
    kind: str  # assertion | constraint | token
    backend: str  # may-skip | must-honour
    description: str

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "BookkeepingOp":
        return cls(data["name"], data["schema"], data["kind"], data["backend"], data["description"])


@dataclass(frozen=True)
class OutOfScopeOp:
    """A non-core op torch can emit that the version decided not to cover: neither core nor decomposed."""

    name: str
    family: str
    reason: str
    since: str
    proposals: tuple[int, ...]

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "OutOfScopeOp":
        return cls(data["name"], data["family"], data["reason"], data["since"], tuple(data["proposals"]))


@dataclass(frozen=True)
class Opset:
    """One version of the specification: its core ops, its decomposition rules, its bookkeeping-op policy
    and the ops it declares out of scope."""

    version: str
    info: VersionInfo
    ops: tuple[CoreOp, ...]
    rules: tuple[DecompositionRule, ...]
    bookkeeping: tuple[BookkeepingOp, ...] = ()
    out_of_scope: tuple[OutOfScopeOp, ...] = ()

    @property
    def out_of_scope_by_name(self) -> dict[str, OutOfScopeOp]:
        return {op.name: op for op in self.out_of_scope}

    @property
    def bookkeeping_by_name(self) -> dict[str, BookkeepingOp]:
        return {op.name: op for op in self.bookkeeping}

    @property
    def ops_by_name(self) -> dict[str, CoreOp]:
        return {op.name: op for op in self.ops}

    @property
    def rules_by_op(self) -> dict[str, DecompositionRule]:
        return {rule.op: rule for rule in self.rules}

    def active_ops(self) -> tuple[CoreOp, ...]:
        """Ops a backend must implement in this version (deprecated ones still count)."""
        return tuple(op for op in self.ops if op.status != "removed")

    def core_names(self) -> frozenset[str]:
        return frozenset(op.name for op in self.active_ops())

    def default_rules(self) -> tuple[DecompositionRule, ...]:
        return tuple(rule for rule in self.rules if rule.kind == "default")


def canonical_op_name(spelling: str) -> str:
    """``aten::sin`` for every spelling torch and opspec use: ``sin``, ``sin.default``, ``aten.sin.default``,
    ``aten::sin.default``, ``torch.ops.aten.sin.default`` (globs pass through the same way)."""
    name = spelling.strip().removeprefix("torch.ops.")
    if "::" not in name:
        namespace, dot, rest = name.partition(".")
        name = f"{namespace}::{rest}" if dot and namespace in ("aten", "prims") else f"aten::{name}"
    return name.removesuffix(".default")
