"""``opspec check-program FILE.pt2 [--opset V]``: every op of an exported program against an opset version."""
from __future__ import annotations

import json

from opspec.cli import UsageError, add_opset_option, pathargs
from opspec.spec import compatibility, load, resources


def add_parser(subparsers) -> None:
    parser = subparsers.add_parser(
        "check-program",
        help="check every op of an exported program (torch.export.save) against an opset version",
        description="Load FILE (a .pt2 written by torch.export.save) and put every op its graph calls in one class "
        "against opset V: core, deprecated (with the version that removes it), bookkeeping, decomposable by V's "
        "rules, schema-mismatch (core, but another schema), out-of-scope (by a decision of V, with its proposal), "
        "closure-gap (torch emits it and V has no rule for it, with the open proposals that cover it), or unknown. One "
        "line per finding. Exit 0 when nothing is decomposable, out of scope, a closure gap, unknown or an incompatible "
        "schema mismatch, 1 otherwise, 2 for a missing or unreadable file.",
    )
    parser.add_argument("program", type=pathargs.input_file, metavar="FILE.pt2")
    add_opset_option(parser)
    parser.add_argument("--format", choices=("text", "json"), default="text")
    parser.set_defaults(func=run)


def check_file(path, version: str | None):
    """(report, program) for ``path`` against ``version``; UsageError for an unloadable file."""
    from opspec.bridge import decomp_table
    from opspec.checks import program as programs

    opset = load.load_opset(version)
    try:
        loaded = programs.load_program(path)
    except programs.ProgramError as err:
        raise UsageError(err) from None
    policy, _ = compatibility.read_policy(resources.opset_root())
    from opspec.proposals import coverage

    table = set(decomp_table.table_by_name(opset))
    report = programs.check(loaded.exported, opset, table, programs.later_versions(opset.version), policy, str(path),
                            coverage.open_by_op())
    return report, loaded


def run(args) -> int:
    report, _ = check_file(args.program, args.opset_version)
    if args.format == "json":
        print(json.dumps(report.to_dict(), indent=2))
        return report.exit_code
    for finding in report.ops:
        if finding.kind != "core":
            print(f"{args.program}: {finding.op} ({finding.count} call{'s' if finding.count > 1 else ''}): "
                  f"{finding.kind}{': ' + finding.detail if finding.detail else ''}")
    for note in report.notes:
        print(f"note: {note}")
    counts = ", ".join(f"{n} {kind}" for kind, n in sorted(report.counts().items()))
    calls = sum(f.count for f in report.ops)
    print(f"{len(report.ops)} distinct ops ({calls} calls) against opset {report.opset}: {counts or 'none'}")
    return report.exit_code
