"""Every special-case row against the installed torch's eager kernel: a false row is a finding at its line.

``check()`` runs each row in each of its dtypes (``opset/special_cases/README.md``);
the command ``python -m opspec.checks.special_cases [FILE ...]`` prints one line per
finding and exits 0 when every row holds, 1 when some row is false, 2 when the data
cannot be used (schema errors, an unknown op or argument).

On an accelerator (``--device cuda``) a row can fault the device (a device-side assert
where the CPU kernel raises IndexError): nothing after it in that process can be
trusted. There the rows run in a child process with synchronous launches, so the
fault is the row that caused it; the row is a finding (``device fault``) and a fresh
child goes on from the next row.

Rows of an op torch tags pointwise run again past the vector width and broadcast
(:mod:`opspec.testing.row_paths`): a row holds at every kernel path or says where it
does not. Rows of inputs out of contract (class ``out-of-contract``: an index past the
plane) can corrupt the heap instead of raising, so on CPU each runs in a forked child
(:mod:`opspec.testing.contained`) and a corruption ends the child, not the check. Such a
row stated ``undefined`` is false only where torch checks the inputs: a raise counts when
a new interpreter running the call alone raises too.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Iterable

from opspec.bridge import torch_ops
from opspec.checks import kept_rows
from opspec.checks.part_cache import PartStore
from opspec.checks.torch_facts import TorchFacts
from opspec.spec import load, special_cases as spec_cases
from opspec.spec.errors import Finding, OpsetError
from opspec.spec.gc_paused import heap_frozen
from opspec.spec.yamlio import Mark
from opspec.spec.model import Opset, TestingHints
from opspec.spec.special_cases import SpecialCase, row_key

SAYS_SHOWN = 60  # characters of a row's claim a finding repeats


@dataclass
class Result:
    false_rows: list[Finding] = field(default_factory=list)  # rows torch contradicts
    unusable: list[Finding] = field(default_factory=list)  # rows that cannot be run as written
    checked: int = 0  # (row, dtype) pairs run
    skipped: int = 0  # rows whose torch range or devices exclude this torch/device
    status: dict[str, str] = field(default_factory=dict)  # row_key -> holds | false | unusable | outside | device fault
    device_faults: list[Finding] = field(default_factory=list)  # rows whose kernel faulted the device

    @property
    def findings(self) -> list[Finding]:
        return sorted(self.unusable + self.false_rows + self.device_faults, key=lambda f: (f.mark.path, f.mark.line, f.mark.col))


class DeviceFaulted(Exception):
    """A row faulted the device: the process is poisoned, the run stops after recording it."""


def row_statuses(cases: dict[str, tuple[SpecialCase, ...]], opset: Opset, parts: PartStore,
                 device: str = "cpu") -> dict[str, str]:
    """Each row's status on the installed torch by :func:`row_key`: the verdicts ``parts`` keeps per op (what
    ``opspec validate`` left), running only the ops it does not hold."""
    return kept_rows.statuses(cases, _hints(opset), device, parts, lambda pending: run_cases(pending, opset, device))


def _hints(opset: Opset | None) -> dict[str, TestingHints]:
    if opset is None:
        return {}
    return {**{rule.op: rule.testing for rule in opset.rules}, **{op.name: op.testing for op in opset.ops}}


def _says(case: SpecialCase) -> str:
    return case.says if len(case.says) <= SAYS_SHOWN else case.says[: SAYS_SHOWN - 3] + "..."


def run_cases(cases: dict[str, tuple[SpecialCase, ...]], opset: Opset | None = None, device: str = "cpu",
              done: frozenset[str] = frozenset(), on_row=None) -> Result:
    """Each row in each of its dtypes against the eager kernel on ``device``; rows named in ``done`` are left
    out, and ``on_row(key, status, finding, checked)`` hears of each row as it ends. A row that faults the
    device ends the run with DeviceFaulted, after ``on_row`` has heard of it."""
    from opspec.testing import native_warnings  # torch: imported here so validate runs without it

    # Rows call kernels at their edges on purpose (their C++ warnings are noise), on small tensors (one thread);
    # collections leave out the heap there before (heap_frozen).
    with native_warnings.held_back(), torch_ops.single_threaded(), heap_frozen():
        return _run_cases(cases, opset, device, done, on_row or (lambda *_: None))


def _run_cases(cases: dict[str, tuple[SpecialCase, ...]], opset: Opset | None, device: str,
               done: frozenset[str], on_row) -> Result:
    from opspec.testing import kernel_errors, row_paths, special_cases as rows
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
            key = row_key(case)
            if key in done:
                continue
            if not rows.applies(case, torch_version, device):
                result.skipped += 1
                result.status[key] = "outside"
                on_row(key, "outside", None, 0)
                continue
            result.status[key] = "holds"
            checked, finding = result.checked, None
            failed: list[tuple[str, rows.Judgement]] = []
            contained_answers = {}
            if case.klass == spec_cases.OUT_OF_CONTRACT and device == "cpu":  # may corrupt the heap: in a child
                contained_answers = _contained(case, op, rows.case_dtypes(case, hint_dtypes))
            for dtype in rows.case_dtypes(case, hint_dtypes):
                try:
                    if dtype in contained_answers:
                        result.checked += 1
                        judgement = rows.judge_contained(case, contained_answers[dtype])
                        if not judgement.ok:
                            failed.append((dtype, judgement))
                        continue
                    args, kwargs = rows.materialize(case, op, dtype, device)
                    outcome = rows.run(op, args, kwargs)
                    kernel_errors.screen(outcome) if isinstance(outcome, Exception) else None
                    result.checked += 1
                    judgement = rows.judge(case, dtype, outcome,
                                           latitude=bool(case.latitude and case.latitude.torch_too))
                except kernel_errors.DeviceFault as err:
                    finding = Finding(case.mark, f"{op_name} row '{_says(case)}' ({dtype}): on {device} the kernel "
                                                 f"faults the device instead: {kernel_errors.first_line(err)}")
                    result.device_faults.append(finding)
                    result.status[key] = "device fault"
                    on_row(key, "device fault", finding, result.checked - checked)
                    raise DeviceFaulted(str(finding)) from err
                except rows.CaseError as err:
                    if kernel_errors.mentions_device_fault(err):  # the tensor literal could not be made: poisoned
                        raise DeviceFaulted(f"{op_name} row '{_says(case)}': {err}") from err
                    finding = Finding(case.mark, f"{op_name} row '{_says(case)}' ({dtype}): {err}")
                    result.unusable.append(finding)
                    result.status[key] = "unusable"
                    break
                if not judgement.ok:
                    failed.append((dtype, judgement))
                    continue
                for variant in row_paths.variants(case, op, args, kwargs):
                    outcome = rows.run(op, variant.args, variant.kwargs)
                    kernel_errors.screen(outcome) if isinstance(outcome, Exception) else None
                    judgement = row_paths.judge(variant, case, dtype, outcome)
                    if not judgement.ok:  # the row's own literal, and what the path gave
                        expected = rows.expected_text(case)
                        failed.append((f"{dtype} {variant.path}, {row_paths.LONG} long", replace(
                            judgement, expected=expected, got=rows.show(outcome, 120))))
                        break
            if failed:  # one finding per row: what the first dtype gave, and every dtype that failed
                dtype, judgement = failed[0]
                result.status[key] = "false"
                finding = Finding(
                    case.mark,
                    f"{op_name} row '{_says(case)}' ({', '.join(d for d, _ in failed)}): expected {judgement.expected}, "
                    f"torch gives {judgement.got}" + (f" ({judgement.reason})" if judgement.reason else ""),
                )
                result.false_rows.append(finding)
            on_row(key, result.status[key], finding, result.checked - checked)
    return result


def _contained(case: SpecialCase, op, dtypes: list[str]) -> dict:
    """dtype -> what the row's call did in a child forked for the row; a dtype whose inputs cannot be made is left
    out, so the row check reports it as it reports any row's. A row that says ``raises`` runs its dtypes in one
    child. An ``undefined`` call may write outside its buffers and still return, after which whatever the same
    process does next is meaningless (torch 2.9 then raised "tensor does not have a device" for the next dtype),
    so each of its dtypes gets a child of its own."""
    from opspec.testing import contained, special_cases as rows

    made = {}
    for dtype in dtypes:
        try:
            made[dtype] = rows.materialize(case, op, dtype)
        except rows.CaseError:
            continue
    calls = {dtype: _call(op, *inputs) for dtype, inputs in made.items()}
    if case.undefined:
        answers = {dtype: contained.run(call, rows.show) for dtype, call in calls.items()}
        # A raise tells that torch checks the inputs only where a process that ran nothing before the call raises
        # too: a call that wrote outside its buffers can raise from what it overwrote, and what it overwrites is
        # whatever the process held (torch 2.9 raised "tensor does not have a device" after some runs, not others).
        return {dtype: _in_a_fresh_process(op, *made[dtype]) if answer.kind == "raised" else answer
                for dtype, answer in answers.items()}
    return dict(zip(calls, contained.run_each(list(calls.values()), rows.show)))


FRESH_CALL = """
import json, pickle, sys
import torch
from opspec.bridge import torch_ops
from opspec.testing import contained, special_cases as rows
name, args, kwargs = pickle.load(sys.stdin.buffer)
with torch.no_grad():
    answer = contained.answer(lambda: torch_ops.resolve(name)(*args, **kwargs), rows.show)
