"""The opset's subnormal policy (opset/accuracy.yaml `subnormals`, proposal 0008) as conformance applies it: a
backend that reads float64, float32 and bfloat16 subnormals as zero and returns zero for their subnormal results
passes, and says how many subnormals only the policy let through; the same backend fails in float16, whose
subnormals the policy keeps, and a result wrong for another reason still fails."""
from __future__ import annotations

import pytest
import torch

from opspec.conform import replay
from opspec.spec import accuracy as spec_accuracy
from opspec.testing import compare, contract_compare, subnormal_latitude


def _flush(t):  # written apart from the module under test: |x| below the smallest normal becomes zero of its sign
    if not isinstance(t, torch.Tensor) or not t.is_floating_point():
        return t
    return torch.where(t.abs() < torch.finfo(t.dtype).tiny, t * 0, t)


class Flushing:
    """A backend that flushes subnormal inputs and results (FTZ and DAZ), and may add a fault of its own."""

    def __init__(self, fault=None):
        self.fault = fault

    def compile(self, fn, example_inputs):
        def run(*inputs):
            out = fn(*[_flush(t) for t in inputs])
            out = tuple(_flush(o) for o in out) if isinstance(out, tuple) else _flush(out)
            return self.fault(out) if self.fault else out
        return run


def _judge(backend, fn, inputs):
    return replay.judge(backend, lambda: fn, lambda: [t.clone() for t in inputs], None, None, 0,
                        float64=lambda on=None: None)


def _tiny(dtype):
    return torch.finfo(dtype).tiny / 4  # a subnormal of the dtype


CALLS = {
    "ceil of a subnormal": (lambda x: torch.ops.aten.ceil(x), lambda d: [torch.tensor([_tiny(d), 1.5], dtype=d)]),
    "a subnormal compared with zero": (lambda x: torch.ops.aten.gt(x, 0.0),
                                       lambda d: [torch.tensor([_tiny(d), -1.0], dtype=d)]),
    "-inf times a subnormal, summed by mm": (lambda a, b: torch.ops.aten.mm(a, b),
                                             lambda d: [torch.tensor([[float("-inf")]], dtype=d),
                                                        torch.tensor([[_tiny(d)]], dtype=d)]),
}


def test_the_policy_is_data_float16_alone_keeps_its_subnormals():
    contracts = spec_accuracy.load_contracts()
    for dtype in ("float64", "float32", "bfloat16"):
        policy = contracts.policy_of(dtype)
        assert (policy.inputs, policy.results) == (spec_accuracy.MAY_FLUSH,) * 2 and "0008" in policy.reason
    assert not contracts.policy_of("float16").flushes
    # a contract's own latitude widens the dtype's policy, never narrows it
    sigmoid = contracts.ulp_of("aten::sigmoid", "float32").subnormals
    assert (sigmoid.inputs, sigmoid.results) == (spec_accuracy.MAY_FLUSH,) * 2 and "1 / (1 + exp(-x))" in sigmoid.reason
    assert contracts.ulp_of("aten::exp", "float64").subnormals.flushes
    assert not contracts.ulp_of("aten::exp", "float16").subnormals.flushes


@pytest.mark.parametrize("call", sorted(CALLS))
@pytest.mark.parametrize("dtype", [torch.float64, torch.float32, torch.bfloat16])
def test_a_flushing_backend_passes_where_the_policy_lets_it_and_says_so(call, dtype):
    fn, inputs = CALLS[call]
    strict = compare.compare(Flushing().compile(fn, inputs(dtype))(*inputs(dtype)), fn(*inputs(dtype)))
    assert not strict.ok  # the case is one where flushing shows
    verdict = _judge(Flushing(), fn, inputs(dtype))
    assert isinstance(verdict, compare.Comparison) and verdict.ok and verdict.flushed >= 1
    assert replay.metrics([verdict])["flushed"] == verdict.flushed


@pytest.mark.parametrize("call", sorted(CALLS))
def test_float16_keeps_its_subnormals(call):
    dtype = torch.float16
    fn, inputs = CALLS[call]
    verdict = _judge(Flushing(), fn, inputs(dtype))
    assert isinstance(verdict, dict) and verdict["status"] == "fail" and "flushed" not in verdict


