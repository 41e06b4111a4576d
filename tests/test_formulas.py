"""Executable formulas: a description's formula_check is evaluated against the kernel, a wrong one is refused at its line."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import torch

from opspec.checks import formulas
from opspec.checks.validate import validate
from opspec.spec import formulas as spec_formulas
from opspec.spec import load, special_cases as spec_cases
from opspec.spec.yamlio import Mark
from opspec.testing.strategies import Call

FIXTURES = Path(__file__).resolve().parent / "special_cases"


def _edit(opset: Path, old: str, new: str) -> tuple[Path, int]:
    path = opset / load.DESCRIPTIONS
    text = path.read_text()
    assert text.count(old) == 1, old
    path.write_text(text.replace(old, new))
    return path, text[: text.index(old)].count("\n") + 1


def test_the_opsets_formulas_agree_with_torch():
    root = Path(load.resources.opset_root())
    found, problems = spec_formulas.syntax_findings(root)
    assert problems == [] and {"aten::expm1", "aten::sign", "aten::log1p", "aten::reciprocal"} <= {f.op for f in found}
    assert formulas.validate_findings(root, load.load_opset()) == []


def test_a_wrong_formula_is_refused_at_its_line(opset_copy):
    path, line = _edit(opset_copy, "formula_check: 'torch.where(self > 0, 1.0, torch.where(self < 0, -1.0, 0.0))'",
                       "formula_check: 'torch.where(self >= 0, 1.0, -1.0)'")
    [sign] = [f for f in spec_formulas.syntax_findings(opset_copy)[0] if f.op == "aten::sign"]
    finding = formulas.check_formula(sign, load.load_opset(root=opset_copy).ops_by_name["aten::sign"].testing)
    assert str(finding.mark) == f"{path}:{line}:5"
    assert finding.message.startswith("aten::sign: formula_check disagrees with the kernel on self=")
    assert "the formula gives 1.0 (float64), the kernel 0.0 (float64)" in finding.message or \
           "the formula gives -1.0 (float64), the kernel 0.0 (float64)" in finding.message
    assert validate(opset_copy, use_torch=False).findings == []  # without torch only the syntax is checked


def test_nan_positions_must_agree():
    formula = spec_formulas.Formula("aten::sign", "torch.where(self > 0, 1.0, torch.where(self < 0, -1.0, self * 0))", Mark("d", 1, 1))
    problem = formulas.check_on(formula, Call("aten::sign", (torch.tensor([1.0, float("nan")], dtype=torch.float64),)))
    assert problem == "at index [1] the formula gives nan (float64), the kernel 0.0 (float64)"
    assert formulas.check_on(formula, Call("aten::sign", (torch.tensor([1.0, -2.0], dtype=torch.float64),))) is None


def test_special_case_inputs_join_the_drawn_ones():
    rows = spec_cases.load_special_cases(paths=[FIXTURES / "holds.yaml"])["aten::expm1"]
    calls = formulas._inputs("aten::expm1", None, rows)
    assert len(calls) == formulas.DRAWN + formulas.DRAWN_OTHER + 1  # float64, then the default float32
    assert {c.args[0].dtype for c in calls[:formulas.DRAWN]} == {torch.float64}
    assert {c.args[0].dtype for c in calls[formulas.DRAWN:-1]} == {torch.float32}
    assert calls[-1].args[0].tolist() == [1e-10, -1e-10]
    naive = spec_formulas.Formula("aten::expm1", "(torch.exp(self.float()) - 1).double()", Mark("d", 1, 1))  # 0 at 1e-10
    assert formulas.check_on(naive, calls[-1]) == "at index [0] the formula gives 0.0 (float64), the kernel 1.00000000005e-10 (float64)"


def test_formula_problems_without_torch(opset_copy):
    path, line = _edit(opset_copy, "formula_check: self != self", "formula_check: self !=")
    _, problems = spec_formulas.syntax_findings(opset_copy)
    assert [str(p) for p in problems] == [f"{path}:{line}:5: aten::isnan: formula_check is not a Python expression: invalid syntax"]
    _edit(opset_copy, "formula_check: self !=", "formula_check: self != self\n    formula_prose: NaN is the one value unequal to itself")
    _, problems = spec_formulas.syntax_findings(opset_copy)
    assert len(problems) == 1 and "should not be valid under" in problems[0].message


def test_a_verdict_is_the_same_in_a_fresh_process():
    """validate keeps verdicts, so a formula may be the first thing a process runs: the first tensor made from Python
    values is then made inside the formula, where torch imports a module of its own."""
    script = ("from opspec.checks import formulas; from opspec.spec import formulas as spec, resources; "
              "[full] = [f for f in spec.syntax_findings(resources.opset_root())[0] if f.op == 'aten::full']; "
              "print(formulas.drawn_verdict(full))")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert done.stdout.strip() == "None", done.stdout + done.stderr[-2000:]


def test_a_formula_is_held_to_complex_and_integer_dtypes():
    """A formula written for floats is refused where the op declares complex or integer dtypes it does not fit."""
    real_only = spec_formulas.Formula("aten::abs", "torch.where(self < 0, -self, self)", Mark("d", 1, 1))
    z = torch.tensor([3 + 4j], dtype=torch.complex64)
    assert formulas.check_on(real_only, Call("aten::abs", (z,))).startswith("the formula raises")
    modulus = spec_formulas.Formula("aten::abs", "torch.hypot(self.real, self.imag)", Mark("d", 1, 1))
    assert formulas.check_on(modulus, Call("aten::abs", (z,))) is None
    # an integer tensor with a fractional value: eager truncates value to 0, the plain formula does not
    naive = spec_formulas.Formula("aten::addcmul", "self + value * tensor1 * tensor2", Mark("d", 1, 1))
    ones, twos = torch.ones(2, dtype=torch.int64), torch.full((2,), 2, dtype=torch.int64)
    call = Call("aten::addcmul", (ones, twos, twos), {"value": 0.5})
    assert formulas.check_on(naive, call) == "at index [0] the formula gives 3 (int64), the kernel 1 (int64)"


def test_integer_calls_are_drawn_again_with_fractional_numbers():
    schema = torch.ops.aten.add.Scalar._schema
    call = Call("aten::add.Scalar", (torch.ones(2, dtype=torch.int8), 3), {"alpha": 1})
    assert [(c.args[1], c.kwargs["alpha"]) for c in formulas._fractional(call, schema)] == [(0.5, 0.5), (-2.5, -2.5)]
    float_only = Call("aten::isinf", (torch.ones(2, dtype=torch.int8),))
    assert formulas._fractional(float_only, torch.ops.aten.isinf.default._schema) == []
