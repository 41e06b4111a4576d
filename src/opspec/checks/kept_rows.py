"""Special-case rows against torch op by op, each op's verdicts kept under a key of what decides them.

An op's verdicts depend on its rows as written, the op's testing hints (they pick the
default dtypes) and the device; the installed torch is in the part store's key. The
lines the rows stand on are not in the key, so an edit above them re-runs nothing: the
verdicts are kept by row position and placed at this run's lines. Nor is the folder:
a copy of the opset elsewhere reuses them. The findings come in
the order one run over every op gives.
"""
from __future__ import annotations

from dataclasses import replace
from pathlib import PurePath
from typing import Callable, Mapping

from opspec.checks.part_cache import PartStore, part_key
from opspec.spec.errors import Finding
from opspec.spec.file_memo import MISSING
from opspec.spec.special_cases import SpecialCase, row_key
from opspec.spec.yamlio import Mark

KINDS = ("unusable", "false_rows", "device_faults")  # the lists of special_cases.Result, in the order it sorts them
STATUS = "status"  # beside the kinds: (row position, holds | false | unusable | outside | device fault)
Verdicts = dict[str, list[tuple[int, str]]]  # kind -> (row position in the op's rows, message)
_NOWHERE = Mark("", 0, 0)


def findings(cases: Mapping[str, tuple[SpecialCase, ...]], hints: Mapping, device: str, parts: PartStore,
             run: Callable[[dict], object]) -> list[Finding]:
    """Every row's finding on ``device``; ``run(cases)`` runs the ops no kept part answers (a special_cases.Result)."""
    return _placed(cases, _verdicts(cases, hints, device, parts, run))


def statuses(cases: Mapping[str, tuple[SpecialCase, ...]], hints: Mapping, device: str, parts: PartStore,
             run: Callable[[dict], object]) -> dict[str, str]:
    """Each row's status on ``device`` by its ``row_key``, from the parts a run of validate kept where it kept them."""
    verdicts = _verdicts(cases, hints, device, parts, run)
    return {row_key(cases[op][position]): status for op in cases for position, status in verdicts[op][STATUS]}


def _verdicts(cases, hints, device: str, parts: PartStore, run) -> dict[str, Verdicts]:
    keys = {op: _key(op, rows, hints.get(op), device) for op, rows in cases.items()}
    verdicts = {op: parts.get(key) for op, key in keys.items()}
    pending = {op: cases[op] for op, found in verdicts.items() if found is MISSING}
    if pending:
        for op, found in _by_op(run(pending), pending).items():
            parts.put(keys[op], found)
            verdicts[op] = found
    return verdicts


def _key(op: str, rows: tuple[SpecialCase, ...], hints: object, device: str) -> str:
    """The rows as written (the file's name, not its folder or line) and the op's hints."""
    written = [f"{PurePath(row.mark.path).name}\0{replace(row, mark=_NOWHERE)!r}" for row in rows]
    return part_key("special-case rows at every kernel path, with statuses", device, op, repr(hints), *written)


def _by_op(result, cases: Mapping[str, tuple[SpecialCase, ...]]) -> dict[str, Verdicts]:
    """The run's findings per op, each by the position of the row it stands at."""
    where = {row.mark: (op, position) for op, rows in cases.items() for position, row in enumerate(rows)}
    found: dict[str, Verdicts] = {op: {kind: [] for kind in (*KINDS, STATUS)} for op in cases}
    for kind in KINDS:
        for finding in getattr(result, kind):
            op, position = where[finding.mark]
            found[op][kind].append((position, finding.message))
    for op, rows in cases.items():
        found[op][STATUS] = [(position, result.status[key]) for position, key in enumerate(map(row_key, rows))
                             if key in result.status]
    return found



def _placed(cases: Mapping[str, tuple[SpecialCase, ...]], verdicts: Mapping[str, Verdicts]) -> list[Finding]:
    """The findings at this run's lines, sorted as special_cases.Result sorts its own."""
    lists: dict[str, list[Finding]] = {kind: [] for kind in KINDS}
    for op in sorted(cases):
        for kind in KINDS:
            lists[kind] += [Finding(cases[op][position].mark, message) for position, message in verdicts[op][kind]]
    return sorted([finding for kind in KINDS for finding in lists[kind]],
                  key=lambda f: (f.mark.path, f.mark.line, f.mark.col))
