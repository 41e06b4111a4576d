"""Checking a decomposition against the eager kernel: the runner behind the generated
conformance tests and ``opspec check-decomp``.

A *subject* is one (op, candidate implementation) pair with what it promises: the
core ops it may produce. Three checks, each on calls drawn by the shared strategy
layer and judged by the shared comparison rule:
- values: candidate output vs kernel output (fp16/bf16 measured against float64); where the op has an
  accuracy contract in the dtype (``opset/accuracy.yaml``), ULPs against the correctly rounded result instead;
- closure: the candidate, traced with the opset's table, produces only declared,
  core ops;
- random ops: properties and a two-sample test instead of value equality;
- special cases: on each row of the op's table (``opset/special_cases``) the candidate
  gives the row's exact result, as torch's kernel does.
"""
from __future__ import annotations

import textwrap
from dataclasses import dataclass, field, replace
from typing import Any, Callable

import torch
from hypothesis import HealthCheck, Phase, given, reject, settings
from hypothesis import seed as hypothesis_seed
from hypothesis import strategies as st
from hypothesis.errors import HypothesisException

from opspec.bridge import decomp_table, torch_ops, versions
from opspec.spec import references
from opspec.spec.model import DecompositionRule, Opset, TestingHints
from opspec.spec.special_cases import OUT_OF_CONTRACT, SpecialCase, load_special_cases
from opspec.testing import compare, contract_compare, kernel_errors, native_warnings, random_check, scalar_path, strategies
from opspec.testing import row_paths, special_cases as special
from opspec.testing.strategies import Call
from opspec.testing.strategies import op_traits
from opspec.testing.strategies.seed_only import without_local_constants
from opspec.testing.strategies.call import Repro


@dataclass(frozen=True)
class Subject:
    op: str
    schema: str
    candidate: Callable
    implementation: str  # how the candidate was named, for messages and repros
    hints: TestingHints
    targets: tuple[str, ...] | None  # None: the candidate declares nothing (checked against core only)
    core: frozenset[str]
    table: dict = field(repr=False, default_factory=dict)  # OpOverload -> fn, for closure tracing
    random: bool = False
    unspecified_values: bool = False  # empty-like ops: the memory is garbage, only metadata is comparable
    opset_version: str | None = None  # whose table closure is traced with, for repros

    @property
    def kernel(self):
        return torch_ops.resolve(self.op)


def subject_for_rule(opset: Opset, rule: DecompositionRule) -> Subject:
    subject = _subject(opset, rule.op, decomp_table.implementation(rule), rule.implementation, rule.testing,
                       versions.targets(rule), rule.random)
    return replace(subject, unspecified_values=rule.unspecified_values)


def subject_for_candidate(opset: Opset, op: str, reference: str, hints: TestingHints | None = None) -> Subject:
    """A candidate decomposition named ``pkg.module:function`` for any overload: aten, or a
    backend's fused op whose pattern is its decomposition (imported first, so the op is registered)."""
    rule = opset.rules_by_op.get(op)
    core_op = opset.ops_by_name.get(op)
    hints = hints or (rule.testing if rule else core_op.testing if core_op else TestingHints())
    is_random = bool(rule and rule.random)
    return _subject(opset, op, references.load_callable(reference), reference, hints, None, is_random)


def _subject(opset, op, candidate, implementation, hints, targets, is_random) -> Subject:
    table = decomp_table.table_by_name(opset)
    table[op] = candidate
    return Subject(
        op=op,
        schema=torch_ops.schema_of(op),
        candidate=candidate,
        implementation=implementation,
        hints=hints,
        targets=targets,
        core=opset.core_names(),
        table=decomp_table.as_torch_table(table),
        random=is_random,
        opset_version=opset.version,
    )


def dtypes_for(subject: Subject, requested: list[str] | None = None) -> tuple[torch.dtype, ...]:
    if requested:
        return tuple(strategies.dtype_of(name) for name in requested)
    return strategies.dtypes_under_test(subject.op, subject.hints)


# ---- failures ----

