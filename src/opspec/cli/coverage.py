"""``opspec coverage MODEL --backend NAME [...]``: the ops a model needs that the opset or its backends lack."""
from __future__ import annotations

import json
import sys

from opspec.checks import models
from opspec.cli import UsageError, add_opset_option
from opspec.reports import browse
from opspec.spec import load, manifests


def add_parser(subparsers) -> None:
    parser = subparsers.add_parser(
        "coverage",
        help="list the ops a model's exported graph needs, flagging those its backends do not lower",
        description="Export MODEL once with torch.export, decompose it with the opset's table and count every op "
        "left in the graph. Each op is core, bookkeeping (an assertion or range constraint the opset's policy "
        "covers) or outside the opset; against each backend's manifest it is lowered, fallback (with what ran instead), unsupported or undeclared on "
        "the device; an op a manifest lowers except for some argument settings or input dtypes (fallback_args) is "
        "flagged only where a call in the graph has one. For a backend that runs the model's own code (PyTorch/XLA), "
        "the model also runs once eagerly, and the tensor values its Python code reads (aten::_local_scalar_dense) "
        "count too, as do its calls of non-core ops the backend's manifest measured as fallbacks (eager_ops). Exit 0 when no backend leaves an op unlowered (with --backend none: no op outside the "
        "opset), 1 otherwise, 2 for unusable input.",
    )
    parser.add_argument("model", metavar="MODEL", help=f"{models.FORMS}; the factory returns (nn.Module, args), "
                        "(nn.Module, args, kwargs) or a dict with model, args, kwargs, dynamic_shapes")
    parser.add_argument(
        "--backend",
        action="append",
        required=True,
        metavar="NAME",
        help="a manifest in conformance/backends (e.g. inductor), a path to one, or 'none' for the opset alone; "
        "repeatable or comma-separated (one export serves them all)",
    )
    parser.add_argument("--device", choices=("cpu", "cuda"), default="cpu",
                        help="the device whose lowering facts apply (default cpu)")
    parser.add_argument("--dynamic", action="store_true",
                        help="export with every dimension of every tensor input dynamic (Dim.AUTO)")
    add_opset_option(parser)
    parser.add_argument("--format", choices=("table", "json"), default="table")
    parser.set_defaults(func=run)


def backend_names(values: list[str]) -> list[str]:
    names = list(dict.fromkeys(n.strip() for value in values for n in value.split(",") if n.strip()))
    if manifests.NONE in names and len(names) > 1:
        raise UsageError("--backend none checks the opset alone; it cannot be combined with other backends")
    return names


def load_manifests(names: list[str], opset_version: str) -> list[manifests.BackendManifest]:
    found = []
    for name in names:
        if name == manifests.NONE:
            continue
        try:
            manifest = manifests.load_manifest(manifests.manifest_path(name))
        except manifests.UnknownBackend as err:
            raise UsageError(err) from None
        except load.OpsetError as err:
            raise UsageError(err.findings[0] if err.findings else err) from None
        if manifest.opset != opset_version:
            # lowering is a fact of the backend and the op, not of the opset: a user pinned to another version
            # gets the answer for the ops both versions share, and is told how the figures could be exact
            print(f"warning: the {manifest.backend} manifest describes opset {manifest.opset}, not {opset_version}: "
                  f"its facts are used for the ops it lists; ops it does not list count as undeclared "
                  f"(for exact figures, measure it again: tools/measure_lowering.py --opset {opset_version})",
                  file=sys.stderr)
        found.append(manifest)
    return found


def run(args) -> int:
    from opspec.bridge import decomp_table
    from opspec.checks import coverage
    from opspec.examples import zoo  # torch

    names = backend_names(args.backend)
    opset = load.load_opset(args.opset_version)
    chosen = load_manifests(names, opset.version)
    try:
        table = decomp_table.decomposition_table(opset)
    except decomp_table.ImplementationError as err:
        raise UsageError(f"opset {opset.version}: {err}") from None
    try:
        example = models.load_model(args.model, zoo.ZOO)
        if args.dynamic:
            example = example.with_all_dims_dynamic()
        report = coverage.coverage(example, opset, table, chosen, args.model, args.device)
    except models.ModelError as err:
        raise UsageError(err) from None
    if args.format == "json":
        print(json.dumps(report.to_dict(), indent=2))
    else:
        where = ", ".join(report.backends) or "the opset alone"
        print(f"{args.model} on {where} ({args.device}, opset {opset.version})\n")
        print(browse.coverage_table(report))
    return report.exit_code
