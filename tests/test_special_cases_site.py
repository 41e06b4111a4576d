"""Op pages show their special cases and where each row was checked; worked examples print at a precision that
shows their point; the version matrix runs the rows on each torch."""
from __future__ import annotations

import html
import re
import json
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from opspec_fixtures import write_workspace

from opspec.bridge import torch_ops
from opspec.reports.site import examples, version_matrix
from opspec.reports.site.generate import generate
from opspec.spec.workspace import Workspace

pytestmark = pytest.mark.usefixtures("warm_validate_parts")  # validate reuses the bundled opset's parts

HERE = Path(__file__).resolve().parent
ROWS = """ops:
  aten::abs:
    - id: abs-signed-zero
      says: The absolute value of negative zero is positive zero.
      class: signed-zero
      inputs: {self: ['-0.0']}
      expect: ['+0.0']
    - id: abs-nan
      says: The absolute value of NaN is 1.
      class: nan
      inputs: {self: [nan]}
      expect: [1.0]
    - id: abs-extremes
      says: Only newer torch versions are claimed to do this.
      class: extremes
      inputs: {self: [-max]}
      expect: [max]
      torch: '>=9.0'
      reason: a row for a torch that does not exist yet, to show the range
    - id: abs-error
      says: A bool input is refused.
      class: error
      inputs: {self: {values: [true], dtype: bool}}
      raises: RuntimeError
"""


@pytest.fixture
def workspace(tmp_path):
    root = write_workspace(tmp_path / "repo")
    (root / "opset" / "special_cases").mkdir()
    (root / "opset" / "special_cases" / "pointwise-unary.yaml").write_text(ROWS)
    return root


def _table(page: str) -> list[str]:
    """The special-case table's rows as lines of cells (``| a | b |``, each cell's HTML as written, entities undone)."""
    section = page.split("## Special cases", 1)[1].split("## Schema", 1)[0]
    return ["| " + " | ".join(html.unescape(cell) for cell in re.findall(r"<t[hd]>(.*?)</t[hd]>", row)) + " |"
            for row in re.findall(r"<tr>(.*?)</tr>", section)]


def test_an_op_page_shows_its_rows_and_where_each_was_checked(workspace):
    matrix = workspace / "benchmarks" / "results" / "version_matrix.json"
    matrix.parent.mkdir(parents=True)
    matrix.write_text(json.dumps({"versions": {
        "2.11.0": {"torch": "2.11.0+cpu", "special_cases": {"ok": True, "summary": "exit 0", "held": [
            "aten::abs: The absolute value of negative zero is positive zero."]}},
        "2.15.0": {"torch": "2.15.0", "special_cases": {"ok": True, "summary": "exit 0", "held": [
            "aten::abs: The absolute value of negative zero is positive zero.", "aten::abs: A bool input is refused."]}},
        "2.11.0 cuda": {"torch": "2.11.0+cu130", "device": "cuda", "device_name": "a GPU", "special_cases": {
            "ok": True, "summary": "exit 0", "held": ["aten::abs: A bool input is refused."]}},
    }}))
    page = generate(Workspace(workspace)).pages["ops/aten-abs.md"]
    header, zero, nan, newer, error = _table(page)
    assert header == "| Class | Claim | Inputs | Result | Latitude | Checked on | Backends |"
    installed = torch_ops.version()
    assert "<code>self=[-0.0]</code> | <code>[+0.0]</code> | — |" in zero
    assert f"torch 2.11.0, 2.15.0 (version matrix); torch {installed} (when this page was built)" in zero
    assert f"FALSE on torch {installed}" in nan  # the build runs the rows: a false row shows as false
    assert f"not on torch {installed}" in newer and "holds for torch >=9.0: a row for a torch" in newer
    assert "raises RuntimeError" in error and "torch 2.11.0 (cuda), 2.15.0 (version matrix)" in error
    # Without running the rows (no torch at build), a row the matrix never ran is unchecked prose.
    page = generate(Workspace(workspace), run_examples=False).pages["ops/aten-abs.md"]
    assert "not checked yet (unchecked prose)" in _table(page)[2]


def test_an_op_without_rows_says_its_edges_are_unchecked(workspace):
    page = generate(Workspace(workspace), run_examples=False).pages["ops/aten-mul.Tensor.md"]
    assert "No special cases recorded yet: its edge semantics are unchecked." in page


def test_formulas_are_labelled_checked_or_prose(workspace):
    (workspace / "opset" / "descriptions.yaml").write_text("""ops:
  aten::abs:
    description: The absolute value of each element.
    formula: out_i = |self_i|
    formula_check: self.abs()
    example: torch.ops.aten.abs.default(torch.tensor([-1.0]))
  aten::mul.Tensor:
    description: The product of two tensors, elementwise.
    formula: out_i = self_i * other_i
    formula_prose: the product is the op itself, no other expression says more
    example: torch.ops.aten.mul.Tensor(torch.tensor([2.0]), torch.tensor([3.0]))
  aten::add.Tensor:
    description: The sum of two tensors, elementwise.
    formula: out_i = self_i + alpha * other_i
    example: torch.ops.aten.add.Tensor(torch.tensor([2.0]), torch.tensor([3.0]))
""")
    pages = generate(Workspace(workspace), run_examples=False).pages
    assert "*Checked against torch* (`opspec validate` evaluates <code>self.abs()</code>" in pages["ops/aten-abs.md"]
    assert "*Unchecked prose:* the product is the op itself" in pages["ops/aten-mul.Tensor.md"]
    assert "*Unchecked prose:* this formula has no executable form yet." in pages["ops/aten-add.Tensor.md"]
    assert "*The description is prose, not checked against torch" in pages["ops/aten-abs.md"]


