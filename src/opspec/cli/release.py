"""``opspec release VERSION``: apply the proposals accepted for VERSION and seal it."""
from __future__ import annotations

import datetime as _dt
import sys

from opspec.cli import UsageError, checkout, pathargs
from opspec.cli.proposal import DATE_RE
from opspec.proposals import release
from opspec.spec.errors import OpsetError


def add_parser(subparsers) -> None:
    parser = subparsers.add_parser("release", help="apply accepted proposals and seal an opset version")
    parser.add_argument("version", metavar="VERSION", help="YYYY.MM")
    parser.add_argument("--dry-run", action="store_true", help="say what would change; write nothing")
    parser.add_argument("--date", help="release date (default: today)")
    parser.add_argument("--retarget", metavar="NEXT",
                        help="move proposals still open (draft, review, deferred) for VERSION to NEXT instead of refusing")
    parser.add_argument("--root", type=pathargs.input_folder, metavar="DIR", help="repository root (default: the checkout around the cwd)")
    parser.set_defaults(func=run)


def run(args) -> int:
    ws = checkout(args.root)
    date = args.date or _dt.date.today().isoformat()
    if not DATE_RE.match(date):
        raise UsageError(f"--date {date!r} is not YYYY-MM-DD")
    try:
        plan = release.plan(ws, args.version, date, retarget=args.retarget)
    except OpsetError as err:  # the release cannot go on: data or proposals say why
        for finding in err.findings:
            print(finding, file=sys.stderr)
        return 1
    if plan is None:
        print(f"opset {args.version} is already released; nothing changed")
        return 0
    if not args.dry_run:
        pathargs.prepare(files=list(plan.writes))
    for proposal, done in plan.applied:
        print(f"proposal {proposal.label} ({proposal.title}): {'; '.join(done) or 'no data changes'}")
    for proposal in plan.retargeted:
        print(f"proposal {proposal.label} ({proposal.title}): still {proposal.status}, retargeted to {args.retarget}")
    print(f"{len(plan.applied)} proposal(s) for {plan.version} (from {plan.base}), digest {plan.digest}")
    if args.dry_run:
        for path in plan.writes:
            print(f"would write {path}")
        return 0
    release.commit(plan)
    print(f"released opset {plan.version}")
    for path, named in release.stale_manifests(ws, plan.version):
        print(f"note: {path} describes opset {named}; re-measure it: python tools/measure_lowering.py --opset {plan.version}")
    return 0
