"""One example judged against a backend, and the repro file that judges it again.

The runner and every repro share :func:`judge`, so replaying a repro gives the
verdict the run recorded. A repro is standalone Python: the exact inputs (values
written as literals and checked bit for bit, else as the tensor's bytes), the
program text the backend compiled, and a call of :func:`main`, which prints the
verdict and exits 0 only on ``pass``.
"""
from __future__ import annotations

import functools
import sys
from dataclasses import dataclass
from typing import Any, Callable

import torch

from opspec.conform import backends, case_accuracy, cases, evidence, properties, special_rows
from opspec.conform.backends import CompileError
from opspec.spec import load
from opspec.spec.errors import detail_lines, one_line
from opspec.testing import compare, contract_compare, strategies, subnormal_latitude
from opspec.testing.strategies import Call
from opspec.testing.strategies import op_traits
from opspec.testing.strategies.call import tensor_source
from opspec.testing.strategies.values import storage_view


def error_record(status: str, err: BaseException, message: str | None = None) -> dict[str, Any]:
    """A compile-error or run-error record: the error in one line, and the lines after it (the backend's own
    diagnostic, where its message says "see diagnostics") as ``diagnostic``."""
    record: dict[str, Any] = {"status": status, "message": one_line(err) if message is None else message}
    lines = detail_lines(err)
    if lines:
        record["diagnostic"] = lines
    return record


def judge(backend: backends.Backend, program: Callable[[], Callable], inputs: Callable[[], list], checker, tolerance,
          seed: int, *, float64: Callable[[list | None], Any], compiled: dict | None = None, key: Any = None,
          near_zero: bool = False):
    """The example's Comparison, or a finished record (status, message) when it did not pass. A candidate the
    strict comparison fails passes where the opset's subnormal policy explains the difference
    (:mod:`opspec.testing.subnormal_latitude`); ``float64(inputs)`` is the float64 run on other inputs (None: the
    example's own)."""
    compiled = {} if compiled is None else compiled
    built = compiled.get(key)
    if built is None:
        try:
            built = compiled[key] = backend.compile(program(), inputs())
        except CompileError as err:
            return error_record("compile-error", err, str(err))
        except Exception as err:  # noqa: BLE001 - the backend under test may fail any way
            return error_record("compile-error", err)
    torch.manual_seed(seed)
    reference = program()(*inputs())
    torch.manual_seed(seed)
    try:
        candidate = built(*inputs())
    except CompileError as err:
        return error_record("compile-error", err, str(err))
    except Exception as err:  # noqa: BLE001
        return error_record("run-error", err)
    def again(candidate, reference, on: list | None = None) -> compare.Comparison:
        if checker is not None:
            return checker(candidate, reference)
        return compare.compare(candidate, reference, float64=float64(on), tolerance=tolerance, near_zero=near_zero)

    def rerun(flushed_inputs: list) -> Any:
        torch.manual_seed(seed)
        return program()(*flushed_inputs)

    verdict = again(candidate, reference)
    if not verdict.ok:
        verdict = subnormal_latitude.rejudge(candidate, reference, inputs(), rerun, again) or verdict
    if not verdict.ok:
        record = {"status": "fail", "message": verdict.message}
        record.update(metrics([verdict]))
        if verdict.max_ulp is not None:  # judged by an accuracy contract
            record["max_ulp"] = verdict.max_ulp
        return record
    return verdict


def float64_reference(example: cases.Example, inputs: list | None = None) -> Any:
    """The float64 run fp16/bf16 outputs are measured against (on ``inputs`` in place of the example's own, e.g.
    with subnormals flushed); None where it does not apply or fails."""
    widened = compare.float64_dtypes(example.call.op in op_traits.SQUARES_INPUTS)
    if not any(t.dtype in widened for t in example.inputs):
        return None
    fresh = (lambda: [t.clone() for t in inputs]) if inputs is not None else example.fresh_inputs
    try:
        program = cases.make_program(example.call.op, compare.upcast(example.args, widened),
                                     compare.upcast(example.kwargs, widened), example.written)
        value = program(*compare.upcast(tuple(fresh()), widened))
        if not any(t.dtype in compare.LOW_PRECISION for t in example.inputs):  # an ill-conditioned float32 call
            return compare.float64_spread(program, tuple(fresh()), None, value)
        return value
    except Exception:  # no float64 kernel: compare falls back to (rtol, atol)
        return None


