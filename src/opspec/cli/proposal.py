"""``opspec proposal new|check|list|set-status``: write, check and move proposals."""
from __future__ import annotations

import datetime as _dt
import difflib
import json
import re
import sys
from pathlib import Path

from opspec.cli import UsageError, checkout, pathargs
from opspec.proposals import check as checking
from opspec.proposals import edit, nextstep
from opspec.proposals.companions import SharedFiles
from opspec.proposals.model import STATUSES, TYPES
from opspec.proposals.opsetview import OpsetView, base_version, read_index, read_view
from opspec.proposals.parse import parse_file
from opspec.proposals.transitions import move_problem
from opspec.spec import atomic, workspace
from opspec.spec.yamlio import DataError

OP_RE = re.compile(r"^[a-z_][a-z0-9_]*::[A-Za-z0-9_]+(\.[A-Za-z0-9_]+)?$")
DATE_RE = re.compile(r"^[0-9]{4}-[0-9]{2}-[0-9]{2}$")
# Proposal types about an op that is core now; an add-op is about one that is not.
ABOUT_A_CORE_OP = ("deprecate-op", "remove-op", "schema-change", "testing-change")


def add_parser(subparsers) -> None:
    parser = subparsers.add_parser("proposal", help="create, check, list and move proposals")
    parser.add_argument("--root", type=pathargs.input_folder, metavar="DIR", help="repository root (default: the checkout around the cwd)")
    actions = parser.add_subparsers(dest="action", required=True, metavar="ACTION")

    new = actions.add_parser("new", help="scaffold a proposal with the next free id")
    new.add_argument("--type", required=True, choices=TYPES)
    new.add_argument("--title", required=True)
    new.add_argument("--op", metavar="OP", help="the qualified op it is about, e.g. aten::bucketize.Tensor")
    new.add_argument("--author", help="default: git config user.name")
    new.add_argument("--date", help="date for `created` and `updated` (default: today)")
    new.set_defaults(func=run_new)

    chk = actions.add_parser("check", help="check proposals (default: all of them)")
    chk.add_argument("files", nargs="*", type=_file_or_id, metavar="FILE_OR_ID",
                     help="proposal files, or ids as set-status takes them (default: every proposal)")
    chk.add_argument("--base", metavar="GIT_REF", help="also check every status move since this commit")
    chk.add_argument("--no-torch", action="store_true", help="skip the checks that need the installed torch")
    chk.set_defaults(func=run_check)

    lst = actions.add_parser("list", help="list proposals")
    lst.add_argument("--status", choices=STATUSES)
    lst.add_argument("--format", choices=("table", "json"), default="table")
    lst.set_defaults(func=run_list)

    meas = actions.add_parser("measure", help="run the checks a proposal's changes imply and record them as evidence")
    meas.add_argument("id", type=int, metavar="ID")
    meas.add_argument("--max-examples", type=int, default=100, metavar="N", help="drawn calls per dtype (default 100)")
    meas.add_argument("--seed", type=int, default=0, metavar="S")
    meas.add_argument("--date", help="date of the measurement (default: today)")
    meas.set_defaults(func=run_measure)

    move = actions.add_parser("set-status", help="move a proposal to a new status (front matter only)")
    move.add_argument("id", type=int, metavar="ID")
    move.add_argument("status", choices=[s for s in STATUSES], metavar="STATUS")
    move.add_argument("--resolution", help="the decision and where it was taken")
    move.add_argument("--target-version", metavar="V")
    move.add_argument("--superseded-by", type=int, metavar="ID")
    move.add_argument("--reviewer", action="append", metavar="NAME", help="who decided (repeatable); writes `decision`")
    move.add_argument("--record", metavar="URL_OR_PATH", help="where the decision is recorded; writes `decision`")
    move.add_argument("--reason", action="append", metavar="TEXT", help="why it was decided so (repeatable)")
    move.add_argument("--date", help="date for `updated` (default: today)")
    move.set_defaults(func=run_set_status)


def _today(value: str | None) -> str:
    if value is None:
        return _dt.date.today().isoformat()
    if not DATE_RE.match(value):
        raise UsageError(f"--date {value!r} is not YYYY-MM-DD")
    return value


def run_new(args) -> int:
    ws = checkout(args.root)
    pathargs.prepare(folders=[ws.proposals])
    if args.op and not OP_RE.match(args.op):
        raise UsageError(f"--op {args.op!r} is not a qualified op name such as aten::bucketize.Tensor")
    title = args.title.strip()
    if len(title) < 5 or "\n" in title or len(title) > 120:
        lines = " on several lines" if "\n" in title else ""
        raise UsageError(f"--title is {len(title)} characters{lines}; it must be one line of 5 to 120 characters")
    if args.type != "process" and not args.op:
        article = "an" if args.type[0] in "aeiou" else "a"
        raise UsageError(f"{article} {args.type} proposal needs --op OP, the qualified op it is about")
    date = _today(args.date)
    known = _known_about(ws, args.type, args.op) if args.op and args.type != "process" else {}
    from opspec.proposals.scaffold import create  # jinja2: only this action needs it

    path = create(ws.proposals, type=args.type, title=title, op=args.op, author=args.author, date=date, **known)
    display = checking.display_path(path)
    print(display)
    print(f"next: {nextstep.after_new(display, args.type)}", file=sys.stderr)
    return 0


