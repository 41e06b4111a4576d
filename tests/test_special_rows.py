"""opspec conform holds a backend to its op's special-case rows: exactly, with the row's mark in the verdict."""
import pytest
import torch

from opspec.conform import special_rows
from opspec.conform.cases import Case
from opspec.spec import load
from opspec.spec.special_cases import SpecialCase
from opspec.spec.yamlio import Mark

CASE = Case("aten::sign", "float32", "cpu")


def _row(expect, line=3, op="aten::sign", inputs=("nan", -3.0, 2.0)):
    return SpecialCase(op=op, says="The sign of NaN is 0.", klass="nan", inputs={"self": list(inputs)},
                       expect=expect, mark=Mark("pointwise-unary.yaml", line, 1), has_expect=True, id=f"sign-nan-{line}")


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
    assert "pointwise-unary.yaml#sign-nan-3" in failed["message"] and "The sign of NaN is 0." in failed["message"]
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


def _fixed_to(shape):
    """A program built for inputs of one shape only, as an ahead-of-time runtime builds it."""
    def run(x):
        if tuple(x.shape) != shape:
            raise RuntimeError(f"inputs of shape {tuple(x.shape)}, built for {shape}")
        return torch.sign(x)
    return run


def test_a_row_run_on_a_program_built_for_an_earlier_example_replays_on_that_program(monkeypatch):
    """The row ran on the case's drawn program: its failure names that example, and replaying the row on a
    program of that example fails the same way, where one built for the row itself would hold."""
    from opspec.conform import cases
    from opspec.testing.strategies import Call

    monkeypatch.setattr(special_rows, "all_rows", lambda: {"aten::sign": (_row([0.0, -1.0, 1.0]),)})
    drawn = cases.Example.of(Call("aten::sign", (torch.tensor([5.0, -2.0]),), {}))
    backend = Backend()
    backend.compile = lambda program, inputs: _fixed_to(tuple(inputs[0].shape))
    failed, run, _ = special_rows.check(backend, _sign_op(), CASE, {drawn.key: _fixed_to((2,))}, budget=2,
                                        built_by={drawn.key: drawn})
    assert failed["status"] == "run-error" and "built for (2,)" in failed["message"]
    assert run.compiled_for is drawn
    place, says = special_rows.where(run.row), run.row.says
    assert special_rows.failure(backend, run.example, place, "float32", says, built_by=drawn)["status"] == "run-error"
    assert special_rows.failure(backend, run.example, place, "float32", says) is None


def test_the_row_whose_program_ran_the_op_farthest_from_the_target_is_the_cases_repro(monkeypatch):
    """A delegate takes the drawn program; the row's program runs in the runtime: that row is the repro."""
    from opspec.conform import evidence

    monkeypatch.setattr(special_rows, "all_rows", lambda: {"aten::sign": (_row([0.0, -1.0, 1.0]),)})

    class Delegate(Backend):
        def compile(self, program, inputs):  # takes only finite inputs, as a delegate refusing NaN would
            level = "target" if all(bool(t.isfinite().all()) for t in inputs) else "runtime"
            evidence.report(**{f"{level}_ops": ["aten::sign"]})
            return program

    with evidence.collecting():
        failed, run, _ = special_rows.check(Delegate(), _sign_op(), CASE, {}, budget=2)
    assert failed is None and run is not None and run.distance == evidence.DISTANCE["runtime"]
    assert run.example.inputs[0].isnan().any()


class _NanKeptSign(torch.utils._python_dispatch.TorchDispatchMode):
    """sign(NaN) left NaN, wherever sign runs in the program (the row says 0)."""

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        return torch.where(args[0].isnan(), args[0], out) if func is torch.ops.aten.sign.default else out


class _Dispatching(Backend):
    def compile(self, program, inputs):
        self.compiles += 1

        def run(*xs):
            with _NanKeptSign():
                return program(*xs)
        return run if self.kernel == "nan-kept" else program


def _ride(backend, rows, monkeypatch):
    from opspec.conform.cases import Example
    from opspec.testing.strategies import Call

    monkeypatch.setattr(special_rows, "all_rows", lambda: {"aten::sign": rows})
    ride = special_rows.Ride(backend, _sign_op(), CASE)
    drawn = Example.of(Call("aten::sign", (torch.tensor([5.0, -2.0]),), {}))
    run = ride.compile(drawn.program(), drawn.fresh_inputs())
    assert torch.equal(run(*drawn.fresh_inputs()), torch.tensor([1.0, -1.0]))  # the drawn call's own output
    return special_rows.check(backend, _sign_op(), CASE, {drawn.key: run}, budget=0, ride=ride,
                              built_by={drawn.key: drawn}), drawn


