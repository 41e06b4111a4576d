"""Where a checkout keeps its opset, proposals, site and published results.

Commands that write (release, proposal edits, site) work on a repository, never on
the copy of the data inside an installed wheel; ``--root`` points at one explicitly.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from opspec.spec import resources


@dataclass(frozen=True)
class Workspace:
    root: Path

    @property
    def opset(self) -> Path:
        return self.root / "opset"

    @property
    def proposals(self) -> Path:
        return self.root / "proposals"

    @property
    def site(self) -> Path:
        return self.root / "site"

    @property
    def results(self) -> Path:
        return self.root / "conformance" / "results"

    @property
    def version_matrix(self) -> Path:
        return self.root / "benchmarks" / "results" / "version_matrix.json"


def is_checkout(root: Path) -> bool:
    """A repository of opspec data: it has an opset index."""
    return (root / "opset" / "versions.yaml").is_file()


def find(root: str | Path | None = None) -> Workspace:
    """The workspace at ``root``, else the nearest enclosing checkout of the cwd, else this source tree."""
    if root is not None:
        return Workspace(Path(root).resolve())
    here = Path.cwd().resolve()
    for candidate in (here, *here.parents):
        if is_checkout(candidate):
            return Workspace(candidate)
    return Workspace(resources.opset_root().resolve().parent)
