"""Special cases: the loader refuses bad data at its line, and the check refuses a row torch contradicts."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import torch

from opspec.checks import special_cases as check_mod
from opspec.spec import special_cases as spec_cases
from opspec.spec.special_cases import Latitude, SpecialCase
from opspec.spec.yamlio import DataError, Mark
from opspec.testing import special_cases as rows

pytestmark = pytest.mark.usefixtures("warm_validate_parts")  # validate reuses the bundled opset's parts

HERE = Path(__file__).resolve().parent
FIXTURES = HERE / "special_cases"
SRC = HERE.parent / "src"


def case(op: str = "aten::sign", **fields) -> SpecialCase:
    fields.setdefault("says", "a claim about the op")
    fields.setdefault("klass", "nan")
    fields.setdefault("inputs", {"self": [0.0]})
    return SpecialCase(op=op, mark=Mark("rows.yaml", 7, 5), **fields)


def command(*files: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "opspec.checks.special_cases", *map(str, files)],
                          capture_output=True, text=True, env={"PYTHONPATH": str(SRC), "PATH": "/usr/bin:/bin"})


def test_rows_that_hold_give_no_finding():
    assert check_mod.check(paths=[FIXTURES / "holds.yaml"]) == []
    run = command(FIXTURES / "holds.yaml")
    assert run.returncode == 0, run.stdout + run.stderr
    assert run.stdout == ""


def test_rows_run_on_one_thread_and_leave_the_count_as_it_was(monkeypatch):
    seen, real_run = [], rows.run

    def run(op, args, kwargs):
        seen.append(torch.get_num_threads())
        return real_run(op, args, kwargs)

    monkeypatch.setattr(rows, "run", run)
    before = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        assert check_mod.check(paths=[FIXTURES / "holds.yaml"]) == []
        assert set(seen) == {1} and torch.get_num_threads() == 2
    finally:
        torch.set_num_threads(before)


def test_a_false_row_is_refused_with_its_file_and_line():
    findings = check_mod.check(paths=[FIXTURES / "false_row.yaml"])
    assert [str(f.mark) for f in findings] == [f"{FIXTURES / 'false_row.yaml'}:8:7"]
    assert "aten::sign row 'The sign of NaN is NaN.'" in findings[0].message
    assert "expected ['nan'], torch gives [0.0]" in findings[0].message
    run = command(FIXTURES / "false_row.yaml")
    assert run.returncode == 1
    assert run.stdout.splitlines() == [str(findings[0])]


@pytest.mark.parametrize(("fixture", "line", "words"), [
    ("unknown_class.yaml", 5, "'not-a-number' is not one of 'nan'"),
    ("unknown_argument.yaml", 3, "aten::sign has no argument 'input'"),
    ("unknown_op.yaml", 3, "has no operator aten::sgn_typo"),
    ("fill_beside_values.yaml", 3, "fill needs a shape and no values"),
])
def test_bad_data_is_one_line_naming_file_and_line(fixture, line, words):
    run = command(FIXTURES / fixture)
    assert run.returncode == 2
    assert "Traceback" not in run.stderr
    [printed] = run.stdout.splitlines()
    assert printed.startswith(f"{FIXTURES / fixture}:{line}:") and words in printed


def test_loader_raises_data_error_at_the_row(tmp_path):
    path = tmp_path / "rows.yaml"
    path.write_text("ops:\n  aten::sign:\n    - id: sign-nan\n      says: The sign of NaN is 0, not NaN.\n      class: nan\n"
                    "      inputs: {self: [nan]}\n      expect: [0.0]\n      raises: RuntimeError\n")
    with pytest.raises(DataError) as err:
        spec_cases.load_special_cases(paths=[path])
    assert str(err.value) == f"{path}:3:7: aten::sign: a row states exactly one of expect, expect_each, raises, undefined (more than one of them here)"


def test_loader_refuses_an_op_in_two_files_and_unknown_special_names(tmp_path):
    (tmp_path / "a.yaml").write_text((FIXTURES / "false_row.yaml").read_text())
    (tmp_path / "b.yaml").write_text((FIXTURES / "unknown_argument.yaml").read_text().replace("[0.0]", "[zero]"))
    _, findings = spec_cases.read([tmp_path / "a.yaml", tmp_path / "b.yaml"])
    messages = [str(f) for f in findings]
    assert messages[0].startswith(f"{tmp_path / 'b.yaml'}:7:7: aten::sign: expect: 'zero' is not a special name")
    (tmp_path / "b.yaml").write_text((FIXTURES / "unknown_argument.yaml").read_text())
    _, findings = spec_cases.read([tmp_path / "a.yaml", tmp_path / "b.yaml"])
    assert [str(f) for f in findings] == [f"{tmp_path / 'b.yaml'}:3:7: aten::sign already has rows in {tmp_path / 'a.yaml'}; an op's rows live in one file"]


def test_loaded_rows_carry_every_field():
    cases = spec_cases.load_special_cases(paths=[FIXTURES / "holds.yaml"])
    div_int = cases["aten::div.Tensor_mode"][1]
    assert (div_int.klass, div_int.dtypes, div_int.raises, div_int.match) == ("division-by-zero", ("int64",), "RuntimeError", "ZeroDivisionError")
    assert div_int.where == f"{FIXTURES / 'holds.yaml'}:21"
    assert div_int.cite == "opset/special_cases/holds.yaml#div.Tensor_mode-division-by-zero"
    assert cases["aten::max.dim"][0].expect_each == (3.0, {"values": 1, "dtype": "int64"})


@pytest.mark.parametrize(("name", "dtype", "value"), [
    ("max", "float32", torch.finfo(torch.float32).max),
    ("max", "float16", 65504.0),
    ("-max", "float64", -torch.finfo(torch.float64).max),
    ("min", "float32", -torch.finfo(torch.float32).max),
    ("max", "int8", 127), ("min", "int8", -128), ("-max", "int64", -(2 ** 63 - 1)),
    ("tiny", "float32", 2.0 ** -126), ("subnormal", "float32", 2.0 ** -149), ("-subnormal", "float64", -(2.0 ** -1074)),
    ("subnormal", "bfloat16", 2.0 ** -133), ("eps", "float16", 2.0 ** -10), ("max", "bool", True),
])
def test_special_names_resolve_per_dtype(name, dtype, value):
    tensor, _ = rows.tensor_literal([name], dtype)
    assert tensor.dtype == getattr(torch, dtype) and tensor.tolist() == [value]


def test_a_name_a_dtype_cannot_hold_is_refused():
    with pytest.raises(rows.CaseError, match="'nan' has no int64 value"):
        rows.tensor_literal([1, "nan"], "int64")


def test_signed_zero_is_strict_only_where_the_row_writes_it():
    negative = torch.tensor([-0.0])
    assert rows.judge(case(expect=["-0.0"]), "float32", negative).ok
    assert not rows.judge(case(expect=["+0.0"]), "float32", negative).ok
    assert rows.judge(case(expect=[0.0]), "float32", negative).ok  # a plain zero matches either sign
    verdict = rows.judge(case(expect=["-0.0"]), "float32", torch.tensor([0.0]))
    assert not verdict.ok and verdict.detail == "expected ['-0.0'], got [0.0] (float32)"


def test_rtol_bounds_relative_error_and_exact_is_the_default():
    tiny = case(expect=[1e-10], rtol=1e-6)
    assert rows.judge(tiny, "float64", torch.tensor([1e-10 * (1 + 1e-7)], dtype=torch.float64)).ok
    assert not rows.judge(tiny, "float64", torch.tensor([0.0], dtype=torch.float64)).ok  # a naive expm1
    assert not rows.judge(case(expect=[1e-10]), "float64", torch.tensor([1e-10 * (1 + 1e-15)], dtype=torch.float64)).ok


def test_raises_and_match():
    row = case(raises="RuntimeError", match="ZeroDivisionError")
    assert rows.judge(row, "int64", RuntimeError("ZeroDivisionError")).ok
    assert not rows.judge(row, "int64", RuntimeError("something else")).ok
    assert not rows.judge(row, "int64", IndexError("ZeroDivisionError")).ok
    assert rows.judge(case(raises="RuntimeError"), "float32", NotImplementedError("x")).ok  # a subclass counts
    returned = rows.judge(row, "int64", torch.tensor([1]))
    assert not returned.ok and returned.detail == "expected RuntimeError matching 'ZeroDivisionError', got [1] (int64)"
    raised = rows.judge(case(expect=[1.0]), "float32", RuntimeError("boom"))
    assert not raised.ok and raised.got == "RuntimeError: boom"


def test_latitude_serves_backends_and_never_torch():
    row = case(expect=[1.0], latitude=Latitude((["-0.0"],), "a backend may flush the subnormal input to zero"))
    flushed = torch.tensor([-0.0])
    backend = rows.judge(row, "float32", flushed)
    assert backend.ok and backend.latitude.startswith("allowed result ['-0.0']")
    assert not rows.judge(row, "float32", flushed, latitude=False).ok
    assert rows.judge(row, "float32", torch.tensor([1.0])).latitude is None
    assert not rows.judge(row, "float32", torch.tensor([0.5])).ok


def test_expect_each_states_some_outputs():
    row = case("aten::max.dim", expect_each=(3.0, {"values": 1, "dtype": "int64"}))
    assert rows.judge(row, "float32", (torch.tensor(3.0), torch.tensor(1))).ok
    wrong = rows.judge(row, "float32", (torch.tensor(3.0), torch.tensor(2)))
    assert not wrong.ok and wrong.reason == "output 1: values differ"
    assert rows.judge(case("aten::max.dim", expect_each=(None, 1)), "float32", (torch.tensor(9.0), torch.tensor(1))).ok
    count = rows.judge(row, "float32", (torch.tensor(3.0),))
    assert not count.ok and count.reason == "1 outputs, the row states 2"
    several = rows.judge(case(expect=3.0), "float32", (torch.tensor(3.0), torch.tensor(1)))
    assert not several.ok and "expect_each" in several.reason


def test_dtype_and_shape_in_expect():
    row = case(expect={"values": [3, 3], "dtype": "int64"})
    assert rows.judge(row, "float32", torch.tensor([3, 3])).ok
    promoted = rows.judge(row, "float32", torch.tensor([3.0, 3.0]))
    assert not promoted.ok and promoted.reason == "dtype float32, expected int64"
    empty = case(expect={"shape": [2, 0]})
    assert rows.judge(empty, "float32", torch.empty(2, 0)).ok
    assert rows.judge(empty, "float32", torch.empty(0, 2)).reason == "shape [0, 2], expected [2, 0]"
    assert rows.judge(case(expect={"values": [1, 2, 3, 4], "shape": [2, 2]}), "float32", torch.tensor([[1.0, 2], [3, 4]])).ok
    assert rows.judge(case(expect=5.0), "float32", torch.tensor([5.0])).reason == "shape [1], expected []"


def test_materialize_reads_the_schema():
    op = torch.ops.aten.div.Tensor_mode
    args, kwargs = rows.materialize(case("aten::div.Tensor_mode", inputs={"self": [1.0], "other": [2.0], "rounding_mode": "floor"}), op, "float16")
    assert [a.dtype for a in args] == [torch.float16, torch.float16] and kwargs == {"rounding_mode": "floor"}
    args, kwargs = rows.materialize(case("aten::div.Tensor_mode", inputs={"self": [1.0], "other": [2.0]}), op, "float32")
    assert kwargs == {"rounding_mode": None}  # optional without a default
    args, _ = rows.materialize(case("aten::add.Scalar", inputs={"self": [1.0], "other": "max"}), "aten::add.Scalar", "float32")
    assert args[1] == torch.finfo(torch.float32).max and len(args) == 2  # alpha left to the schema
    args, kwargs = rows.materialize(case("aten::add.Tensor", inputs={"self": [1.0], "other": [1.0], "alpha": 2}), "aten::add.Tensor", "float64")
    assert len(args) == 2 and kwargs == {"alpha": 2}  # kwarg-only in the schema
    args, _ = rows.materialize(case("aten::cat", inputs={"tensors": [[1.0], {"values": [2], "dtype": "int32"}]}), "aten::cat", "float32")
    assert [t.dtype for t in args[0]] == [torch.float32, torch.int32]
    args, kwargs = rows.materialize(case("aten::sum.dim_IntList", inputs={"self": [1.0], "dim": [0], "dtype": "float64"}),
                                    "aten::sum.dim_IntList", "float32")
    assert kwargs == {"dtype": torch.float64}
    _, kwargs = rows.materialize(case("aten::full", inputs={"size": [2], "fill_value": "max"}), "aten::full", "float16")
    assert kwargs == {"dtype": torch.float16}  # a factory op takes the row's dtype
    _, kwargs = rows.materialize(case("aten::full", inputs={"size": [2], "fill_value": 1, "dtype": "int8"}), "aten::full", "float16")
    assert kwargs == {"dtype": torch.int8}
    with pytest.raises(rows.CaseError, match="required argument 'other'"):
        rows.materialize(case("aten::add.Tensor", inputs={"self": [1.0]}), "aten::add.Tensor", "float32")


def test_case_dtypes_and_applies():
    assert rows.case_dtypes(case(), ["float32", "int64", torch.bfloat16]) == ["float32", "bfloat16"]
    assert rows.case_dtypes(case(), ["int32", "int64"]) == ["int32", "int64"]
    assert rows.case_dtypes(case(dtypes=("int8",)), ["float32"]) == ["int8"]
    newer = case(torch=">=2.14", reason="fixed in torch 2.14 (the version matrix)")
    assert not rows.applies(newer, "2.13.0+cpu") and rows.applies(newer, "2.14.0")
    cuda = case(devices=("cuda",), reason="the CUDA kernel differs from the CPU one")
    assert rows.applies(cuda, "2.13.0", "cuda:0") and not rows.applies(cuda, "2.13.0", "cpu")
    assert rows.applies(case(), "2.11.0", "cuda")


def test_show_prints_full_precision():
    assert rows.show(torch.tensor([1e-10], dtype=torch.float64)) == "[1e-10] (float64)"
    assert rows.show(torch.tensor(float("-inf"))) == "-inf (float32)"
    assert rows.show(torch.empty(2, 0)) == "[[], []] (float32 shape [2, 0])"


# --- opspec validate --------------------------------------------------------------------------------------------------

def _with_rows(opset: Path, name: str, text: str) -> Path:
    folder = opset / "special_cases"
    for old in folder.glob("*.yaml"):  # the test states every row it judges
        old.unlink()
    (opset / "errata.yaml").unlink(missing_ok=True)  # errata cite the bundled rows, which are gone here
    (opset / "descriptions.yaml").unlink(missing_ok=True)  # and so does the prose
    (opset / "uncited_prose.yaml").unlink(missing_ok=True)
    path = folder / name
    path.write_text(text)
    return path


def test_validate_reports_a_false_row_at_its_line(opset_copy, capsys):
    from opspec.cli import main

    path = _with_rows(opset_copy, "pointwise-unary.yaml", (FIXTURES / "false_row.yaml").read_text())
    code = main(["validate", "--opset-dir", str(opset_copy)])
    output = capsys.readouterr()
    assert code == 1
    [line] = [l for l in output.out.splitlines() if l.startswith(str(path)) and "missing:" not in l]
    assert line.startswith(f"{path}:8:7: aten::sign row 'The sign of NaN is NaN.'")
    # Without torch the rows are not run, and the same data is clean.
    assert main(["validate", "--opset-dir", str(opset_copy), "--no-torch"]) == 0


def test_validate_without_torch_reports_schema_errors_and_ops_outside_the_opset(opset_copy):
    from opspec.checks.validate import validate

    path = _with_rows(opset_copy, "misc.yaml", (FIXTURES / "unknown_class.yaml").read_text())
    report = validate(opset_copy, use_torch=False)
    assert [str(f.mark) for f in report.findings] == [f"{path}:5:7"]
    path = _with_rows(opset_copy, "misc.yaml", (FIXTURES / "unknown_op.yaml").read_text())
    report = validate(opset_copy, use_torch=False)
    assert [str(f) for f in report.findings] == [
        f"{path}:3:7: aten::sgn_typo is neither a core op nor the op of a decomposition rule in any opset version"]
    path = _with_rows(opset_copy, "misc.yaml", (FIXTURES / "false_row.yaml").read_text())
    report = validate(opset_copy, use_torch=False)
    assert [str(f) for f in report.findings] == [
        f"{path}:3:7: aten::sign's rows belong in pointwise-unary.yaml (one file per category; decomposed.yaml for the ops rules lower)"]


def test_validate_notes_the_ops_without_rows_per_file(opset_copy):
    from opspec.checks.validate import validate

    _with_rows(opset_copy, "pointwise-unary.yaml", (FIXTURES / "false_row.yaml").read_text().split("    - id: sign-nan-false")[0])
    report = validate(opset_copy, use_torch=False)
    assert report.findings == []
    by_file = {Path(n.mark.path).name: n.message for n in report.missing}
    assert all(m.message.startswith("missing: ") for m in report.missing)
    assert "aten::abs" in by_file["pointwise-unary.yaml"] and "aten::sign," not in by_file["pointwise-unary.yaml"]
    assert "aten::addcdiv" in by_file["decomposed.yaml"]  # a rule's op that is not core


# --- the decomposition suite --------------------------------------------------------------------------------------

def test_a_decomposition_is_held_to_its_ops_rows():
    from dataclasses import replace

    from opspec.checks import decomp_check
    from opspec.spec import load

    opset = load.load_opset()
    cases = spec_cases.load_special_cases(paths=[FIXTURES / "holds.yaml"])
    div = decomp_check.subject_for_rule(opset, opset.rules_by_op["aten::div.Tensor_mode"])
    rows_div = cases["aten::div.Tensor_mode"]
    assert decomp_check.special_case_dtypes(div, rows_div) == ["float32", "float64", "int64"]
    for dtype in ("float32", "float64"):
        assert decomp_check.check_special_cases(div, rows_div, dtype) == []
    raises = replace(div, candidate=lambda self, other, *, rounding_mode=None: torch.zeros_like(self), implementation="silent")
    [problem] = decomp_check.check_special_cases(raises, rows_div, "int64")
    assert problem.endswith("expected RuntimeError matching 'ZeroDivisionError', the decomposition silent gives [0] (int64)")
    naive = replace(div, candidate=lambda self, other, *, rounding_mode=None: torch.floor(self / other), implementation="naive")
    [problem] = decomp_check.check_special_cases(naive, rows_div, "float32")
    assert problem.startswith("opset/special_cases/holds.yaml#div.Tensor_mode-infinity: aten::div.Tensor_mode row "
                              "'Floor division of an infinite numerator is NaN.' (float32)")
    assert "the decomposition naive gives [inf, -inf] (float32)" in problem
    expm1 = decomp_check.subject_for_rule(opset, opset.rules_by_op["aten::expm1"])
    assert decomp_check.check_special_cases(expm1, cases["aten::expm1"], "float64") == []
    naive = replace(expm1, candidate=lambda self: torch.exp(self) - 1, implementation="naive")
    [problem] = decomp_check.check_special_cases(naive, cases["aten::expm1"], "float64")
    assert "row 'expm1 of a tiny value is that value to full relative precision.'" in problem


def test_the_readmes_example_rows_hold(tmp_path):
    """The format's own example is data like any other: it must be true of torch."""
    import re

    readme = (HERE.parent / "opset" / "special_cases" / "README.md").read_text()
    example = tmp_path / "example.yaml"
    example.write_text(re.search(r"```yaml\n(.*?)```", readme, re.S).group(1))
    assert sum(map(len, spec_cases.load_special_cases(paths=[example]).values())) == 4
    assert check_mod.check(paths=[example]) == []


