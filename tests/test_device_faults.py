"""Device truth, built and checked on CPU with simulated faults: a dtype the device has no kernel for
is a skip with the kernel's words, and a device fault is one crash after which a fresh worker goes on."""
from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from opspec.bridge import torch_ops
from opspec.checks import decomp_check
from opspec.cli import main
from opspec.conform.cases import Case
from opspec.conform.runner import CaseRunner, Settings
from opspec.spec import load
from opspec.testing import kernel_errors

HERE = Path(__file__).parent
CONFORMANCE = HERE.parent / "conformance"
NOT_FOR_INT = "\"addcmul_cpu_out\" not implemented for 'Int'"


def test_kernel_errors_are_told_apart():
    assert kernel_errors.missing_kernel(NotImplementedError(NOT_FOR_INT), "int32")
    assert kernel_errors.missing_kernel(RuntimeError(NOT_FOR_INT), "torch.int32")
    assert not kernel_errors.missing_kernel(RuntimeError(NOT_FOR_INT), "int64")  # another dtype's kernel
    assert not kernel_errors.missing_kernel(RuntimeError("size mismatch"), "int32")
    assert kernel_errors.is_device_fault(RuntimeError("CUDA error: an illegal memory access was encountered\nCUDA kernel errors..."))
    assert not kernel_errors.is_device_fault(RuntimeError("expected a non-empty tensor"))
    with pytest.raises(kernel_errors.DeviceFault, match="illegal memory access"):
        kernel_errors.screen(RuntimeError("CUDA error: an illegal memory access was encountered"))
    kernel_errors.screen(ValueError("just a refused call"))


def without_int_kernel(real):
    def kernel(*args, **kwargs):
        if any(isinstance(a, torch.Tensor) and a.dtype == torch.int32 for a in args):
            raise NotImplementedError(NOT_FOR_INT)
        return real(*args, **kwargs)
    return kernel


@pytest.fixture
def addcmul():
    opset = load.load_opset()
    return decomp_check.subject_for_rule(opset, opset.rules_by_op["aten::addcmul"])


def test_a_missing_kernel_is_a_skip_with_its_reason(addcmul, monkeypatch):
    real = torch_ops.resolve("aten::addcmul")
    monkeypatch.setattr(torch_ops, "resolve", lambda name: without_int_kernel(real) if name == "aten::addcmul" else real)
    decomp_check._accepted.clear()
    outcome = decomp_check.run(addcmul, dtypes=(torch.int32, torch.float32), max_examples=5, closure=False, rows=())  # the drawn calls only
    assert outcome.ok and outcome.examples > 0  # float32 was still checked
    assert "has no int32 implementation" in outcome.skipped and "not implemented for 'Int'" in outcome.skipped


def test_a_device_fault_in_the_kernel_is_not_a_refused_call(addcmul, monkeypatch):
    def faulted(*args, **kwargs):
        raise RuntimeError("CUDA error: an illegal memory access was encountered")

    monkeypatch.setattr(torch_ops, "resolve", lambda name: faulted)
    call = decomp_check.strategies.draw_examples(decomp_check.draw_calls(addcmul, torch.float32, "cpu"), 1)[0]
    with pytest.raises(kernel_errors.DeviceFault):
        decomp_check.check_values(addcmul, call, torch.float32)


def test_conform_skips_a_missing_kernel_and_crashes_on_a_device_fault(monkeypatch):
    from opspec.conform import cases

    runner = CaseRunner(Settings(backend="eager", max_examples=2, max_compiles=1))
    real = cases.make_program

    def simulated(op, args, kwargs, written):
        program = real(op, args, kwargs, written)

        def kernel(*tensors):
            if op == "aten::abs" and any(t.dtype == torch.int32 for t in tensors):
                raise NotImplementedError(NOT_FOR_INT)
            if op == "aten::neg":
                raise RuntimeError("CUDA error: an illegal memory access was encountered")
            return program(*tensors)
        return kernel

    monkeypatch.setattr(cases, "make_program", simulated)
    skipped = runner.run(Case("aten::abs", "int32", "cpu"))
    assert skipped["status"] == "skip" and "has no int32 implementation" in skipped["message"], skipped["message"]
    crashed = runner.run(Case("aten::neg", "float32", "cpu"))
    assert crashed["status"] == "crash" and crashed["message"].startswith("device fault"), crashed["message"]
    assert crashed["blame_stage"] == "device"
    assert runner.run(Case("aten::abs", "float32", "cpu"))["status"] == "pass"


