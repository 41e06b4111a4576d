"""``opspec report``: work on conformance reports; ``merge`` joins the shard reports of one split run, ``publish``
writes a report's published form (``conformance/results/NAME.json``)."""
from __future__ import annotations

from pathlib import Path

from opspec.cli import UsageError, pathargs


def add_parser(subparsers) -> None:
    parser = subparsers.add_parser("report", help="work on conformance reports (merge the parts of a split run)")
    actions = parser.add_subparsers(dest="action", required=True, metavar="ACTION")
    merge = actions.add_parser(
        "merge", help="join the reports of 'opspec conform --shard K/N' into one report",
        description="Join the reports of one split run (opspec conform --shard 1/N ... N/N) into the report one "
        "unsharded run writes. Refuses (exit 2, one line) parts that differ in opset, torch, backend or its "
        "version, device or settings, or were cut by another cost table, and a split with a shard missing, "
        "given twice, or a case in two parts. Exit 0 when every merged case passes or is expected, 1 otherwise.")
    merge.add_argument("parts", nargs="+", type=pathargs.input_file, metavar="PART", help="a shard's final report")
    merge.add_argument("--out", type=pathargs.output_file, metavar="FILE",
                       help="the merged report, its repros beside it in FILE's name with .repros (default: "
                            "conformance-BACKEND-DEVICE.json, as an unsharded run names it)")
    merge.set_defaults(func=run_merge)
    publish = actions.add_parser(
        "publish", help="write a report's published form (what conformance/results holds)",
        description="Write the published form of a report that opspec conform --report (or report merge) wrote: "
        "every verdict and what decided it, without what changes from run to run (each case's duration, where its "
        "repro was written) and with the values many cases share written once (opspec.results.publish). Two runs "
        "with the same verdicts publish the same records. With --check, write nothing: exit 1 when REPORT is not "
        "in its published form.")
    publish.add_argument("report", type=pathargs.input_file, metavar="REPORT", help="a full report")
    publish.add_argument("--out", type=pathargs.output_file, metavar="FILE",
                         help="the published report (default: REPORT itself, rewritten)")
    publish.add_argument("--check", action="store_true", help="only say whether REPORT is published as it is")
    publish.set_defaults(func=run_publish)


def run_merge(args) -> int:
    from opspec.conform import merge, report

    if args.out:
        _not_a_part(Path(args.out), args.parts)
    try:
        final, _ = merge.merge([Path(part) for part in args.parts])
    except merge.MergeError as err:
        raise UsageError(str(err)) from None
    out = Path(args.out or f"conformance-{report.slug(final.backend_name)}-{final.device}.json")
    _not_a_part(out, args.parts)
    pathargs.prepare(files=[out], folders=[out.with_suffix(".repros")])
    merge.write(out, final)
    print(report.summary_table(final))
    print(f"\nmerged {len(args.parts)} parts: {out}")
    return 0 if all(record.clean for record in final.records) else 1


def _not_a_part(out: Path, parts: list) -> None:
    if any(Path(part).resolve() == out.resolve() for part in parts):
        raise UsageError(f"--out {out}: is one of the parts; write the merged report elsewhere")


def run_publish(args) -> int:
    from opspec.results import publish
    from opspec.results.model import Report, ReportFormatError

    source = Path(args.report)
    try:
        report = Report.load(source)
    except ReportFormatError as err:
        raise UsageError(str(err)) from None
    text, read = publish.text(report), source.read_text(encoding="utf-8")
    if args.check:
        same = text == read
        print(f"{source}: {'published' if same else 'not in its published form: opspec report publish ' + str(source)}")
        return 0 if same else 1
    out = Path(args.out) if args.out else source
    pathargs.prepare(files=[out])
    from opspec.spec import atomic

    atomic.write_text(out, text)
    print(f"published {len(report.records)} cases: {out} ({len(text.encode()):,} bytes; {len(read.encode()):,} read)")
    return 0
