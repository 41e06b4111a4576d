"""Edit a proposal's front matter as text: only the lines of the keys that change move.

Re-dumping the YAML would reflow comments, quoting and the changes block that
reviewers read, so a status change rewrites one key's lines and nothing else.
"""
from __future__ import annotations

from typing import Any, Mapping

from opspec.proposals.model import FIELDS
from opspec.proposals.parse import split_front_matter
from opspec.spec import yamlio
from opspec.spec.yamlio import DataError, Mark, MarkedDict


def render_field(key: str, value: Any) -> str:
    return yamlio.dump({key: value})


def set_fields(text: str, display: str, updates: Mapping[str, Any]) -> str:
    """``text`` with each top-level front-matter key in ``updates`` set (inserted in FIELDS order when absent)."""
    for key, value in updates.items():
        text = _set_one(text, display, key, value)
    return text


def _set_one(text: str, display: str, key: str, value: Any) -> str:
    yaml_text, _, _, closing = split_front_matter(text, display)
    meta = yamlio.load_text(yaml_text, display)
    if not isinstance(meta, MarkedDict):
        raise DataError(Mark(display, 2, 1), "front matter must be a YAML mapping")
    lines = text.splitlines(keepends=True)
    newline = "\r\n" if lines[0].endswith("\r\n") else "\n"
    rendered = render_field(key, value).replace("\n", newline)
    starts = sorted(mark.line for mark in meta.key_marks.values())
    if key in meta.key_marks:
        start = meta.key_marks[key].line
        following = [line for line in starts if line > start]
        end = following[0] if following else closing
        # Keep comment or blank lines that sit between this key's value and the next key.
        while end - 1 > start and lines[end - 2].strip() in ("",) or end - 1 > start and lines[end - 2].lstrip().startswith("#"):
            end -= 1
        lines[start - 1 : end - 1] = [rendered]
    else:
        later = [k for k in FIELDS[FIELDS.index(key) + 1 :] if k in meta.key_marks] if key in FIELDS else []
        at = meta.key_marks[later[0]].line if later else closing
        lines[at - 1 : at - 1] = [rendered]
    return "".join(lines)
