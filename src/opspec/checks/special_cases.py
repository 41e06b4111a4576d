"""Every special-case row against the installed torch's eager kernel: a false row is a finding at its line.

``check()`` runs each row in each of its dtypes (``opset/special_cases/README.md``);
the command ``python -m opspec.checks.special_cases [FILE ...]`` prints one line per
finding and exits 0 when every row holds, 1 when some row is false, 2 when the data
cannot be used (schema errors, an unknown op or argument).
"""
from __future__ import annotations

import argparse
import json
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable

from opspec.bridge import torch_ops
from opspec.spec import load, special_cases as spec_cases
from opspec.spec.errors import Finding, OpsetError
from opspec.spec.yamlio import Mark
from opspec.spec.model import Opset, TestingHints
from opspec.spec.special_cases import SpecialCase

SAYS_SHOWN = 60  # characters of a row's claim a finding repeats


@dataclass
class Result:
    false_rows: list[Finding] = field(default_factory=list)  # rows torch contradicts
    unusable: list[Finding] = field(default_factory=list)  # rows that cannot be run as written
    checked: int = 0  # (row, dtype) pairs run
    skipped: int = 0  # rows whose torch range or devices exclude this torch/device
    status: dict[str, str] = field(default_factory=dict)  # row_key -> holds | false | unusable | outside

    @property
    def findings(self) -> list[Finding]:
        return sorted(self.unusable + self.false_rows, key=lambda f: (f.mark.path, f.mark.line, f.mark.col))


def row_key(case: SpecialCase) -> str:
    """How a row is named across runs (its line moves as rows are added; its op and claim do not)."""
    return f"{case.op}: {case.says}"


def _hints(opset: Opset | None) -> dict[str, TestingHints]:
    if opset is None:
        return {}
    return {**{rule.op: rule.testing for rule in opset.rules}, **{op.name: op.testing for op in opset.ops}}


def _says(case: SpecialCase) -> str:
    return case.says if len(case.says) <= SAYS_SHOWN else case.says[: SAYS_SHOWN - 3] + "..."


def run_cases(cases: dict[str, tuple[SpecialCase, ...]], opset: Opset | None = None, device: str = "cpu") -> Result:
    """Each row in each of its dtypes against the eager kernel on ``device``."""
    from opspec.testing import native_warnings  # torch: imported here so validate runs without it

    with native_warnings.held_back():  # rows call kernels at their edges on purpose: their C++ warnings are noise
        return _run_cases(cases, opset, device)


def _run_cases(cases: dict[str, tuple[SpecialCase, ...]], opset: Opset | None, device: str) -> Result:
    from opspec.testing import special_cases as rows
    from opspec.testing.strategies import dtypes_under_test

    result = Result()
    hints = _hints(opset)
    torch_version = torch_ops.version()
    for op_name, op_rows in sorted(cases.items()):
        try:
            op = torch_ops.resolve(op_name)
        except (LookupError, ValueError) as err:
            result.unusable.append(Finding(op_rows[0].mark, str(err)))
            result.status.update({row_key(case): "unusable" for case in op_rows})
            continue
        hint_dtypes = dtypes_under_test(op_name, hints.get(op_name))
        for case in op_rows:
            if not rows.applies(case, torch_version, device):
                result.skipped += 1
                result.status[row_key(case)] = "outside"
                continue
            result.status[row_key(case)] = "holds"
            failed: list[tuple[str, rows.Judgement]] = []
            for dtype in rows.case_dtypes(case, hint_dtypes):
                try:
                    args, kwargs = rows.materialize(case, op, dtype, device)
                except rows.CaseError as err:
                    result.unusable.append(Finding(case.mark, f"{op_name} row '{_says(case)}' ({dtype}): {err}"))
                    result.status[row_key(case)] = "unusable"
                    break
                result.checked += 1
                judgement = rows.judge(case, dtype, rows.run(op, args, kwargs), latitude=False)
                if not judgement.ok:
                    failed.append((dtype, judgement))
            if failed:  # one finding per row: what the first dtype gave, and every dtype that failed
                dtype, judgement = failed[0]
                result.status[row_key(case)] = "false"
                result.false_rows.append(Finding(
                    case.mark,
                    f"{op_name} row '{_says(case)}' ({', '.join(d for d, _ in failed)}): expected {judgement.expected}, "
                    f"torch gives {judgement.got}" + (f" ({judgement.reason})" if judgement.reason else ""),
                ))
    return result


