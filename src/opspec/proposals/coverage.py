"""Which open proposals cover an op: the answer a closure gap or an unknown op in a program points to."""
from __future__ import annotations

from pathlib import Path

from opspec.proposals.check import load_all
from opspec.proposals.model import OPEN_STATUSES
from opspec.spec import resources


def proposals_folder(opset_root: Path | None = None) -> Path:
    """The proposals beside the opset folder (empty in an installed wheel, which ships no proposals)."""
    return Path(opset_root or resources.opset_root()).parent / "proposals"


def open_by_op(directory: Path | None = None) -> dict[str, list[int]]:
    """op -> ids of the open proposals (draft, review, accepted, deferred) whose changes name it.

    A file that does not parse covers nothing here; ``opspec proposal check`` names its problems."""
    found: dict[str, list[int]] = {}
    for parsed in load_all(directory or proposals_folder()):
        proposal = parsed.proposal
        if proposal is None or proposal.status not in OPEN_STATUSES:
            continue
        for op in proposal.touched_ops():
            found.setdefault(op, []).append(proposal.id)
    return {op: sorted(ids) for op, ids in sorted(found.items())}
