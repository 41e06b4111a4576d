"""A failure's diagnostic reads the same from any process: the time stamps and symbol numbering torch prints go."""
from __future__ import annotations

from opspec.conform.isolation import _steady


def test_log_stamps_and_symbolic_sizes_are_dropped_and_the_rest_kept():
    assert _steady("[W1206 11:15:36.706138194 TensorCompare.cpp:621] Warning: uint8 condition") == \
        "[W TensorCompare.cpp:621] Warning: uint8 condition"
    assert _steady("E1206 11:12:11.179000 30151 torch/fake_tensor.py:1608] TypeError: x") == \
        "E torch/fake_tensor.py:1608] TypeError: x"
    assert _steady("aten.where.self(FakeTensor(..., size=(s25, 3)), FakeTensor(..., size=(s7,)))") == \
        "aten.where.self(FakeTensor(..., size=(s?, 3)), FakeTensor(..., size=(s?,)))"
    assert _steady("guard on s25 failed at x.s3") == "guard on s25 failed at x.s3"  # outside a size: kept
