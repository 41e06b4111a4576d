"""``opspec ops`` and ``opspec show OP``: browse the opset from the terminal."""
from __future__ import annotations

import json

from opspec.cli import UsageError, add_opset_option, deprecated
from opspec.reports import browse, op_spec
from opspec.spec import errata, load, resources
from opspec.spec.special_cases import load_special_cases
from opspec.spec.model import CATEGORIES, STATUSES


def add_parser(subparsers) -> None:
    ops = subparsers.add_parser("ops", help="list the core ops of an opset version")
    add_opset_option(ops)
    deprecated.renamed(ops, "--version", "--opset V", dest="opset_version")
    ops.add_argument("--status", choices=STATUSES)
    ops.add_argument("--category", choices=CATEGORIES)
    ops.add_argument("--format", choices=("table", "json"), default="table")
    ops.set_defaults(func=run_ops)

    show = subparsers.add_parser(
        "show", help="show one core op or decomposed op in full",
        description="Show one core op or decomposed op in full. Prose of a released version that an erratum "
        "(opset/errata.yaml) corrects is shown corrected, with an ERRATUM line giving the text as released "
        "and the special-case rows that show the truth.")
    show.add_argument("op", metavar="OP", help="e.g. aten::add.Tensor, add.Tensor or aten.add.Tensor")
    add_opset_option(show)
    deprecated.renamed(show, "--version", "--opset V", dest="opset_version")
    show.add_argument("--format", choices=("text", "json"), default="text")
    show.set_defaults(func=run_show)


def run_ops(args) -> int:
    opset = load.load_opset(args.opset_version)
    selected = browse.filter_ops(opset, args.status, args.category)
    if args.format == "json":
        print(json.dumps([browse.op_record(op) for op in selected], indent=2))
    else:
        print(browse.ops_table(selected))
        print(f"\n{len(selected)} of {len(opset.ops)} core ops in opset {opset.version}")
    return 0


def run_show(args) -> int:
    opset = load.load_opset(args.opset_version)
    try:
        item = browse.lookup(opset, args.op)
    except KeyError as err:
        raise UsageError(err.args[0]) from None
    corrections = errata.load_errata()
    core = hasattr(item, "category")
    name = item.name if core else item.op
    spec = op_spec.read(resources.opset_root(), name, load.load_descriptions(), load_special_cases())
    if args.format == "json":
        record = browse.op_record(item) if core else browse.rule_record(item)
        found = browse.erratum_records(corrections, opset.version, "op" if core else "rule", name)
        print(json.dumps({**record, **({"errata": found} if found else {}), **spec.records(name)}, indent=2, default=str))
    else:
        print("\n".join([browse.describe(opset, item, corrections), *spec.lines(name)]))
    return 0
