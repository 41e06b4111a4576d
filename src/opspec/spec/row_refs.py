"""Citations of special-case rows in text: ``FILE#id``, ``opset/special_cases/FILE#id``, or ``#id``.

A row's id is unique in its file and an op's rows live in one file, so ``#id`` in text that
belongs to an op (its description, an expectation entry) names a row of that op's file.
Citations by line (``FILE:LINE``) are what reports written before ids held; they are read
(:data:`BY_LINE`) only to say so, since a line says nothing once rows move.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Mapping

ID = r"[A-Za-z0-9_][A-Za-z0-9_.-]*[A-Za-z0-9_]"
# a file is one of the special-case files' names; "#id" alone follows a space, a bracket or a comma
CITE = re.compile(rf"(?:(?:opset/special_cases/)?(?P<file>[a-z0-9][a-z0-9-]*\.yaml)|(?<![^\s(\[,;]))#(?P<id>{ID})")
BY_LINE = re.compile(r"(?:opset/special_cases/)?(?P<file>[a-z0-9][a-z0-9-]*\.yaml):(?P<line>\d+)\b")


@dataclass(frozen=True)
class RowRef:
    file: str | None  # None: ``#id``, a row of the op's own file
    id: str
    start: int  # where the citation stands in its text

    def __str__(self) -> str:
        return f"{self.file or ''}#{self.id}"


def refs_in(text: str, files: Iterable[str] | None = None) -> list[RowRef]:
    """Every citation in ``text``; with ``files``, only those naming one of them (or no file)."""
    known = set(files) if files is not None else None
    return [RowRef(m["file"], m["id"], m.start()) for m in CITE.finditer(text)
            if known is None or m["file"] is None or m["file"] in known]


def split(place: str) -> tuple[str, str] | None:
    """(file name, id) of ``[opset/special_cases/]FILE#id``; None for any other spelling (a line, say)."""
    if "#" not in place:
        return None
    file, _, row_id = place.rpartition("#")
    return Path(file).name, row_id


def resolve(cases: Mapping[str, tuple], ref: RowRef, op: str | None = None):
    """The row ``ref`` names: in ``ref.file``, or for ``#id`` in the file of ``op``'s rows; None if none."""
    file = ref.file
    if file is None:
        own = cases.get(op, ()) if op else ()
        file = own[0].file if own else None
    for rows in cases.values():
        for row in rows:
            if row.id == ref.id and (file is None or row.file == file):
                return row
    return None
