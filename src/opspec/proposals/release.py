"""`opspec release VERSION`: apply the accepted proposals and seal the version.

The whole release is computed in memory and staged on disk first; only when
every file is ready (and schema-clean) are they moved into place, index last,
so a failure at any point leaves the repository as it was. A released version
is immutable: releasing it again finds nothing to do.
"""
from __future__ import annotations

import heapq
import os
import re
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from opspec.checks import compatibility
from opspec.proposals import check as checking
from opspec.proposals import edit
from opspec.proposals.changes import Draft, apply_proposal, stamp
from opspec.proposals.model import Proposal
from opspec.spec import compatibility as compatibility_policy
from opspec.spec import atomic, errata, load, yamlio
from opspec.spec.errors import Finding, OpsetError
from opspec.spec.model import VERSION_RE, version_key
from opspec.spec.workspace import Workspace
from opspec.spec.yamlio import Mark

OPEN_UNDECIDED = ("draft", "review", "deferred")
OUT_OF_SCOPE_HEADER = """# yaml-language-server: $schema=../schema/out_of_scope.schema.json
# Non-core ops torch can emit that this version decided not to cover: neither core
# nor decomposed. A backend owes them nothing; `opspec drift --closure` and
# `opspec check-program` name them as decided, with the proposal and the reason.
# Written by `opspec release` from decide-family proposals; never edited by hand.
"""


@dataclass
class Plan:
    version: str
    base: str  # the version whose files the release starts from (itself when sealing a draft)
    applied: list[tuple[Proposal, list[str]]] = field(default_factory=list)  # proposal, what it did
    writes: dict[Path, str] = field(default_factory=dict)  # final path -> text
    digest: str = ""
    new_folder: bool = False
    retargeted: list[Proposal] = field(default_factory=list)  # open proposals moved to the next version


def _header(path: Path) -> str:
    """The comment lines a data file opens with (schema hint, notes), kept across a rewrite."""
    lines = []
    for line in path.read_text(encoding="utf-8").splitlines(keepends=True):
        if not line.startswith("#"):
            break
        lines.append(line)
    return "".join(lines)


def order_proposals(selected: list[Proposal], implemented: set[int]) -> list[Proposal]:
    """`requires` order, ties by id. Raises OpsetError on a cycle or an unmet requirement."""
    by_id = {p.id: p for p in selected}
    findings = []
    for p in selected:
        for need in p.requires:
            if need not in by_id and need not in implemented:
                findings.append(Finding(Mark(checking.display_path(p.path), 1, 1),
                                        f"requires proposal {need}, which is neither implemented nor accepted for this release"))
    if findings:
        raise OpsetError(findings)
    waiting = {p.id: {r for r in p.requires if r in by_id} for p in selected}
    ready = [pid for pid, needs in waiting.items() if not needs]
    heapq.heapify(ready)
    ordered = []
    while ready:
        pid = heapq.heappop(ready)
        ordered.append(by_id[pid])
        for other, needs in waiting.items():
            if pid in needs:
                needs.discard(pid)
                if not needs:
                    heapq.heappush(ready, other)
    if len(ordered) != len(selected):
        stuck = sorted(set(by_id) - {p.id for p in ordered})
        raise OpsetError([Finding(Mark(checking.display_path(by_id[stuck[0]].path), 1, 1),
                                    f"proposals {', '.join(map(str, stuck))} require each other in a cycle")])
    return ordered


def _installed_torch() -> str:
    from opspec.bridge import torch_ops

    return torch_ops.version()


def _torch_schemas() -> dict[str, str]:
    from opspec.bridge import torch_ops

    return torch_ops.all_aten_schemas()


