"""``opspec check-decomp``: check a decomposition of an aten overload against its eager kernel."""
from __future__ import annotations

import os
import sys
import time

from opspec.cli import UsageError, add_opset_option, dtype_names
from opspec.spec import load
from opspec.spec.model import canonical_op_name


def add_parser(subparsers) -> None:
    parser = subparsers.add_parser(
        "check-decomp",
        help="check a (candidate) decomposition against the eager kernel",
        description="Draw inputs from the op's schema and hints, run the eager kernel and the decomposition, "
        "and compare with the shared rule; a failure is shrunk to a minimal counterexample with a repro. "
        "Without --impl the opset's own rule is checked.",
    )
    parser.add_argument("op", nargs="?", metavar="OP", help="aten overload, e.g. aten::addcmul or aten::var_mean.correction")
    parser.add_argument("--impl", metavar="pkg.module:function", help="candidate called exactly like the aten overload")
    parser.add_argument("--all", action="store_true", help="check every rule of the opset")
    add_opset_option(parser)
    parser.add_argument("--device", choices=("cpu", "cuda"), default="cpu")
    parser.add_argument("--dtype", action="append", metavar="D", help="dtype to check (repeatable; default: the rule's list)")
    parser.add_argument("--max-examples", type=int, default=100, metavar="N", help="drawn calls per dtype (default 100)")
    parser.add_argument("--seed", type=int, default=0, metavar="S")
    parser.add_argument("--no-closure", action="store_true", help="skip tracing the decomposition for non-core ops")
    parser.set_defaults(func=run)


def run(args) -> int:
    from opspec.bridge import torch_ops, versions
    from opspec.checks import decomp_check

    if args.all == bool(args.op):
        raise UsageError("give exactly one of OP or --all")
    if args.all and args.impl:
        raise UsageError("--impl checks one op; it cannot be combined with --all")
    if args.max_examples < 1:
        raise UsageError("--max-examples must be at least 1")
    if args.device == "cuda" and not torch_ops.torch_module().cuda.is_available():
        raise UsageError("--device cuda: CUDA is not available on this machine")
    dtypes = dtype_names("--dtype", args.dtype)
    if "" not in sys.path and os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())  # candidates usually live beside the author, like `python -m`
    opset = load.load_opset(args.opset_version)
    if args.all:
        absent = {rule.op: absence for rule in opset.rules if (absence := versions.rule_absence(rule))}
        for absence in absent.values():
            print(f"skip  {absence}")
        subjects = [_subject(opset, rule.op, None) for rule in opset.rules if rule.op not in absent]
    else:
        subjects = [_subject(opset, canonical_op_name(args.op), args.impl)]

    failed = 0
    for subject in subjects:
        started = time.perf_counter()
        outcome = decomp_check.run(
            subject,
            dtypes=decomp_check.dtypes_for(subject, dtypes),
            device=args.device,
            max_examples=args.max_examples,
            seed=args.seed,
            closure=not args.no_closure,
        )
        elapsed = time.perf_counter() - started
        if outcome.ok:
            print(f"ok    {subject.op} ({subject.implementation}): {outcome.examples} calls, {elapsed:.1f}s"
                  + (f"; skipped: {outcome.skipped}" if outcome.skipped else ""))
            continue
        failed += 1
        if outcome.counterexample:
            print(f"FAIL  {subject.op} ({subject.implementation})\n{outcome.counterexample.render()}\n")
        elif outcome.broken_rows:
            print(f"FAIL  {subject.op} ({subject.implementation}): {len(outcome.broken_rows)} special-case row(s) broken\n"
                  + "\n".join(f"  {line}" for line in outcome.broken_rows) + "\n")
        else:
            print(f"ERROR {subject.op} ({subject.implementation}): {outcome.error}")
    if len(subjects) > 1:
        print(f"\n{len(subjects) - failed} of {len(subjects)} decompositions hold", file=sys.stderr)
    return 1 if failed else 0


def _subject(opset, op: str, impl: str | None):
    from opspec.bridge import decomp_table, torch_ops
    from opspec.checks import decomp_check

    live = torch_ops.all_aten_schemas()
    if op not in live:
        import difflib

        close = difflib.get_close_matches(op, list(live), n=1, cutoff=0.7)
        raise UsageError(f"unknown op {op}" + (f" (did you mean {close[0]}?)" if close else ""))
    try:
        if impl:
            return decomp_check.subject_for_candidate(opset, op, impl)
        rule = opset.rules_by_op.get(op)
        if rule is None:
            raise UsageError(f"opset {opset.version} has no decomposition rule for {op}; pass --impl to check a candidate")
        return decomp_check.subject_for_rule(opset, rule)
    except decomp_table.ImplementationError as err:
        raise UsageError(str(err)) from None
