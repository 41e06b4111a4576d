"""Accuracy contracts against kernels, and against the opset: each returns findings.

``measure_all`` runs a kernel per contract (eager, or a backend's program) on the contract's inputs; ``judge``
says where a measurement breaks its contract, naming the worst input, both results and the distance;
``validate_findings`` checks the contracts file against the opset without running anything.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Iterable

from opspec.spec import accuracy as spec_accuracy
from opspec.spec.accuracy import Measured, UlpContract
from opspec.spec.errors import Finding
from opspec.spec.model import Opset
from opspec.spec.yamlio import Mark
from opspec.testing.accuracy_functions import FUNCTIONS

if TYPE_CHECKING:
    from opspec.testing.accuracy import Measurement

_TENSOR_ARGUMENT = re.compile(r"Tensor(?:\([a-z!]+\))?\??\s+(\w+)")


@dataclass(frozen=True)
class Judged:
    contract: UlpContract
    measurement: Measurement | None
    failure: str = ""  # why the kernel gave nothing to measure (a backend that does not compile the op)

    @property
    def holds(self) -> bool:
        return self.measurement is not None and self.measurement.max_ulp <= self.contract.max_ulp


def principled_bound(max_ulp: float) -> float:
    """The smallest of 0 (exact), 0.5 (correctly rounded), 1, 2, 4, ... at or above ``max_ulp``."""
    if max_ulp == 0 or math.isinf(max_ulp):
        return max_ulp
    return 0.5 if max_ulp <= 0.5 else float(2 ** math.ceil(math.log2(max_ulp)))


def judge(judged: Judged) -> Finding | None:
    """A finding at the contract's line where the measurement breaks it."""
    if judged.holds:
        return None
    contract, measurement = judged.contract, judged.measurement
    if measurement is None:
        return Finding(contract.mark, f"{contract.op} {contract.dtype}: nothing to measure: {judged.failure}")
    worst = measurement.worst[0].describe() if measurement.worst else "no input recorded"
    return Finding(contract.mark, f"{contract.op} {contract.dtype}: {worst}; the contract allows "
                                  f"{contract.max_ulp:g} ULP (smallest bound that holds: "
                                  f"{_power(principled_bound(measurement.max_ulp))})")


def _power(bound: float) -> str:
    return f"2**{int(math.log2(bound))}" if 1024 < bound < math.inf else f"{bound:g}"


def measure_all(contracts: Iterable[UlpContract], kernel_for: Callable[[UlpContract], Callable], *, samples: int,
                seed: int, device: str, progress: Callable[[int, int, UlpContract], None] = lambda *_: None
                ) -> list[Judged]:
    """Each contract's measurement, in the given order (``kernel_for`` builds the kernel of one op and dtype)."""
    import torch

    from opspec.spec.errors import one_line
    from opspec.testing import accuracy as measure

    chosen = list(contracts)
    judged = []
    for position, contract in enumerate(chosen):
        progress(position, len(chosen), contract)
        try:
            found = measure.measure(kernel_for(contract), FUNCTIONS[contract.op], getattr(torch, contract.dtype),
                                    contract.domain, contract.subnormals, samples=samples, seed=seed, device=device,
                                    arguments=contract.arguments)
        except Exception as err:  # noqa: BLE001 - a kernel or backend under test may fail any way: a finding
            judged.append(Judged(contract, None, one_line(err, cause=True)))
            continue
        judged.append(Judged(contract, found))
    return judged


def measured(judged: Judged, torch_version: str, device: str) -> Measured:
    """What ``opspec accuracy --record`` writes beside the contract (the error rounded up to 4 decimals, so a
    kernel a little off correct rounding never reads as 0.5)."""
    found = judged.measurement
    worst = dict(found.worst[0].inputs) if found.worst else {}
    from opspec.testing.accuracy import rounded_up

    return Measured(torch_version, device, rounded_up(found.max_ulp), worst, found.inputs, found.exhaustive,
                    found.flushed)


FLOATING = ("float64", "float32", "float16", "bfloat16")
POINTWISE_CATEGORIES = ("pointwise-unary", "pointwise-binary")