@dataclass
class Counterexample:
    subject: Subject
    call: Call
    dtype: torch.dtype
    problem: str
    kernel_output: Any = None
    candidate_output: Any = None
    comparison: compare.Comparison | None = None
    produced: tuple[str, ...] = ()  # closure failures: every op the traced decomposition produced

    def render(self) -> str:
        lines = [f"{self.subject.op} decomposed by {self.subject.implementation} ({self.dtype}): {self.problem}"]
        lines.append("inputs (shrunk):")
        lines += [f"  {_short(value)}" for value in (*self.call.args, *(f"{k}={_short(v)}" for k, v in self.call.kwargs.items()))]
        if self.kernel_output is not None or self.candidate_output is not None:
            lines.append(f"kernel output:        {_short(self.kernel_output)}")
            lines.append(f"decomposition output: {_short(self.candidate_output)}")
        if self.produced:
            lines.append(f"produced ops:         {', '.join(self.produced)}")
            lines.append(f"declared targets:     {', '.join(self.subject.targets) if self.subject.targets is not None else '(none: core only)'}")
        # errors mean something only where the values were compared by tolerance (not NaN/inf positions)
        if self.comparison is not None and self.comparison.max_abs_error is not None and self.comparison.tolerance is not None:
            c = self.comparison
            detail = f"max abs error {c.max_abs_error:.3g}, max rel error {c.max_rel_error:.3g}"
            if c.kernel_error is not None:
                detail += f"; kernel's own error vs float64 {c.kernel_error:.3g}"
            if c.tolerance is not None:
                detail += f"; tolerance (rtol, atol) = {c.tolerance}"
            lines.append(detail)
        lines.append("repro:")
        lines.append(textwrap.indent(self.repro(), "    "))
        return "\n".join(lines)

    def repro(self) -> str:
        """Standalone source, runnable as printed: it fails the way the check failed."""
        source = self.call.repro().replace("result = ", "expected = ").replace("print(result)\n", "").rstrip("\n")
        source = source.removeprefix("import torch\n").lstrip("\n")
        call_line = next(line for line in source.splitlines() if line.startswith("expected = "))
        arguments = call_line[call_line.index("(") :]
        if self.subject.implementation == "torch":
            candidate = f"from torch._decomp import core_aten_decompositions, decomposition_table\nop = {_op_expr(self.subject.op)}\ndecomposition = core_aten_decompositions().get(op) or decomposition_table[op]"
        else:
            module, function = references.split(self.subject.implementation)
            candidate = f"from {module} import {function} as decomposition"
        if self.produced:  # a closure failure: trace as the check does and show what comes out
            writer = Repro(self.call)
            writer.source()
            names = ", ".join(line.split(" = ", 1)[0] for line in writer.lines)
            undeclared = (f"undeclared = sorted(set(produced) - set({sorted(self.subject.targets)!r}))\n"
                          if self.subject.targets is not None else "undeclared = []\n")
            return (
                f"import torch\nfrom opspec.bridge import decomp_table, torch_ops\nfrom opspec.spec import load\n"
                f"{candidate}\n{source}\n\n"
                f"def traced({names}):\n    return decomposition{arguments}\n\n"
                f"opset = load.load_opset({self.subject.opset_version!r})\ntable = decomp_table.table_by_name(opset)\n"
                f"table[{self.subject.op!r}] = decomposition\n"
                f"produced = sorted(torch_ops.trace_ops(traced, ({names}{',' if names else ''}), {{}}, decomp_table.as_torch_table(table)))\n"
                f"print('produced ops:', ', '.join(produced))\n"
                f"not_core = sorted(set(produced) - opset.core_names())\n{undeclared}"
                f"assert not not_core and not undeclared, f'not core: {{not_core}}; not declared by the rule: {{undeclared}}'\n"
            )
        if self.comparison is not None and self.comparison.max_ulp is not None:  # judged by the op's contract
            dtype = str(self.dtype).removeprefix("torch.")
            return (f"import torch\nfrom opspec.testing import contract_compare\n{candidate}\n{source}\n"
                    f"actual = decomposition{arguments}\n\n"
                    f"def called(*args, **kwargs):\n    return args, kwargs\n\n"
                    f"contract = contract_compare.contract_for({self.subject.op!r}, {dtype!r})\n"
                    f"operands = contract_compare.operands_of_call(contract, *called{arguments})\n"
                    f"verdict = contract_compare.compare_with_contract(actual, expected, operands, contract)\n"
                    f"assert verdict.ok, verdict.message\n")
        return (f"import torch\n{candidate}\n{source}\nactual = decomposition{arguments}\n"
                f"torch.testing.assert_close(actual, expected, equal_nan=True)\n")


