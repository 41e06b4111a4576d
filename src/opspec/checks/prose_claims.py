"""Prose that states an edge behaviour must cite the row that shows it.

An op's description says what it computes; what it does at the edges (special values,
errors, wrapping and overflow, ties, dtype rules, a number an edge input gives) is a
special-case row, checked against torch. A sentence of prose that states such a
behaviour cites the row or rows that show it: ``FILE#id``, or ``#id`` for a row of the
op's own file. The classifier is a small vocabulary: a sentence is a claim when it names
one of the edge topics below; a summary that names none is left alone.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping

from opspec.spec import load, row_refs, yamlio
from opspec.spec.errors import Finding
from opspec.spec.yamlio import Mark

_DTYPE = r"(?:u?int(?:8|16|32|64)|float(?:16|32|64)|bfloat16|complex(?:64|128)|bool)"
_OUTCOME = r"(?:gives?|giving|returns?|returning|yields?|comes? out|becomes?|turns? into|evaluates? to|->|→)"
# topic -> what marks it; each is searched in the sentence, case-insensitively
TOPICS: dict[str, re.Pattern] = {name: re.compile(pattern, re.I) for name, pattern in {
    "special values": r"\bnan\b|\binf(?:inity|inities|inite)?\b|[±+-]0(?:\.0)?\b|\b(?:negative|signed|positive) zeros?\b|\bsubnormals?\b|\bdenormals?\b",
    "errors": r"\b(?:raise[sd]?|raising|refuse[sd]?|refusing|reject(?:s|ed)?|throws?|is an error)\b",
    "wrapping and overflow": r"\bwrap(?:s|ped|ping)?\b|\bwraps? around\b|\b(?:over|under)flow(?:s|ed|ing)?\b|\bsaturat\w*",
    "ties": r"\bties?\b|\btied\b|\bhalf (?:to|away from) \w+",
    "dtype rules": rf"\bpromot\w*|\b(?:up|down)cast\w*|\b(?:result|output)(?:'s)? dtype\b|\b{_DTYPE}\b[^.;]{{0,60}}\b{_OUTCOME}\b[^.;]{{0,40}}\b(?:{_DTYPE}|dtype)\b",
    "shapes and arguments accepted": r"\bmust\b|\b(?:trims?|pads?|accepts?|accepted)\b",
    "numbers at edges": rf"\d[^.;]{{0,60}}\b{_OUTCOME}(?=\W)[^.;]{{0,30}}\d|\d[^.;]{{0,60}}(?<!\w){_OUTCOME}(?!\w)",
}.items()}
_ABBREVIATIONS = ("e.g.", "i.e.", "vs.", "etc.")
_END = re.compile(r"(?<=[.!?])\s+(?=\S)")


@dataclass(frozen=True)
class Sentence:
    text: str
    start: int  # offset in the prose it came from


def sentences(text: str) -> list[Sentence]:
    """``text`` cut at sentence ends (a period, exclamation or question mark before a space); abbreviations and
    decimals do not end one."""
    out, start = [], 0
    for match in _END.finditer(text):
        before = text[start:match.start()]
        if before.endswith(_ABBREVIATIONS) or not before.strip():
            continue
        out.append(Sentence(before.strip(), start))
        start = match.end()
    if text[start:].strip():
        out.append(Sentence(text[start:].strip(), start))
    return out


def topics(sentence: str) -> list[str]:
    """The edge topics the sentence names (empty: a summary)."""
    return [name for name, pattern in TOPICS.items() if pattern.search(sentence)]


def uncited(text: str, cites) -> list[tuple[Sentence, list[str]]]:
    """The sentences of ``text`` that state an edge behaviour and cite no row (``cites(sentence)`` says whether one
    does), each with the topics that make it a claim."""
    found = []
    for sentence in sentences(text):
        named = topics(sentence.text)
        if named and not cites(sentence.text):
            found.append((sentence, named))
    return found


# --- the check on the opset's prose --------------------------------------------------------------

FIELDS = ("description", "formula_prose")  # the prose descriptions.yaml holds about each op
UNCITED = "uncited_prose.yaml"  # sentences written before the rule, each still to be cited, made a row or cut


def findings(root: Path, cases: Mapping[str, tuple]) -> list[Finding]:
    """Each sentence of ``descriptions.yaml`` that states an edge behaviour without citing a row (unless
    ``uncited_prose.yaml`` still lists it), each citation that names no row, and each listed sentence that no
    longer needs listing, at its file:line."""
    loaded = load.read(root / load.DESCRIPTIONS, "descriptions.schema.json", prose=True)
    ops = loaded.data.get("ops") if not loaded.findings and isinstance(loaded.data, dict) else None
    listed, found = _listed(root)
    if not isinstance(ops, dict):
        return found
    used: set[tuple[str, str]] = set()
    files = {row.file for rows in cases.values() for row in rows}
    for op, entry in ops.items():
        for name in FIELDS:
            text = entry.get(name) if isinstance(entry, dict) else None
            if not isinstance(text, str):
                continue
            mark = yamlio.mark_of(entry, name)
            for ref in row_refs.refs_in(text, files):
                if row_refs.resolve(cases, ref, op) is None:
                    found.append(Finding(mark, f"{op}: {name} cites {ref}, which names no special-case row"))
            for sentence, named in uncited(text, lambda s: bool(row_refs.refs_in(s, files))):
                if (op, sentence.text) in listed:
                    used.add((op, sentence.text))
                    continue
                found.append(Finding(mark, f"{op}: {name} states {', '.join(named)} without citing the row that "
                                           f"shows it (FILE#id, or #id for a row of the op): {sentence.text!r}"))
    found += [Finding(at, f"{op}: listed as uncited, but {UNCITED} need not list it (the sentence is gone, cites "
                          f"a row or states no edge behaviour): {text!r}")
              for (op, text), at in listed.items() if (op, text) not in used]
    return found


def _listed(root: Path) -> tuple[dict[tuple[str, str], Mark], list[Finding]]:
    """(op, sentence) -> where ``uncited_prose.yaml`` lists it; nothing when the file is absent."""
    path = root / UNCITED
    if not path.is_file():
        return {}, []
    loaded = load.read(path, "uncited_prose.schema.json", prose=True)
    if loaded.findings:
        return {}, loaded.findings
    return {(op, text): yamlio.mark_of(texts, index)
            for op, texts in loaded.data["ops"].items() for index, text in enumerate(texts)}, []