def _opset(opset: "Opset | str | None") -> Opset | None:
    if isinstance(opset, Opset):
        return opset
    try:
        return load.load_opset(opset)
    except (OpsetError, FileNotFoundError):
        if opset is not None:
            raise
        return None  # hints only refine the default dtypes; the rows are checked without them


def check(opset: "Opset | str | None" = None, device: str = "cpu", paths: Iterable[Path] | None = None) -> list[Finding]:
    """A finding for each false row and each row that cannot run; DataError when a file is unusable."""
    cases = spec_cases.load_special_cases(paths=paths)
    return run_cases(cases, _opset(opset), device).findings


def expected_file(op: str, opset: Opset) -> str:
    """The file an op's rows belong in: its category's for a core op, ``decomposed.yaml`` for a rule's op."""
    core = opset.ops_by_name.get(op)
    return f"{core.category}.yaml" if core else "decomposed.yaml"


def validate_findings(root: Path, opsets: list[Opset], use_torch: bool) -> tuple[list[Finding], list[Finding]]:
    """(findings, missing) for ``opspec validate``: schema problems, ops outside the opset and, with torch,
    every false row; ``missing`` names the ops without rows, one line per file (not a finding while the
    tables are being written)."""
    cases, findings = spec_cases.read(root=root)
    if findings or not opsets:
        return findings, []
    known = {name for opset in opsets for name in (*opset.ops_by_name, *opset.rules_by_op)}
    newest = opsets[-1]
    for op, op_rows in sorted(cases.items()):
        if op not in known:
            findings.append(Finding(op_rows[0].mark, f"{op} is neither a core op nor the op of a decomposition rule in any opset version"))
        elif op in newest.ops_by_name or op in newest.rules_by_op:
            belongs = expected_file(op, newest)
            if Path(op_rows[0].mark.path).name != belongs:
                findings.append(Finding(op_rows[0].mark, f"{op}'s rows belong in {belongs} (one file per category; decomposed.yaml for the ops rules lower)"))
    missing: dict[str, list[str]] = {}
    for op in sorted({*(o.name for o in newest.ops if o.status != "removed"), *newest.rules_by_op}):
        if op not in cases:
            missing.setdefault(expected_file(op, newest), []).append(op)
    folder = spec_cases.folder(root)
    notes = [
        Finding(Mark(str(folder / name), 1, 1),
                f"missing: {len(ops)} op(s) of opset {newest.version} have no special cases yet: {', '.join(ops)}")
        for name, ops in sorted(missing.items())
    ]
    if use_torch and not findings:
        findings += run_cases(cases, newest).findings
        if torch_ops.torch_module().cuda.is_available():
            findings += run_cases(cases, newest, "cuda").findings
    return findings, notes


def _device_available(device: str) -> bool:
    torch = torch_ops.torch_module()
    try:
        torch.empty(0, device=device)
    except (RuntimeError, AssertionError):
        return False
    return True


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m opspec.checks.special_cases", description=__doc__.split("\n\n")[0])
    parser.add_argument("files", nargs="*", type=Path, help="special-case files (default: the opset's)")
    parser.add_argument("--json", action="store_true", help="print one JSON object: torch, findings, each row's status")
    parser.add_argument("--device", default="cpu", help="the device whose eager kernels the rows run on (default cpu)")
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    cases, problems = spec_cases.read(args.files or None)
    if problems:
        print(*problems, sep="\n")
        return 2
    if args.device != "cpu" and not _device_available(args.device):
        print(f"--device {args.device}: not available on this machine")
        return 2
    try:
        result = run_cases(cases, _opset(None), args.device)
    except (OpsetError, FileNotFoundError) as err:
        print(err)
        return 2
    if args.json:
        print(json.dumps({"torch": torch_ops.torch_module().__version__, "device": args.device, "checked": result.checked,
                          "findings": [str(f) for f in result.findings], "rows": dict(sorted(result.status.items()))},
                         indent=1))
    else:
        for finding in result.findings:
            print(finding)
    print(f"{result.checked} row-dtype checks, {len(result.false_rows)} false, {len(result.unusable)} unusable, "
          f"{result.skipped} rows outside this torch or device", file=sys.stderr)
    return 2 if result.unusable else (1 if result.false_rows else 0)


if __name__ == "__main__":
    sys.exit(main())
