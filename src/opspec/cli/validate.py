"""``opspec validate [--opset PATH]``."""
from __future__ import annotations

import sys
import time
from pathlib import Path

from opspec.spec import load, manifests, resources


def add_parser(subparsers) -> None:
    parser = subparsers.add_parser(
        "validate",
        help="check the opset data against its schemas, itself and the installed torch",
        description="Check every opset version: JSON Schema, duplicates, lifecycle, closure of "
        "decomposition targets, released-version digests, and the installed torch's schemas.",
    )
    parser.add_argument("--opset", type=Path, metavar="PATH", help="opset folder to check (default: the bundled one)")
    parser.add_argument("--no-torch", action="store_true", help="skip the checks that need torch")
    parser.add_argument(
        "--backends", type=Path, metavar="DIR", help="backend lowering manifests to check too (default: the bundled ones)"
    )
    parser.set_defaults(func=run)


def run(args) -> int:
    from opspec.checks.validate import validate

    root = args.opset or resources.opset_root()
    if not load.versions_path(root).is_file():
        print(f"{root}: not an opset folder (no versions.yaml)", file=sys.stderr)
        return 2
    started = time.perf_counter()
    report = validate(root, use_torch=not args.no_torch)
    if report.exit_code == 0:
        # Manifests name ops of an opset version, so they are judged only against clean data.
        backends = args.backends or manifests.backends_dir()
        known = None
        if not args.no_torch:
            from opspec.bridge import torch_ops

            known = torch_ops.all_aten_schemas()
        report.findings += manifests.manifest_findings(backends, lambda version: load.load_opset(version, root), known)
    for finding in report.findings + report.notes + report.missing:
        print(finding)
    elapsed = time.perf_counter() - started
    versions = ", ".join(report.checked_versions) or "none"
    notes = f", {len(report.notes)} note(s)" if report.notes else ""
    if report.missing:
        notes += f", {sum(int(m.message.split()[1]) for m in report.missing)} op(s) without special cases"
    summary = f"{len(report.findings)} finding(s){notes} in {root} (versions: {versions}; {elapsed:.1f}s)"
    print(summary, file=sys.stderr if report.findings else sys.stdout)
    return report.exit_code
