"""What a proposal's status demands of its content, beyond the schema.

- No status tolerates placeholders: a ``TODO`` anywhere, or a section still holding
  the scaffold's template text.
- A decided status (accepted, rejected, implemented, superseded) needs its
  ``decision``: the date, named reviewers or a decision record, and the reasons.
- Accepted (and later) needs the measurements the changes imply, recorded in
  ``evidence`` by ``opspec proposal measure``: a passing ``check-decomp`` for every
  rule added or changed, for every added op its schema, its testing hints and a
  passing strategy check (drawn calls the eager kernel accepts), and a passing
  strategy check for every op whose testing hints change.
"""
from __future__ import annotations

import functools
import re
from typing import Any, Mapping

from opspec.proposals.model import DECIDED_STATUSES, Proposal
from opspec.proposals.parse import ParsedFile, find_sections
from opspec.spec.load import Finding
from opspec.spec.yamlio import Mark, mark_of

TODO_RE = re.compile(r"\bTODO\b")
# Statuses whose changes must be backed by measurements (an implemented one was accepted first).
MEASURED_STATUSES = ("accepted",)
EVIDENCE_FOR_ACTION = {"add-op": "strategy", "change-testing": "strategy", "add-rule": "check-decomp",
                       "change-rule": "check-decomp"}


def section_texts(body: str, first_line: int) -> dict[str, tuple[int, str]]:
    """``## heading`` -> (file line, the section's text with whitespace collapsed)."""
    lines = body.splitlines()
    starts = sorted(find_sections(body, first_line).items(), key=lambda item: item[1])
    found = {}
    for position, (name, line) in enumerate(starts):
        end = starts[position + 1][1] if position + 1 < len(starts) else first_line + len(lines)
        text = " ".join(" ".join(lines[line - first_line + 1 : end - first_line]).split())
        found[name] = (line, text)
    return found


@functools.lru_cache(maxsize=1)
def template_sections() -> dict[str, str]:
    """The scaffold's placeholder text per section (sections whose template text is a real answer excluded)."""
    from opspec.proposals.parse import split_front_matter
    from opspec.proposals.scaffold import render

    text = render(id=1, type="process", title="Template", op=None, author="nobody", date="2000-01-01")
    _, body, body_line, _ = split_front_matter(text, "template")
    return {name: words for name, (_, words) in section_texts(body, body_line).items() if words and words != "None yet."}


def placeholder_findings(parsed: ParsedFile) -> list[Finding]:
    findings = []
    for number, line in enumerate(parsed.text.splitlines(), start=1):
        match = TODO_RE.search(line)
        if match:
            findings.append(Finding(Mark(parsed.display, number, match.start() + 1),
                                    "placeholder `TODO`: write the real text before the proposal is checked in"))
    template = template_sections()
    for name, (line, words) in section_texts(parsed.body, parsed.body_line).items():
        if name in template and words == template[name]:
            findings.append(Finding(Mark(parsed.display, line, 1),
                                    f"section '## {name}' still holds the template's text; replace it"))
    return findings


def decision_findings(parsed: ParsedFile, p: Proposal) -> list[Finding]:
    if p.status not in DECIDED_STATUSES or p.decision:
        return []
    return [Finding(parsed.mark("status"),
                    f"status {p.status} needs a `decision` record (date, reviewers or record, reasons): pass "
                    f"--reviewer NAME or --record URL_OR_PATH, and --reason TEXT, to `opspec proposal set-status`")]


def measurements(p: Proposal) -> list[tuple[int, Mapping[str, Any], str, str, Mapping[str, Any] | None]]:
    """(position, change, check, op, the latest evidence of that check for that op or None) for every change that
    needs a measurement."""
    latest = {}
    for item in p.evidence:  # the last entry of a check for an op is what counts
        latest[(item["check"], item["op"])] = item
    found = []
    for position, change in enumerate(p.changes):
        check = EVIDENCE_FOR_ACTION.get(change["action"])
        if check is not None:
            name = change.get("op") or change.get("rule", {}).get("op")
            found.append((position, change, check, name, latest.get((check, name))))
    return found


def unmeasured(p: Proposal) -> bool:
    """Whether some change still lacks a passing measurement."""
    return any(item is None or item["result"] != "pass" for *_, item in measurements(p))


def evidence_findings(parsed: ParsedFile, p: Proposal) -> list[Finding]:
    """Accepted changes carry their measurements: every added op, every op with new testing hints and every new or
    changed rule."""
    if p.status not in MEASURED_STATUSES:
        return []
    findings = []
    changes = parsed.meta["changes"]
    for position, change, check, name, item in measurements(p):
        here = mark_of(changes, position, parsed.mark("changes"))
        if change["action"] == "add-op":
            for key, why in (("schema", "the schema torch prints"), ("testing", "hints for drawing valid inputs")):
                if key not in change:
                    findings.append(Finding(here, f"changes/{position}: an accepted add-op states `{key}` ({why})"))
        if item is None:
            findings.append(Finding(here, f"changes/{position}: accepted without `{check}` evidence for {name}; "
                                          f"run `opspec proposal measure {p.id}`"))
        elif item["result"] != "pass":
            findings.append(Finding(mark_of(parsed.meta, "evidence", here),
                                    f"changes/{position}: the recorded `{check}` of {name} failed: {item['detail']}"))
    return findings
