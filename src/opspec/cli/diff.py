"""``opspec diff V1 V2``: the changelog between two opset versions."""
from __future__ import annotations

import json
import os
import sys

from opspec.cli import UsageError, checkout, pathargs
from opspec.proposals import check as checking
from opspec.reports import changelog
from opspec.spec import errata, load
from opspec.spec.model import VERSION_RE, version_key


def add_parser(subparsers) -> None:
    parser = subparsers.add_parser("diff", help="changelog between two opset versions (older first; reversed arguments are reordered)")
    parser.add_argument("old", metavar="V1")
    parser.add_argument("new", metavar="V2")
    parser.add_argument("--format", choices=("md", "json"), default="md")
    parser.add_argument("--root", type=pathargs.input_folder, metavar="DIR", help="repository root (default: the checkout around the cwd)")
    parser.set_defaults(func=run)


def run(args) -> int:
    ws = checkout(args.root)
    for version in (args.old, args.new):
        if not VERSION_RE.match(version):
            raise UsageError(f"{version!r} is not a YYYY.MM version")
    if version_key(args.old) > version_key(args.new):
        print(f"note: {args.old} is newer than {args.new}; showing the changes from {args.new} to {args.old}",
              file=sys.stderr)
        args.old, args.new = args.new, args.old
    old = load.load_opset(args.old, ws.opset)
    new = load.load_opset(args.new, ws.opset)
    proposals = [p.proposal for p in checking.load_all(ws.proposals) if p.proposal is not None]
    paths = {p.id: p.path for p in proposals}
    log = changelog.diff(old, new, changelog.attributions_from(proposals, new.version),
                         changelog.decisions_from(proposals, new.version), errata.load_errata(ws.opset))
    if args.format == "json":
        print(json.dumps(changelog.to_json(log), indent=2))
    else:
        def link(number: int) -> str | None:
            path = paths.get(number)
            return os.path.relpath(path) if path else None

        print(changelog.to_markdown(log, link=link), end="")
    return 0