def test_a_device_fault_costs_one_case_and_a_fresh_worker_runs_the_next(tmp_path, monkeypatch, capsys):
    monkeypatch.syspath_prepend(str(HERE))  # workers inherit sys.path
    report = tmp_path / "report.json"
    # not --isolate: a device fault still lets the run go on, on a fresh worker
    code = main(["conform", "--backend", "conform_faults:device_faulty", "--report", str(report), "--no-expectations",
                 "--ops", "acos,relu,sin", "--max-examples", "2", "--max-compiles", "1"])
    statuses = {r["op"]: (r["status"], r["message"]) for r in json.loads(report.read_text())["results"]}
    assert statuses["aten::acos"][0] == "crash" and "illegal memory access" in statuses["aten::acos"][1]
    # not poisoned: the right answer (computed by the eager kernels this backend hands back: a fallback)
    assert {statuses["aten::relu"][0], statuses["aten::sin"][0]} <= {"pass", "fallback"}, statuses
    assert code == 1


FAULTING_SUITE = '''
import pytest
from opspec.testing.kernel_errors import DeviceFault

@pytest.mark.parametrize("case", ["a-cuda", "b-cuda", "c-cpu", "d-cuda"], ids=lambda c: c)
def test_case(case):
    if case == "a-cuda":  # a fault that surfaces wrapped, as when a row's tensor literal cannot be made
        try:
            raise RuntimeError("CUDA error: device-side assert triggered")
        except RuntimeError as err:
            raise ValueError("[1.0, 2.0] is no float32 tensor") from err
'''


def test_a_device_fault_in_the_suite_skips_the_later_cases_on_that_device_naming_it(tmp_path):
    shutil.copy(CONFORMANCE / "conftest.py", tmp_path / "conftest.py")
    (tmp_path / "test_faulting.py").write_text(FAULTING_SUITE)
    done = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p", "no:xdist", "-rfs", "-q",
                           str(tmp_path)], capture_output=True, text=True, timeout=600, cwd=tmp_path)
    assert "1 failed, 1 passed, 2 skipped" in done.stdout, done.stdout[-2000:]
    assert "crash: device fault" in done.stdout
    skipped = [line for line in done.stdout.splitlines() if line.startswith("SKIPPED")]
    assert len(skipped) == 2 and all("test_case[a-cuda] poisoned cuda" in line for line in skipped)


def test_a_row_that_faults_the_device_is_a_finding_and_stops_the_process(monkeypatch):
    from opspec.checks import special_cases as check
    from opspec.spec import special_cases as spec_cases
    from opspec.testing import special_cases as rows

    cases = {op: found for op, found in spec_cases.load_special_cases().items() if op in ("aten::abs", "aten::neg")}
    real = rows.run
    faulting = cases["aten::neg"][0]

    def run(op, args, kwargs):
        if op is torch_ops.resolve("aten::neg") and len(heard) == len(cases["aten::abs"]):
            return RuntimeError("CUDA error: device-side assert triggered")
        return real(op, args, kwargs)

    heard = []
    monkeypatch.setattr(rows, "run", run)
    with pytest.raises(check.DeviceFaulted, match="faults the device"):
        check.run_cases(cases, None, "cpu", on_row=lambda key, status, finding, n: heard.append((key, status)))
    assert [s for _, s in heard] == ["holds"] * len(cases["aten::abs"]) + ["device fault"]
    assert heard[-1][0] == check.row_key(faulting)
    # a fresh process goes on after the rows already done
    rest = []
    check.run_cases(cases, None, "cpu", done=frozenset(k for k, _ in heard),
                    on_row=lambda key, status, finding, n: rest.append(key))
    assert rest == [check.row_key(c) for c in cases["aten::neg"][1:]]


