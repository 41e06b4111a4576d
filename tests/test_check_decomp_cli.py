"""``opspec check-decomp``: bad usage exits 2 with one line and no traceback; a run exits 0 or 1."""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

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


def relu_nan(self):
    return torch.where(self < 0, torch.full_like(self, float("nan")), self)  # NaN where the kernel gives 0


@torch.library.custom_op("opspec_test::passthrough", mutates_args=())
def passthrough(x: torch.Tensor) -> torch.Tensor:
    return x.clone()


def relu_leaky(self):
    return passthrough(torch.clamp_min(self, 0))  # right values, through an op outside the core set


def printed_repro(out: str) -> str:
    """The repro as printed: everything after the 'repro:' line, unindented."""
    block = out.split("repro:\n", 1)[1]
    return textwrap.dedent("\n".join(line for line in block.splitlines() if line.startswith("    ") or not line.strip()))


def paste(source: str) -> subprocess.CompletedProcess:
    """Run a printed repro in a fresh interpreter, as a user pasting it would."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(Path(__file__).parent), os.environ.get("PYTHONPATH", "")])}
    return subprocess.run([sys.executable, "-c", source], capture_output=True, text=True, env=env, timeout=300)


def test_a_values_repro_runs_as_printed_and_fails_the_same_way(capsys):
    code, out, _ = run(capsys, "aten::relu", "--impl", "test_check_decomp_cli:relu_wrong", "--dtype", "float32",
                       "--max-examples", "20", "--no-closure")
    assert code == 1
    source = printed_repro(out)
    assert source.startswith("import torch\n")
    done = paste(source)
    assert done.returncode == 1 and "NameError" not in done.stderr
    # relu has an accuracy contract (0 ULP in float32): the repro judges by it, as the check did
    assert "AssertionError" in done.stderr and "the contract allows 0 ULP" in done.stderr


def test_a_nan_mismatch_names_its_positions(capsys):
    code, out, _ = run(capsys, "aten::relu", "--impl", "test_check_decomp_cli:relu_nan", "--dtype", "float32",
                       "--max-examples", "20", "--no-closure")
    assert code == 1
    assert "got nan, correctly rounded 0.0, NaN or infinity mismatch; the contract allows 0 ULP" in out
    assert "max abs error 0" not in out


def test_a_closure_repro_shows_the_produced_ops(capsys):
    code, out, _ = run(capsys, "aten::relu", "--impl", "test_check_decomp_cli:relu_leaky", "--dtype", "float32",
                       "--max-examples", "5")
    assert code == 1
    assert "produced ops:" in out and "opspec_test::passthrough" in out
    done = paste(printed_repro(out))
    assert done.returncode == 1 and "NameError" not in done.stderr
    assert "produced ops: " in done.stdout and "opspec_test::passthrough" in done.stdout
    assert "AssertionError" in done.stderr
