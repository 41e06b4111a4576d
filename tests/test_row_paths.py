"""Rows hold at every kernel path (long past the vector width, broadcast), and rows out of contract run in a child."""
from __future__ import annotations

import os
from pathlib import Path

import torch

from opspec.checks import special_cases as checks
from opspec.spec import special_cases as spec_cases
from opspec.testing import contained, row_paths, special_cases as rows

COSH = """\
  aten::cosh:
    - id: cosh-89
      says: cosh overflows to +inf beyond about 89.4 in float32.
      class: extremes
      inputs: {self: [89.5, 89.0]}
      dtypes: [float32]
      expect: [inf, 2.2448064e+38]
      rtol: 1.0e-5
"""
BOUND = """\
      latitude:
        allowed: [[inf, inf]]
        reason: the vectorised float32 kernel computes exp(x) / 2 and overflows from about 88.72 on.
      stated_shape:
        paths: [long]
        reason: past the vector width cosh(89.0) is inf in the vectorised body and finite in the scalar tail.
"""
GELU_BACKWARD = """\
  aten::gelu_backward:
    - id: gelu_backward-nan
      says: NaN propagates.
      class: nan
      inputs: {grad_output: [nan, 1.0], self: [1.0, nan]}
      dtypes: [float32]
      expect: [nan, nan]
"""
OUT_OF_CONTRACT = """\
  aten::max_pool2d_with_indices_backward:
    - id: far
      says: An index far past the plane is out of contract.
      class: out-of-contract
      inputs: {grad_output: [[[1.0, 2.0]]], self: [[[5.0, 1.0, 7.0]]], kernel_size: [1, 2], stride: [1, 1], padding: [0, 0], dilation: [1, 1], ceil_mode: false, indices: {values: [[[0, 100000000]]], dtype: int64}}
      dtypes: [float32]
      undefined: the kernel writes far outside its buffer without checking and the process dies.
  aten::gather:
    - id: checked
      says: An index past the end is out of contract.
      class: out-of-contract
      inputs: {self: [1.0, 2.0], dim: 0, index: {values: [5], dtype: int64}}
      dtypes: [float32]
      undefined: torch was thought to leave this unchecked, but it raises.
    - id: raises
      says: An index past the end is out of contract and the CPU kernel refuses it.
      class: out-of-contract
      inputs: {self: [1.0, 2.0], dim: 0, index: {values: [5], dtype: int64}}
      dtypes: [float32]
      raises: RuntimeError
      match: out of bounds
"""


def _run(tmp_path: Path, body: str) -> checks.Result:
    path = tmp_path / "rows.yaml"
    path.write_text("ops:\n" + body)
    cases, problems = spec_cases.read([path])
    assert problems == []
    return checks.run_cases(cases)


def test_a_pointwise_row_is_varied_long_and_broadcast():
    case = spec_cases.SpecialCase("aten::add.Tensor", "x", "nan", {"self": [1.0, 2.0], "other": [3.0, 4.0]},
                                  expect=[4.0, 6.0], has_expect=True)
    op = torch.ops.aten.add.Tensor
    args, kwargs = rows.materialize(case, op, "float32")
    found = row_paths.variants(case, op, args, kwargs)
    assert [v.path for v in found] == ["long", "broadcast of self", "broadcast of other"]
    long, wide = found[0], found[1]
    assert long.args[0].shape == (row_paths.LONG,) and long.args[0][:3].tolist() == [1.0, 2.0, 1.0]
    assert long.case.expect["shape"] == [row_paths.LONG] and long.case.expect["values"][:3] == [4.0, 6.0, 4.0]
    assert wide.args[0].shape == (2, 1) and wide.args[1].shape == (2, row_paths.LONG)
    for variant in found:
        assert rows.judge(variant.case, "float32", rows.run(op, variant.args, variant.kwargs), latitude=False).ok
    sums = torch.ops.aten.sum.default  # not pointwise: repeating its input changes the answer
    assert row_paths.variants(case, sums, (torch.ones(2),), {}) == []


def test_a_row_that_holds_only_at_its_length_is_false_until_it_says_so(tmp_path):
    [finding] = _run(tmp_path, COSH).findings
    assert f"(float32 long, {row_paths.LONG} long)" in finding.message and "torch gives [inf, inf" in finding.message
    stated = _run(tmp_path, COSH + BOUND)
    assert stated.findings == [] and stated.status == {"aten::cosh: cosh overflows to +inf beyond about 89.4 in float32.": "holds"}


def test_a_row_is_broadcast_where_the_op_broadcasts(tmp_path):
    [finding] = _run(tmp_path, GELU_BACKWARD).findings
    assert "broadcast of" in finding.message and "primitive descriptor" in finding.message
    bound = GELU_BACKWARD + "      stated_shape:\n        paths: [broadcast]\n        reason: oneDNN refuses operands of different shapes here.\n"
    assert _run(tmp_path, bound).findings == []


