"""``opspec strategies --report``: how each core op's calls are built, and whether they run."""
from __future__ import annotations

import json

from opspec.cli import UsageError, add_opset_option
from opspec.spec import load
from opspec.spec.model import canonical_op_name


def add_parser(subparsers) -> None:
    parser = subparsers.add_parser(
        "strategies",
        help="list which strategy (generic, hints, custom) builds each core op's calls",
        description="Report, for every core op, whether its calls come from the schema alone, the schema with "
        "the opset's testing hints, or a custom strategy. With --check N, also draw N calls per op on CPU "
        "(first dtype of its hints) and run the eager kernel; exit 1 when an op yields no valid call.",
    )
    parser.add_argument("--report", action="store_true", help="print the report (the only action so far)")
    parser.add_argument("--format", choices=("table", "json"), default="table")
    add_opset_option(parser)
    parser.add_argument("--check", type=int, default=0, metavar="N", help="draw and run N calls per op")
    parser.add_argument("--seed", type=int, default=0, metavar="S")
    parser.add_argument("--op", action="append", metavar="OP", help="limit to this core op (repeatable)")
    parser.set_defaults(func=run)


def run(args) -> int:
    from opspec.checks import strategy_report

    if not args.report:
        raise UsageError("nothing to do: pass --report")
    if args.check < 0:
        raise UsageError("--check must be 0 or more")
    opset = load.load_opset(args.opset_version)
    ops = None
    if args.op:
        ops = [canonical_op_name(name) for name in args.op]
        unknown = [name for name in ops if name not in opset.core_names()]
        if unknown:
            raise UsageError(f"not a core op of opset {opset.version}: {', '.join(unknown)}")
    result = strategy_report.report(opset, ops, check=args.check, seed=args.seed)
    if args.format == "json":
        print(json.dumps(result.to_dict(), indent=2))
    else:
        print(strategy_report.render_table(result))
    return result.exit_code
