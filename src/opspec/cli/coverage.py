"""``opspec coverage MODEL --backend NAME``: the ops a model needs that the opset or a backend lacks."""
from __future__ import annotations

import json

from opspec.bridge import decomp_table
from opspec.checks import coverage
from opspec.cli import UsageError
from opspec.reports import browse
from opspec.spec import load, manifests


def add_parser(subparsers) -> None:
    parser = subparsers.add_parser(
        "coverage",
        help="list the ops a model's exported graph needs, flagging those outside the opset or not lowered",
        description="Export MODEL with torch.export, decompose it with the opset's table and count every op "
        "left in the graph. Flags ops outside the opset and ops the backend's manifest does not lower. "
        "Exit 0 when nothing is flagged, 1 otherwise, 2 for unusable input.",
    )
    parser.add_argument("model", metavar="MODEL", help="pkg.module:factory returning (nn.Module, example_inputs)")
    parser.add_argument(
        "--backend",
        required=True,
        metavar="NAME",
        help="a manifest in conformance/backends (e.g. inductor), a path to one, or 'none' for the opset alone",
    )
    parser.add_argument("--opset", dest="opset_version", metavar="V", help="opset version (default: newest)")
    parser.add_argument("--format", choices=("table", "json"), default="table")
    parser.set_defaults(func=run)


def run(args) -> int:
    manifest = None
    if args.backend != manifests.NONE:
        try:
            manifest = manifests.load_manifest(manifests.manifest_path(args.backend))
        except manifests.UnknownBackend as err:
            raise UsageError(err) from None
    opset = load.load_opset(args.opset_version)
    if manifest is not None and manifest.opset != opset.version:
        raise UsageError(
            f"the {manifest.backend} manifest describes opset {manifest.opset}, not {opset.version} (use --opset {manifest.opset})"
        )
    try:
        table = decomp_table.decomposition_table(opset)
    except decomp_table.ImplementationError as err:
        raise UsageError(f"opset {opset.version}: {err}") from None
    try:
        model, inputs = coverage.load_model(args.model)
        report = coverage.coverage(model, inputs, opset, table, manifest, args.model)
    except coverage.ModelError as err:
        raise UsageError(err) from None
    if args.format == "json":
        print(json.dumps(report.to_dict(), indent=2))
    else:
        print(f"{args.model} on {report.backend or 'the opset alone'} (opset {opset.version})\n")
        print(browse.coverage_table(report))
    return report.exit_code
