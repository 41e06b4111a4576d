"""``opspec drift [--format text|json]``."""
from __future__ import annotations

import json
import sys

from opspec.cli import add_opset_option, pathargs
from opspec.spec import load


def add_parser(subparsers) -> None:
    parser = subparsers.add_parser(
        "drift",
        help="compare the opset with the installed torch",
        description="Core-tag, schema and decomposition drift between an opset version and the "
        "installed torch; with --closure, the non-core ops that survive the version's own decomposition table.",
    )
    add_opset_option(parser)
    parser.add_argument("--format", choices=("text", "json"), default="text")
    parser.add_argument(
        "--closure",
        action="store_true",
        help="also trace every non-core entry of the version's table (torch's core table with the version's rules) and "
        "list the non-core ops that survive it, each with the open proposals that cover it, the ones the version "
        "declares out of scope, and the in-place ops torch's decompositions emit (functionalized away); "
        "about a minute on two cores, in child processes",
    )
    parser.add_argument(
        "--propose",
        metavar="DIR",
        type=pathargs.output_folder,
        help="write a draft proposal into DIR (e.g. proposals) for each drift item no open proposal covers",
    )
    parser.set_defaults(func=run)


def run(args) -> int:
    from opspec.checks import drift

    opset = load.load_opset(args.opset_version)
    progress = Progress(sys.stderr)
    covered = None
    if args.closure:
        from opspec.proposals import coverage

        covered = coverage.open_by_op()
    report = drift.compute(opset, closure=args.closure, progress=progress, covered=covered)
    progress.finish()
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


class Progress:
    """Progress on stderr: one rewritten line on a terminal; elsewhere (logs, CI) a line per
    tenth of each phase. Messages are ``PHASE I/N NAME``."""

    def __init__(self, stream):
        self.stream = stream
        self.interactive = stream.isatty()
        self.shown: tuple[str, int] | None = None

    def __call__(self, message: str) -> None:
        if self.interactive:
            print(f"\r\033[K{message}", end="", file=self.stream, flush=True)
            return
        phase, _, rest = message.partition(" ")
        count = rest.split(" ", 1)[0]
        done, _, total = count.partition("/")
        if not (done.isdigit() and total.isdigit()):
            return
        tenth = 10 * int(done) // max(int(total), 1)
        if self.shown is None or self.shown[0] != phase or tenth > self.shown[1]:
            self.shown = (phase, tenth)
            print(f"drift: {phase} {count}", file=self.stream, flush=True)

    def finish(self) -> None:
        if self.interactive:
            print("\r\033[K", end="", file=self.stream, flush=True)
