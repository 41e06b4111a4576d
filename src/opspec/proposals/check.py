"""`opspec proposal check`: every rule a proposal must obey, one finding per line.

Layers, cheapest first: the file itself (front matter, schema, sections), the
set of proposals (ids, references), the opset and the installed torch (what
``changes`` edits), and git history (status moves since a base ref).
"""
from __future__ import annotations

import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable

from opspec.proposals import companions, readiness, upgraders
from opspec.proposals.changes import STAMPED, Draft, apply_proposal
from opspec.proposals.model import (
    ACTIONS_BY_TYPE,
    FILENAME_RE,
    OPEN_STATUSES,
    Proposal,
    file_number,
)
from opspec.proposals.opsetview import OpsetView, base_version, read_index, read_view
from opspec.proposals.parse import ParsedFile, parse_file
from opspec.proposals.transitions import move_problem
from opspec.spec import compatibility as compatibility_policy
from opspec.spec import paths
from opspec.spec.errors import Finding, OpsetError, one_line
from opspec.spec.model import version_key
from opspec.spec.yamlio import DataError, Mark, mark_of

CHECK_EXAMPLES = 25  # per dtype: enough to catch a wrong candidate, quick enough for every CI run
# The set-status option that writes each field, named in the findings about the field.
SET_STATUS_FLAGS = {"resolution": "--resolution TEXT", "target_version": "--target-version V",
                    "superseded_by": "--superseded-by ID", "decision": "--reviewer NAME or --record URL_OR_PATH",
                    "decision/reviewers": "--reviewer NAME", "decision/record": "--record URL_OR_PATH",
                    "decision/reasons": "--reason TEXT"}


class GitError(Exception):
    """The base ref cannot be read (not a repository, unknown ref)."""


@dataclass
class CheckResult:
    findings: list[Finding] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    files: list[ParsedFile] = field(default_factory=list)

    @property
    def proposals(self) -> list[Proposal]:
        return [f.proposal for f in self.files if f.proposal is not None]


display_path = paths.display


def proposal_paths(directory: Path) -> list[Path]:
    """Every file that claims to be a proposal: a Markdown file whose name starts with a digit."""
    if not directory.is_dir():
        return []
    return sorted(p for p in directory.iterdir() if p.is_file() and p.suffix == ".md" and p.name[:1].isdigit())


def load_all(directory: Path, replaced: dict[Path, str] | None = None) -> list[ParsedFile]:
    replaced = replaced or {}
    return [parse_file(path, display_path(path), replaced.get(path.resolve())) for path in proposal_paths(directory)]


def check(
    directory: Path,
    opset_root: Path,
    files: Iterable[Path] | None = None,
    base: str | None = None,
    use_torch: bool = True,
    check_changes: bool = True,
    replace: dict[Path, str] | None = None,
) -> CheckResult:
    """Check ``files`` (default: every proposal in ``directory``) in the context of all of them.

    ``replace`` maps a path to the text it is about to get, so an edit is checked before it is written.
    """
    replaced = {path.resolve(): text for path, text in (replace or {}).items()}
    everything = load_all(directory, replaced)
    by_path = {p.path.resolve(): p for p in everything}
    if files is None:
        selected = everything
    else:
        selected = []
        for path in files:
            parsed = by_path.get(path.resolve()) or parse_file(path, display_path(path), replaced.get(path.resolve()))
            if parsed not in selected:
                selected.append(parsed)
    context = {p.path.resolve(): p for p in [*everything, *selected]}.values()
    result = CheckResult(files=list(selected))
    for parsed in selected:
        result.findings += parsed.findings
        result.findings += _file_name_findings(parsed)
        if parsed.text:
            result.findings += readiness.placeholder_findings(parsed)
    known = _ids(context)
    result.findings += _duplicate_findings(selected, known)
    try:
        index = read_index(opset_root)
    except DataError as err:
        result.findings.append(Finding(err.mark, err.message))
        index = {}
    views: dict[str, OpsetView] = {}
    torch_schemas = _torch_schemas(selected, result.notes) if use_torch and check_changes else None
    if check_changes and not use_torch:
        result.notes.append("changes were not checked against torch (--no-torch)")
    shared = companions.SharedFiles(opset_root)
    for parsed in selected:
        proposal = parsed.proposal
        if proposal is None:
            continue
        result.findings += _cross_field(parsed, proposal, known, index)
        result.findings += readiness.decision_findings(parsed, proposal)
        result.findings += readiness.evidence_findings(parsed, proposal)
        result.findings += companions.findings(parsed, proposal, shared)
        result.notes += companions.notes(proposal, shared)
        result.findings += _upgrader_findings(parsed, proposal, opset_root)
        if check_changes:
            result.findings += _change_findings(parsed, proposal, index, views, opset_root, torch_schemas, result.notes)
    if base is not None:
        result.findings += transition_findings(selected, base, index, everything if files is None else None, opset_root)
    result.findings.sort(key=lambda f: (f.mark.path, f.mark.line, f.mark.col, f.message))
    return result


