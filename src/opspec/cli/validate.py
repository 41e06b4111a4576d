"""``opspec validate [--opset-dir PATH]``."""
from __future__ import annotations

import argparse
import re
import sys
import time
from pathlib import Path

from opspec.cli import deprecated, pathargs
from opspec.spec import file_memo, load, manifests, resources
from opspec.spec.gc_paused import gc_paused

# A rule's implementation outside opspec (``pkg.module:function``) is code no cache key covers.
_IMPLEMENTATION = re.compile(r"implementation:\s*['\"]?([^\s'\"#,}]*)")


def add_parser(subparsers) -> None:
    parser = subparsers.add_parser(
        "validate",
        help="check the opset data against its schemas, itself and the installed torch",
        description="Check every opset version: JSON Schema, duplicates, lifecycle, closure of "
        "decomposition targets, released-version digests, and the installed torch's schemas. "
        "A clean result is kept in opspec's cache and reused while nothing it depends on has changed "
        "(the data, opspec, torch and the packages that decide verdicts); after an edit only the parts it "
        "touched run again (a file's parsing, an op's special-case rows, a formula), and a copy of the opset "
        "in another folder reuses the parts of the original.",
    )
    parser.add_argument("--opset-dir", type=pathargs.input_folder, metavar="PATH",
                        help="opset folder to check (default: the bundled one)")
    deprecated.renamed(parser, "--opset", "--opset-dir PATH", dest="opset_dir", type=pathargs.input_folder)
    parser.add_argument("--no-torch", action="store_true", help="skip the checks that need torch")
    parser.add_argument(
        "--backends", type=pathargs.input_folder, metavar="DIR", help="backend lowering manifests to check too (default: the bundled ones)"
    )
    parser.add_argument("--no-cache", action="store_true", help="run every check, neither reusing nor keeping a result")
    parser.set_defaults(func=run)


def run(args) -> int:
    root = args.opset_dir or resources.opset_root()
    if not load.versions_path(root).is_file():
        print(f"{root}: not an opset folder (no versions.yaml)", file=sys.stderr)
        return 2
    started = time.perf_counter()
    report, reused = _report(root, args.backends or manifests.backends_dir(), args)
    for finding in report.findings + report.notes + report.missing:
        print(finding)
    elapsed = time.perf_counter() - started
    versions = ", ".join(report.checked_versions) or "none"
    notes = f", {len(report.notes)} note(s)" if report.notes else ""
    if report.missing:
        notes += f", {sum(int(m.message.split()[1]) for m in report.missing)} op(s) without special cases"
    unchanged = ", unchanged since the last run" if reused else ""
    summary = f"{len(report.findings)} finding(s){notes} in {root} (versions: {versions}; {elapsed:.1f}s{unchanged})"
    print(summary, file=sys.stderr if report.findings else sys.stdout)
    return report.exit_code


def _report(root: Path, backends: Path, args):
    """(report, reused): a clean report is kept and reused while its inputs are the same. A report with findings
    is not kept whole: a broken seal names lines from git history, which no key covers. Either way the parts of
    the run are kept, each under a key of its own inputs, and a run after an edit re-runs the parts it changed."""
    from opspec.checks import part_cache, result_cache
    from opspec.checks.validate import Report

    place = part_cache.validate_place(root, backends, not args.no_torch)
    inputs = [root, resources.schema_dir(), backends, manifests.backends_dir()]
    key = lambda: result_cache.key(inputs, [place])  # noqa: E731
    before = None if args.no_cache or not _cacheable(root) else key()
    stored = None if before is None else result_cache.load("validate", place, before)
    if stored is not None:
        try:
            return Report.from_json(stored), True
        except ValueError:
            pass  # not a report: check afresh
    parts_place = part_cache.validate_parts_place(not args.no_torch)
    parts_key = lambda: part_cache.validate_parts_key(parts_place)  # noqa: E731
    parts_before = None if args.no_cache else parts_key()
    # --no-cache: a store of this run alone, never saved (the reading child hands its readings over through it)
    parts = (part_cache.PartStore() if parts_before is None
             else part_cache.open_store("validate", parts_place, parts_before))
    # Without cyclic collections: the run makes little cyclic garbage (its peak memory is the same either way), and
    # each full collection walks torch's whole heap: a twentieth of an empty-cache run.
    with gc_paused():
        if not args.no_torch:
            _read_while_torch_imports(root, backends, args, parts)
        report = _checked(root, backends, args, parts)
    if before is not None and report.exit_code == 0 and key() == before:  # inputs edited during the run: not kept
        result_cache.store("validate", place, before, report.to_json())
    if parts_before is not None and parts_key() == parts_before:
        part_cache.save("validate", parts_place, parts_before, parts)
    return report, False


def _checked(root: Path, backends: Path, args, parts):
    from opspec.checks.validate import validate

    report = validate(root, use_torch=not args.no_torch, parts=parts)
    if report.exit_code == 0:
        # Manifests name ops of an opset version, so they are judged only against clean data.
        known = None if report.torch is None else report.torch.schemas
        opset = lambda version: report.opsets.get(version) or load.load_opset(version, root)  # noqa: E731
        with file_memo.kept_in(parts if parts.keeping else None):
            report.findings += manifests.manifest_findings(backends, opset, known)
    return report


def _read_while_torch_imports(root: Path, backends: Path, args, parts) -> None:
    """Where torch must be asked afresh (its facts are not kept: a first run, or another torch), a child forked
    before torch is imported reads and schema-checks the data while this process imports torch; the readings it
    hands back are then taken from ``parts``. The two halves each take about a second, on two cores at once. A
    child that fails costs nothing but the wait: this process then reads for itself."""
    from opspec.checks import beside, torch_facts

    if parts.holds(torch_facts.KEY) or _torch_imported() or not beside.can_fork():
        return
    known = parts.used_keys()

    def read():  # in the child: every check that needs no torch, for the readings it keeps
        _checked(root, backends, argparse.Namespace(**{**vars(args), "no_torch": True}), parts)
        return parts.used_since(known)

    reading = beside.Beside(read)
    torch_facts.recall(parts)  # torch imported and asked while the child reads
    try:
        parts.take(*reading.result())
    except beside.BesideFailed:
        pass


def _torch_imported() -> bool:
    """Whether this process has torch already (a caller in Python): then nothing would run beside the reading."""
    return "torch" in sys.modules


def _cacheable(root: Path) -> bool:
    """Every rule is implemented by torch or by opspec, whose source the key covers."""
    for path in root.glob("*/decompositions.yaml"):
        try:
            text = path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            return False
        if any(name != "torch" and not name.startswith("opspec.") for name in _IMPLEMENTATION.findall(text)):
            return False
    return True
