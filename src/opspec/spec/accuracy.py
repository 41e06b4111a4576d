"""Accuracy contracts as data: the error each floating op promises per dtype (``opset/accuracy.yaml``).

A ULP contract bounds the error of every result, in ULPs of the result dtype against the exact value (0.5 is
correctly rounded), over a domain of inputs, with the latitude a backend has with subnormal numbers. Where
ULPs do not fit (sums, products of matrices, normalisations), an error model states a bound in the size of the
problem, the unit roundoff and the conditioning. Like ``descriptions.yaml`` the file is keyed by op and shared
by every opset version. This module reads and checks it; measuring is :mod:`opspec.testing.accuracy`.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

import yaml

from opspec.spec import load, resources, yamlio
from opspec.spec.errors import Finding
from opspec.spec.model import Interval
from opspec.spec.yamlio import DataError, Mark

FILE = "accuracy.yaml"
SCHEMA = "accuracy.schema.json"
PRESERVE, MAY_FLUSH = "preserve", "may-flush"
HEADER = """\
# yaml-language-server: $schema=schema/accuracy.schema.json
# Accuracy contracts (opset/schema/accuracy.schema.json), keyed by op and shared by every opset version.
# max_ulp bounds the error of each result in ULPs of the result dtype against the exact value (0.5: correctly
# rounded) over the domain; `subnormals` is the latitude a backend has with subnormal numbers. `measured` is
# written by `opspec accuracy --record` (eager, every float16/bfloat16 value, a stratified sample otherwise):
# the command rewrites this file, so say why in `reason`, not in comments. The top-level `subnormals` is the opset's
# policy per dtype (proposal 0008); float16, which it does not name, keeps its subnormals.
"""


@dataclass(frozen=True)
class SubnormalPolicy:
    """Whether a backend may read subnormal inputs as zero, and return zero for a subnormal result."""

    inputs: str = PRESERVE
    results: str = PRESERVE
    reason: str = ""

    @classmethod
    def from_dict(cls, data: Mapping[str, Any] | None) -> "SubnormalPolicy":
        return cls(data["inputs"], data["results"], data["reason"]) if data else cls()

    def to_dict(self) -> dict[str, str]:
        return {"inputs": self.inputs, "results": self.results, "reason": self.reason}

    @property
    def flushes(self) -> bool:
        return MAY_FLUSH in (self.inputs, self.results)

    def widened(self, other: "SubnormalPolicy") -> "SubnormalPolicy":
        """Each latitude either policy grants, with the reasons of both (a contract widens the dtype's policy)."""
        if not other.flushes:
            return self
        if not self.flushes:
            return other
        inputs, results = (MAY_FLUSH if MAY_FLUSH in (getattr(self, side), getattr(other, side)) else PRESERVE
                           for side in ("inputs", "results"))
        reasons = [self.reason] + ([other.reason] if other.reason and other.reason != self.reason else [])
        return SubnormalPolicy(inputs, results, " ".join(reasons))


@dataclass(frozen=True)
class Measured:
    """What a kernel gave when the contract was last measured."""

    torch: str
    device: str
    max_ulp: float
    worst: Mapping[str, float]  # argument -> the input of the largest error
    inputs: int
    exhaustive: bool
    flushed: int = 0

    @classmethod
    def from_dict(cls, data: Mapping[str, Any] | None) -> "Measured | None":
        if not data:
            return None
        return cls(str(data["torch"]), data["device"], float(data["max_ulp"]), dict(data["worst"]), data["inputs"],
                   data["exhaustive"], data.get("flushed", 0))

    def to_dict(self) -> dict[str, Any]:
        found = {"torch": self.torch, "device": self.device, "max_ulp": self.max_ulp, "worst": dict(self.worst),
                 "inputs": self.inputs, "exhaustive": self.exhaustive}
        return found | ({"flushed": self.flushed} if self.flushed else {})


@dataclass(frozen=True)
class UlpContract:
    op: str
    dtype: str
    max_ulp: float
    domain: Mapping[str, tuple[Interval, ...]]  # tensor argument -> the intervals covered
    subnormals: SubnormalPolicy = field(default_factory=SubnormalPolicy)
    reason: str = ""
    measured: Measured | None = None
    mark: Mark = Mark("<unknown>", 1, 1)
    own_domain: bool = False  # the dtype narrows the op's domain (with a reason)
    arguments: Mapping[str, Any] = field(default_factory=dict)  # non-tensor arguments, fixed where it is measured

    @property
    def where(self) -> str:
        return f"{self.mark.path}:{self.mark.line}"


@dataclass(frozen=True)
class ErrorModel:
    """A bound on |computed - exact| in the size of the problem, the unit roundoff and the conditioning."""

    op: str
    dtypes: tuple[str, ...]
    bound: str
    symbols: Mapping[str, str]
    reason: str
    mark: Mark = Mark("<unknown>", 1, 1)


@dataclass(frozen=True)
class Note:
    """A sentence the file states about one op, with its place: why its result is bool, or how the comparison
    rule treats it (near zero, ill-conditioned)."""

    op: str
    reason: str
    mark: Mark = Mark("<unknown>", 1, 1)


@dataclass(frozen=True)
class Contracts:
    ulp: tuple[UlpContract, ...] = ()
    error_models: tuple[ErrorModel, ...] = ()
    path: str = ""
    boolean: tuple[Note, ...] = ()  # pointwise ops whose result is bool: nothing to measure in ULPs
    near_zero: tuple[Note, ...] = ()  # the comparison rule holds their tiny results relatively
    ill_conditioned: tuple[Note, ...] = ()  # the comparison rule meets their float32 results with a float64 run
    subnormals: Mapping[str, SubnormalPolicy] = field(default_factory=dict)  # dtype -> the opset's policy

    def policy_of(self, dtype: str) -> SubnormalPolicy:
        """The latitude every op has with subnormals in ``dtype`` (preserve them where the file names none)."""
        return self.subnormals.get(str(dtype).removeprefix("torch."), SubnormalPolicy())

    def ulp_of(self, op: str, dtype: str) -> UlpContract | None:
        return next((c for c in self.ulp if c.op == op and c.dtype == dtype), None)

    @property
    def ops(self) -> tuple[str, ...]:
        """Ops the file states an accuracy for (a ULP contract, an error model or a bool result)."""
        return tuple(dict.fromkeys([c.op for c in self.ulp] + [m.op for m in self.error_models]
                                   + [n.op for n in self.boolean]))


def path_of(root: Path | None = None) -> Path:
    return Path(root or resources.opset_root()) / FILE


def parse_domain(data: Mapping[str, Any]) -> dict[str, tuple[Interval, ...]]:
    """argument -> intervals, from the YAML form (one interval or a list); ValueError naming a bad one."""
    return {arg: tuple(Interval.parse(text) for text in ([value] if isinstance(value, str) else value))
            for arg, value in data.items()}


def read(path: Path | None = None) -> tuple[Contracts, list[Finding]]:
    """The contracts of ``path`` (default: the opset's file) and every problem with them, each at its line.
    A missing file is no contracts and no problem; a file with problems gives no contracts."""
    path = Path(path) if path is not None else path_of()
    if not path.is_file():
        return Contracts(path=str(path)), []
    loaded = load.read(path, SCHEMA, prose=True)
    findings = loaded.findings or _semantic_findings(loaded.data)
    if findings or loaded.data is None:
        return Contracts(path=str(path)), sorted(findings, key=lambda f: (f.mark.line, f.mark.col))
    return _contracts(loaded.data, str(path)), []


@functools.lru_cache(maxsize=1)
def bundled_contracts() -> Contracts:
    """The opset's own contracts, read once a process: what the judging of every case and measurement reads."""
    return load_contracts()


def load_contracts(path: Path | None = None) -> Contracts:
    """The contracts, checked; DataError naming file:line (and how many more problems) on bad data."""
    contracts, findings = read(path)
    if findings:
        more = f" (and {len(findings) - 1} more)" if len(findings) > 1 else ""
        raise DataError(findings[0].mark, findings[0].message + more)
    return contracts


def _semantic_findings(data: Any) -> list[Finding]:
    """What the schema cannot say: each interval parses and is not empty; ops are sorted by name."""
    findings = []
    ops = data["ops"]
    names = list(ops)
    for before, after in zip(names, names[1:]):
        if after < before:
            findings.append(Finding(yamlio.mark_of(ops, after),
                                    f"{after}: ops are sorted by name ({after} after {before})"))
    for op, entry in ops.items():
        blocks = [entry.get("domain")] + [c.get("domain") for c in (entry.get("dtypes") or {}).values()]
        for block in filter(None, blocks):
            for arg, value in block.items():
                for text in [value] if isinstance(value, str) else value:
                    try:
                        Interval.parse(text)
                    except ValueError as err:
                        findings.append(Finding(yamlio.mark_of(block, arg), f"{op}: domain of {arg}: {err}"))
    return findings


def _contracts(data: Mapping[str, Any], path: str) -> Contracts:
    ulp, models = [], []
    policies = {dtype: SubnormalPolicy.from_dict(policy) for dtype, policy in (data.get("subnormals") or {}).items()}
    notes: dict[str, list[Note]] = {"boolean_result": [], "near_zero": [], "ill_conditioned": []}
    for op, entry in data["ops"].items():
        for key, found in notes.items():
            if key in entry:
                found.append(Note(op, entry[key], yamlio.mark_of(entry, key)))
        if "boolean_result" in entry or "domain" not in entry and "error_model" not in entry:
            continue
        if "error_model" in entry:
            model = entry["error_model"]
            models.append(ErrorModel(op, tuple(model["dtypes"]), model["bound"], dict(model["symbols"]),
                                     model["reason"], yamlio.mark_of(entry, "error_model")))
            continue
        domain = parse_domain(entry["domain"])
        for dtype, contract in entry["dtypes"].items():
            ulp.append(UlpContract(
                op=op,
                dtype=dtype,
                max_ulp=float(contract["max_ulp"]),
                domain=parse_domain(contract["domain"]) if "domain" in contract else domain,
                subnormals=policies.get(dtype, SubnormalPolicy()).widened(
                    SubnormalPolicy.from_dict(contract.get("subnormals"))),
                reason=contract.get("reason", ""),
                measured=Measured.from_dict(contract.get("measured")),
                mark=yamlio.mark_of(entry["dtypes"], dtype),
                own_domain="domain" in contract,
                arguments=dict(entry.get("arguments") or {}),
            ))
    return Contracts(tuple(ulp), tuple(models), path, tuple(notes["boolean_result"]), tuple(notes["near_zero"]),
                     tuple(notes["ill_conditioned"]), policies)


def with_measurements(data: Mapping[str, Any], measured: Mapping[tuple[str, str], Measured]) -> dict[str, Any]:
    """The file's data with ``measured`` written beside the contracts it names ((op, dtype) -> what was found);
    the other contracts keep theirs. Keys keep the file's order."""
    ops = {}
    for op, entry in data["ops"].items():
        entry = dict(entry)
        if "dtypes" in entry:
            entry["dtypes"] = {dtype: _measured_in(dict(contract), measured.get((op, dtype)))
                               for dtype, contract in entry["dtypes"].items()}
        ops[op] = entry
    return _with_policy(data, ops)


def _with_policy(data: Mapping[str, Any], ops: dict[str, Any]) -> dict[str, Any]:
    """The file's top level again: the dtype policy (one line each) before the ops."""
    policy = {dtype: _OneLine(value) for dtype, value in (data.get("subnormals") or {}).items()}
    return ({"subnormals": policy} if policy else {}) | {"ops": ops}


def _measured_in(contract: dict[str, Any], found: Measured | None) -> dict[str, Any]:
    if found is not None:
        contract.pop("measured", None)
        contract["measured"] = found.to_dict()
    return contract


class _OneLine(dict):
    """A mapping written on one line (a domain, a subnormal policy, a measurement)."""


class _OneLineList(list):
    """A list written on one line."""


def _styled(data: Mapping[str, Any]) -> dict[str, Any]:
    """The data with the mappings a reader takes in at a glance marked to go on one line each."""
    ops = {}
    for op, entry in data["ops"].items():
        entry = dict(entry)
        for key in ("arguments", "domain"):
            if key in entry:
                entry[key] = _OneLine(entry[key])
        if "dtypes" in entry:
            entry["dtypes"] = {dtype: {key: _OneLine(value) if key in ("domain", "measured") else value
                                       for key, value in contract.items()}
                               for dtype, contract in entry["dtypes"].items()}
        if "error_model" in entry:
            entry["error_model"] = dict(entry["error_model"], dtypes=_OneLineList(entry["error_model"]["dtypes"]))
        ops[op] = entry
    return _with_policy(data, ops)


class _Dumper(yaml.SafeDumper):
    def ignore_aliases(self, data: Any) -> bool:
        return True

    def increase_indent(self, flow: bool = False, indentless: bool = False):
        return super().increase_indent(flow, False)


_Dumper.add_representer(yamlio.MarkedDict, yaml.representer.SafeRepresenter.represent_dict)
_Dumper.add_representer(yamlio.MarkedList, yaml.representer.SafeRepresenter.represent_list)
_Dumper.add_representer(_OneLine, lambda dumper, data: dumper.represent_mapping(
    "tag:yaml.org,2002:map", data, flow_style=True))
_Dumper.add_representer(_OneLineList, lambda dumper, data: dumper.represent_sequence(
    "tag:yaml.org,2002:seq", data, flow_style=True))


def dump(data: Mapping[str, Any]) -> str:
    """The file's text: the header, then the data, a domain, a subnormal policy or a measurement on one line
    each, so a contract reads as a few lines."""
    return HEADER + yaml.dump(_styled(data), Dumper=_Dumper, sort_keys=False, width=100_000, allow_unicode=True,
                              default_flow_style=False)