def set_status_flag(finding: Finding) -> str | None:
    """The set-status option that writes the field a schema finding is about (``decision/reasons/0: ...``)."""
    path = finding.message.split(": ", 1)[0].split("/")
    for length in range(len(path), 0, -1):
        flag = SET_STATUS_FLAGS.get("/".join(path[:length]))
        if flag:
            return flag
    return None


def _ids(files: Iterable[ParsedFile]) -> dict[int, list[ParsedFile]]:
    found: dict[int, list[ParsedFile]] = {}
    for parsed in files:
        if parsed.proposal is not None:
            found.setdefault(parsed.proposal.id, []).append(parsed)
    return found


def _file_name_findings(parsed: ParsedFile) -> list[Finding]:
    if not FILENAME_RE.match(parsed.path.name):
        return [Finding(Mark(parsed.display, 1, 1), "file name must be NNNN-slug.md (four digits, lower-case words joined by '-')")]
    proposal = parsed.proposal
    if proposal is not None and file_number(parsed.path) != proposal.id:
        return [Finding(parsed.mark("id"), f"id {proposal.id} does not match the file name's number {file_number(parsed.path):04d}")]
    return []


def _duplicate_findings(selected: list[ParsedFile], known: dict[int, list[ParsedFile]]) -> list[Finding]:
    findings = []
    for parsed in selected:
        proposal = parsed.proposal
        if proposal is None:
            continue
        others = [o for o in known.get(proposal.id, []) if o.path.resolve() != parsed.path.resolve()]
        if others:
            findings.append(Finding(parsed.mark("id"), f"duplicate id {proposal.id}: also used by {others[0].display}"))
    return findings


