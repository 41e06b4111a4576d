"""Which strategy serves each core op, and optionally whether its drawn calls run.

Every core op gets calls from its schema alone ("generic"), the schema narrowed by
testing hints ("hints"), or a hand-written strategy ("custom"). The report makes the
split visible, so the custom list stays short and a hint-less op is a choice.
With ``check`` it also draws calls and runs the eager kernel on CPU: an op whose
calls never run cannot be tested by any runner.
"""
from __future__ import annotations

import warnings
from collections import Counter
from dataclasses import dataclass

from opspec.bridge import torch_ops
from opspec.spec.errors import one_line
from opspec.spec.model import Opset
from opspec.testing import native_warnings, strategies

SOURCES = ("generic", "hints", "custom")


@dataclass(frozen=True)
class OpEntry:
    op: str
    source: str
    dtype: str = ""  # the dtype the check drew, the first of the op's list
    drawn: int | None = None  # None: not checked
    valid: int | None = None
    error: str = ""  # first rejection, or why nothing could be drawn

    @property
    def failed(self) -> bool:
        return self.valid == 0


@dataclass(frozen=True)
class StrategyReport:
    opset: str
    entries: tuple[OpEntry, ...]
    checked: int = 0  # calls drawn per op; 0 when only sources were listed

    def counts(self) -> dict[str, int]:
        found = Counter(e.source for e in self.entries)
        return {source: found.get(source, 0) for source in SOURCES}

    def failures(self) -> list[OpEntry]:
        return [e for e in self.entries if e.failed]

    @property
    def exit_code(self) -> int:
        return 1 if self.failures() else 0

    def to_dict(self) -> dict:
        data = {"opset": self.opset, "ops": len(self.entries), "counts": self.counts(), "checked": self.checked}
        if self.checked:
            data["yielding_valid_calls"] = len(self.entries) - len(self.failures())
        data["entries"] = [
            {"op": e.op, "source": e.source, **({"dtype": e.dtype, "drawn": e.drawn, "valid": e.valid, "error": e.error}
                                               if e.drawn is not None else {})}
            for e in self.entries
        ]
        return data


def report(opset: Opset, ops: list[str] | None = None, check: int = 0, seed: int = 0) -> StrategyReport:
    """Sources for ``ops`` (default: every core op), drawing ``check`` calls of each when positive."""
    by_name = opset.ops_by_name
    names = ops if ops is not None else sorted(opset.core_names())
    entries = []
    for name in names:
        hints = by_name[name].testing if name in by_name else None
        entry = OpEntry(name, strategies.strategy_source(name, hints))
        entries.append(_check(entry, hints, check, seed) if check > 0 else entry)
    return StrategyReport(opset.version, tuple(entries), check)


def _check(entry: OpEntry, hints, n: int, seed: int) -> OpEntry:
    dtype = strategies.dtypes_under_test(entry.op, hints)[0]
    dtype_name = str(dtype).removeprefix("torch.")
    try:
        drawn = strategies.draw_examples(strategies.calls(torch_ops.schema_of(entry.op), hints, dtype, "cpu"), n, seed)
    except Exception as err:  # noqa: BLE001 - any failure to draw is the finding itself
        return OpEntry(entry.op, entry.source, dtype_name, 0, 0, f"cannot draw calls: {type(err).__name__}: {err}")
    valid, first_error = run_calls(drawn)
    return OpEntry(entry.op, entry.source, dtype_name, len(drawn), valid, first_error)


def run_calls(drawn) -> tuple[int, str]:
    """How many drawn calls the eager kernel accepts, and the first refusal in one line."""
    valid, first_error = 0, ""
    with warnings.catch_warnings(), native_warnings.held_back():  # drawn calls reach the kernels' edges: noise
        warnings.simplefilter("ignore")
        for call in drawn:
            try:
                call.run()
                valid += 1
            except Exception as err:  # noqa: BLE001 - a refused call is what is counted
                first_error = first_error or one_line(err, 160)
    return valid, first_error


def render_table(result: StrategyReport) -> str:
    checked = bool(result.checked)
    rows = [(e.op, e.source, *((e.dtype, f"{e.valid}/{e.drawn}") if checked else ())) for e in result.entries]
    header = ("op", "source", *(("dtype", "valid") if checked else ()))
    widths = [max(len(str(r[i])) for r in (header, *rows)) for i in range(len(header))]
    lines = ["  ".join(str(v).ljust(w) for v, w in zip(r, widths)).rstrip() for r in (header, *rows)]
    counts = result.counts()
    lines.append("")
    lines.append(f"{len(result.entries)} core ops (opset {result.opset}): "
                 + ", ".join(f"{counts[s]} {s}" for s in SOURCES))
    if checked:
        failures = result.failures()
        lines.append(f"{len(result.entries) - len(failures)}/{len(result.entries)} ops yield valid calls "
                     f"({result.checked} drawn each, CPU)")
        lines += [f"  no valid call: {e.op} ({e.dtype}): {e.error}" for e in failures]
    return "\n".join(lines)