def test_a_result_wrong_for_another_reason_still_fails_with_subnormals_in_play():
    fn, inputs = CALLS["ceil of a subnormal"]
    off_by_one = Flushing(fault=lambda out: out + torch.tensor([0.0, 1.0], dtype=out.dtype))
    verdict = _judge(off_by_one, fn, inputs(torch.float32))
    assert isinstance(verdict, dict) and verdict["status"] == "fail"


def test_no_subnormal_in_play_no_latitude():
    fn = lambda x: torch.ops.aten.ceil(x)  # noqa: E731
    wrong = Flushing(fault=lambda out: out + 1)
    verdict = _judge(wrong, fn, [torch.tensor([0.25, 1.5])])
    assert isinstance(verdict, dict) and verdict["status"] == "fail"


def test_flushed_keeps_sign_strides_and_other_values():
    base = torch.tensor([[1e-40, -1e-40], [float("nan"), float("-inf")]]).t()  # not contiguous
    out = subnormal_latitude.flushed(base, frozenset({torch.float32}))
    assert out.stride() == base.stride()
    assert torch.equal(torch.signbit(out), torch.signbit(base)) and out[0, 0] == 0 and out[1, 0] == 0
    assert torch.isnan(out[0, 1]) and out[1, 1] == float("-inf")
    assert subnormal_latitude.flushed(base, frozenset({torch.float16})) is base
    assert subnormal_latitude.count([base, (base,)], frozenset({torch.float32})) == 4


@pytest.mark.parametrize("dtype", ["float32", "bfloat16", "float16", "float64"])
def test_a_ulp_contract_carries_the_dtype_policy(dtype):
    """mul's contract (0.5 ULP) in ULPs: a flushed subnormal product is off by a whole subnormal, which no atol
    hides in a ULP contract; the policy lets it pass in every dtype but float16."""
    d = getattr(torch, dtype)
    x, y = torch.tensor([_tiny(d) * 2, -2.0], dtype=d), torch.tensor([0.5, 3.0], dtype=d)
    contract = contract_compare.contract_for("aten::mul.Tensor", dtype)
    operands = contract_compare.operands_of_call(contract, (x, y), {})
    got = _flush(torch.ops.aten.mul(x, y))
    verdict = contract_compare.compare_with_contract(got, torch.ops.aten.mul(x, y), operands, contract)
    assert verdict.ok is (dtype != "float16")


@pytest.mark.parametrize("dtype", ["float64", "float32", "bfloat16", "float16"])
def test_a_rows_flush_latitude_holds_where_the_policy_lets_the_dtype_flush(dtype):
    from opspec.conform import special_rows
    from opspec.testing import special_cases as rows

    row = next(r for r in special_rows.all_rows()["aten::add.Tensor"] if r.id == "add.Tensor-extremes-subnormal-plus")
    assert row.latitude.policy == "subnormals"
    zeros = torch.zeros(2, dtype=getattr(torch, dtype))
    assert rows.judge(row, dtype, zeros).ok is (dtype != "float16")
    assert not rows.judge(row, dtype, zeros, latitude=False).ok  # torch itself keeps subnormals in every dtype


def test_a_flushing_backend_conforms_on_a_row_with_a_subnormal_input(tmp_path, monkeypatch):
    """ceil's row of a tiny positive value (the smallest subnormal among its inputs) has no latitude of its own: the
    policy gives it one in float32, and the record names the latitude it used (float16: the unit tests above)."""
    import json
    from pathlib import Path

    from opspec.cli import main

    monkeypatch.syspath_prepend(str(Path(__file__).parent))
    report = tmp_path / "r.json"
    code = main(["conform", "--backend", "conform_faults:flushing", "--ops", "ceil", "--dtypes", "float32",
                 "--max-examples", "2", "--max-compiles", "1", "-j", "1", "--no-expectations", "--report", str(report)])
    [record] = json.loads(report.read_text())["results"]
    assert code == 0 and record["status"] == "pass"
    assert any("ceil-tiny" in used and "subnormal policy" in used for used in record["special_cases"]["latitude"])
