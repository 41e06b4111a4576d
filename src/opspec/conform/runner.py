"""Running one case against a backend, in this process: draw, compile, run, compare.

The verdict is the case's *outcome* before expectations: ``pass``, ``fail``,
``compile-error``, ``run-error`` or ``skip`` (no valid inputs could be drawn).
``crash`` and ``timeout`` come from :mod:`.isolation`, ``xfail``/``xpass``
and expected skips from :mod:`.expectations`.
"""
from __future__ import annotations

import functools
import time
from dataclasses import dataclass
from typing import Any

import torch

from opspec.conform import backends, cases, properties
from opspec.conform.backends import CompileError
from opspec.conform.cases import Case, Example
from opspec.spec import load
from opspec.testing import compare, strategies
from opspec.testing.strategies.call import Repro

STATUSES = ("pass", "fail", "xfail", "xpass", "skip", "compile-error", "run-error", "crash", "timeout")
CLEAN = ("pass", "xfail", "skip")  # statuses that leave the exit code at 0


@dataclass(frozen=True)
class Settings:
    """Everything a worker needs to rebuild the runner: plain data, picklable."""

    backend: str
    opset: str | None = None
    max_examples: int = 4
    max_compiles: int = 2
    seed: int = 0
    dynamic: bool = True


@functools.lru_cache(maxsize=None)
def cached_opset(version: str | None):
    return load.load_opset(version)


class CaseRunner:
    def __init__(self, settings: Settings):
        self.settings = settings
        self.opset = cached_opset(settings.opset)
        self.backend = backends.resolve(settings.backend, self.opset, dynamic=settings.dynamic)

    def run(self, case: Case) -> dict[str, Any]:
        started = time.perf_counter()
        compiles_before = self.backend.compiles
        self.backend.handed = set()
        try:
            record = self._run(case)
        except Exception as err:  # a suite bug must cost one case, not the run
            record = {"status": "run-error", "message": f"opspec internal error: {type(err).__name__}: {err}"}
        record.setdefault("message", "")
        record.update(case.as_dict())
        record["compiles"] = self.backend.compiles - compiles_before
        record["handed_ops"] = sorted(self.backend.handed)
        record["duration_s"] = round(time.perf_counter() - started, 3)
        return record

    def _run(self, case: Case) -> dict[str, Any]:
        op = self.opset.ops_by_name[case.op]
        seed = case.seed(self.settings.seed)
        try:
            examples = cases.draw(op, case.dtype, case.device, max_examples=self.settings.max_examples,
                                  max_compiles=self.settings.max_compiles, seed=seed)
        except Exception as err:  # hypothesis could not satisfy the strategy
            return {"status": "skip", "message": f"no valid inputs could be drawn: {type(err).__name__}: {err}"}
        if not examples:
            return {"status": "skip", "message": "the eager kernel rejected every drawn input", "examples": 0}
        tolerance = strategies.effective_hints(op.name, op.testing).tolerance
        checker = properties.CHECKERS.get(op.name)
        compiled: dict[tuple, Any] = {}
        verdicts: list[compare.Comparison] = []
        for example in examples:
            outcome = self._example(example, compiled, checker, tolerance, seed)
            if isinstance(outcome, dict):
                outcome.setdefault("repro", self.repro(example))
                outcome["examples"] = len(verdicts) + 1
                return outcome
            verdicts.append(outcome)
        record = {"status": "pass", "examples": len(verdicts)}
        record.update(_metrics(verdicts))
        record["property_checked"] = checker is not None
        return record

    def _example(self, example: Example, compiled: dict, checker, tolerance, seed: int):
        """The example's Comparison, or a finished record when it did not pass."""
        program = compiled.get(example.key)
        if program is None:
            try:
                program = compiled[example.key] = self.backend.compile(example.program(), example.fresh_inputs())
            except CompileError as err:
                return {"status": "compile-error", "message": str(err)}
            except Exception as err:  # noqa: BLE001 - the backend under test may fail any way
                return {"status": "compile-error", "message": f"{type(err).__name__}: {_line(err)}"}
        torch.manual_seed(seed)
        reference = example.program()(*example.fresh_inputs())
        torch.manual_seed(seed)
        try:
            candidate = program(*example.fresh_inputs())
        except CompileError as err:
            return {"status": "compile-error", "message": str(err)}
        except Exception as err:  # noqa: BLE001
            return {"status": "run-error", "message": f"{type(err).__name__}: {_line(err)}"}
        if checker is not None:
            verdict = checker(candidate, reference, example)
        else:
            verdict = compare.compare(candidate, reference, float64=self._float64(example), tolerance=tolerance)
        if not verdict.ok:
            record = {"status": "fail", "message": verdict.message}
            record.update(_metrics([verdict]))
            return record
        return verdict

    @staticmethod
    def _float64(example: Example) -> Any:
        """The float64 run fp16/bf16 outputs are measured against; None where it does not apply or fails."""
        if not any(t.dtype in compare.LOW_PRECISION for t in example.inputs):
            return None
        try:
            program = cases.make_program(example.call.op, compare.upcast(example.args), compare.upcast(example.kwargs),
                                         example.written)
            return program(*compare.upcast(tuple(example.fresh_inputs())))
        except Exception:  # no float64 kernel: compare falls back to (rtol, atol)
            return None

    def repro(self, example: Example) -> str:
        """Standalone source: the inputs, the program, the eager and the backend results."""
        writer = Repro(example.call)
        source = writer.source().splitlines()
        call_line = next(line for line in source if line.startswith("result = "))
        names = [line.split(" = ", 1)[0] for line in writer.lines]
        expression = call_line.removeprefix("result = ")
        imports = []
        if example.call.op in cases.SYMBOLIC:  # spelled as models spell it: x.size(d), x.item()
            imports = ["from opspec.conform.cases import SYMBOLIC"]
            arguments = expression[expression.index("("):]
            expression = f"{names[0]}.sum() + SYMBOLIC[{example.call.op!r}]{arguments}"
        written = [names[i] for i in example.written]
        body = ", ".join([expression, *written]) if written else expression
        opset = self.opset.version
        return "\n".join([
            "import torch",
            "from opspec.spec import load",
            "from opspec.conform import backends",
            *imports,
            "",
            "nan, inf = float('nan'), float('inf')",
            *writer.lines,
            "",
            f"def program({', '.join(names)}):",
            f"    return {body}",
            "",
            f"backend = backends.resolve({self.backend.name!r}, load.load_opset({opset!r}))",
            f"inputs = [{', '.join(names)}]",
            "expected = program(*[t.clone() for t in inputs])",
            "actual = backend.compile(program, [t.clone() for t in inputs])(*inputs)",
            "torch.testing.assert_close(actual, expected, equal_nan=True)",
        ]) + "\n"


def _metrics(verdicts: list[compare.Comparison]) -> dict[str, Any]:
    def worst(field: str):
        values = [getattr(v, field) for v in verdicts if getattr(v, field) is not None]
        return max(values) if values else None

    tolerance = next((v.tolerance for v in verdicts if v.tolerance is not None), None)
    return {"max_abs_error": worst("max_abs_error"), "max_rel_error": worst("max_rel_error"),
            "kernel_error": worst("kernel_error"), "tolerance": list(tolerance) if tolerance else None}


def _line(err: BaseException) -> str:
    lines = [line for line in str(err).strip().splitlines() if line.strip()]
    return lines[0][:500] if lines else ""
