"""Argument types for the paths a subcommand reads or writes.

A path argument declares what it is (``type=output_file``, ``output_folder``,
``input_file``, ``input_folder``); :func:`opspec.cli.main` checks every such value
before the subcommand runs (``spec.paths.prepare``), so a bad path is one line and
exit 2 before any work, and a missing output folder is created. A subcommand with
paths of its own making (a report's log and repro folder) checks them with
:func:`prepare`.
"""
from __future__ import annotations

from pathlib import Path

from opspec.spec import paths

_Base = type(Path())  # PosixPath or WindowsPath: Path itself cannot be subclassed before Python 3.12


class _Tagged(_Base):
    output = False
    folder = False


class OutputFile(_Tagged):
    output = True


class OutputFolder(_Tagged):
    output, folder = True, True


class InputFile(_Tagged):
    pass


class InputFolder(_Tagged):
    folder = True


def output_file(text: str) -> Path:
    return OutputFile(text)


def output_folder(text: str) -> Path:
    return OutputFolder(text)


def input_file(text: str) -> Path:
    return InputFile(text)


def input_folder(text: str) -> Path:
    return InputFolder(text)


def declared(args) -> list[_Tagged]:
    """Every path value of the parsed arguments that declared its kind (lists included)."""
    found = []
    for value in vars(args).values():
        for item in value if isinstance(value, list) else [value]:
            if isinstance(item, _Tagged):
                found.append(item)
    return found


_created: list[Path] = []  # folders made for this command, removed again if it fails while they are empty


def prepare(files: list[Path] = (), folders: list[Path] = ()) -> None:
    """Check the output paths a command derived itself (a report's log, its repro folder) before work starts."""
    _created.extend(paths.prepare(outputs=[(Path(f), False) for f in files] + [(Path(f), True) for f in folders]))


def prepare_declared(args) -> None:
    values = declared(args)
    _created.extend(paths.prepare(outputs=[(Path(v), v.folder) for v in values if v.output],
                                  inputs=[(Path(v), v.folder) for v in values if not v.output]))


def discard_created() -> None:
    """After a failed command: the folders it created and left empty go."""
    paths.remove_empty(_created)
    _created.clear()