def _op_expr(op: str) -> str:
    namespace, base, overload = torch_ops.split_name(op)
    return f"torch.ops.{namespace}.{base}.{overload or 'default'}"


def _short(value: Any, limit: int = 300) -> str:
    text = repr(value).replace("\n", " ")
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


class DecompositionMismatch(AssertionError):
    def __init__(self, counterexample: Counterexample):
        super().__init__(counterexample.render())
        self.counterexample = counterexample


# ---- the checks on one call ----

class KernelMissing(Exception):
    """The device has no kernel for the case's dtype: the case is a skip, with the kernel's own words."""


_accepted: dict[tuple[str, str, str], int] = {}  # (op, dtype, device) -> calls the eager kernel accepted


def run_kernel(subject: Subject, call: Call, dtype: torch.dtype) -> Any:
    """The eager kernel on ``call``: its output, or reject() when it refuses the call.

    A device fault is raised as kernel_errors.DeviceFault (the process is poisoned); a
    kernel that says it is not implemented for this dtype, before it accepted any call of
    the case, raises KernelMissing instead of leaving hypothesis to search in vain.
    """
    device = _device_of(call)
    key = (subject.op, str(dtype), device)
    try:
        output = call.run(subject.kernel)
    except Exception as err:
        kernel_errors.screen(err)
        reason = kernel_errors.missing_kernel(err, str(dtype))
        if reason and not _accepted.get(key):
            raise KernelMissing(f"the {device} kernel of {subject.op} has no {str(dtype).removeprefix('torch.')} "
                                f"implementation: {reason}") from None
        reject()
    _accepted[key] = _accepted.get(key, 0) + 1
    return output


def _device_of(call: Call) -> str:
    from opspec.testing.strategies.call import map_tensors

    found: list[str] = []
    map_tensors(lambda t: found.append(t.device.type), (call.args, call.kwargs))
    return found[0] if found else "cpu"

def check_values(subject: Subject, call: Call, dtype: torch.dtype) -> compare.Comparison:
    """Run kernel and candidate on copies of ``call``; raise DecompositionMismatch when they differ."""
    expected = run_kernel(subject, call, dtype)  # a refused call is not a valid call: draw another
    try:
        actual = call.run(subject.candidate)
    except Exception as err:
        raise DecompositionMismatch(Counterexample(subject, call, dtype, f"decomposition raised {type(err).__name__}: {err}", expected)) from None
    if subject.unspecified_values:
        problem = _metadata_mismatch(actual, expected)
        if problem:
            raise DecompositionMismatch(Counterexample(subject, call, dtype, problem, expected, actual))
        return compare.Comparison(ok=True, message="metadata matches (values unspecified)")
    near_zero = subject.op in op_traits.ACCURATE_NEAR_ZERO
    verdict = _against_the_contract(subject, call, dtype, actual, expected, near_zero)
    if verdict is None:
        verdict = _against_the_kernel(subject, call, dtype, actual, expected, near_zero)
    if not verdict.ok:
        raise DecompositionMismatch(Counterexample(subject, call, dtype, verdict.message, expected, actual, verdict))
    return verdict