def plan(ws: Workspace, version: str, date: str, torch_schemas: Callable[[], dict[str, str]] = _torch_schemas,
         torch_version: Callable[[], str] = _installed_torch, retarget: str | None = None) -> Plan | None:
    """Everything the release would write; None when ``version`` is already released.

    Proposals still open (draft, review, deferred) for ``version`` would be left aiming
    at a sealed version: the release refuses them, or moves them to ``retarget``.
    """
    index_path = load.versions_path(ws.opset)
    where = Mark(checking.display_path(index_path), 1, 1)
    if not VERSION_RE.match(version):
        raise OpsetError([Finding(where, f"{version!r} is not a YYYY.MM version")])
    index = load.read_index(ws.opset)
    if index.findings:
        raise OpsetError(index.findings)
    entries = {e["version"]: e for e in index.data["versions"]}
    ordered_versions = sorted(entries, key=version_key)

    parsed = checking.load_all(ws.proposals)
    broken = [f for p in parsed for f in p.findings]
    if broken:
        raise OpsetError(broken)
    proposals = [p.proposal for p in parsed if p.proposal is not None]
    selected = [p for p in proposals if p.status == "accepted" and p.target_version == version]
    # open proposals aiming at this version, or at an earlier one the index never released
    still_open = [p for p in proposals if p.status in OPEN_UNDECIDED and p.target_version
                  and version_key(p.target_version) <= version_key(version)
                  and (entries.get(p.target_version) or {}).get("status") != "released"]
    if retarget is not None and (not VERSION_RE.match(retarget) or version_key(retarget) <= version_key(version)):
        raise OpsetError([Finding(where, f"--retarget {retarget!r} must be a YYYY.MM version after {version}")])

    if version in entries and entries[version].get("status") == "released":
        if selected:
            raise OpsetError([Finding(Mark(checking.display_path(p.path), 1, 1),
                                        f"accepted for {version}, which is already released and immutable") for p in selected])
        return None
    if version in entries:
        base, new_folder = version, False
    else:
        newest = ordered_versions[-1]
        if version_key(version) <= version_key(newest):
            raise OpsetError([Finding(where, f"{version} is older than the newest version {newest}")])
        drafts = [v for v in ordered_versions if entries[v].get("status") != "released"]
        if drafts:
            raise OpsetError([Finding(where, f"release the draft version {drafts[0]} before {version}")])
        if (ws.opset / version).exists():
            raise OpsetError([Finding(where, f"{ws.opset / version} exists but {version} is not in versions.yaml")])
        base, new_folder = newest, True

    if still_open and retarget is None:
        raise OpsetError([
            Finding(Mark(checking.display_path(p.path), 1, 1),
                    f"proposal {p.label} is still {p.status} for {p.target_version}: decide it first, or release "
                    f"{version} with --retarget NEXT")
            for p in still_open
        ])
    ops_file, rules_file = load.read_version(ws.opset, base)
    if ops_file.findings or rules_file.findings:
        raise OpsetError(ops_file.findings + rules_file.findings)
    # The checks a single proposal must pass on its own (schema, references, sections) come first.
    if selected:
        result = checking.check(ws.proposals, ws.opset, files=[p.path for p in selected], check_changes=False)
        if result.findings:
            raise OpsetError(result.findings)
    implemented = {p.id for p in proposals if p.status in ("implemented", "superseded")}
    ordered = order_proposals(selected, implemented)

    result = Plan(version=version, base=base, new_folder=new_folder)
    out_of_scope_file = load.read_out_of_scope(ws.opset, base)
    if out_of_scope_file is not None and out_of_scope_file.findings:
        raise OpsetError(out_of_scope_file.findings)
    kept_out = list(out_of_scope_file.data["ops"]) if out_of_scope_file is not None else []
    base_ops, base_rules = list(ops_file.data["ops"]), list(rules_file.data["rules"])
    if new_folder:  # the new version starts from the base's text as its errata correct it
        base_ops, base_rules = _corrected(ws, base, base_ops, base_rules)
    draft = Draft.of(version, base_ops, base_rules, kept_out)
    schemas = torch_schemas() if any(p.changes for p in ordered) else {}
    findings = []
    for p in ordered:
        done, problems = apply_proposal(draft, p.id, [dict(change) for change in p.changes], schemas)
        for problem in problems:
            mark = yamlio.mark_of(p.meta["changes"], problem.position, Mark(checking.display_path(p.path), 1, 1))
            findings.append(Finding(mark, f"changes/{problem.position}: cannot apply: {problem.message}"))
        result.applied.append((p, done))
    if findings:
        raise OpsetError(findings)
    findings = policy_findings(ws, version, ordered_versions, base, list(ops_file.data["ops"]), draft, ordered, where)
    if findings:
        raise OpsetError(findings)

    folder = ws.opset / version
    texts = {}
    for loaded, key, items in ((ops_file, "ops", draft.ops_list()), (rules_file, "rules", draft.rules_list())):
        unchanged = not new_folder and items == list(loaded.data[key])
        if unchanged:
            texts[loaded.path.name] = loaded.path.read_text(encoding="utf-8")  # sealing a draft keeps its bytes
        else:
            texts[loaded.path.name] = yamlio.dump({"opset": version, key: items}, header=_header(loaded.path))
    # The version's optional files (the bookkeeping-op policy) carry forward unchanged but for the version they name.
    kept = ws.opset / base / load.BOOKKEEPING_FILE
    if kept.is_file():
        text = kept.read_text(encoding="utf-8")
        if new_folder:
            text = re.sub(rf"^opset: ['\"]?{re.escape(base)}['\"]?$", f"opset: '{version}'", text, count=1, flags=re.M)
        texts[load.BOOKKEEPING_FILE] = text
    # The ops declared out of scope: carried as they are, rewritten when a proposal declares more.
    declared = draft.out_of_scope_list()
    if out_of_scope_file is not None and not new_folder and declared == kept_out:
        texts[load.OUT_OF_SCOPE_FILE] = out_of_scope_file.path.read_text(encoding="utf-8")
    elif declared:
        header = _header(out_of_scope_file.path) if out_of_scope_file is not None else OUT_OF_SCOPE_HEADER
        texts[load.OUT_OF_SCOPE_FILE] = yamlio.dump({"opset": version, "ops": declared}, header=header)
    schemas = {"core_ops.yaml": "core_ops.schema.json", "decompositions.yaml": "decompositions.schema.json",
               **load.OPTIONAL_FILES}
    for name, text in texts.items():
        schema = schemas[name]
        data = yamlio.load_text(text, str(folder / name))
        problems = load.schema_findings(data, schema, str(folder / name))
        if problems:
            raise OpsetError(problems)
        result.writes[folder / name] = text

    bookkeeping = load.read_bookkeeping(ws.opset, base)
    if bookkeeping is not None:  # carried unchanged: proposals do not edit it yet
        if bookkeeping.findings:
            raise OpsetError(bookkeeping.findings)
        text = bookkeeping.path.read_text(encoding="utf-8")
        if new_folder:
            text = yamlio.dump({"opset": version, "ops": list(bookkeeping.data["ops"])}, header=_header(bookkeeping.path))
        result.writes[folder / load.BOOKKEEPING_FILE] = text

    with tempfile.TemporaryDirectory() as scratch:
        (Path(scratch) / version).mkdir()
        for path, text in result.writes.items():
            (Path(scratch) / version / path.name).write_text(text, encoding="utf-8", newline="\n")
        result.digest = load.version_digest(Path(scratch), version)

    versions = []
    for entry in index.data["versions"]:
        if entry["version"] == version:
            continue
        versions.append(dict(entry))
    sealed = dict(entries.get(version) or {"version": version, "status": "released", "torch": torch_version()})
    for key, value in (("status", "released"), ("released", date), ("digest", result.digest)):
        sealed = stamp(sealed, key, value, ("version", "status", "torch", "released", "digest", "notes"))
    versions.append(sealed)
    versions.sort(key=lambda e: version_key(e["version"]))
    result.writes[index_path] = yamlio.dump({"versions": versions}, header=_header(index_path))

    for p in ordered:
        display = checking.display_path(p.path)
        text = p.path.read_text(encoding="utf-8")
        result.writes[p.path] = edit.set_fields(text, display, {"status": "implemented", "released_in": version, "updated": date})
    for p in still_open:
        display = checking.display_path(p.path)
        text = p.path.read_text(encoding="utf-8")
        result.writes[p.path] = edit.set_fields(text, display, {"target_version": retarget, "updated": date})
        result.retargeted.append(p)
    return result