def test_rows_out_of_contract_run_in_a_child(tmp_path):
    result = _run(tmp_path, OUT_OF_CONTRACT)  # the first row kills its child; this process goes on
    assert result.status["aten::max_pool2d_with_indices_backward: An index far past the plane is out of contract."] == "holds"
    [finding] = result.findings
    assert finding.mark.line == 10 and "torch checks these inputs: the row can state what it raises" in finding.message
    assert result.status["aten::gather: An index past the end is out of contract and the CPU kernel refuses it."] == "holds"


def test_a_child_that_dies_is_told_apart_from_one_that_answers():
    assert str(contained.run(lambda: torch.ones(2) + 1, rows.show)) == "returned [2.0, 2.0] (float32)"
    died = contained.run(os.abort, rows.show)
    assert (died.kind, died.ended) == ("no answer", "killed by SIGABRT")
    raised = contained.run(lambda: torch.ones(2)[5], rows.show)
    assert raised.kind == "raised" and "IndexError" in raised.classes


def test_only_a_row_out_of_contract_may_leave_its_outcome_undefined(tmp_path):
    path = tmp_path / "rows.yaml"
    path.write_text("ops:\n" + COSH.replace("      expect: [inf, 2.2448064e+38]\n      rtol: 1.0e-5\n",
                                            "      undefined: the outcome is whatever the kernel does.\n"))
    _, problems = spec_cases.read([path])
    assert [p.message for p in problems] == ["aten::cosh: only a row of class out-of-contract may leave its outcome undefined"]


def test_a_decomposition_is_held_to_its_rows_at_every_path(tmp_path):
    """A candidate right on the row's two elements and wrong once its input is long enough is caught."""
    from opspec.checks import decomp_check
    from opspec.spec.model import TestingHints

    path = tmp_path / "rows.yaml"
    path.write_text("ops:\n" + COSH.replace("[89.5, 89.0]", "[0.0, 1.0]").replace(
        "[inf, 2.2448064e+38]", "[1.0, 1.5430806348152437]"))
    cases, _ = spec_cases.read([path])

    def short_only(x):
        y = (torch.exp(x) + torch.exp(-x)) / 2
        return y if x.numel() < 8 else y * 0

    subject = decomp_check.Subject("aten::cosh", "", short_only, "short_only", TestingHints(), None, frozenset())
    [problem] = decomp_check.check_special_cases(subject, cases["aten::cosh"], "float32")
    assert f"(float32 long, {row_paths.LONG} long)" in problem and "the decomposition short_only gives [0.0" in problem


def test_calls_after_the_one_that_killed_the_child_have_no_answer():
    answers = contained.run_each([lambda: torch.ones(1), os.abort, lambda: torch.ones(1)], rows.show)
    assert [a.kind for a in answers] == ["returned", "no answer", "no answer"]
    assert {a.ended for a in answers} == {"killed by SIGABRT"}


def test_each_dtype_of_an_undefined_row_runs_in_a_child_of_its_own(tmp_path, monkeypatch):
    """An undefined call can corrupt the process and still return; what the same process does next means nothing
    (torch 2.9 then raised "tensor does not have a device" for the row's next dtype), so it is not asked."""
    poisoned = []

    def poisoning_call(op, args, kwargs):
        def call():
            if poisoned:
                raise RuntimeError("tensor does not have a device")
            poisoned.append(True)
            return op(*args, **kwargs)
        return call

    monkeypatch.setattr(checks, "_call", poisoning_call)
    row = OUT_OF_CONTRACT.split("  aten::gather:")[0].replace("[0, 100000000]", "[0, 1]").replace("[float32]", "[float32, float64]")
    result = _run(tmp_path, row)
    assert result.findings == [] and result.checked == 2


def test_an_undefined_rows_raise_counts_only_where_a_fresh_process_raises_too(monkeypatch):
    """A call that writes outside its buffers can raise from what it overwrote, depending on what its process held
    (torch 2.9, now and then: "tensor does not have a device"): that is no check of the inputs. The raise is asked
    again of a new interpreter that runs the call alone; this row's call returns there."""
    [case] = [row for row in spec_cases.load_special_cases()["aten::max_pool2d_with_indices_backward"]
              if row.id == "max_pool2d_with_indices_backward-out-of-contract-negative-index"]
    op = torch.ops.aten.max_pool2d_with_indices_backward.default
    overwritten = contained.Contained("raised", "RuntimeError: tensor does not have a device", "exit 0", ("RuntimeError",))
    monkeypatch.setattr(contained, "run", lambda call, show: overwritten)
    answer = checks._contained(case, op, ["float32"])["float32"]
    assert answer.kind == "returned" and rows.judge_contained(case, answer).ok
