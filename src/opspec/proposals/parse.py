"""Split a proposal file into front matter and body, keeping the file's real line numbers.

The front matter is parsed by the project's YAML loader with the opening ``---``
replaced by an empty line, so every mark the loader records is already a line of
the file itself: no offset arithmetic, and findings point where an editor goes.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from opspec.proposals.model import SECTIONS, Proposal
from opspec.spec.load import Finding, schema_findings
from opspec.spec.yamlio import DataError, Mark, MarkedDict, load_text, read_utf8

FENCE_RE = re.compile(r"^\s{0,3}(`{3,}|~{3,})")
HEADING_RE = re.compile(r"^##\s+(.+?)\s*#*\s*$")


@dataclass
class ParsedFile:
    """One proposal file as read: front matter, body and everything wrong with them."""

    path: Path
    display: str
    text: str
    meta: Any = None  # MarkedDict when the front matter parsed
    body: str = ""
    body_line: int = 1  # file line where the body starts
    fm_end_line: int = 1  # file line of the closing ``---``
    sections: dict[str, int] = field(default_factory=dict)  # heading -> file line
    findings: list[Finding] = field(default_factory=list)
    proposal: Proposal | None = None  # set when the schema passed

    def mark(self, key: str | None = None) -> Mark:
        if isinstance(self.meta, MarkedDict) and key is not None and key in self.meta.key_marks:
            return self.meta.key_marks[key]
        return Mark(self.display, 1, 1)

    def add(self, mark: Mark, message: str) -> None:
        self.findings.append(Finding(mark, message))


def split_front_matter(text: str, display: str) -> tuple[str, str, int, int]:
    """(yaml_text, body, body_line, closing_line); yaml_text has as many lines before it as the file.

    Raises DataError when the file does not open with a ``---`` block.
    """
    lines = text.splitlines(keepends=True)
    if not lines or lines[0].rstrip("\r\n") != "---":
        raise DataError(Mark(display, 1, 1), "a proposal starts with a '---' line opening its YAML front matter")
    for index in range(1, len(lines)):
        if lines[index].rstrip("\r\n") in ("---", "..."):
            yaml_text = "\n" + "".join(lines[1:index])
            body = "".join(lines[index + 1 :])
            return yaml_text, body, index + 2, index + 1
    raise DataError(Mark(display, 1, 1), "front matter is not closed by a '---' line")


def find_sections(body: str, first_line: int) -> dict[str, int]:
    """Level-2 headings outside code fences -> their file line."""
    found: dict[str, int] = {}
    fence: str | None = None
    for offset, line in enumerate(body.splitlines()):
        opener = FENCE_RE.match(line)
        if opener:
            marker = opener.group(1)
            if fence is None:
                fence = marker
            elif marker[0] == fence[0] and len(marker) >= len(fence):
                fence = None
            continue
        if fence is None:
            heading = HEADING_RE.match(line)
            if heading:
                found.setdefault(heading.group(1), first_line + offset)
    return found


def parse_file(path: Path, display: str | None = None, text: str | None = None) -> ParsedFile:
    """Read one proposal and run the checks that need nothing but the file itself."""
    display = display or str(path)
    parsed = ParsedFile(path=path, display=display, text="")
    if text is None:
        try:
            text = read_utf8(path, display)
        except DataError as err:
            parsed.add(err.mark, err.message)
            return parsed
    parsed.text = text
    try:
        yaml_text, body, body_line, closing = split_front_matter(text, display)
        parsed.body, parsed.body_line, parsed.fm_end_line = body, body_line, closing
        meta = load_text(yaml_text, display)
    except DataError as err:
        parsed.findings.append(Finding(err.mark, err.message))
        return parsed
    if not isinstance(meta, MarkedDict):
        parsed.add(Mark(display, 2, 1), "front matter must be a YAML mapping")
        return parsed
    parsed.meta = meta
    parsed.sections = find_sections(body, body_line)
    schema_errors = schema_findings(meta, "proposal.schema.json", display)
    parsed.findings.extend(schema_errors)
    for name in SECTIONS:
        if name not in parsed.sections:
            parsed.add(Mark(display, body_line, 1), f"missing required section '## {name}'")
    if not schema_errors:
        parsed.proposal = Proposal.from_meta(path, meta, body)
    return parsed