def _against_the_contract(subject: Subject, call: Call, dtype: torch.dtype, actual: Any, expected: Any,
                          near_zero: bool) -> compare.Comparison | None:
    """ULPs against the correctly rounded result where the op has an accuracy contract in ``dtype`` that can judge
    the call: the decomposition is held to what the opset promises of the op, not to the kernel's (rtol, atol)
    neighbourhood; None where there is no such contract."""
    contract = contract_compare.contract_for(subject.op, str(dtype).removeprefix("torch."))
    operands = contract_compare.operands_of_call(contract, call.args, call.kwargs)
    if operands is None:
        return None
    verdict = contract_compare.compare_with_contract(actual, expected, operands, contract,
                                                     tolerance=subject.hints.tolerance, near_zero=near_zero)
    scalar = scalar_path.elementwise(call.copy()) if not verdict.ok and verdict.outside else None
    if scalar is not None:  # outside the domain the kernel decides, by its vectorised path or its own scalar one
        rtol, atol = compare.tolerance_for(expected.dtype, subject.hints.tolerance)
        accepted = scalar_path.accepting(actual, expected, scalar, rtol, atol)
        verdict = contract_compare.compare_with_contract(actual, accepted, operands, contract,
                                                         tolerance=subject.hints.tolerance, near_zero=near_zero)
    return verdict


def _against_the_kernel(subject: Subject, call: Call, dtype: torch.dtype, actual: Any, expected: Any,
                        near_zero: bool) -> compare.Comparison:
    """The comparison rule against the eager kernel (low precision measured against float64)."""
    reference64 = None
    widened = compare.float64_dtypes(subject.op in op_traits.SQUARES_INPUTS)
    if dtype in widened:
        try:
            reference64 = compare.float64_run(subject.kernel, call.copy().args, call.copy().kwargs, widened)
            if dtype not in compare.LOW_PRECISION:  # an ill-conditioned float32 call: how far a few ulps move it
                reference64 = compare.float64_spread(subject.kernel, call.copy().args, call.copy().kwargs, reference64)
        except Exception:
            reference64 = None  # the kernel has no float64 path here; compare falls back to (rtol, atol)
    verdict = compare.compare(actual, expected, float64=reference64, tolerance=subject.hints.tolerance,
                              near_zero=near_zero)
    if not verdict.ok:
        verdict = _against_the_scalar_path(subject, call, actual, expected, reference64, near_zero) or verdict
    return verdict


def _against_the_scalar_path(subject: Subject, call: Call, actual: Any, expected: Any, reference64: Any,
                             near_zero: bool) -> compare.Comparison | None:
    """The verdict again where a pointwise kernel's vectorised path and its own scalar path disagree, each element
    of the candidate measured against whichever of the two it matches; None where there is no scalar path."""
    scalar = scalar_path.elementwise(call.copy())
    if scalar is None or not isinstance(expected, torch.Tensor):
        return None
    rtol, atol = compare.tolerance_for(expected.dtype, subject.hints.tolerance)
    accepted = scalar_path.accepting(actual, expected, scalar, rtol, atol)
    return compare.compare(actual, accepted, float64=reference64, tolerance=subject.hints.tolerance,
                           near_zero=near_zero)


def _metadata_mismatch(actual: Any, expected: Any) -> str:
    """Shape, dtype, device and strides: all an uninitialised output promises."""
    for what in ("shape", "dtype", "device", "stride"):
        got, want = getattr(actual, what), getattr(expected, what)
        got, want = (got(), want()) if callable(got) else (got, want)
        if got != want:
            return f"{what} differs: decomposition {got}, kernel {want}"
    return ""


def check_closure(subject: Subject, call: Call, dtype: torch.dtype) -> set[str]:
    """Trace the candidate with the opset's table; every op produced must be declared and core."""
    run_kernel(subject, call, dtype)
    fresh = call.copy()
    try:
        produced = set(torch_ops.trace_ops(subject.candidate, fresh.args, fresh.kwargs, subject.table))
    except Exception as err:
        raise DecompositionMismatch(Counterexample(subject, call, dtype, f"tracing the decomposition failed: {type(err).__name__}: {err}")) from None
    outside_core = sorted(produced - subject.core)
    undeclared = sorted(produced - set(subject.targets)) if subject.targets is not None else []
    if outside_core or undeclared:
        parts = []
        if outside_core:
            parts.append(f"produces non-core ops {', '.join(outside_core)}")
        if undeclared:
            parts.append(f"produces ops its rule does not declare: {', '.join(undeclared)}")
        raise DecompositionMismatch(Counterexample(subject, call, dtype, "; ".join(parts), produced=tuple(sorted(produced))))
    return produced