def judge_example(backend: backends.Backend, example: cases.Example, op, seed: int, *, compiled: dict | None = None,
                  program: Callable | None = None):
    """:func:`judge` for a drawn example, with the op's checker and tolerance."""
    tolerance = strategies.effective_hints(op.name, op.testing).tolerance
    near_zero = op.name in op_traits.ACCURATE_NEAR_ZERO
    checker = properties.CHECKERS.get(op.name)
    checked = (lambda candidate, reference: checker(candidate, reference, example)) if checker else None
    floating = next((t for t in example.inputs if t.is_floating_point()), None)
    contract = contract_compare.contract_for(op.name, cases.dtype_name(floating.dtype)) if floating is not None \
        else None
    operands = contract_compare.operands(contract, example.args, example.kwargs, example.inputs, example.written) \
        if checked is None else None
    if operands is not None:
        def checked(candidate, reference):  # ULPs against the contract inside its domain, eager's result outside
            return contract_compare.compare_with_contract(candidate, reference, operands, contract,
                                                          tolerance=tolerance, near_zero=near_zero)
    return judge(backend, (lambda: program) if program is not None else example.program, example.fresh_inputs,
                 checked, tolerance, seed, float64=lambda on=None: float64_reference(example, on), compiled=compiled,
                 key=example.key, near_zero=near_zero)


def metrics(verdicts: list[compare.Comparison]) -> dict[str, Any]:
    def worst(field: str):
        values = [getattr(v, field) for v in verdicts if getattr(v, field) is not None]
        return max(values) if values else None

    tolerance = next((v.tolerance for v in verdicts if v.tolerance is not None), None)
    flushed = sum(v.flushed for v in verdicts)  # subnormals only the opset's policy let pass: said, not hidden
    return {"max_abs_error": worst("max_abs_error"), "max_rel_error": worst("max_rel_error"),
            "kernel_error": worst("kernel_error"), "tolerance": list(tolerance) if tolerance else None} | \
        ({"flushed": flushed} if flushed else {})


# ---- the repro file ----

def exact_tensor_source(tensor: torch.Tensor) -> str:
    """Source that rebuilds ``tensor`` bit for bit: readable literals where they round-trip, else its bytes."""
    readable = tensor_source(tensor)
    if _same_bits(eval(readable, cases.program_globals()), tensor):  # noqa: S307 - source we just wrote
        return readable
    flat = _dense(storage_view(tensor.detach()))
    data = flat.view(torch.uint8).numpy().tobytes().hex() if flat.numel() else ""
    device = "" if tensor.device.type == "cpu" else f".to({str(tensor.device)!r})"
    return (f"torch.frombuffer(bytearray.fromhex({data!r}), dtype={tensor.dtype}).clone(){device}"
            f".as_strided({tuple(tensor.shape)}, {tuple(tensor.stride())}, {tensor.storage_offset()})")


def _same_bits(rebuilt: torch.Tensor, tensor: torch.Tensor) -> bool:
    if (rebuilt.dtype, rebuilt.shape, rebuilt.stride(), rebuilt.storage_offset(), rebuilt.device) != \
            (tensor.dtype, tensor.shape, tensor.stride(), tensor.storage_offset(), tensor.device):
        return False
    a, b = _dense(rebuilt.detach()), _dense(tensor.detach())
    return a.numel() == 0 or torch.equal(a.view(torch.uint8), b.view(torch.uint8))


def _dense(tensor: torch.Tensor) -> torch.Tensor:
    """A flat CPU copy with unit stride (``contiguous()`` keeps a size-1 dim's odd stride, which ``view`` refuses)."""
    return torch.empty(tensor.shape, dtype=tensor.dtype).copy_(tensor.cpu()).reshape(-1)


def source(example: cases.Example, *, case: cases.Case, backend: str, opset: str, seed: int, dynamic: bool,
           built_by: cases.Example | None = None, row: tuple[str, str, str] | None = None,
           accuracy: int | None = None) -> str:
    """The repro of one example: run it to print the verdict (exit 0 only on pass). ``built_by``: the earlier
    example the program was compiled for, when it is not this one (a compiled program serves a compile key);
    ``row``: (where, dtype, says) of the special-case row the example is, judged by that row on replay;
    ``accuracy``: the samples of the case's accuracy program, which the repro measures again (the example holds
    its worst inputs, for reading)."""
    described = {"op": case.op, "dtype": case.dtype, "device": case.device, "backend": backend, "opset": opset,
                 "seed": seed, "dynamic": dynamic}
    if row is not None:
        described["special_case"], described["row_dtype"], described["row_says"] = row
    if accuracy is not None:
        described["accuracy_samples"] = accuracy
    lines = [
        f"# opspec repro: {case.op} {case.dtype} {case.device} on backend {backend}, opset {opset}",
        "import torch",
        "",
        "from opspec.conform.cases import SYMBOLIC  # noqa: F401 - the symbolic ops' spelling",
        "from opspec.conform.replay import main",
        "",
        "nan, inf = float('nan'), float('inf')",
        f"CASE = {described!r}",
    ]
    if accuracy is not None:
        lines += ["# the accuracy program: the op over every value of a 16-bit dtype in the contract's domain, else",
                  "# a sample stratified by binade (CASE's seed and accuracy_samples), judged against the contract;",
                  "# the inputs below are the worst it found"]
    if built_by is not None and built_by is not example:
        lines += ["# the program was compiled for these inputs, then run on the ones below",
                  *_inputs(built_by, "c"), f"CASE['compiled_for'] = ({_call(built_by, 'c')})", ""]
    lines += [
        *_inputs(example, "t"),
        f"args, kwargs = {_call(example, 't')}",
        "",
        "",
        cases.program_source(example.call.op, example.args, example.kwargs, example.written).rstrip("\n"),
        "",
        "",
        "if __name__ == '__main__':",
        "    main(CASE, program, args, kwargs)",
    ]
    return "\n".join(lines) + "\n"


