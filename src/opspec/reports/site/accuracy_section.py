"""The accuracy an op page promises: its ULP contract per dtype and its error model, from ``opset/accuracy.yaml``."""
from __future__ import annotations

from pathlib import Path

from opspec.spec import accuracy as spec_accuracy
from opspec.spec.accuracy import Contracts

SUBNORMAL_WORDS = {"preserve": "kept", "may-flush": "may be flushed to zero"}


def read(opset_root: Path) -> Contracts:
    """The contracts, or none where the file is missing or broken (validate names its problems)."""
    contracts, findings = spec_accuracy.read(spec_accuracy.path_of(opset_root))
    return Contracts() if findings else contracts


def for_op(contracts: Contracts, op: str) -> dict:
    """What the op page's Accuracy section shows: one row per dtype with a ULP contract, and the error models."""
    rows = [{
        "dtype": c.dtype,
        "max_ulp": f"{c.max_ulp:g}",
        "domain": ", ".join(f"{arg} in {' or '.join(map(str, intervals))}" for arg, intervals in c.domain.items()),
        "subnormals": f"inputs {SUBNORMAL_WORDS.get(c.subnormals.inputs, c.subnormals.inputs)}, results "
                      f"{SUBNORMAL_WORDS.get(c.subnormals.results, c.subnormals.results)}",
        "measured": (f"{c.measured.max_ulp:g} ({'every value' if c.measured.exhaustive else f'{c.measured.inputs:,} samples'},"
                     f" torch {c.measured.torch} {c.measured.device})") if c.measured else "not measured",
        "reasons": [text for text in (c.reason, c.subnormals.reason) if text],
    } for c in contracts.ulp if c.op == op]
    models = [{"dtypes": ", ".join(m.dtypes), "bound": m.bound, "symbols": dict(m.symbols), "reason": m.reason}
              for m in contracts.error_models if m.op == op]
    return {"rows": rows, "models": models}