def _cross_field(parsed: ParsedFile, p: Proposal, known: dict[int, list[ParsedFile]], index: dict[str, str]) -> list[Finding]:
    findings: list[Finding] = []
    at = parsed.mark

    def need(key: str, why: str) -> None:
        if p.meta.get(key) in (None, "", []):
            flag = SET_STATUS_FLAGS.get(key)
            how = f": pass {flag} to `opspec proposal set-status`" if flag else ""
            findings.append(Finding(at("status"), f"status {p.status} needs `{key}` ({why}){how}"))

    if p.status in ("accepted", "implemented", "superseded"):
        need("resolution", "the decision and where it was taken")
        need("target_version", "the version the changes go into")
    if p.status in ("rejected", "withdrawn", "deferred"):
        need("resolution", "why, for the record")
    if p.status in ("implemented", "superseded"):
        need("released_in", "written by `opspec release`")
    if p.status == "superseded":
        need("superseded_by", "the proposal that replaces it")
    if p.released_in and p.status not in ("implemented", "superseded"):
        findings.append(Finding(at("released_in"), f"released_in is set but status is {p.status}; only a release sets it"))
    if p.superseded_by is not None and p.status != "superseded":
        findings.append(Finding(at("superseded_by"), f"superseded_by is set but status is {p.status}"))
    if p.updated < p.created:
        findings.append(Finding(at("updated"), f"updated {p.updated} is before created {p.created}"))
    if index:
        for key in ("target_version", "released_in"):
            value = p.meta.get(key)
            if key == "released_in" and value and value not in index:
                findings.append(Finding(at(key), f"released_in {value} is not a version in versions.yaml"))
        target = p.target_version
        if target and p.status in OPEN_STATUSES and index.get(target) == "released":
            findings.append(Finding(at("target_version"), f"target_version {target} is released and immutable; target a later version"))
        newest = list(index)[-1]
        if target and p.status in OPEN_STATUSES and target not in index and version_key(target) < version_key(newest):
            findings.append(Finding(at("target_version"), f"target_version {target} is older than the newest version {newest}"))
    if p.released_in and p.target_version and p.released_in != p.target_version:
        findings.append(Finding(at("released_in"), f"released_in {p.released_in} differs from target_version {p.target_version}"))
    for key in ("requires", "replaces", "superseded_by"):
        values = p.meta.get(key)
        values = [values] if isinstance(values, int) else list(values or ())
        for value in values:
            if value == p.id:
                findings.append(Finding(at(key), f"{key} refers to the proposal itself"))
            elif value not in known:
                findings.append(Finding(at(key), f"{key} refers to proposal {value}, which does not exist"))
    if p.superseded_by in known and p.superseded_by != p.id:
        successor = known[p.superseded_by][0].proposal
        if successor is not None and p.id not in successor.replaces:
            findings.append(Finding(at("superseded_by"), f"proposal {p.superseded_by} does not list {p.id} in `replaces`"))
    if p.status == "accepted":
        for value in p.requires:
            required = known.get(value, [None])[0]
            if required is not None and required.proposal and required.proposal.status in ("rejected", "withdrawn"):
                findings.append(Finding(at("requires"), f"requires proposal {value}, which is {required.proposal.status}"))
    allowed = ACTIONS_BY_TYPE[p.type]
    changes = p.meta.get("changes")
    if p.type == "process" and p.changes:
        findings.append(Finding(at("changes"), "a process proposal edits no opset data; `changes` must be empty"))
    elif p.type != "process" and not p.changes:
        findings.append(Finding(at("changes"), f"a {p.type} proposal needs at least one change"))
    elif p.type != "process":
        for position, change in enumerate(p.changes):
            if change["action"] not in allowed:
                findings.append(Finding(
                    mark_of(changes, position, at("changes")),
                    f"changes/{position}: action {change['action']} does not belong in a {p.type} proposal (allowed: {', '.join(sorted(allowed))})",
                ))
    return findings


def _upgrader_findings(parsed: ParsedFile, p: Proposal, opset_root: Path) -> list[Finding]:
    """An accepted schema change or deprecation carries its upgrader (compatibility rule upgrader-required)."""
    if p.status != "accepted":
        return []
    policy, _ = compatibility_policy.read_policy(opset_root)
    rule = policy.upgraders.cite() if policy else "upgrader-required"
    return [Finding(mark_of(parsed.meta["changes"], position, parsed.mark("changes")),
                    f"changes/{position}: an accepted {p.changes[position]['action']} change needs an `upgrader` "
                    f"(the op each call becomes and where its arguments come from): compatibility rule {rule}")
            for position in upgraders.missing(p)]


def _torch_schemas(selected: list[ParsedFile], notes: list[str]) -> dict[str, str] | None:
    """Every aten schema of the installed torch, loaded only when some proposal edits data.

    None, with a note, when torch cannot be imported here: then nothing is checked against it.
    """
    if not any(p.proposal and p.proposal.changes for p in selected):
        return {}
    from opspec.bridge import torch_ops

    try:
        return torch_ops.all_aten_schemas()
    except ImportError as err:
        notes.append(f"changes were not checked against torch (cannot import it: {one_line(err)})")
        return None


def _view(views: dict[str, OpsetView], opset_root: Path, version: str) -> OpsetView:
    if version not in views:
        views[version] = read_view(opset_root, version)
    return views[version]


