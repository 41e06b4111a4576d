"""``opspec check-decomp``: bad usage exits 2 with one line and no traceback; a run exits 0 or 1."""
from __future__ import annotations

import pytest
import torch

from opspec.cli import main


def relu_correct(self):
    return torch.clamp_min(self, 0)


def relu_wrong(self):
    return self.abs()  # wrong for every negative input


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(["check-decomp", *argv])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def usage_error(capsys, *argv: str) -> str:
    code, _, err = run(capsys, *argv)
    assert code == 2
    assert len(err.strip().splitlines()) == 1, err
    assert "Traceback" not in err
    return err


def test_unknown_op_suggests_a_name(capsys):
    err = usage_error(capsys, "aten::expm", "--impl", f"{__name__}:relu_correct")
    assert "unknown op aten::expm" in err and "did you mean aten::expm1" in err


def test_unimportable_module(capsys):
    err = usage_error(capsys, "aten::relu", "--impl", "opspec_no_such_module:relu")
    assert "cannot import opspec_no_such_module" in err


def test_missing_function(capsys):
    err = usage_error(capsys, "aten::relu", "--impl", f"{__name__}:no_such_function")
    assert "has no function no_such_function" in err


def test_malformed_reference(capsys):
    err = usage_error(capsys, "aten::relu", "--impl", "no_colon_here")
    assert "pkg.module:function" in err


def test_op_and_all_together(capsys):
    assert "exactly one of OP or --all" in usage_error(capsys, "aten::relu", "--all")


def test_neither_op_nor_all(capsys):
    assert "exactly one of OP or --all" in usage_error(capsys)


def test_bad_dtype(capsys):
    err = usage_error(capsys, "aten::relu", "--impl", f"{__name__}:relu_correct", "--dtype", "float33")
    assert "--dtype float33" in err


@pytest.mark.skipif(torch.cuda.is_available(), reason="this machine has CUDA")
def test_cuda_without_cuda(capsys):
    err = usage_error(capsys, "aten::relu", "--impl", f"{__name__}:relu_correct", "--device", "cuda")
    assert "CUDA is not available" in err


def test_zero_examples(capsys):
    err = usage_error(capsys, "aten::relu", "--impl", f"{__name__}:relu_correct", "--max-examples", "0")
    assert "--max-examples must be at least 1" in err


def test_correct_candidate_exits_0(capsys):
    code, out, err = run(capsys, "aten::relu", "--impl", f"{__name__}:relu_correct", "--dtype", "float32",
                         "--max-examples", "20", "--no-closure")
    assert code == 0, out + err
    assert out.startswith("ok    aten::relu")


def test_wrong_candidate_exits_1_with_a_counterexample(capsys):
    code, out, err = run(capsys, "aten::relu", "--impl", f"{__name__}:relu_wrong", "--dtype", "float32",
                         "--max-examples", "20", "--no-closure")
    assert code == 1
    assert out.startswith("FAIL  aten::relu") and "repro:" in out and "Traceback" not in out + err
