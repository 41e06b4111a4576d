"""A decomposition is held to its op's accuracy contract: ULPs against the correctly rounded result, not the
kernel's (rtol, atol) neighbourhood, where the op has a ULP contract in the dtype."""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import torch

from opspec.checks import decomp_check
from opspec.spec.load import load_opset


def exp_in_float32(self):
    return torch.exp(self.float()).to(self.dtype)  # a float64 op computed in float32: about 1e-8 relative off


def exp_off_on_one_binade(self):
    result = torch.exp(self)
    off = torch.nextafter(torch.nextafter(torch.nextafter(torch.nextafter(result, result * 2), result * 2),
                                          result * 2), result * 2)  # 4 ULP up, where 1 <= x < 2 only
    return torch.where((self >= 1) & (self < 2), off, result)


def exp_correct(self):
    return torch.exp(self)


@pytest.fixture(scope="module")
def opset():
    return load_opset()


def _check(opset, op, function, dtype):
    subject = decomp_check.subject_for_candidate(opset, op, f"{__name__}:{function}")
    return decomp_check.run(subject, dtypes=(dtype,), max_examples=100, seed=0, closure=False)


def test_a_float64_op_computed_in_float32_is_caught(opset):
    outcome = _check(opset, "aten::exp", "exp_in_float32", torch.float64)
    assert not outcome.ok
    assert "the contract allows" in outcome.counterexample.problem and "ULP" in outcome.counterexample.problem


def test_a_few_ulp_off_on_one_binade_is_caught(opset):
    outcome = _check(opset, "aten::exp", "exp_off_on_one_binade", torch.float32)
    assert not outcome.ok
    assert "4 ULP" in outcome.counterexample.problem or "ULP; the contract allows" in outcome.counterexample.problem


def test_a_candidate_within_the_contract_passes_with_its_ulps_measured(opset):
    outcome = _check(opset, "aten::exp", "exp_correct", torch.float32)
    assert outcome.ok, outcome.counterexample.render() if outcome.counterexample else outcome


def test_the_repro_of_a_contract_failure_fails_the_same_way(opset):
    outcome = _check(opset, "aten::exp", "exp_in_float32", torch.float64)
    source = outcome.counterexample.repro()
    assert "contract_compare" in source
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(Path(__file__).parent), os.environ.get("PYTHONPATH", "")])}
    ran = subprocess.run([sys.executable, "-c", source], capture_output=True, text=True, env=env, timeout=300)
    assert ran.returncode == 1 and "the contract allows" in ran.stderr, ran.stderr[-2000:]



def test_the_contracts_are_read_once_per_process(monkeypatch):
    """Every drawn example asks for its op's contract: reading and schema-checking the file each time made a
    conform case twenty times slower."""
    from opspec.spec import accuracy as spec_accuracy
    from opspec.testing import contract_compare

    reads = []
    real = spec_accuracy.load_contracts
    monkeypatch.setattr(spec_accuracy, "load_contracts", lambda *a, **k: reads.append(1) or real(*a, **k))
    spec_accuracy.bundled_contracts.cache_clear()
    try:
        for dtype in ("float32", "float64", "float32"):
            assert contract_compare.contract_for("aten::exp", dtype) is not None
    finally:
        spec_accuracy.bundled_contracts.cache_clear()
    assert len(reads) == 1
