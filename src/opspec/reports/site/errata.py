"""Errata on the site: sealed prose shown corrected, with a visible mark, the text as released struck, and
links to the evidence that shows the truth (``opset/errata.yaml``): special-case rows, a backend's lowering
manifest, or a quoted claim of the prose audit.

Every text passes through :mod:`opspec.reports.site.sanitize`; the only markup added is ``<ins>``,
``<del>``, ``<strong>`` and a classed ``<span>``, all inert.
"""
from __future__ import annotations

import hashlib
from typing import Callable, Iterable

from opspec.reports.site import sanitize
from opspec.spec import errata as errata_mod
from opspec.spec.errata import AuditRef, Erratum, Evidence, LoweringRef

RESULTS_ANCHOR = "dtypes-and-devices"  # the op page's section of published results, which the manifests are measured from


def row_anchor(says: str) -> str:
    """The id of a special-case row on its op's page: stable while the claim is (lines move, claims name rows)."""
    return "sc-" + hashlib.sha1(says.encode()).hexdigest()[:10]


def evidence_links(erratum: Erratum, op_page: str) -> str:
    """Markdown links to the cited evidence on the op's page (``op_page``: its path from here, '' for this page):
    each row where it stands, each lowering manifest to the op's published results by dtype and device; an audit
    claim is quoted."""
    return ", ".join(_link(cited, op_page) for cited in erratum.shown_by)


def _link(cited: Evidence, op_page: str) -> str:
    if isinstance(cited, LoweringRef):
        return f"[{sanitize.inline(cited.backend)}'s lowering manifest: {sanitize.inline(cited.lowering)}]({op_page}#{RESULTS_ANCHOR})"
    if isinstance(cited, AuditRef):  # the audit is a tool of the repository, not a page: named, not linked
        return f"the prose audit, run on torch: {sanitize.inline(cited.quote)}"
    if cited.id:  # the op page anchors each row at its id
        return f"[{sanitize.inline(cited.file + '#' + cited.id)}]({op_page}#{cited.id})"
    return f"[{sanitize.inline(cited.says)}]({op_page}#{row_anchor(cited.says)})"


def mark(erratum: Erratum, version: str, op_page: str) -> str:
    """The visible erratum note: date, the sealed text struck as released, the rows that show the truth."""
    return (f'<span class="opspec-erratum"><strong>Erratum</strong> ({sanitize.inline(erratum.published)}): '
            f'as released in {sanitize.inline(version)}, <del>{sanitize.inline(erratum.was)}</del>; '
            f"shown by {evidence_links(erratum, op_page)}</span>")


def prose(text: str, errata: Iterable[Erratum], version: str, op_page: str) -> str:
    """One line of sealed prose for a page: plain when no erratum corrects it, else each corrected part
    marked ``<ins>`` and followed by its erratum note."""
    errata = [e for e in errata if e.was in text]
    if not errata:
        return sanitize.inline(text)
    segments: list[tuple[str, bool]] = [(text, False)]  # (raw text, corrected?)
    for erratum in errata:
        split = []
        for raw, is_now in segments:
            parts = [raw] if is_now else raw.split(erratum.was)
            for position, part in enumerate(parts):
                split += [(erratum.now, True)] if position else []
                split += [(part, is_now)] if part else []
        segments = split
    body = "".join(f"<ins>{sanitize.inline(raw)}</ins>" if is_now else _spaced(raw) for raw, is_now in segments)
    return " ".join([body, *(mark(e, version, op_page) for e in errata)])


def _spaced(raw: str) -> str:
    """A piece of a line, escaped, keeping the spaces at its ends that join it to its neighbours."""
    return (" " if raw[:1].isspace() else "") + sanitize.inline(raw) + (" " if raw[-1:].isspace() and raw.strip() else "")


def entry_prose(errata: Iterable[Erratum], version: str, kind: str, name: str, op_page: str) -> Callable[[str, str], str]:
    """For a template: ``prose(field, text)`` of one entry of one version, with its errata applied."""
    by_field = errata_mod.for_entry(errata, version, kind, name)
    return lambda field, text: prose(text, by_field.get(field, ()), version, op_page)