def test_the_isolated_row_check_restarts_after_each_device_fault(monkeypatch):
    from opspec.checks import special_cases as check

    def line(key, status, finding=None):
        return json.dumps({"key": key, "status": status, "finding": finding, "checked": 1})

    children = iter([(3, [line("a", "holds"), line("b", "device fault", "x.yaml:2:1: b faults")]),
                     (3, [line("c", "device fault", "x.yaml:3:1: c faults")]),
                     (0, [line("d", "holds"), "a stray print"])])
    seen_done = []

    def fake_run(argv, **kwargs):
        seen_done.append(json.loads(Path(argv[argv.index("--child") + 1]).read_text()))
        assert kwargs["env"]["CUDA_LAUNCH_BLOCKING"] == "1"
        code, lines = next(children)
        return subprocess.CompletedProcess(argv, code, "\n".join(lines) + "\n", "")

    monkeypatch.setattr(check.subprocess, "run", fake_run)
    status, findings, checked, skipped = check.run_isolated([], "cuda")
    assert status == {"a": "holds", "b": "device fault", "c": "device fault", "d": "holds"}
    assert findings == ["x.yaml:2:1: b faults", "x.yaml:3:1: c faults"] and checked == 4
    assert seen_done == [[], ["a", "b"], ["a", "b", "c"]]


def device_kernel_asserting(cases):
    """A stand-in for a CUDA kernel: what the CPU kernel refuses, it answers with a device-side assert."""
    def accepts(example, refusals):
        try:
            example.program()(*example.fresh_inputs())
        except RuntimeError as err:
            raise kernel_errors.DeviceFault("device fault: RuntimeError: CUDA error: device-side assert triggered") from err
        return True
    return accepts


def test_a_call_the_cpu_kernel_refuses_is_never_sent_to_the_device(monkeypatch):
    from opspec.conform import cases
    from opspec.testing.strategies.call import Call

    op = load.load_opset().ops_by_name["aten::gather"]
    self = torch.tensor([[1, 2]])
    # what an int64 case draws among its edge values: an index past the end, and a valid one
    pool = [cases.Example.of(Call(op.name, (self, 1, torch.tensor([[index]])))) for index in (2, 1, -9223372036854775807)]
    monkeypatch.setattr(cases, "_eager_accepts", device_kernel_asserting(cases))
    with pytest.raises(kernel_errors.DeviceFault):  # unscreened, the refused index poisons the device
        cases._accepted(op, pool, "cpu")
    refusals: list[BaseException] = []
    accepted = cases._accepted(op, pool, "cuda", refusals)  # screened: the CPU kernel refuses it first
    assert [e.inputs[1].item() for e in accepted] == [1]
    assert len(refusals) == 2 and all("out of bounds" in str(err) for err in refusals), refusals


def test_a_cpu_kernel_missing_for_the_dtype_refuses_nothing(monkeypatch):
    from opspec.conform import cases

    opset = load.load_opset()
    call = cases.draw(opset.ops_by_name["aten::abs"], "float32", "cpu", max_examples=1, max_compiles=1, seed=0,
                      edges=False)[0]

    def program_without(message):
        def kernel(*tensors):
            raise RuntimeError(message)
        return lambda: kernel

    refusals: list[BaseException] = []
    monkeypatch.setattr(call, "program", program_without("\"abs_cpu\" not implemented for 'Half'"))
    assert cases._cpu_accepts(call, refusals) and not refusals  # the device may have the kernel the CPU lacks
    monkeypatch.setattr(call, "program", program_without("index 7 is out of bounds for dimension 0 with size 1"))
    assert not cases._cpu_accepts(call, refusals) and "out of bounds" in str(refusals[0])