def _corrected(ws: Workspace, base: str, ops: list[dict], rules: list[dict]) -> tuple[list[dict], list[dict]]:
    """The base version's core ops and rules with its errata applied to their prose."""
    found, problems, _ = errata.read(ws.opset)
    if problems:
        raise OpsetError(problems)
    return ([errata.with_corrections(op, errata.for_entry(found, base, "op", op["name"])) for op in ops],
            [errata.with_corrections(rule, errata.for_entry(found, base, "rule", rule["op"])) for rule in rules])


def policy_findings(ws: Workspace, version: str, ordered_versions: list[str], base: str, base_ops: list[dict],
                    draft: Draft, applied: list[Proposal], where: Mark) -> list[Finding]:
    """What the version about to be sealed breaks of the compatibility policy, against the version before it.

    Each finding points at the proposal change that made it where one did, else at the index.
    """
    policy, problems = compatibility_policy.read_policy(ws.opset)
    if policy is None:
        return problems
    earlier = [v for v in ordered_versions if version_key(v) < version_key(version)]
    if not earlier:
        return []
    previous = earlier[-1]
    if previous == base:
        old_ops = base_ops
    else:  # sealing a draft: the draft's own files are the base, the released version before it is the reference
        loaded, _ = load.read_version(ws.opset, previous)
        if loaded.findings:
            return loaded.findings
        old_ops = list(loaded.data["ops"])
    touched = {}
    for p in applied:
        for position, change in enumerate(p.changes):
            if change.get("op"):
                touched[change["op"]] = yamlio.mark_of(p.meta["changes"], position, Mark(checking.display_path(p.path), 1, 1))
    violations = compatibility.transition(policy, previous, {e["name"]: e for e in old_ops}, version, draft.ops,
                                          compatibility.schema_differences())
    return [Finding(touched.get(v.op, where), f"cannot release {version}: {v}") for v in violations]


