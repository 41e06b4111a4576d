"""``opspec drift [--format text|json]``."""
from __future__ import annotations

import json
import sys
from pathlib import Path

from opspec.checks import drift
from opspec.spec import load


def add_parser(subparsers) -> None:
    parser = subparsers.add_parser(
        "drift",
        help="compare the opset with the installed torch",
        description="Core-tag, schema and decomposition drift between an opset version and the "
        "installed torch, plus the non-core ops that survive torch's default decompositions.",
    )
    parser.add_argument("--opset", dest="opset_version", metavar="V", help="opset version (default: newest)")
    parser.add_argument("--format", choices=("text", "json"), default="text")
    parser.add_argument(
        "--closure",
        action="store_true",
        help="also probe every entry of torch's table for non-core survivors (slow: several minutes; in a child process)",
    )
    parser.add_argument(
        "--propose",
        metavar="DIR",
        type=Path,
        help="write a draft proposal into DIR (e.g. proposals) for each drift item no open proposal covers",
    )
    parser.set_defaults(func=run)


def run(args) -> int:
    opset = load.load_opset(args.opset_version)
    interactive = sys.stderr.isatty()
    progress = (lambda message: print(f"\r\033[K{message}", end="", file=sys.stderr)) if interactive else None
    report = drift.compute(opset, closure=args.closure, progress=progress)
    if interactive:
        print("\r\033[K", end="", file=sys.stderr)
    if args.format == "json":
        print(json.dumps(report.to_json(), indent=2))
    else:
        print(drift.render_text(report))
    if args.propose is not None:
        from opspec.proposals import from_drift

        rules = {rule.op: dict(rule.raw) for rule in opset.rules}
        for drafted in from_drift.draft_all(report, args.propose, rules):
            print(f"drafted {drafted.type} proposal for {drafted.op}: {drafted.path}", file=sys.stderr)
    return 1 if report.drifted else 0
