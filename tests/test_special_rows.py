"""opspec conform holds a backend to its op's special-case rows: exactly, with the row's mark in the verdict."""
import torch

from opspec.conform import special_rows
from opspec.conform.cases import Case
from opspec.spec import load
from opspec.spec.special_cases import SpecialCase
from opspec.spec.yamlio import Mark

CASE = Case("aten::sign", "float32", "cpu")


def _row(expect, line=3, op="aten::sign", inputs=("nan", -3.0, 2.0)):
    return SpecialCase(op=op, says="The sign of NaN is 0.", klass="nan", inputs={"self": list(inputs)},
                       expect=expect, mark=Mark("pointwise-unary.yaml", line, 1), has_expect=True)


class Backend:
    """Compiles to ``kernel`` (the program itself when None), counting compiles."""

    def __init__(self, kernel=None):
        self.kernel, self.compiles = kernel, 0

    def compile(self, program, inputs):
        self.compiles += 1
        return self.kernel or program


def _sign_op(name="aten::sign"):
    return load.load_opset(None).ops_by_name[name]


def test_a_row_the_backend_breaks_fails_the_case_naming_the_row(monkeypatch):
    monkeypatch.setattr(special_rows, "all_rows", lambda: {"aten::sign": (_row([0.0, -1.0, 1.0]),)})
    nan_kept = Backend(lambda x: torch.where(x.isnan(), x, torch.sign(x)))
    failed, run, _ = special_rows.check(nan_kept, _sign_op(), CASE, {}, budget=2)
    assert failed["status"] == "fail"
    assert "pointwise-unary.yaml:3" in failed["message"] and "The sign of NaN is 0." in failed["message"]
    assert run.row.mark.line == 3


def test_the_sign_of_a_zero_the_row_writes_is_held(monkeypatch):
    row = _row(["-0.0", "+0.0"], op="aten::neg", inputs=("+0.0", "-0.0"))
    monkeypatch.setattr(special_rows, "all_rows", lambda: {"aten::neg": (row,)})
    subtracted = Backend(lambda x: 0.0 - x)  # 0 - (+0) is +0: the sign is lost
    failed, _, _ = special_rows.check(subtracted, _sign_op("aten::neg"), Case("aten::neg", "float32", "cpu"), {}, budget=2)
    assert failed is not None and failed["status"] == "fail"


def test_a_right_backend_passes_and_pointwise_rows_share_one_program(monkeypatch):
    rows = (_row([0.0, -1.0, 1.0]), _row([0.0, -1.0, 1.0], line=9))
    monkeypatch.setattr(special_rows, "all_rows", lambda: {"aten::sign": rows})
    backend = Backend()
    failed, _, summary = special_rows.check(backend, _sign_op(), CASE, {}, budget=2)
    assert failed is None and summary["rows"] == 2 and summary["run"] == 2
    assert backend.compiles == 1


def test_a_row_torch_itself_fails_is_not_held_against_the_backend(monkeypatch):
    monkeypatch.setattr(special_rows, "all_rows", lambda: {"aten::sign": (_row(["nan", -1.0, 1.0]),)})
    failed, _, summary = special_rows.check(Backend(), _sign_op(), CASE, {}, budget=2)
    assert failed is None and summary["rows"] == 0



def test_rows_beyond_the_budget_run_together_and_the_wrong_one_alone(monkeypatch):
    """Two units (different ranks, so different programs) over budget share one program; the one it gets wrong
    runs alone for its verdict. Units hold tensors, so which were wrong is kept by identity, not compared."""
    from opspec.conform import evidence

    flat, square = _row([0.0, -1.0, 1.0]), _row([[-1.0, 1.0], [1.0, 0.0]], line=9, inputs=[[-3.0, 2.0], [2.0, 0.0]])
    monkeypatch.setattr(special_rows, "all_rows", lambda: {"aten::sign": (flat, square)})
    nan_kept = Backend(lambda *xs: tuple(torch.where(x.isnan(), x, torch.sign(x)) for x in xs) if len(xs) > 1
                       else torch.where(xs[0].isnan(), xs[0], torch.sign(xs[0])))
    with evidence.collecting():
        failed, run, _ = special_rows.check(nan_kept, _sign_op(), CASE, {}, budget=0)
    assert failed is not None and failed["status"] == "fail" and run.row.mark.line == 3
