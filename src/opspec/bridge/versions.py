"""Which torch is installed, and which entries of the opset it lacks.

An op or rule whose recorded ``torch`` range excludes the installed torch, or that
the installed torch does not provide (no operator, no registered decomposition), is
*absent*: it gets one finding, its checks skip with the reason, and nothing else is
affected. An op torch provides but does not tag core on some versions (``CORE_TAG``)
stays in the set and is checked there as everywhere; drift lists it as recorded, as it
does a rule whose decomposition reads a tensor's value on some versions (``HOST_READS``).
Every question about a torch version is answered here.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass

from opspec.bridge import torch_ops
from opspec.spec.model import CoreOp, DecompositionRule, TorchRange, public_version


# Core ops that some supported torches run but do not tag core: op -> the torches that tag it, and why.
# (Released opset versions are sealed, so a fact about older torches lives here, not in their files.)
CORE_TAG: dict[str, TorchRange] = {
    "aten::_fft_c2r": TorchRange.from_dict({
        "versions": ">=2.11",
        "reason": "torch 2.9 and 2.10 do not tag _fft_c2r core (its siblings _fft_r2c and _fft_c2c are); torch 2.11 "
                  "tags it",
    }),
}


# Rules whose torch decomposition, on some supported torches, reads a tensor's value into Python for some inputs:
# make_fx cannot trace such a call (export specialises on the value or fails). Rule -> the torches whose
# decomposition reads no value, and what reads one before. Drift lists such a failure as recorded, not as drift.
HOST_READS: dict[str, TorchRange] = {
    "aten::embedding_dense_backward": TorchRange.from_dict({
        "versions": ">=2.13",
        "reason": "with scale_grad_by_freq and 0-d indices, torch 2.9 to 2.12 index the counts with the index "
                  "tensor itself (counts[indices]), which reads its value; torch 2.13 indexes with "
                  "_unsafe_masked_index",
    }),
}


@functools.lru_cache(maxsize=None)
def installed() -> str:
    """The installed torch's public version: ``2.13.0`` for ``2.13.0+cpu``."""
    return str(public_version(torch_ops.torch_module().__version__))


@dataclass(frozen=True)
class Absence:
    name: str
    reason: str  # "absent in torch 2.11.0: ..."
    recorded: bool  # the entry's torch range says so; otherwise the opset has yet to answer for it

    def __str__(self) -> str:
        return f"{self.name}: {self.reason}"


def _outside(name: str, torch_range: TorchRange | None) -> Absence | None:
    return recorded_absence(name, torch_range, installed())


def recorded_absence(name: str, torch_range: TorchRange | None, version: str) -> Absence | None:
    """The absence an entry's ``torch`` range records for torch ``version``, or None where the range holds."""
    if torch_range is None or torch_range.holds_for(version):
        return None
    return Absence(name, f"absent in torch {version} (holds for torch {torch_range}): {torch_range.reason}", True)


def untagged(name: str) -> str | None:
    """Why the installed torch, as recorded, does not tag the core op ``name`` core; None where it does."""
    tagged = CORE_TAG.get(name)
    if tagged is None or tagged.holds_for(installed()):
        return None
    return f"not tagged core in torch {installed()} (tagged for torch {tagged}): {tagged.reason}"


def host_read(name: str) -> str | None:
    """Why the installed torch's decomposition of rule ``name`` reads a tensor's value for some inputs, as recorded;
    None where it reads none."""
    reads_none = HOST_READS.get(name)
    if reads_none is None or reads_none.holds_for(installed()):
        return None
    return f"reads a tensor's value in torch {installed()} (reads none in torch {reads_none}): {reads_none.reason}"


def op_absence(op: CoreOp) -> Absence | None:
    """Why the installed torch cannot run this core op, or None when it can."""
    recorded = _outside(op.name, op.torch)
    if recorded or op.name in torch_ops.all_aten_schemas():
        return recorded
    return Absence(op.name, f"absent in torch {installed()}: torch has no operator {op.name}", False)


def rule_absence(rule: DecompositionRule) -> Absence | None:
    """Why the installed torch cannot check this rule, or None when it can."""
    recorded = _outside(rule.op, rule.torch)
    if recorded:
        return recorded
    version = installed()
    if rule.op not in torch_ops.all_aten_schemas():
        return Absence(rule.op, f"absent in torch {version}: torch has no operator {rule.op}", False)
    if rule.uses_torch and rule.op not in torch_ops.core_decomposition_table() and rule.op not in torch_ops.registered_decompositions():
        return Absence(rule.op, f"absent in torch {version}: torch registers no decomposition for {rule.op}", False)
    return None


def targets(rule: DecompositionRule) -> tuple[str, ...]:
    """The core ops the rule may produce on the installed torch: its targets and those recorded for this torch."""
    version = installed()
    extra = [t for block in rule.torch_targets if block.holds_for(version) for t in block.targets]
    return (*rule.targets, *(t for t in dict.fromkeys(extra) if t not in rule.targets))