def _known_about(ws: workspace.Workspace, type: str, op: str) -> dict:
    """What the newest opset version and the installed torch already say about ``op``, for the scaffold; a
    UsageError when the op cannot be the subject of such a proposal."""
    view = _newest_view(ws.opset)
    version = view.version if view else "any opset version"
    if type in ABOUT_A_CORE_OP:
        if view is None or not view.is_core(op):
            core = [name for name in view.ops if view.is_core(name)] if view else []
            raise UsageError(f"--op {op}: not a core op in {version}{_did_you_mean(op, core)}; "
                             f"a {type} proposal is about a core op")
        if type == "testing-change":
            return {"testing": view.ops[op].get("testing") or {}}
    schemas = _torch_schemas() if type in ("add-op", "decompose-op", "schema-change") else None
    if schemas is not None and type != "schema-change" and op not in schemas:
        raise UsageError(f"--op {op}: the installed torch has no operator {op}{_did_you_mean(op, schemas)}")
    known: dict = {"schema": schemas.get(op)} if schemas and type in ("add-op", "schema-change") else {}
    if type == "add-op":
        if view is not None and view.is_core(op):
            raise UsageError(f"--op {op}: already core in {version}; an add-op proposal adds an op that is not core yet")
        rule = view.rules.get(op) if view else None
        if rule and rule.get("kind") != "optional":  # a default rule decomposes the op away: the proposal drops it
            known.update(removed_rule=rule, testing=rule.get("testing") or {})
        known["companions"] = SharedFiles(ws.opset).of(op)
    return known


def _newest_view(opset_root: Path) -> OpsetView | None:
    """The newest opset version as a proposal's changes would see it; None when there is none."""
    try:
        version = base_version(read_index(opset_root), None)
    except DataError as err:
        raise UsageError(f"cannot read the opset: {err}") from None
    return read_view(opset_root, version) if version else None


def _did_you_mean(name: str, candidates) -> str:
    close = difflib.get_close_matches(name, list(candidates), n=1, cutoff=0.8)  # near-typos only
    return f" (did you mean {close[0]}?)" if close else ""


def _torch_schemas() -> dict[str, str] | None:
    """Every schema the installed torch prints, when torch is there to ask."""
    try:
        from opspec.bridge import torch_ops

        return torch_ops.all_aten_schemas()
    except ImportError:
        return None


def _file_or_id(text: str):
    """A proposal's id (``8``, ``0008``) as it is, else a file that must exist."""
    return text if text.isdigit() else pathargs.input_file(text)


def _by_id(folder: Path, wanted: str) -> Path:
    found = sorted(folder.glob(f"{int(wanted):04d}-*.md"))
    if not found:
        raise UsageError(f"{wanted}: no proposal has this id in {folder} (opspec proposal list shows them)")
    return found[0]


def run_check(args) -> int:
    ws = checkout(args.root)
    files = [_by_id(ws.proposals, f) if isinstance(f, str) else f for f in args.files] or None
    try:
        result = checking.check(ws.proposals, ws.opset, files=files, base=args.base, use_torch=not args.no_torch)
    except checking.GitError as err:
        raise UsageError(str(err)) from None
    for note in result.notes:
        print(f"note: {note}", file=sys.stderr)
    for finding in result.findings:
        print(finding)
    count = len(result.files)
    if result.findings:
        print(f"{len(result.findings)} finding(s) in {count} proposal(s)", file=sys.stderr)
        flagged = sorted({finding.mark.path for finding in result.findings})
        print(f"next: {nextstep.after_findings(flagged)}", file=sys.stderr)
        return 1
    print(f"{count} proposal(s) checked, no findings", file=sys.stderr)
    if len(result.files) == 1 and result.proposals:  # several proposals have no one next step
        parsed = result.files[0]
        step = nextstep.after_check(parsed.proposal, parsed.display, read_index(ws.opset),
                                    SharedFiles(ws.opset), checking.uncommitted(parsed.path))
        print(f"next: {step}", file=sys.stderr)
    return 0


def run_list(args) -> int:
    ws = checkout(args.root)
    rows = []
    for parsed in checking.load_all(ws.proposals):
        p = parsed.proposal
        if p is None:
            print(f"{parsed.findings[0] if parsed.findings else parsed.display}: skipped (run `opspec proposal check`)", file=sys.stderr)
            continue
        if args.status and p.status != args.status:
            continue
        rows.append({"id": p.id, "status": p.status, "type": p.type, "target_version": p.target_version,
                     "title": p.title, "path": parsed.display})
    if args.format == "json":
        print(json.dumps(rows, indent=2))
        return 0
    for row in rows:
        target = row["target_version"] or "-"
        print(f"{row['id']:04d}  {row['status']:<11}  {row['type']:<13}  {target:<7}  {row['title']}")
    return 0


