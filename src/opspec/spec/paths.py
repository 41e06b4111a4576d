"""The paths a command reads and writes, checked before any work starts.

An output whose folder is missing has it created (what users expect of a report
path); an output that cannot be written, or an input that is not there, is a
:class:`PathError`: one line naming the path and why. Everything is checked before
anything is created, so a bad path leaves nothing behind.
"""
from __future__ import annotations

import os
import tempfile
from pathlib import Path


class PathError(Exception):
    """A path a command needs that cannot be used: ``PATH: why``, one line."""


def _why(err: OSError) -> str:
    return (err.strerror or type(err).__name__).lower()


def _writable(folder: Path, path: Path) -> None:
    """Write a scratch file in ``folder`` and remove it: the only test that holds for root and read-only mounts."""
    try:
        fd, scratch = tempfile.mkstemp(dir=folder, prefix=".opspec-probe-")
    except OSError as err:
        raise PathError(f"{path}: cannot write in {folder} ({_why(err)})") from None
    os.close(fd)
    os.unlink(scratch)


def _missing_folders(folder: Path, path: Path) -> list[Path]:
    """The folders from ``folder`` up that do not exist (outermost first); the first that exists must be writable."""
    missing = []
    while not folder.exists():
        if folder.is_symlink():  # a dangling link: mkdir would fail on it
            raise PathError(f"{path}: {folder} is a broken link")
        missing.append(folder)
        if folder.parent == folder:
            break
        folder = folder.parent
    if not folder.is_dir():
        raise PathError(f"{path}: {folder} is a file, not a folder")
    _writable(folder, path)
    return missing[::-1]


def check_output(path: Path, *, folder: bool = False) -> list[Path]:
    """Check that ``path`` (a file, or a folder with ``folder``) can be written; the folders to create first."""
    path = Path(path)
    if folder:
        if path.exists() and not path.is_dir():
            raise PathError(f"{path}: is a file, not a folder")
        if path.is_dir():
            _writable(path, path)
        # a folder is replaced or filled from beside it (scratch copy, then rename), so its parent must be writable too
        return _missing_folders(path.parent, path) + ([] if path.is_dir() else [path])
    if path.is_dir():
        raise PathError(f"{path}: is a folder, not a file")
    return _missing_folders(path.parent, path)


def check_input(path: Path, *, folder: bool = False) -> None:
    """Check that ``path`` exists and is a file (a folder with ``folder``) that can be read."""
    path = Path(path)
    if not path.exists():
        above = next((p for p in path.parents if p.exists()), None)
        if above is not None and not above.is_dir():
            raise PathError(f"{path}: {above} is a file, not a folder")
        raise PathError(f"{path}: no such {'folder' if folder else 'file'}")
    if folder and not path.is_dir():
        raise PathError(f"{path}: is a file, not a folder")
    if not folder and path.is_dir():
        raise PathError(f"{path}: is a folder, not a file")
    if not os.access(path, os.R_OK | (os.X_OK if folder else 0)):
        raise PathError(f"{path}: cannot read it (permission denied)")


def prepare(outputs: list[tuple[Path, bool]] = (), inputs: list[tuple[Path, bool]] = ()) -> list[Path]:
    """Check every input and output (``(path, is_folder)`` pairs), then create the missing output folders.

    Returns the folders created, outermost first, so a caller whose command fails can remove them again.
    """
    for path, folder in inputs:
        check_input(path, folder=folder)
    needed: list[Path] = []
    for path, folder in outputs:
        needed += [p for p in check_output(path, folder=folder) if p not in needed]
    created: list[Path] = []
    for missing in needed:
        try:
            missing.mkdir()
        except FileExistsError:
            continue
        except OSError as err:
            remove_empty(created)
            raise PathError(f"{missing}: cannot create the folder ({_why(err)})") from None
        created.append(missing)
    return created


def remove_empty(created: list[Path]) -> None:
    """Remove the folders :func:`prepare` created that are still empty, innermost first."""
    for folder in reversed(created):
        try:
            folder.rmdir()
        except OSError:
            pass


def display(path: Path) -> str:
    """Relative to the cwd when the file is below it, else absolute: what an editor can open."""
    absolute = Path(os.path.abspath(path))
    try:
        return str(absolute.relative_to(Path.cwd()))
    except ValueError:
        return str(absolute)