@pytest.mark.parametrize(("code", "printed"), [
    ("torch.ops.aten.expm1.default(torch.tensor([1e-10, 0.0, 1.0]))", "tensor([1.0000e-10, 0.0000e+00, 1.7183e+00])"),
    ("torch.ops.aten.abs.default(torch.tensor([-1.5, 2.0]))", "tensor([1.5000, 2.0000])"),
    ("torch.ops.aten.abs.default(torch.tensor([0.0125, 2.0]))", "tensor([0.012500, 2.000000])"),
    ("torch.ops.aten.abs.default(torch.tensor([-3, 2]))", "tensor([3, 2])"),
])
def test_examples_print_at_the_precision_that_shows_their_point(code, printed):
    op = "aten::" + code.split("aten.")[1].split("(")[0].replace(".default", "")
    assert examples.run(op, code).output == printed


def test_the_version_matrix_step_keeps_each_rows_status():
    sys.path.insert(0, str(HERE.parent / "benchmarks"))
    try:
        import version_matrix as matrix_script
    finally:
        sys.path.pop(0)
    assert "special_cases" in matrix_script.STEPS and "special_cases" in version_matrix.STEPS
    done = subprocess.run([sys.executable, "-m", "opspec.checks.special_cases", "--json", str(HERE / "special_cases" / "false_row.yaml")],
                          capture_output=True, text=True, env={"PYTHONPATH": str(HERE.parent / "src"), "PATH": "/usr/bin:/bin"})
    result = matrix_script.special_cases_result(done)
    assert result["ok"] is False and result["exit"] == 1
    assert result["held"] == ["aten::sign: The sign of NaN is 0, not NaN."]
    assert result["false"] == ["aten::sign: The sign of NaN is NaN."]
    assert result["summary"] == "exit 1, 1 of 2 rows hold, 1 false"
    assert result["torch"] == torch.__version__ and len(result["findings"]) == 1
    # in child processes (as on a GPU, where a row may fault the device): the same statuses
    isolated = subprocess.run([sys.executable, "-m", "opspec.checks.special_cases", "--json", "--isolate",
                               str(HERE / "special_cases" / "false_row.yaml")],
                              capture_output=True, text=True, env={"PYTHONPATH": str(HERE.parent / "src"), "PATH": "/usr/bin:/bin"})
    assert matrix_script.special_cases_result(isolated) == result
    unusable = matrix_script.special_cases_result(subprocess.CompletedProcess([], 2, "x.yaml:3:7: bad row\n", ""))
    assert unusable["ok"] is False and unusable["findings"] == ["x.yaml:3:7: bad row"]


def test_each_published_report_says_its_verdict_on_a_row():
    from opspec.reports.site import results as results_mod
    from opspec.reports.site import special_cases as special_mod
    from opspec.spec import special_cases as spec_cases

    def record(report, status, **fields):
        return results_mod.Record(backend=report, op="aten::abs", dtype="float32", device="cpu", status=status,
                                  report=report, **fields)

    nan_row = spec_cases.SpecialCase("aten::abs", "The absolute value of NaN is NaN.", "nan", {"self": ["nan"]})
    records = [record("inductor-cpu", "pass", rows_held=True), record("openvino-cpu", "fallback", rows_held=True),
               record("wrong-cpu", "fail", failed_row="The absolute value of NaN is NaN."),
               record("older-cpu", "pass")]  # ran no rows: says nothing
    assert special_mod.backend_verdicts(nan_row, records) == "fails on wrong-cpu: fail; held on inductor-cpu, openvino-cpu"
    other = spec_cases.SpecialCase("aten::abs", "Another row.", "nan", {"self": ["nan"]})
    assert special_mod.backend_verdicts(other, records[-1:]) == "—"


def test_rows_held_only_for_a_right_answer_that_ran_every_row():
    from opspec.reports.site.results import _rows_held
    from opspec.results.model import CaseRecord

    def held(**record) -> bool:
        return _rows_held(CaseRecord.from_dict({"op": "aten::abs", "dtype": "float32", "device": "cpu", **record}))

    assert held(status="pass", special_cases={"rows": 3, "run": 3})
    assert held(status="xfail", outcome="undelegated", special_cases={"rows": 2, "run": 2})
    assert not held(status="pass", special_cases={"rows": 3, "run": 2})
    assert not held(status="fail", special_cases={"rows": 3, "run": 3})
    assert not held(status="pass")
