"""``opspec golden``: replay the golden programs of released versions on the installed torch (and a backend)."""
from __future__ import annotations

import json
from pathlib import Path

from opspec.cli import UsageError, deprecated, pathargs
from opspec.spec import load


def add_parser(subparsers) -> None:
    parser = subparsers.add_parser(
        "golden",
        help="replay the golden programs: each loads, runs on its recorded inputs and matches its recorded outputs",
        description="Replay the golden programs of each released opset version (conformance/golden/VERSION, written "
        "by tools/make_golden.py): every program must load with the installed torch, run on its recorded inputs "
        "and match its recorded outputs (ops whose values the inputs do not determine: dtype and shape). With "
        "--backend, each program's module is compiled with torch.compile(backend=NAME) first. One line per "
        "program. Exit 0 all match, 1 otherwise, 2 usage or a missing index.",
        formatter_class=deprecated.OneEachFormatter,
    )
    parser.add_argument("--opset", dest="versions", action=deprecated.RepeatedOne, metavar="V",
                        help="a version to replay, repeated for several (default: every version with golden programs)")
    parser.add_argument("--dir", type=pathargs.input_folder, nargs="+", metavar="DIR",
                        help="replay the programs of these folders, each holding an index.yaml (e.g. exported by "
                             "another torch)")
    parser.add_argument("--backend", metavar="NAME", help="a torch.compile backend (inductor, aot_eager, ...)")
    parser.add_argument("--format", choices=("text", "json"), default="text")
    parser.set_defaults(func=run)


def folders(args) -> list[Path]:
    from opspec.checks import golden

    if args.dir:
        return [Path(folder) for folder in args.dir]
    root = golden.golden_root()
    known = {info.version for info in load.load_versions()}
    versions = args.versions or sorted(p.name for p in root.iterdir() if (p / golden.INDEX).is_file()) \
        if root.is_dir() else args.versions or []
    for version in versions:
        if version not in known:
            raise UsageError(f"--opset {version}: no such opset version")
        if not (root / version / golden.INDEX).is_file():
            raise UsageError(f"opset {version} has no golden programs ({root / version / golden.INDEX} is missing)")
    if not versions:
        raise UsageError(f"no golden programs under {root}")
    return [root / version for version in versions]


def run(args) -> int:
    from opspec.checks import golden

    results = []
    for folder in folders(args):
        index, outcomes = golden.replay(folder, args.backend)
        results.append((folder, index, outcomes))
    failed = any(not o.ok for _, _, outcomes in results for o in outcomes)
    if args.format == "json":
        print(json.dumps([{"folder": str(folder), "opset": index["opset"], "exported_with": index["torch"],
                           "programs": [o.to_dict() for o in outcomes]} for folder, index, outcomes in results], indent=2))
        return int(failed)
    for folder, index, outcomes in results:
        for outcome in outcomes:
            stages = [s for s in ("loads", "runs", "matches") if getattr(outcome, s)]
            verdict = ", ".join(stages) if outcome.ok else ", ".join(stages + ["FAILS"])
            print(f"{index['opset']}/{outcome.file}: {verdict}{': ' + outcome.detail if outcome.detail else ''}")
        ok = sum(o.ok for o in outcomes)
        where = f" through {args.backend}" if args.backend else ""
        print(f"opset {index['opset']} (exported with torch {index['torch']}): {ok} of {len(outcomes)} programs "
              f"load, run and match{where}; {len(index['uncovered'])} core ops without a program")
    return int(failed)