def _change_findings(
    parsed: ParsedFile,
    p: Proposal,
    index: dict[str, str],
    views: dict[str, OpsetView],
    opset_root: Path,
    torch_schemas: dict[str, str] | None,
    notes: list[str],
) -> list[Finding]:
    if not p.changes or not index:
        return []
    changes = p.meta["changes"]
    if p.status == "implemented":
        return _implemented_findings(parsed, p, _view(views, opset_root, p.released_in)) if p.released_in in index else []
    if p.status not in OPEN_STATUSES:
        return []
    version = base_version(index, p.target_version)
    if version is None:
        return [Finding(parsed.mark("target_version"), "no opset version to apply the changes to")]
    view = _view(views, opset_root, version)
    if view.problem:
        return [Finding(parsed.mark("changes"), f"cannot check changes against opset {version}: {view.problem}")]

    def at(position: int, key: str) -> Mark:
        here = mark_of(changes, position, parsed.mark("changes"))
        node = changes[position]
        if key in ("targets", "implementation", *STAMPED):
            return mark_of(node.get("rule"), key, here)
        return mark_of(node, key, here)

    # Applied in order to a copy of the version, as the release will apply them.
    draft = Draft(version, {name: dict(entry) for name, entry in view.ops.items()}, dict(view.rules),
                  {name: dict(entry) for name, entry in view.out_of_scope.items()})
    _, problems = apply_proposal(draft, p.id, p.changes, torch_schemas)
    findings = [Finding(at(problem.position, problem.key), f"changes/{problem.position}: {problem.message}")
                for problem in problems]
    for position, change in enumerate(p.changes):
        findings += [Finding(at(position, "upgrader"), f"changes/{position}: {problem}")
                     for problem in upgraders.problems(change, torch_schemas or {})]
    for position, change in enumerate(p.changes):
        if not change["action"].endswith("-rule") or "rule" not in change:
            continue
        prefix = f"changes/{position}: "
        for key in STAMPED:
            if key in change["rule"]:
                findings.append(Finding(at(position, key), prefix + f"rule/{key} is stamped by the release; leave it out"))
        if p.type == "decompose-op" and torch_schemas is not None:
            findings += _decomposition_check(change["rule"], at(position, "implementation"), prefix, notes, p,
                                             opset_root, version)
    return findings


def _implemented_findings(parsed: ParsedFile, p: Proposal, view: OpsetView) -> list[Finding]:
    """An implemented proposal's ops carry its id in the version that shipped them."""
    if view.problem:
        return []
    findings = []
    for position, change in enumerate(p.changes):
        action = change["action"]
        name = change.get("op") or change.get("rule", {}).get("op")
        entry = view.rules.get(name) if action in ("add-rule", "change-rule") else view.ops.get(name)
        if action == "remove-rule" or entry is None:
            continue
        if p.id not in (entry.get("proposals") or ()):
            findings.append(Finding(
                mark_of(parsed.meta["changes"], position, parsed.mark("changes")),
                f"changes/{position}: {name} in {view.version} does not list proposal {p.id} in `proposals`",
            ))
    return findings


def _decomposition_check(rule: dict, mark: Mark, prefix: str, notes: list[str], p: Proposal,
                         opset_root: Path, version: str) -> list[Finding]:
    """Run the candidate through the decomposition checker (which needs torch)."""
    try:
        from opspec.checks import decomp_check
    except ImportError as err:
        notes.append(f"proposal {p.label}: decomposition check skipped (the checker cannot be imported: {one_line(err)})")
        return []
    from opspec.spec import load
    from opspec.spec.model import DecompositionRule

    try:
        opset = load.load_opset(version, opset_root)
    except OpsetError:
        notes.append(f"proposal {p.label}: decomposition check skipped (opset {version} does not load; run opspec validate)")
        return []
    try:
        subject = decomp_check.subject_for_rule(opset, DecompositionRule.from_dict(rule))
        outcome = decomp_check.run(subject, dtypes=decomp_check.dtypes_for(subject), max_examples=CHECK_EXAMPLES)
    except Exception as err:  # a candidate may fail in any way; that is a finding, not a crash
        return [Finding(mark, prefix + f"decomposition check failed: {one_line(err)}")]
    return [] if outcome.ok else [Finding(mark, prefix + f"decomposition check: {outcome.problem}")]


