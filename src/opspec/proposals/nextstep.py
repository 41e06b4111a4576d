"""The one step that comes next for a proposal, printed after `proposal new`, `check` and `set-status`.

It follows the lifecycle in ``proposals/README.md``: write the draft, commit it, move it
to review, describe and measure what it adds, record the decision, release. A step
that runs a command names it with the proposal's id and the flags it needs.
"""
from __future__ import annotations

from opspec.proposals import companions, readiness
from opspec.proposals.model import Proposal
from opspec.spec import paths

FINAL = ("rejected", "withdrawn", "superseded")


def after_new(display: str, type: str) -> str:
    follow_up = "; its `## Follow-up` section lists what else a new core op needs" if type == "add-op" else ""
    return f"replace every TODO and each section's template text, then run `opspec proposal check {display}`{follow_up}"


def after_findings(displays: list[str]) -> str:
    return f"fix each finding above, then run `opspec proposal check {' '.join(displays)}` again"


def after_check(p: Proposal, display: str, index: dict[str, str], shared: companions.SharedFiles,
                uncommitted: str | None) -> str:
    """The step after a clean check of one proposal; ``uncommitted`` says how the file differs from its commit."""
    step = for_status(p, index, shared)
    if uncommitted and "opspec proposal set-status" in step:  # a move is judged against the committed file
        return f"commit {display}, then {step}"
    return step


def after_move(p: Proposal, index: dict[str, str], shared: companions.SharedFiles) -> str:
    if p.status in FINAL or p.status == "implemented":
        return f"commit this move; {for_status(p, index, shared)}"
    return f"commit this move (one status move per commit), then {for_status(p, index, shared)}"


def for_status(p: Proposal, index: dict[str, str], shared: companions.SharedFiles) -> str:
    """What the proposal, committed as it stands, waits for."""
    if p.status == "draft":
        return f"move it to review: `opspec proposal set-status {p.id} review{_target_flag(p, index)}`"
    if p.status == "review":
        missing = companions.undescribed(p, shared)
        if missing:
            return (f"describe {missing[0][1]} in {paths.display(shared.descriptions_path)} (the proposal's "
                    f"`## Follow-up` section says what to write), which acceptance needs")
        if readiness.unmeasured(p):
            return f"record the measurements acceptance needs: `opspec proposal measure {p.id}`"
        return (f"after the review, record the decision: `opspec proposal set-status {p.id} accepted --resolution TEXT"
                f"{_target_flag(p, index)} --reviewer NAME --reason TEXT` (or rejected, deferred or withdrawn; "
                f"draft to rework it)")
    if p.status == "accepted":
        return f"`opspec release {p.target_version}` applies it and marks it implemented"
    if p.status == "deferred":
        return f"`opspec proposal set-status {p.id} draft` when work on it resumes"
    if p.status == "implemented":
        return f"nothing more: it shipped in {p.released_in}; only a later proposal supersedes it"
    return f"nothing more: {p.status} is final"


def _target_flag(p: Proposal, index: dict[str, str]) -> str:
    if p.target_version:
        return ""
    return f" --target-version {suggested_target(index) or 'V'}"


def suggested_target(index: dict[str, str]) -> str | None:
    """The version a new proposal most likely goes into: the open (draft) version, else the month after the newest."""
    drafts = [version for version, status in index.items() if status == "draft"]
    if drafts:
        return drafts[0]
    if not index:
        return None
    try:
        year, month = map(int, list(index)[-1].split("."))
    except ValueError:
        return None
    return f"{year + month // 12}.{month % 12 + 1:02d}"
