"""What a new core op needs besides a proposal's ``changes``: its description and its special-case rows.

Both live in files every opset version shares (``opset/descriptions.yaml``,
``opset/special_cases/``), so no change action carries them and the release does not
write them. The scaffold lists them for the author and `proposal check` asks for them:

- a description can be written while the proposal is open (the site describes only the
  ops a version holds), so an accepted add-op whose op has none is a finding;
- rows can be written only once a version holds the op (`opspec validate` refuses rows
  for any other op, and expects a core op's rows in its category's file), so missing rows,
  or rows that must move out of ``decomposed.yaml``, are a note until the release.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path

from opspec.proposals.model import Proposal
from opspec.proposals.parse import ParsedFile
from opspec.spec import load, paths, special_cases, yamlio
from opspec.spec.errors import Finding
from opspec.spec.yamlio import DataError, mark_of

DECOMPOSED = "decomposed.yaml"  # where the rows of the ops that rules lower live


@dataclass(frozen=True)
class Companions:
    """What the shared files hold for one op."""

    op: str
    described: bool
    rows_file: str | None  # the special-case file holding its rows; None when it has none


class SharedFiles:
    """The shared files of one opset folder, each read at most once, leniently: their problems are `validate`'s."""

    def __init__(self, opset_root: Path):
        self.opset_root = opset_root

    @property
    def descriptions_path(self) -> Path:
        return self.opset_root / load.DESCRIPTIONS

    @functools.cached_property
    def described(self) -> frozenset[str]:
        data = _read(self.descriptions_path)
        ops = data.get("ops") if isinstance(data, dict) else None
        return frozenset(ops) if isinstance(ops, dict) else frozenset()

    @functools.cached_property
    def rows_files(self) -> dict[str, str]:
        """op -> the name of the file holding its rows."""
        owners: dict[str, str] = {}
        for path in special_cases.data_files(self.opset_root):
            data = _read(path)
            ops = data.get("ops") if isinstance(data, dict) else None
            for op in ops if isinstance(ops, dict) else ():
                owners.setdefault(op, path.name)
        return owners

    def of(self, op: str) -> Companions:
        return Companions(op, op in self.described, self.rows_files.get(op))


def _read(path: Path) -> object:
    if not path.is_file():
        return None
    try:
        return yamlio.load_file(path)
    except DataError:
        return None


def added_ops(p: Proposal) -> list[tuple[int, str, str]]:
    """(position, op, category) of every op the proposal makes core."""
    return [(position, change["op"], change["category"]) for position, change in enumerate(p.changes)
            if change["action"] == "add-op"]


def undescribed(p: Proposal, shared: SharedFiles) -> list[tuple[int, str]]:
    return [(position, op) for position, op, _ in added_ops(p) if not shared.of(op).described]


def findings(parsed: ParsedFile, p: Proposal, shared: SharedFiles) -> list[Finding]:
    """An accepted add-op's ops are described: the release makes them core, and every core op's page needs it."""
    if p.status != "accepted":
        return []
    where = paths.display(shared.descriptions_path)
    return [Finding(mark_of(parsed.meta["changes"], position, parsed.mark("changes")),
                    f"changes/{position}: {op} has no entry in {where}; an accepted add-op's op is described there "
                    f"(`description`, `example`; the proposal's `## Follow-up` section says what to write)")
            for position, op in undescribed(p, shared)]


def notes(p: Proposal, shared: SharedFiles) -> list[str]:
    """What an open add-op still owes that is not a finding yet: a description before acceptance, rows at release."""
    if p.status not in ("draft", "review", "accepted"):
        return []
    found = []
    if p.status != "accepted":
        where = paths.display(shared.descriptions_path)
        found += [f"proposal {p.label}: {op} has no entry in {where} yet; it needs one before the proposal is accepted"
                  for _, op in undescribed(p, shared)]
    folder = paths.display(special_cases.folder(shared.opset_root))
    for _, op, category in added_ops(p):
        rows_file = shared.of(op).rows_file
        if rows_file is None:
            found.append(f"proposal {p.label}: {op} has no special-case rows; write them in {folder}/{category}.yaml "
                         f"with the release that makes it core (`opspec validate` refuses rows for an op no version "
                         f"holds)")
        elif rows_file != f"{category}.yaml":
            found.append(f"proposal {p.label}: {op}'s rows in {folder}/{rows_file} move to {folder}/{category}.yaml "
                         f"with the release that makes it core (`opspec validate` then expects them there)")
    return found