SQUARE = dict(line=9, inputs=[[-3.0, 2.0], [2.0, 0.0]])


def test_rows_in_the_cases_dtype_ride_on_its_drawn_program_and_cost_no_compile(monkeypatch):
    backend = _Dispatching()
    (failed, _, summary), _ = _ride(backend, (_row([0.0, -1.0, 1.0]), _row([[-1.0, 1.0], [1.0, 0.0]], **SQUARE)),
                                    monkeypatch)
    assert failed is None and summary["run"] == 2
    assert backend.compiles == 1  # the drawn program, holding both rows


def test_a_row_the_shared_program_gets_wrong_runs_again_without_the_others_and_fails_naming_the_row(monkeypatch):
    backend = _Dispatching("nan-kept")
    (failed, run, _), drawn = _ride(backend, (_row([[-1.0, 1.0], [1.0, 0.0]], **SQUARE), _row([0.0, -1.0, 1.0])),
                                    monkeypatch)
    assert failed["status"] == "fail" and "pointwise-unary.yaml#sign-nan-3" in failed["message"]
    # alone, on the drawn program its compile key matches (the repro rebuilds that program), no compile of its own
    assert run.row.mark.line == 3 and run.compiled_for is drawn and backend.compiles == 1


def test_a_batch_of_rows_that_errors_is_blamed_on_the_row_that_errors_alone(monkeypatch):
    """Pointwise rows share one call; when that call errors, each row runs alone, so the row named (and its repro)
    is one that errors by itself."""
    rows = (_row([0.0, -1.0, 1.0]), _row([0.0, -1.0, 1.0], line=9, inputs=("nan", -3.0, 5.0)))
    monkeypatch.setattr(special_rows, "all_rows", lambda: {"aten::sign": rows})

    def refuses_fives(x):
        if bool((x == 5.0).any()):
            raise RuntimeError("refused")
        return torch.sign(x)
    failed, run, _ = special_rows.check(Backend(refuses_fives), _sign_op(), CASE, {}, budget=2)
    assert failed["status"] == "run-error" and run.row.mark.line == 9 and run.example.inputs[0].numel() == 3
    assert special_rows.failure(Backend(refuses_fives), run.example, special_rows.where(run.row), "float32",
                                run.row.says)["status"] == "run-error"


def test_a_batch_that_errors_while_each_row_holds_alone_is_an_input_not_a_row(monkeypatch):
    rows = (_row([0.0, -1.0, 1.0]), _row([0.0, -1.0, 1.0], line=9, inputs=("nan", -3.0, 5.0)))
    monkeypatch.setattr(special_rows, "all_rows", lambda: {"aten::sign": rows})

    def refuses_six_elements(x):
        if x.numel() == 6:
            raise RuntimeError("refused")
        return torch.sign(x)
    failed, run, _ = special_rows.check(Backend(refuses_six_elements), _sign_op(), CASE, {}, budget=2)
    assert failed["status"] == "run-error" and "run as one call" in failed["message"]
    assert run.row is None and run.example.inputs[0].numel() == 6


@pytest.mark.parametrize("op", ["aten::sym_stride.int", "aten::sym_is_contiguous"])
def test_rows_that_cannot_share_a_program_still_run_beyond_the_compile_budget(op):
    """Shape queries cannot join the program the rows beyond the budget share: each runs alone, none is dropped."""
    from opspec.conform.cases import Case
    from opspec.conform.runner import CaseRunner, Settings

    record = CaseRunner(Settings(backend="aot_eager", max_examples=1, max_compiles=1)).run(Case(op, "float32", "cpu"))
    assert record["status"] == "pass", record["message"]
    assert record["special_cases"]["rows"] > 1
    assert record["special_cases"]["run"] == record["special_cases"]["rows"]


def test_a_row_runs_in_the_cases_of_its_own_dtypes_only(monkeypatch):
    """An integer row belongs to the integer cases: a float32 case never runs it, so a backend's float32 verdict
    never comes from an int64 program; the int64 case holds the backend to it."""
    row = SpecialCase(op="aten::mul.Tensor", says="Signed integer multiplication wraps around.", klass="integer",
                      inputs={"self": ["max"], "other": [2]}, dtypes=("int8", "int16", "int32", "int64"), expect=[-2],
                      mark=Mark("pointwise-binary.yaml", 7, 1), has_expect=True)
    monkeypatch.setattr(special_rows, "all_rows", lambda: {"aten::mul.Tensor": (row,)})
    op = _sign_op("aten::mul.Tensor")
    assert special_rows.rows_for(op, "float32", "cpu") == [] and special_rows.rows_for(op, "float64", "cpu") == []
    assert [run.dtype for run in special_rows.rows_for(op, "int64", "cpu")] == ["int64"]

    def through_double(a, b):  # exact while products fit a double's 53 bits: int8 wraps right, int64 does not
        if a.dtype == torch.int64:
            return (a.double() * b.double()).to(torch.int64)
        return a * b
    for dtype, fails in (("int64", True), ("int8", False), ("float32", False)):
        failed, run, _ = special_rows.check(Backend(through_double), op, Case("aten::mul.Tensor", dtype, "cpu"), {},
                                            budget=2)
        assert (failed is not None) == fails, dtype
        assert not fails or (failed["status"] == "fail" and run.dtype == "int64")