def _find(ws: workspace.Workspace, number: int) -> Path:
    matches = sorted(ws.proposals.glob(f"{number:04d}-*.md"))
    if not matches:
        raise UsageError(f"no proposal {number:04d} in {checking.display_path(ws.proposals)}")
    if len(matches) > 1:
        raise UsageError(f"proposal id {number:04d} is used by {len(matches)} files: {', '.join(p.name for p in matches)}")
    return matches[0]


def _read_proposal(ws, number: str):
    """The proposal file with that number, parsed; its findings are printed when it does not parse."""
    path = _find(ws, number)
    display = checking.display_path(path)
    parsed = parse_file(path, display)
    if parsed.proposal is None:
        for finding in parsed.findings:
            print(finding, file=sys.stderr)
    return path, display, parsed


def run_measure(args) -> int:
    from opspec.proposals import measure

    ws = checkout(args.root)
    if args.max_examples < 1:
        raise UsageError("--max-examples must be at least 1")
    pathargs.prepare(folders=[ws.proposals])
    path, display, parsed = _read_proposal(ws, args.id)
    if parsed.proposal is None:
        return 2
    p = parsed.proposal
    if p.status not in ("draft", "review"):
        print(f"{parsed.mark('status')}: evidence is recorded while a proposal is open (draft or review), not {p.status}",
              file=sys.stderr)
        return 1
    entries = measure.measure(p, ws.opset, max_examples=args.max_examples, seed=args.seed, date=_today(args.date))
    if not entries:
        print(f"{display}: no change of a {p.type} proposal needs a measurement")
        return 0
    text = edit.set_fields(parsed.text, display, {"evidence": measure.merged(p.evidence, entries)})
    atomic.write_text(path, text)
    for entry in entries:
        print(f"{display}: {entry['check']} {entry['op']}: {entry['result']}: {entry['detail']}")
    return 0 if all(e["result"] == "pass" for e in entries) else 1


def run_set_status(args) -> int:
    ws = checkout(args.root)
    pathargs.prepare(folders=[ws.proposals])
    path, display, parsed = _read_proposal(ws, args.id)
    if parsed.proposal is None:
        return 2
    p = parsed.proposal
    try:
        index = read_index(ws.opset)
    except DataError as err:
        print(err, file=sys.stderr)
        return 2
    if args.status == "implemented":
        print(f"{parsed.mark('status')}: status implemented is set only by `opspec release`", file=sys.stderr)
        return 1
    problem = move_problem(p.status, args.status, target_released=index.get(p.target_version or "") == "released")
    if problem:
        print(f"{parsed.mark('status')}: {problem}", file=sys.stderr)
        return 1
    state = checking.uncommitted(path)
    if state:  # `check --base` judges every move against the committed file: an uncommitted one escapes it
        how = ("commit it as a draft before moving its status (`opspec proposal check --base` refuses a proposal "
               "whose first commit is not a draft)" if state == "not committed" else
               "commit them before moving its status (`opspec proposal check --base` judges each move against the "
               "committed file, one move per commit)")
        print(f"{display}: {state}; {how}", file=sys.stderr)
        return 1
    if args.target_version is not None and args.target_version not in index and not re.match(r"^[0-9]{4}\.(0[1-9]|1[0-2])$", args.target_version):
        raise UsageError(f"--target-version {args.target_version!r} is not a YYYY.MM version")
    updates: dict[str, object] = {"status": args.status, "updated": _today(args.date)}
    if args.resolution is not None:
        updates["resolution"] = args.resolution
    if args.target_version is not None:
        updates["target_version"] = args.target_version
    if args.superseded_by is not None:
        updates["superseded_by"] = args.superseded_by
    if args.reviewer or args.record or args.reason:
        decision: dict[str, object] = {"date": updates["updated"]}
        if args.reviewer:
            decision["reviewers"] = args.reviewer
        if args.record:
            decision["record"] = args.record
        decision["reasons"] = args.reason or []
        updates["decision"] = decision
    text = edit.set_fields(parsed.text, display, updates)
    # Check the result as a whole before anything is written: the move may need fields set.
    result = checking.check(ws.proposals, ws.opset, files=[path], check_changes=False, replace={path: text})
    problems = result.findings
    if problems:
        for finding in problems:
            flag = checking.set_status_flag(finding)
            print(f"{finding}; {flag} writes it" if flag else finding, file=sys.stderr)
        return 1
    atomic.write_text(path, text)
    print(f"{display}: {p.status} -> {args.status}")
    moved = result.files[0].proposal
    print(f"next: {nextstep.after_move(moved, index, SharedFiles(ws.opset))}", file=sys.stderr)
    return 0
