"""``opspec upgrade FILE.pt2 --to V [--out PATH]``: rewrite an exported program to opset V and verify it."""
from __future__ import annotations

import sys
from pathlib import Path

from opspec.cli import UsageError, pathargs
from opspec.proposals import check as checking
from opspec.spec import compatibility, load, resources


def add_parser(subparsers) -> None:
    parser = subparsers.add_parser(
        "upgrade",
        help="rewrite an exported program to a later opset version and verify it numerically",
        description="Apply what opset V decided to the program in FILE (torch.export.save): its decomposition table "
        "(the rules it adopted) and the upgraders of the accepted proposals released up to V whose op the program "
        "calls. The result is run on the program's recorded inputs (else the example inputs torch.export saved), "
        "compared with the original's outputs, and checked as `check-program --opset V` checks it; only then is it "
        "written, with the inputs and outputs recorded. Exit 0 written, 1 the program cannot be moved to V "
        "(outputs differ, or ops V does not cover remain), 2 usage or an unreadable file.",
    )
    parser.add_argument("program", type=pathargs.input_file, metavar="FILE.pt2")
    parser.add_argument("--to", dest="version", required=True, metavar="V", help="the opset version to upgrade to")
    parser.add_argument("--out", type=pathargs.output_file, metavar="PATH",
                        help="where to write the upgraded program (default: FILE with .V.pt2 in place of .pt2)")
    parser.add_argument("--proposals", type=pathargs.input_folder, metavar="DIR",
                        help="the proposals whose upgraders apply (default: proposals/ of the checkout around the cwd, "
                             "else none)")
    parser.set_defaults(func=run)


def default_out(program: Path, version: str) -> Path:
    return program.with_name(f"{program.name.removesuffix('.pt2')}.{version}.pt2")


def run(args) -> int:
    from opspec.checks import program as programs
    from opspec.proposals import upgrade, upgraders

    opset = load.load_opset(args.version)
    out = args.out or default_out(Path(args.program), opset.version)
    pathargs.prepare(files=[out])
    try:
        loaded = programs.load_program(args.program)
    except programs.ProgramError as err:
        raise UsageError(err) from None
    folder = args.proposals or _checkout_proposals()
    proposals = [p.proposal for p in checking.load_all(folder)] if folder else []
    chosen = upgraders.implemented([p for p in proposals if p is not None], None, opset.version)
    policy, _ = compatibility.read_policy(resources.opset_root())
    later = programs.later_versions(opset.version)
    try:
        result = upgrade.upgrade(loaded, opset, chosen, later, policy)
    except upgrade.UpgradeError as err:
        print(f"opspec upgrade: {err}", file=sys.stderr)
        return 1
    upgrade.save(result, out)
    for line in result.applied:
        print(f"applied: {line}")
    verdict = result.comparison
    error = f" (largest error {verdict.max_abs_error:.3g})" if verdict and verdict.max_abs_error is not None else ""
    print(f"outputs match the original on the recorded inputs{error}; check-program --opset {opset.version}: "
          f"{sum(f.count for f in result.report.ops)} calls, nothing outside {opset.version}")
    print(f"wrote {out}")
    return 0


def _checkout_proposals() -> Path | None:
    from opspec.spec import workspace

    ws = workspace.find(None)
    return ws.proposals if workspace.is_checkout(ws.root) and ws.proposals.is_dir() else None