def pointwise_floating(opset: Opset, pointwise: frozenset[str] | None) -> dict[str, tuple[str, tuple[str, ...]]]:
    """op -> (where the opset declares it, the floating dtypes it declares), for each pointwise op of the opset:
    core ops and decomposed ops that torch tags ``pointwise`` (``pointwise``: the tagged overloads, from the
    bridge); without torch, the core ops of the pointwise categories."""
    found = {}
    for op in opset.active_ops():
        if (op.name in pointwise) if pointwise is not None else op.category in POINTWISE_CATEGORIES:
            found[op.name] = (f"{opset.version}/core_ops.yaml", _floating(op.testing))
    for rule in opset.rules if pointwise is not None else ():
        if rule.op in pointwise and rule.op not in found:
            found[rule.op] = (f"{opset.version}/decompositions.yaml", _floating(rule.testing))
    return {op: entry for op, entry in found.items() if entry[1]}


def _floating(testing) -> tuple[str, ...]:
    return tuple(d for d in (testing.dtypes if testing is not None and testing.dtypes else ()) if d in FLOATING)


def validate_findings(root: Path, opset: Opset | None, pointwise: frozenset[str] | None = None) -> list[Finding]:
    """Problems with ``opset/accuracy.yaml`` under ``root``: its schema and intervals, ops the opset does not hold,
    domains naming no tensor argument, ULP contracts no reference function can measure, and floating pointwise
    ops (:func:`pointwise_floating`) without an accuracy for every floating dtype they declare."""
    contracts, findings = spec_accuracy.read(spec_accuracy.path_of(root))
    if findings or opset is None:
        return findings
    core = {op.name: op for op in opset.active_ops()}
    held = set(core) | {rule.op for rule in opset.rules}
    for op, group in _by_op(contracts.ulp).items():
        if op not in held:
            findings.append(Finding(group[0].mark, f"{op}: opset {opset.version} holds no such op"))
            continue
        if op not in FUNCTIONS:
            findings.append(Finding(group[0].mark, f"{op}: no reference function measures a ULP contract for it "
                                                   "(opspec.testing.accuracy_functions); state an error_model instead"))
            continue
        findings += [f for contract in group for f in _argument_findings(contract)]
        if op in core:
            findings += [f for contract in group for f in _domain_findings(contract, core[op].schema)]
    findings += [Finding(m.mark, f"{m.op}: opset {opset.version} holds no such op")
                 for m in contracts.error_models if m.op not in held]
    findings += [Finding(n.mark, f"{n.op}: opset {opset.version} holds no such op")
                 for n in contracts.boolean if n.op not in held]
    where = Mark(contracts.path, 1, 1)
    covered = {c.op for c in contracts.ulp} | {n.op for n in contracts.boolean}
    models = {m.op: m for m in contracts.error_models}
    by_op = _by_op(contracts.ulp)
    scope = pointwise_floating(opset, pointwise)
    for op in sorted(held & set(FUNCTIONS) - set(scope) - covered - set(models)):
        findings.append(Finding(where, f"{op}: no accuracy contract (a reference function measures it: "
                                       f"opspec accuracy --ops {op})"))
    for op, (declared_in, dtypes) in sorted(scope.items()):
        if op in models:
            continue
        if op not in covered:
            findings.append(Finding(where, f"{op}: no accuracy contract for a floating pointwise op ({declared_in} "
                                           f"declares {', '.join(dtypes)}; measure it: opspec accuracy --ops {op})"))
            continue
        if op in {n.op for n in contracts.boolean}:
            continue
        have = {c.dtype for c in by_op[op]}
        missing = [d for d in dtypes if d not in have]
        if missing:
            findings.append(Finding(by_op[op][0].mark, f"{op}: no contract for {', '.join(missing)}, which "
                                                       f"{declared_in} declares"))
    return findings


def _argument_findings(contract: UlpContract) -> list[Finding]:
    """The domain names each measured tensor argument of the reference function, and nothing else."""
    function = FUNCTIONS[contract.op]
    measured = [a for a in function.args if a not in function.masks]
    if sorted(contract.domain) == sorted(measured):
        return []
    return [Finding(contract.mark, f"{contract.op} {contract.dtype}: the domain names {', '.join(contract.domain)}; "
                                   f"the reference function takes {', '.join(measured)}")]


def _by_op(contracts: Iterable[UlpContract]) -> dict[str, list[UlpContract]]:
    grouped: dict[str, list[UlpContract]] = {}
    for contract in contracts:
        grouped.setdefault(contract.op, []).append(contract)
    return grouped


def _domain_findings(contract: UlpContract, schema: str) -> list[Finding]:
    tensors = _TENSOR_ARGUMENT.findall(schema.split("->")[0])
    return [Finding(contract.mark, f"{contract.op} {contract.dtype}: domain names {argument!r}, not a tensor "
                                   f"argument of {schema}")
            for argument in contract.domain if argument not in tensors]