sys.stdout.write(json.dumps(answer))
sys.stdout.flush()
contained.churn()
"""


def _in_a_fresh_process(op, args: tuple, kwargs: dict):
    """What the row's call does in a new interpreter that runs nothing else (a Contained answer)."""
    import pickle

    from opspec.testing import contained

    try:
        done = subprocess.run([sys.executable, "-c", FRESH_CALL], capture_output=True, timeout=contained.WAIT_S + 60,
                              input=pickle.dumps((torch_ops.op_name(op), args, kwargs)))
    except subprocess.TimeoutExpired:
        return contained.Contained("no answer", "", f"killed after hanging for {contained.WAIT_S + 60} s")
    ended = f"exit {done.returncode}" if done.returncode >= 0 else contained.ended_by_signal(-done.returncode)
    try:
        answer = json.loads(done.stdout)
    except ValueError:
        return contained.Contained("no answer", "", ended)
    return contained.Contained(answer["kind"], answer["detail"], ended, tuple(answer.get("classes", ())))


def _call(op, args: tuple, kwargs: dict):
    """The row's call, raising what the kernel raises (a contained child reports it)."""
    def call():
        import torch

        with torch.no_grad():
            return op(*args, **kwargs)
    return call


# ---- on an accelerator: a child process per stretch of rows between device faults ----