def test_a_filled_literal_writes_a_long_dim_in_a_line():
    tensor, strict = rows.tensor_literal({"shape": [65], "fill": "-0.0"}, "float32")
    assert tensor.shape == (65,) and tensor.signbit().all() and strict.all()
    ones, strict = rows.tensor_literal({"shape": [2, 3], "fill": 1}, "int64")
    assert ones.tolist() == [[1, 1, 1], [1, 1, 1]] and not strict.any()
    with pytest.raises(rows.CaseError, match="is no int8 tensor"):
        rows.tensor_literal({"shape": [2], "fill": 1000}, "int8")


def test_torch_too_lets_torch_give_an_allowed_result_where_its_answer_depends_on_the_build(tmp_path):
    # the sign of NaN is 0 in torch; a row expecting NaN that allows 0 holds for torch only with torch_too
    text = ("ops:\n  aten::sign:\n    - id: sign-nan\n      says: The sign of NaN is NaN or 0, depending on the build.\n      class: nan\n"
            "      inputs: {self: [nan]}\n      expect: [nan]\n      latitude:\n        allowed: [[0.0]]\n"
            "        reason: a kernel that compares with zero gives 0 for NaN\n")
    strict, lenient = tmp_path / "strict.yaml", tmp_path / "lenient.yaml"
    strict.write_text(text)
    lenient.write_text(text + "        torch_too: true\n")
    [finding] = check_mod.check(paths=[strict])
    assert str(finding.mark).startswith(f"{strict}:3:") and "torch gives [0.0]" in finding.message
    assert check_mod.check(paths=[lenient]) == []
