"""Which file of a released version changed since its release, and where: read from git history.

A released version is sealed by one digest over its files (``load.version_digest``),
which says that something changed, not what. The commit that recorded the digest
in ``versions.yaml`` holds the version as released; comparing its files with
today's names the changed file and its first changed line. Without git history
(a wheel, a copied folder) nothing can be named, and the caller says so.
"""
from __future__ import annotations

import subprocess
from pathlib import Path


def changes(root: Path, version: str, digest: str, names: list[str]) -> list[tuple[Path, int]] | None:
    """(file, first changed line) for each of ``names`` in ``root/version`` that differs from the release;
    None when git cannot tell (no repository, or no commit recorded ``digest``)."""
    index = (root / "versions.yaml").resolve()
    sealed = _git(index.parent, "log", "--format=%H", "--reverse", f"-S{digest}", "--", index.name)
    if not sealed:
        return None
    commit = sealed.split()[0]
    found = []
    for name in names:
        path = (root / version / name).resolve()
        top = _git(path.parent, "rev-parse", "--show-toplevel")
        if top is None:
            return None
        released = _git(path.parent, "show", f"{commit}:{path.relative_to(Path(top.strip())).as_posix()}")
        now = path.read_text(encoding="utf-8") if path.is_file() else ""
        if released is None or released != now:
            found.append((path, _first_difference((released or "").splitlines(), now.splitlines())))
    return found


def _first_difference(before: list[str], after: list[str]) -> int:
    for number, (old, new) in enumerate(zip(before, after), start=1):
        if old != new:
            return number
    return min(len(before), len(after)) + 1


def _git(where: Path, *args: str) -> str | None:
    try:
        done = subprocess.run(["git", *args], cwd=where, capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout if done.returncode == 0 else None