def test_a_backend_with_declared_evidence_pays_one_program_for_its_rows_at_most():
    """aot_eager's kernels are PyTorch's by design (declared): nothing its programs show is evidence, so no call
    runs again on its own to find who ran the op; the rows cost the program of the rows in other dtypes only."""
    from opspec.conform.runner import CaseRunner, Settings

    case = Case("aten::abs", "float32", "cpu")
    without = CaseRunner(Settings(backend="aot_eager", special_cases=False)).run(case)
    defaults = CaseRunner(Settings(backend="aot_eager")).run(case)
    assert without["status"] == defaults["status"] == "pass"
    assert defaults["special_cases"]["run"] == defaults["special_cases"]["rows"] > 0
    assert defaults["compiles"] <= without["compiles"] + 1


def test_rows_ride_on_the_cases_drawn_program_and_a_wrong_one_still_fails(monkeypatch):
    row = SpecialCase(op="aten::mul.Tensor", says="Signed integer multiplication wraps around.", klass="integer",
                      inputs={"self": ["max"], "other": [2]}, dtypes=("int8", "int64"), expect=[-2],
                      mark=Mark("pointwise-binary.yaml", 7, 1), has_expect=True)
    monkeypatch.setattr(special_rows, "all_rows", lambda: {"aten::mul.Tensor": (row,)})
    from opspec.conform import cases
    from opspec.testing.strategies import Call

    op, case = _sign_op("aten::mul.Tensor"), Case("aten::mul.Tensor", "int64", "cpu")

    def through_double(*tensors):  # every call of the graph: int64 products through float64
        outs = [(a.double() * b.double()).to(torch.int64) for a, b in zip(tensors[::2], tensors[1::2])]
        return tuple(outs) if len(outs) > 1 else outs[0]
    backend = Backend(through_double)
    ride = special_rows.Ride(backend, op, case)
    assert len(ride.units) == 1
    drawn = cases.Example.of(Call("aten::mul.Tensor", (torch.tensor([3]), torch.tensor([2])), {}))
    program = ride.compile(drawn.program(), drawn.fresh_inputs())
    assert torch.equal(program(*drawn.fresh_inputs()), torch.tensor([6]))
    failed, run, _ = special_rows.check(backend, op, case, {drawn.key: program}, budget=0, ride=ride,
                                        built_by={drawn.key: drawn})
    assert failed is not None and failed["status"] == "fail" and run.dtype == "int64"


def test_riding_rows_take_the_runs_dynamic_sizes(monkeypatch):
    """add.Tensor's bool row rides on the bool case's drawn program of a backend compiling with dynamic shapes; a
    backend wrong only with symbolic bool sizes (Inductor's bool sum with an alpha, torch 2.10+) fails it, where
    static sizes for riding rows would hide it."""
    from conform_faults import wrong_with_symbolic_bool_sizes

    from opspec.conform import cases
    from opspec.testing.strategies import Call

    class DeclaredDynamic(Backend):
        def static_evidence(self):
            return object()  # what its programs show is not read: every row rides

        def compile(self, program, inputs):
            self.compiles += 1
            torch._dynamo.reset()
            return torch.compile(program, backend=wrong_with_symbolic_bool_sizes, dynamic=True)

    op, case = _sign_op("aten::add.Tensor"), Case("aten::add.Tensor", "bool", "cpu")
    backend = DeclaredDynamic()
    ride = special_rows.Ride(backend, op, case)
    assert any(u[0].inputs[0].dtype == torch.bool for u in ride.units)  # the bool row rides
    drawn = cases.Example.of(Call("aten::add.Tensor", (torch.tensor([True, False]), torch.tensor([False, False])), {}))
    program = ride.compile(drawn.program(), drawn.fresh_inputs())
    assert torch.equal(program(*drawn.fresh_inputs()), torch.tensor([True, False]))
    failed, run, _ = special_rows.check(backend, op, case, {drawn.key: program}, budget=0, ride=ride,
                                        built_by={drawn.key: drawn})
    assert failed is not None and failed["status"] == "fail" and run.dtype == "bool", failed