def _inputs(example: cases.Example, prefix: str) -> list[str]:
    return [f"{prefix}{i} = {exact_tensor_source(t)}" for i, t in enumerate(example.inputs)]


def _call(example: cases.Example, prefix: str) -> str:
    kwargs = "{" + ", ".join(f"{k!r}: {cases.literal(v, prefix)}" for k, v in example.kwargs.items()) + "}"
    return f"{cases.literal(example.args, prefix)}, {kwargs}"


@functools.lru_cache(maxsize=None)
def _opset(version: str):
    return load.load_opset(version)


@dataclass(frozen=True)
class Verdict:
    """A repro's verdict: the status the run would record for its program, why, and who computed the op."""
    status: str
    message: str
    executed: str

    @classmethod
    def failed(cls, failure: dict[str, Any], executed: str) -> Verdict:
        """From a failure as the run's judges return it (a ``status`` and a ``message``)."""
        return cls(failure["status"], failure["message"], executed)


def verdict(case: dict[str, Any], program: Callable, args, kwargs) -> Verdict:
    """The repro's program against its backend, judged as the run judged it (``case``: the repro's CASE)."""
    opset = _opset(case["opset"])
    op = opset.ops_by_name[case["op"]]
    backend = backends.resolve(case["backend"], opset, dynamic=case.get("dynamic", True))
    example = cases.Example.of(Call(case["op"], tuple(args), dict(kwargs)))
    torch._dynamo.reset()
    if "accuracy_samples" in case:
        return _accuracy_verdict(case, backend, program)
    if "special_case" in case:  # a special-case row: judged exactly, by the row, as the run judged it
        built_by = None
        if "compiled_for" in case:  # the row ran on a program compiled for an earlier example
            first_args, first_kwargs = case["compiled_for"]
            built_by = cases.Example.of(Call(case["op"], tuple(first_args), dict(first_kwargs)))
        with evidence.collecting() as seen:
            failed = special_rows.failure(backend, example, case["special_case"], case["row_dtype"],
                                          case.get("row_says"), built_by=built_by)
        found = backend.static_evidence() or evidence.judge(case["op"], seen)
        if failed is not None:
            return Verdict.failed(failed, found.executed)
        return Verdict(evidence.PASSING_STATUS[found.executed], "", found.executed)
    compiled: dict = {}
    with evidence.collecting() as seen:
        if "compiled_for" in case:  # build the program as the run did, for the example it was compiled for
            first_args, first_kwargs = case["compiled_for"]
            first = cases.Example.of(Call(case["op"], tuple(first_args), dict(first_kwargs)))
            judge_example(backend, first, op, case["seed"], compiled=compiled, program=program)
            compiled[example.key] = compiled.get(first.key)
        outcome = judge_example(backend, example, op, case["seed"], compiled=compiled, program=program)
    found = backend.static_evidence() or evidence.judge(case["op"], seen)
    if isinstance(outcome, dict):
        return Verdict.failed(outcome, found.executed)
    return Verdict(evidence.PASSING_STATUS[found.executed], outcome.message, found.executed)


def _accuracy_verdict(case: dict[str, Any], backend: backends.Backend, program: Callable) -> Verdict:
    """The case's accuracy program measured again, judged as the run judged it."""
    contract = contract_compare.contract_for(case["op"], case["dtype"])
    if contract is None:
        return Verdict("skip", f"{case['op']} has no accuracy contract in {case['dtype']}", "unknown")
    with evidence.collecting() as seen:
        judged = case_accuracy.judge(backend, contract, case["device"], case["seed"],
                                     samples=case["accuracy_samples"], program=program)
    found = backend.static_evidence() or evidence.judge(case["op"], seen)
    if judged.failed is not None:
        return Verdict.failed(judged.failed, found.executed)
    max_ulp = judged.section["max_ulp"]
    return Verdict(evidence.PASSING_STATUS[found.executed],
                   f"within the contract: {max_ulp} ULP at most over {judged.section['inputs']} inputs", found.executed)


def load_repro(path: str) -> dict[str, Any]:
    """A repro file's globals (CASE, program, args, kwargs), without running its verdict."""
    import runpy

    return runpy.run_path(path, run_name="opspec_repro")


def main(case: dict[str, Any], program: Callable, args, kwargs) -> None:
    result = verdict(case, program, args, kwargs)
    print(f"{result.status}: {case['op']} on {case['backend']} (computed by: {result.executed})"
          + (f"\n{result.message}" if result.message else ""))
    sys.exit(0 if result.status == "pass" else 1)