def check_random(subject: Subject, call: Call, dtype: torch.dtype, seed: int = 0) -> random_check.RandomVerdict:
    run_kernel(subject, call, dtype)
    verdict = random_check.check_random(subject.kernel, subject.candidate, call.args, call.kwargs, lambda a: Call(call.op, a).copy().args, seed)
    if not verdict.ok:
        raise DecompositionMismatch(Counterexample(subject, call, dtype, verdict.message))
    return verdict


def special_case_dtypes(subject: Subject, cases: tuple[SpecialCase, ...]) -> list[str]:
    """Every dtype some row of ``cases`` is checked in, in a stable order."""
    hinted = dtypes_for(subject)
    found: list[str] = []
    for case in cases:
        found += [d for d in special.case_dtypes(case, hinted) if d not in found]
    return found


def check_special_cases(subject: Subject, cases: tuple[SpecialCase, ...], dtype: str, device: str = "cpu",
                        *, any_refusal: bool = False) -> list[str]:
    """One line per row the candidate breaks in ``dtype`` (exactly, no latitude: as torch is judged).

    With ``any_refusal``, a row that states an error holds when the candidate raises any exception: its
    values are what a decomposition is checked for, the wording of a refusal only by the suite's own test.
    A row torch's own kernel breaks is the data's fault, and says so: the decomposition is not blamed for it.
    """
    problems = []
    hinted = dtypes_for(subject)
    for case in cases:
        if dtype not in special.case_dtypes(case, hinted) or not special.applies(case, torch_ops.version(), device) \
                or case.klass == OUT_OF_CONTRACT:  # any outcome conforms, and the kernel may corrupt the heap
            continue
        args, kwargs = special.materialize(case, subject.kernel, dtype, device)
        kernel = special.judge(case, dtype, special.run(subject.kernel, args, kwargs), latitude=False)
        if not kernel.ok:
            problems.append(f"{case.cite}: row '{case.says}' is false for torch itself: expected {kernel.expected}, "
                            f"torch gives {kernel.got} (opspec validate reports it)")
            continue
        args, kwargs = special.materialize(case, subject.kernel, dtype, device)  # fresh inputs: no aliasing with the kernel's run
        result = special.run(subject.candidate, args, kwargs)
        if any_refusal and case.raises and isinstance(result, Exception):
            continue
        verdict = special.judge(case, dtype, result, latitude=False)
        if not verdict.ok:
            problems.append(f"{case.cite}: {subject.op} row '{case.says}' ({dtype}): expected {verdict.expected}, "
                            f"the decomposition {subject.implementation} gives {verdict.got}"
                            + (f" ({verdict.reason})" if verdict.reason else ""))
            continue
        problems += _at_kernel_paths(subject, case, dtype, device, any_refusal)
    return problems


def _at_kernel_paths(subject: Subject, case: SpecialCase, dtype: str, device: str, any_refusal: bool) -> list[str]:
    """The row again long and broadcast (:mod:`opspec.testing.row_paths`), where torch's own kernel holds it there:
    the decomposition's ops run their vectorised bodies too."""
    args, kwargs = special.materialize(case, subject.kernel, dtype, device)
    for variant in row_paths.variants(case, subject.kernel, args, kwargs):
        if not row_paths.judge(variant, case, dtype, special.run(subject.kernel, variant.args, variant.kwargs)).ok:
            continue  # torch's finding at this path: opspec validate reports it
        fresh, fresh_kwargs = special.materialize(case, subject.kernel, dtype, device)
        again = {v.path: v for v in row_paths.variants(case, subject.kernel, fresh, fresh_kwargs)}[variant.path]
        result = special.run(subject.candidate, again.args, again.kwargs)
        if any_refusal and case.raises and isinstance(result, Exception):
            continue
        verdict = row_paths.judge(variant, case, dtype, result)
        if not verdict.ok:
            return [f"{case.cite}: {subject.op} row '{case.says}' ({dtype} {variant.path}, {row_paths.LONG} long): "
                    f"expected {special.expected_text(case)}, the decomposition {subject.implementation} gives "
                    f"{special.show(result, 120)}"]
    return []


