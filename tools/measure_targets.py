"""Measure the core ops each decomposition rule produces and update its declared targets.

Traces every rule (or those matching --ops) with make_fx and the opset's table on
inputs drawn by the shared strategy layer, for every dtype the rule is tested in.
Produced core ops missing from `targets` are added with --write; produced non-core
ops are closure gaps and are only reported (a rule with one cannot be declared).

    python tools/measure_targets.py [--ops 'aten::index_*'] [--examples 12] [--write]
"""
from __future__ import annotations

import argparse
import fnmatch
import sys

from opspec.bridge import torch_ops
from opspec.checks import decomp_check
from opspec.spec import atomic, load, yamlio
from opspec.testing import strategies

HEADER = "# yaml-language-server: $schema=../schema/decompositions.schema.json\n"


def produced_ops(subject: decomp_check.Subject, examples: int, seed: int) -> set[str]:
    produced: set[str] = set()
    for dtype in decomp_check.dtypes_for(subject):
        try:
            calls = strategies.draw_examples(decomp_check.draw_calls(subject, dtype, "cpu"), examples, seed)
        except Exception as err:  # noqa: BLE001 - a rule the strategies cannot serve is reported, not fatal
            print(f"  {subject.op} {dtype}: cannot draw inputs: {type(err).__name__}: {err}", file=sys.stderr)
            continue
        for call in calls:
            try:
                call.run(subject.kernel)
            except Exception:
                continue  # not a valid call of the kernel
            fresh = call.copy()
            try:
                produced |= set(torch_ops.trace_ops(subject.candidate, fresh.args, fresh.kwargs, subject.table))
            except Exception as err:
                print(f"  {subject.op} {dtype}: cannot trace: {type(err).__name__}: {str(err).splitlines()[0][:120]}", file=sys.stderr)
    return produced


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--opset", dest="version")
    parser.add_argument("--ops", default="*", help="glob over rule ops")
    parser.add_argument("--examples", type=int, default=12, help="drawn calls per dtype")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--write", action="store_true", help="add missing core targets to the YAML")
    args = parser.parse_args()

    opset = load.load_opset(args.version)
    path = load.resources.opset_root() / opset.version / "decompositions.yaml"
    data = yamlio.load_file(path)
    core = opset.core_names()
    gaps = changed = 0
    for entry in data["rules"]:
        rule = opset.rules_by_op[entry["op"]]
        if not fnmatch.fnmatchcase(rule.op, args.ops):
            continue
        produced = produced_ops(decomp_check.subject_for_rule(opset, rule), args.examples, args.seed)
        outside = sorted(produced - core)
        missing = sorted((produced & core) - set(rule.targets))
        if outside:
            gaps += 1
            print(f"{rule.op}: closure gap, produces non-core {', '.join(outside)}")
        if missing:
            changed += 1
            print(f"{rule.op}: undeclared targets {', '.join(missing)}")
            entry["targets"] = list(entry["targets"]) + missing
    if args.write and changed:
        atomic.write_text(path, yamlio.dump(data, HEADER))
        print(f"{path}: targets updated for {changed} rule(s)")
    print(f"{changed} rule(s) with undeclared targets, {gaps} with closure gaps")
    return 1 if gaps else 0


if __name__ == "__main__":
    sys.exit(main())
