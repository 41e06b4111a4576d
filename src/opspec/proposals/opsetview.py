"""A lenient read of one opset version: just the names, statuses, schemas and rules a proposal touches.

Proposal checks must still say something useful while the data has schema
findings of its own (those are `opspec validate`'s business), so this view reads
the raw YAML and keeps every entry that has a name.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from opspec.spec import load
from opspec.spec.model import version_key
from opspec.spec.yamlio import DataError, load_file


@dataclass
class OpsetView:
    version: str
    ops: dict[str, Any] = field(default_factory=dict)  # name -> raw entry
    rules: dict[str, Any] = field(default_factory=dict)  # op -> raw entry
    out_of_scope: dict[str, Any] = field(default_factory=dict)  # name -> raw entry
    problem: str | None = None  # why the version could not be read

    def is_core(self, name: str) -> bool:
        entry = self.ops.get(name)
        return bool(entry) and entry.get("status") != "removed"


def read_index(opset_root: Path) -> dict[str, str]:
    """version -> status ('draft' | 'released'); raises DataError when unreadable."""
    index = load.read_index(opset_root)
    if index.data is None:
        raise DataError(index.findings[0].mark, index.findings[0].message)
    return load.index_statuses(index.data)


def read_view(opset_root: Path, version: str) -> OpsetView:
    view = OpsetView(version)
    files = (("core_ops.yaml", "ops", "name", view.ops), ("decompositions.yaml", "rules", "op", view.rules),
             (load.OUT_OF_SCOPE_FILE, "ops", "name", view.out_of_scope))
    for name, key, target, bucket in files:
        path = opset_root / version / name
        if not path.is_file():
            if name == "core_ops.yaml":
                view.problem = f"{path} is missing"
            continue
        try:
            data = load_file(path)
        except DataError as err:
            view.problem = str(err)
            continue
        for entry in (data or {}).get(key) or () if isinstance(data, dict) else ():
            if isinstance(entry, dict) and isinstance(entry.get(target), str):
                bucket.setdefault(entry[target], entry)
    return view


def base_version(index: dict[str, str], target: str | None) -> str | None:
    """The version a proposal's changes are written against.

    A draft target version is edited in place; a new target builds on the newest
    version before it; no target means the newest version.
    """
    if not index:
        return None
    if target and index.get(target) == "draft":
        return target
    earlier = [v for v in index if not target or version_key(v) < version_key(target)]
    return earlier[-1] if earlier else None