# ---- a whole check, driven by hypothesis outside pytest ----

@dataclass
class Outcome:
    subject: Subject
    examples: int = 0
    counterexample: Counterexample | None = None
    error: str = ""  # the check could not run (no valid inputs, ...)
    skipped: str = ""  # the device has no kernel for a dtype: why it was not checked
    broken_rows: list[str] = field(default_factory=list)  # special-case rows the candidate breaks, one line each

    @property
    def ok(self) -> bool:
        return self.counterexample is None and not self.error and not self.broken_rows

    @property
    def problem(self) -> str:
        """The failure in one line ("" when ok): the shrunk counterexample, a broken row, or why the check could not run."""
        if self.counterexample is not None:
            return " ".join(self.counterexample.render().split())[:400]
        return self.broken_rows[0] if self.broken_rows else self.error


def run(subject: Subject, *, dtypes: tuple[torch.dtype, ...], device: str = "cpu", max_examples: int = 100, seed: int = 0,
        closure: bool = True, rows: tuple[SpecialCase, ...] | None = None) -> Outcome:
    """Check ``subject`` on up to ``max_examples`` drawn calls per dtype, shrinking any failure, then on every
    special-case row of its op (``rows``; default: the opset's table for the op), exactly."""
    with native_warnings.held_back():  # drawn inputs and rows reach the kernels' edges (var of one element): noise
        outcome = _drawn(subject, dtypes=dtypes, device=device, max_examples=max_examples, seed=seed, closure=closure)
        if outcome.ok and not subject.random:
            cases = load_special_cases().get(subject.op, ()) if rows is None else rows
            for dtype in special_case_dtypes(subject, cases):
                outcome.broken_rows += check_special_cases(subject, cases, dtype, device, any_refusal=True)
    return outcome


def _drawn(subject: Subject, *, dtypes: tuple[torch.dtype, ...], device: str, max_examples: int, seed: int,
           closure: bool) -> Outcome:
    outcome = Outcome(subject)
    for dtype in dtypes:
        strategy = strategies.calls(subject.schema, subject.hints, dtype, device)
        failures: list[Counterexample] = []
        examples = max(5, max_examples // 50) if subject.random else max_examples

        @hypothesis_seed(seed)
        @settings(max_examples=examples, database=None, deadline=None, derandomize=False,
                  phases=(Phase.generate, Phase.shrink), suppress_health_check=list(HealthCheck), report_multiple_bugs=False)
        @given(call=strategy)
        def property_(call: Call) -> None:
            outcome.examples += 1
            try:
                if subject.random:
                    check_random(subject, call, dtype, seed)
                else:
                    check_values(subject, call, dtype)
                    if closure:
                        check_closure(subject, call, dtype)
            except DecompositionMismatch as err:
                failures.append(err.counterexample)
                raise

        try:
            with without_local_constants():
                property_()
        except DecompositionMismatch:
            outcome.counterexample = failures[-1]  # hypothesis replays the shrunk example last
            return outcome
        except KernelMissing as err:
            outcome.skipped = f"{outcome.skipped}; {err}" if outcome.skipped else str(err)
            continue
        except HypothesisException as err:
            outcome.error = f"{dtype}: could not draw valid inputs ({type(err).__name__})"
            return outcome
        except LookupError as err:  # the strategy layer cannot build calls for this schema
            outcome.error = f"{dtype}: cannot draw inputs: {err}"
            return outcome
    return outcome


def draw_calls(subject: Subject, dtype: torch.dtype, device: str) -> st.SearchStrategy[Call]:
    return strategies.calls(subject.schema, subject.hints, dtype, device)
