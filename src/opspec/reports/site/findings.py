"""Findings pages: what each backend gets wrong, from its expectation file (``conformance/expectations/NAME.yaml``).

Every case a backend is known to fail or must not run is an expectation entry with its
reason and who is to blame; triage writes them, conform applies them and reports count
them. These pages show those entries as data, one page per backend, grouped by who
failed, each entry with the cases of the published reports it covers, so a backend author
reads a table rather than a results narrative.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import yaml

from opspec.reports.site import results as results_mod
from opspec.reports.site import raw_html, sanitize
from opspec.spec import yamlio

FOLDER = "findings"
# Who a finding is put on, in the order the pages show them; entries without one come last.
BLAME_ORDER = ("backend", "frontend", "opspec", "")
BLAME_TITLES = {"backend": "The backend", "frontend": "The torch front end", "opspec": "opspec",
                "": "Not attributed"}


@dataclass(frozen=True)
class Finding:
    op: str
    status: str  # xfail or skip
    reason: str
    attribution: str
    limits: str  # the dtypes, devices, torch versions and hardware the entry is limited to, in words
    cases: tuple[results_mod.Record, ...]  # the published cases it covers


@dataclass(frozen=True)
class BackendFindings:
    backend: str
    source: str  # the expectation file, relative to the checkout
    measured_with: str
    description: str
    findings: tuple[Finding, ...]
    reports: tuple[str, ...]  # names of the published reports of the backend


def read(folder: Path, root: Path, results: results_mod.Results) -> tuple[list[BackendFindings], list[str]]:
    """Each expectation file of ``folder`` that names a backend; problems (unreadable files) as lines."""
    out, problems = [], []
    for path in sorted(folder.glob("*.yaml")) if folder.is_dir() else ():
        try:
            data = yaml.load(path.read_text(encoding="utf-8"), Loader=yamlio.PLAIN_LOADER)
        except (OSError, UnicodeDecodeError, yaml.YAMLError) as err:
            problems.append(f"{path}: not readable as YAML: {sanitize.inline(str(err).splitlines()[0])}")
            continue
        if not isinstance(data, dict) or not isinstance(data.get("expectations"), list) or not data.get("backend"):
            continue
        backend = str(data["backend"])
        records: dict[tuple[str, str], list[results_mod.Record]] = {}
        for r in results.records:  # by (status, reason): an entry finds its cases at once, not by a scan each
            if r.backend == backend and r.status in ("xfail", "skip"):
                records.setdefault((r.status, " ".join(r.reason.split())), []).append(r)
        findings = tuple(_finding(entry, records) for entry in data["expectations"] if isinstance(entry, dict))
        out.append(BackendFindings(
            backend=backend, source=path.relative_to(root).as_posix() if path.is_relative_to(root) else path.name,
            measured_with=str(data.get("measured_with") or ""), description=" ".join(str(data.get("description") or "").split()),
            findings=findings, reports=tuple(sorted({r.name for r in results.reports if r.backend == backend}))))
    return out, problems


def _finding(yaml_entry: dict, records: dict[tuple[str, str], list[results_mod.Record]]) -> Finding:
    """One entry of the expectation file (its YAML, not a report's record) with the published cases it covers."""
    reason = " ".join(str(yaml_entry.get("reason") or "").split())
    status = str(yaml_entry.get("status") or "")
    limits = [f"{key}: {', '.join(map(str, yaml_entry[key]))}" for key in ("dtypes", "devices", "hardware")
              if yaml_entry.get(key)]
    if yaml_entry.get("torch"):
        limits.append(f"torch {yaml_entry['torch']}")
    if yaml_entry.get("tests"):
        limits.append(f"tests: {', '.join(map(str, yaml_entry['tests']))}")
    # a published case belongs to the entry whose reason it carries (conform copies the first matching entry's)
    cases = tuple(records.get((status, reason), ()))
    return Finding(op=str(yaml_entry.get("op") or ""), status=status, reason=reason,
                   attribution=str(yaml_entry.get("attribution") or ""), limits="; ".join(limits), cases=cases)


def pages(backends: list[BackendFindings], op_page: Callable[[str], str | None],
          case_link: Callable[[results_mod.Record], str], links: raw_html.Links) -> dict[str, str]:
    """``findings/index.md`` and one page per backend. ``op_page``: an op's page (a path under the generated
    folder), ``case_link``: a published case's place in its report (the same, with its anchor)."""
    out = {f"{FOLDER}/index.md": _index(backends)}
    for item in backends:
        page = f"{FOLDER}/{_slug(item.backend)}.md"
        out[page] = _page(item, op_page, case_link, lambda target, page=page: links.href(page, f"../{target}"))
    return out


def _slug(backend: str) -> str:
    return "".join(c if c.isalnum() or c in "-_" else "-" for c in backend.lower())


def _counts(item: BackendFindings) -> dict[str, int]:
    counts = {who: sum(1 for f in item.findings if f.attribution == who) for who in BLAME_ORDER}
    for f in item.findings:
        if f.attribution not in counts:
            counts[f.attribution] = counts.get(f.attribution, 0) + 1
    return counts


def _index(backends: list[BackendFindings]) -> str:
    lines = ["---", "title: Backend findings", "---", "", "# Backend findings", "",
             "What each backend is known to get wrong: the entries of its expectation file, each with who failed "
             "(the backend, the torch front end before it, or opspec) and why. `xfail` cases run and are "
             "expected to fail; `skip` cases are not run (they crash or hang the backend). A case that starts "
             "passing is reported as `xpass`, so an entry that no longer holds shows in the next run.", ""]
    if not backends:
        return "\n".join(lines + ["No expectation files in this checkout.", ""])
    lines += ["| Backend | Entries | Backend's own | Front end | opspec | Cases in published reports |",
              "|---|---|---|---|---|---|"]
    for item in backends:
        counts = _counts(item)
        cases = sum(len(f.cases) for f in item.findings)
        lines.append(f"| [{sanitize.cell(item.backend)}]({_slug(item.backend)}.md) | {len(item.findings)} | "
                     f"{counts['backend']} | {counts['frontend']} | {counts['opspec']} | {cases} |")
    return "\n".join(lines + [""])


def _page(item: BackendFindings, op_page, case_link, href) -> str:
    lines = ["---", f"title: 'Findings: {item.backend}'", "search:", "  exclude: true", "---", "",
             f"# What {sanitize.inline(item.backend)} gets wrong", "",
             f"From `{sanitize.inline(item.source)}`"
             + (f", triaged with {sanitize.inline(item.measured_with)}" if item.measured_with else "") + ".", ""]
    if item.description:
        lines += [sanitize.inline(item.description), ""]
    if item.reports:
        lines += ["Published reports: " + ", ".join(f"[{sanitize.inline(name)}](../reports/{name}.md)"
                                                      for name in item.reports) + ".", ""]
    order = [*BLAME_ORDER, *sorted({f.attribution for f in item.findings} - set(BLAME_ORDER))]
    for who in order:
        found = [f for f in item.findings if f.attribution == who]
        if not found:
            continue
        lines += [f"## {BLAME_TITLES.get(who, sanitize.inline(who))} ({len(found)})", "",
                  _table(sorted(found, key=lambda f: (f.op, f.limits)), op_page, case_link, href), ""]
    if not item.findings:
        lines += ["No entries: every case is expected to pass.", ""]
    return "\n".join(lines)


def _table(found: list, op_page, case_link, href) -> str:
    """A blame group's entries as an HTML table (a few hundred rows with a dozen links each; see raw_html.py)."""
    rows = []
    for f in found:
        target = op_page(f.op) if "*" not in f.op and "?" not in f.op else None
        op = raw_html.link(href(target), raw_html.code(f.op)) if target else raw_html.code(f.op)
        cases = ", ".join(raw_html.link(href(case_link(r)), raw_html.text(r.dtype)) for r in f.cases[:12])
        if len(f.cases) > 12:
            cases += f" and {len(f.cases) - 12} more"
        rows.append(f"<tr><td>{op}</td><td>{raw_html.text(f.limits) or 'all'}</td><td>{raw_html.ident(f.status)}</td>"
                    f"<td>{raw_html.text(f.reason)}</td><td>{cases or '—'}</td></tr>\n")
    return ("<table>\n<thead><tr><th>Op</th><th>Limited to</th><th>Status</th><th>Why</th><th>Cases</th></tr></thead>\n"
            f"<tbody>\n{''.join(rows)}</tbody>\n</table>")