CHILD_RESTARTS = 200  # device faults one run may survive (each costs a fresh process)


def run_isolated(files: list[Path], device: str) -> tuple[dict[str, str], list[str], int, int]:
    """(status by row, findings, checked, skipped) with every row run in children that restart after a device
    fault; launches are synchronous (CUDA_LAUNCH_BLOCKING) so the fault is charged to the row that made it."""
    status: dict[str, str] = {}
    findings: list[str] = []
    checked = skipped = 0
    env = {**os.environ, "CUDA_LAUNCH_BLOCKING": "1"}
    with tempfile.NamedTemporaryFile("w+", suffix=".json") as done_file:
        for _ in range(CHILD_RESTARTS):
            done_file.seek(0), done_file.truncate(), json.dump(sorted(status), done_file), done_file.flush()
            child = subprocess.run([sys.executable, "-m", "opspec.checks.special_cases", "--device", device,
                                    "--child", done_file.name, *map(str, files)], capture_output=True, text=True, env=env)
            for line in child.stdout.splitlines():
                if not line.startswith('{"key"'):  # something else printed to stdout
                    continue
                row = json.loads(line)
                status[row["key"]] = row["status"]
                checked += row["checked"]
                skipped += row["status"] == "outside"
                findings += [row["finding"]] if row["finding"] else []
            if child.returncode != 3:  # 3: a device fault ended the child; anything else is the end of the rows
                if child.returncode not in (0, 1):
                    findings.append(f"the row check stopped: exit {child.returncode}: {child.stderr.strip()[-300:]}")
                return status, findings, checked, skipped
    findings.append(f"the row check stopped after {CHILD_RESTARTS} device faults")
    return status, findings, checked, skipped


