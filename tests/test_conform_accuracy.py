"""``opspec conform`` holds a case to its op's accuracy contract (opset/accuracy.yaml), with backends a few ULP
off from tests/accuracy_faults.py."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch
from test_conform import FAST, HERE, validate

from opspec.cli import main
from opspec.conform import replay
from opspec.spec.accuracy import UlpContract
from opspec.spec.model import Interval
from opspec.testing import compare
from opspec.testing.contract_compare import compare_with_contract


@pytest.fixture(autouse=True)
def importable_faults(monkeypatch):
    monkeypatch.syspath_prepend(str(HERE))


def run(tmp_path: Path, backend: str, op: str, dtype: str) -> dict:
    path = tmp_path / f"{backend}.json"
    main(["conform", "--backend", f"accuracy_faults:{backend}", "--ops", op, "--dtypes", dtype, "--report", str(path),
          "--no-expectations", "--no-special-cases", *FAST])
    report = json.loads(path.read_text())
    validate(report)
    return report["results"][0]


def test_a_backend_4_ulp_off_on_one_binade_fails_by_the_accuracy_program(tmp_path):
    record = run(tmp_path, "exp_off_on_one_binade", "aten::exp", "float32")
    accuracy = record["accuracy"]
    worst = accuracy["worst"][0]
    assert record["status"] == "fail" and record["blame"] == "backend", record["message"]
    assert 2 ** -9 <= worst["inputs"]["self"] < 2 ** -8 and 3.5 <= accuracy["max_ulp"] <= 4.5
    for part in ("aten::exp float32", f"self={worst['inputs']['self']!r}", f"got {worst['got']!r}",
                 f"correctly rounded {worst['rounded']!r}", "ULP", "allows 1 ULP", "opset/accuracy.yaml#aten::exp/float32"):
        assert part in record["message"]
    assert accuracy["inputs"] > 10_000 and not accuracy["exhaustive"] and accuracy["contract"]["max_ulp"] == 1
    # the drawn examples passed, and (rtol, atol) alone would have passed the worst input too
    assert accuracy["examples_max_ulp"] <= 1
    x = torch.tensor([worst["inputs"]["self"]])
    assert compare.compare(torch.tensor([worst["got"]]), torch.exp(x)).ok
    assert replays(record).status == "fail"


def replays(record: dict) -> replay.Verdict:
    """The verdict of the record's repro, judged again in this process."""
    loaded = replay.load_repro(record["repro_file"])
    return replay.verdict(loaded["CASE"], loaded["program"], loaded["args"], loaded["kwargs"])


def test_float64_sin_computed_in_float32_fails_naming_the_distance(tmp_path):
    record = run(tmp_path, "sin_in_float32", "aten::sin", "float64")
    assert record["status"] == "fail" and "aten::sin float64" in record["message"], record["message"]
    assert "ULP" in record["message"] and record["accuracy"]["max_ulp"] > 1e6


def test_a_backend_within_the_contract_passes_with_the_measured_ulps_on_record(tmp_path):
    record = run(tmp_path, "exp_via_float64", "aten::exp", "float32")
    accuracy = record["accuracy"]
    assert record["status"] == "pass", record["message"]
    assert accuracy["max_ulp"] <= 0.5001 and accuracy["inputs"] > 10_000 and accuracy["seed"] is not None
    assert accuracy["contract"] == {"max_ulp": 1, "where": accuracy["contract"]["where"],  # float32's policy
                                    "subnormals": {"inputs": "may-flush", "results": "may-flush"}}
    assert accuracy["executed"] == "target" and record["tolerance"] is None


def test_a_backend_that_takes_no_input_that_large_is_judged_on_its_drawn_examples(tmp_path):
    record = run(tmp_path, "small_inputs_only", "aten::exp", "float32")
    assert record["status"] == "pass", record["message"]
    assert record["accuracy"]["inputs"] == 0 and "at most 1024 elements" in record["accuracy"]["program"]