# --- status moves against a git base -------------------------------------------------------


def git_show(base: str, path: Path) -> str | None:
    """The file's text at ``base``; None when it did not exist there. GitError when git cannot answer."""
    folder = path.resolve().parent
    verify = subprocess.run(
        ["git", "-C", str(folder), "rev-parse", "--verify", "--quiet", f"{base}^{{commit}}"],
        capture_output=True, text=True,
    )
    if verify.returncode != 0:
        raise GitError(f"--base {base}: not a commit in the repository at {folder}")
    shown = subprocess.run(
        ["git", "-C", str(folder), "show", f"{base}:./{path.name}"], capture_output=True
    )
    if shown.returncode != 0:
        return None
    return shown.stdout.decode("utf-8", errors="replace")


def uncommitted(path: Path, ref: str = "HEAD") -> str | None:
    """How ``path`` differs from the file at ``ref`` ('not committed', 'has uncommitted changes'); None when it is
    the same. A status move is judged against that committed file by ``check --base``."""
    try:
        committed = git_show(ref, path)
    except (GitError, OSError):  # no repository, no commit yet, no git: nothing is committed
        committed = None
    if committed is None:
        return "not committed"
    current = path.read_bytes().decode("utf-8", errors="replace")
    if committed.replace("\r\n", "\n") != current.replace("\r\n", "\n"):  # a checkout's line endings are no change
        return "has uncommitted changes"
    return None


def git_list(base: str, directory: Path) -> list[str]:
    """Proposal file names in ``directory`` at ``base``."""
    shown = subprocess.run(
        ["git", "-C", str(directory), "ls-tree", "--name-only", base, "./"], capture_output=True, text=True
    )
    if shown.returncode != 0:
        return []
    return [name for name in shown.stdout.split() if name.endswith(".md") and name[:1].isdigit()]


def _index_at(base: str, opset_root: Path) -> dict[str, str]:
    """versions.yaml's version -> status as it was at ``base`` (empty when it did not exist)."""
    from opspec.spec import load
    from opspec.spec.yamlio import load_text

    text = git_show(base, load.versions_path(opset_root))
    try:
        data = load_text(text, f"{base}:{load.INDEX}") if text else None
    except DataError:
        return {}
    return load.index_statuses(data)


def transition_findings(
    selected: list[ParsedFile], base: str, index: dict[str, str], everything: list[ParsedFile] | None,
    opset_root: Path | None = None,
) -> list[Finding]:
    findings = []
    before = _index_at(base, opset_root) if opset_root is not None else {}
    for parsed in selected:
        proposal = parsed.proposal
        if proposal is None:
            continue
        old_text = git_show(base, parsed.path)
        if old_text is None:  # a new proposal: it is born a draft, every later status is a reviewed move
            if proposal.status != "draft":
                findings.append(Finding(parsed.mark("status"),
                                        f"a new proposal starts as draft, not {proposal.status} (not in {base})"))
            continue
        old = parse_file(parsed.path, f"{base}:{parsed.display}", old_text)
        old_status = old.meta.get("status") if isinstance(old.meta, dict) else None
        if not isinstance(old_status, str) or old_status == proposal.status:
            continue
        target = old.meta.get("target_version")
        # Only a release made since the base may implement: the version it names was sealed in between.
        by_release = (
            proposal.status == "implemented"
            and proposal.released_in is not None
            and proposal.released_in == target
            and index.get(proposal.released_in) == "released"
            and before.get(proposal.released_in) != "released"
        )
        problem = move_problem(
            old_status, proposal.status, by_release=by_release, target_released=index.get(target) == "released"
        )
        if problem:
            findings.append(Finding(parsed.mark("status"), f"{problem} (was {old_status} at {base})"))
    if everything is not None and selected:
        directory = selected[0].path.resolve().parent
        present = {p.path.name for p in everything}
        for name in git_list(base, directory):
            if name not in present:
                findings.append(Finding(
                    Mark(display_path(directory / name), 1, 1),
                    f"proposal deleted since {base}; proposals stay on record (withdraw it instead)",
                ))
    return findings