def _child(cases, device: str, done_path: Path) -> int:
    """Rows as JSON lines, one as each ends; exit 3 when one faulted the device."""
    def on_row(key, status, finding, checked):
        print(json.dumps({"key": key, "status": status, "finding": finding and str(finding), "checked": checked}),
              flush=True)

    try:
        result = run_cases(cases, _opset(None), device, frozenset(json.loads(done_path.read_text())), on_row)
    except DeviceFaulted:
        return 3
    return 1 if result.findings else 0


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


def validate_findings(root: Path, opsets: list[Opset], use_torch: bool,
                      rows: tuple[dict[str, tuple[SpecialCase, ...]], list[Finding]] | None = None,
                      *, parts: PartStore | None = None, facts: TorchFacts | None = None,
                      ) -> tuple[list[Finding], list[Finding]]:
    """(findings, missing) for ``opspec validate``: schema problems, ops outside the opset and, with torch,
    every false row; ``missing`` names the ops without rows, one line per file (not a finding while the
    tables are being written). ``rows``: the root's rows and problems as already read; ``parts``: where each
    op's verdicts are kept; ``facts``: torch's answers as validate holds them."""
    cases, findings = rows if rows is not None else spec_cases.read(root=root)
    findings = list(findings)
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
        parts = parts if parts is not None else PartStore(keeping=False)
        cuda = facts.cuda if facts is not None else torch_ops.torch_module().cuda.is_available()
        for device in ("cpu", "cuda") if cuda else ("cpu",):
            findings += kept_rows.findings(cases, _hints(newest), device, parts,
                                           lambda pending, device=device: run_cases(pending, newest, device))
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
    parser.add_argument("--isolate", action="store_true",
                        help="run the rows in child processes that restart after a device fault (always on an accelerator)")
    parser.add_argument("--child", type=Path, help=argparse.SUPPRESS)  # rows already done (run_isolated's child)
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    cases, problems = spec_cases.read(args.files or None)
    if problems:
        print(*problems, sep="\n")
        return 2
    if args.device != "cpu" and not _device_available(args.device):
        print(f"--device {args.device}: not available on this machine")
        return 2
    if args.child:
        return _child(cases, args.device, args.child)
    if args.isolate or args.device != "cpu":
        status, findings, checked, skipped = run_isolated(args.files, args.device)
    else:
        try:
            result = run_cases(cases, _opset(None), args.device)
        except (OpsetError, FileNotFoundError) as err:
            print(err)
            return 2
        status, findings, checked, skipped = result.status, [str(f) for f in result.findings], result.checked, result.skipped
    counts = {name: sum(1 for s in status.values() if s == name) for name in ("false", "unusable", "device fault")}
    if args.json:
        print(json.dumps({"torch": torch_ops.torch_module().__version__, "device": args.device, "checked": checked,
                          "findings": findings, "rows": dict(sorted(status.items()))}, indent=1))
    else:
        print(*findings, sep="\n") if findings else None
    print(f"{checked} row-dtype checks, {counts['false']} false, {counts['unusable']} unusable, "
          f"{counts['device fault']} device faults, {skipped} rows outside this torch or device", file=sys.stderr)
    return 2 if counts["unusable"] else (1 if counts["false"] or counts["device fault"] else 0)


if __name__ == "__main__":
    sys.exit(main())