def test_inside_the_domain_ulps_decide_and_outside_it_the_eager_kernel():
    contract = UlpContract("aten::log", "float32", 1.0, {"self": (Interval.parse("[0, inf]"),)})
    x = torch.tensor([-1.0, 2.0, 0.5])
    right = torch.log(x)
    assert compare_with_contract(right, right, x, contract).ok
    nudged = right.clone()
    nudged[1] = torch.nextafter(torch.nextafter(right[1], torch.tensor(9.0)), torch.tensor(9.0))
    verdict = compare_with_contract(nudged, right, x, contract)
    assert not verdict.ok and "self=2.0" in verdict.message and 1.5 < verdict.max_ulp < 2.5
    assert compare.compare(nudged, right).ok  # within (rtol, atol)
    not_nan = right.clone()
    not_nan[0] = 0.0
    outside = compare_with_contract(not_nan, right, x, contract)
    assert not outside.ok and "outside the contract's domain" in outside.message


def test_a_binary_op_4_ulp_off_on_one_binade_of_its_first_operand_fails_by_the_accuracy_program(tmp_path):
    record = run(tmp_path, "atan2_off_on_one_binade", "aten::atan2", "float32")
    accuracy = record["accuracy"]
    worst = accuracy["worst"][0]
    assert record["status"] == "fail" and record["blame"] == "backend", record["message"]
    assert set(worst["inputs"]) == {"self", "other"} and 2 ** -9 <= worst["inputs"]["self"] < 2 ** -8
    assert 3.5 <= accuracy["max_ulp"] <= 4.6 and accuracy["inputs"] > 10_000 and not accuracy["exhaustive"]
    for part in ("aten::atan2 float32", f"self={worst['inputs']['self']!r}", f"other={worst['inputs']['other']!r}",
                 "allows 2 ULP", "opset/accuracy.yaml#aten::atan2/float32"):
        assert part in record["message"]
    assert replays(record).status == "fail"


def test_a_binary_op_within_its_contract_passes_with_the_pairs_measured(tmp_path):
    record = run(tmp_path, "atan2_via_float64", "aten::atan2", "float32")
    accuracy = record["accuracy"]
    assert record["status"] == "pass", record["message"]
    assert accuracy["max_ulp"] <= 0.5001 and accuracy["inputs"] > 10_000 and accuracy["seed"] is not None
    assert accuracy["executed"] == "target"


def test_an_op_with_a_fixed_argument_is_measured_at_the_contracts_value(tmp_path):
    record = run(tmp_path, "div_scalar_off_on_one_binade", "aten::div.Scalar", "float32")
    assert record["status"] == "fail" and record["blame"] == "backend", record["message"]
    assert "aten::div.Scalar float32" in record["message"] and record["accuracy"]["max_ulp"] >= 3.5
    assert "other=3.0" in Path(record["repro_file"]).read_text()  # the program the repro measures again
    assert replays(record).status == "fail"


def test_a_drawn_call_of_two_tensors_is_judged_in_ulps_broadcast_and_only_at_the_contracts_arguments():
    from opspec.conform import case_accuracy
    from opspec.conform.cases import Slot
    from opspec.testing.contract_compare import operands

    contract = case_accuracy.contract_for("aten::atan2", "float32")
    y, x = torch.tensor([[0.5, 1.0, -2.0]]), torch.tensor([[3.0], [0.25]])
    right = torch.atan2(y, x)
    bound = operands(contract, (Slot(0), Slot(1)), {}, [y, x])
    assert compare_with_contract(right, right, bound, contract).ok
    nudged = right.clone()
    nudged[1, 0] = torch.nextafter(torch.nextafter(right[1, 0], torch.tensor(9.0)), torch.tensor(9.0))
    verdict = compare_with_contract(nudged, right, bound, contract)
    assert not verdict.ok and "self=0.5, other=0.25" in verdict.message and 1.5 < verdict.max_ulp < 2.5
    assert compare.compare(nudged, right).ok  # within (rtol, atol)
    add = case_accuracy.contract_for("aten::add.Tensor", "float32")
    assert operands(add, (Slot(0), Slot(1)), {"alpha": 1}, [y, x]) is not None
    assert operands(add, (Slot(0), Slot(1)), {"alpha": 2}, [y, x]) is None  # not what the contract measured
    assert operands(add, (Slot(0), Slot(1)), {}, [y, x.half()]) is None
    clamp = case_accuracy.contract_for("aten::clamp", "float32")
    assert operands(clamp, (Slot(0), -0.5, 0.5), {}, [y]) is not None and operands(clamp, (Slot(0), -1.0), {}, [y]) is None
