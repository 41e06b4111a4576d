"""``opspec site build|serve``: the documentation site from the data, proposals and results."""
from __future__ import annotations

import sys

from opspec.cli import UsageError, checkout, pathargs


def add_parser(subparsers) -> None:
    parser = subparsers.add_parser("site", help="build or serve the documentation site")
    parser.add_argument("--root", type=pathargs.input_folder, metavar="DIR", help="repository root (default: the checkout around the cwd)")
    actions = parser.add_subparsers(dest="action", required=True, metavar="ACTION")
    build = actions.add_parser("build", help="generate the pages and build the site (mkdocs --strict)")
    build.add_argument("--out", type=pathargs.output_folder, metavar="DIR", help="output folder (default: site/build)")
    build.set_defaults(func=run_build)
    serve = actions.add_parser("serve", help="build, then serve the site on 127.0.0.1")
    serve.add_argument("--out", type=pathargs.output_folder, metavar="DIR", help="output folder (default: site/build)")
    serve.add_argument("--port", type=int, default=8000)
    serve.set_defaults(func=run_serve)


def _build(args):
    from opspec.reports.site import build as site_build

    ws = checkout(args.root)
    # the site and the generated pages are swapped in from beside where they go: both folders must be writable
    pathargs.prepare(folders=[args.out or ws.site / "build", ws.site / "docs" / site_build.GENERATED])
    try:
        result = site_build.build(ws, args.out)
    except site_build.BuildError as err:
        print(f"opspec site: {err}", file=sys.stderr)
        return None
    for line in result.skipped_proposals:
        print(f"{line} (proposal left off the site)", file=sys.stderr)
    print(f"built {result.pages} generated pages into {result.out} in {result.seconds:.1f} s")
    return result


def run_build(args) -> int:
    return 0 if _build(args) else 1


def run_serve(args) -> int:
    result = _build(args)
    if not result:
        return 1
    from opspec.reports.site import build as site_build

    try:
        httpd = site_build.server(result.out, args.port, quiet=False)
    except OSError as err:
        raise UsageError(f"cannot listen on 127.0.0.1:{args.port}: {err.strerror}") from None
    print(f"serving {result.out} at http://127.0.0.1:{httpd.server_address[1]}/ (Ctrl-C stops)")
    with httpd:
        httpd.serve_forever()
    return 0