def commit(plan: Plan) -> None:
    """Stage every file beside its target, then move them into place; undo all on any failure."""
    staged: list[tuple[Path, Path]] = []
    try:
        for target, text in plan.writes.items():
            target.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = atomic.scratch_file(target)
            with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as handle:
                handle.write(text)
            staged.append((Path(tmp), target))
    except BaseException:
        _discard(plan, staged)
        raise
    # The index goes last: until it says "released", the version is not.
    staged.sort(key=lambda pair: pair[1].name == load.INDEX)
    previous: list[tuple[Path, bytes | None]] = []
    try:
        for tmp, target in staged:
            previous.append((target, target.read_bytes() if target.exists() else None))
            os.replace(tmp, target)
    except BaseException:
        for target, old in reversed(previous):
            if old is None:
                target.unlink(missing_ok=True)
            else:
                target.write_bytes(old)
        _discard(plan, staged)
        raise


def _discard(plan: Plan, staged: list[tuple[Path, Path]]) -> None:
    """Undo the staging: the staged files, and the version folder where the release created it."""
    for tmp, _ in staged:
        tmp.unlink(missing_ok=True)
    if plan.new_folder:
        shutil.rmtree(ws_folder(plan), ignore_errors=True)


def ws_folder(plan: Plan) -> Path:
    return next(path.parent for path in plan.writes if path.name == "core_ops.yaml")


def stale_manifests(ws: Workspace, version: str) -> list[tuple[str, str]]:
    """Backend manifests of the workspace that describe another opset version than ``version``: (path, version)."""
    found = []
    for path in sorted((ws.root / "conformance" / "backends").glob("*.yaml")):
        try:
            data = yamlio.load_file(path)
        except yamlio.DataError:
            continue  # `opspec validate` reports a broken manifest
        named = data.get("opset") if isinstance(data, dict) else None
        if named != version:
            found.append((checking.display_path(path), str(named)))
    return found
