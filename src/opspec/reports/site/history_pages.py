"""The scoreboard's history: each backend's pass rate over its archived runs, and what changed between runs.

Reads ``conformance/results/history/`` (see :mod:`opspec.reports.history`); one page per
backend and device lists every run and the cases that changed from one to the next.
"""
from __future__ import annotations

import html
from dataclasses import dataclass
from pathlib import Path

from opspec.reports import history
from opspec.reports.site import raw_html, sanitize
from opspec.spec import yamlio

SPARK_WIDTH, SPARK_HEIGHT = 120, 24


@dataclass(frozen=True)
class Row:
    """One backend and device on the scoreboard's history table."""
    key: str
    runs: list[history.Run]
    latest: history.Changes | None  # the newest run against the one before it

    @property
    def page(self) -> str:
        return f"history/{self.key}.md"


def sparkline(runs: list[history.Run]) -> str:
    """Pass rate of each run, oldest to newest, as a small inline SVG with a title per point."""
    step = (SPARK_WIDTH - 6) / max(1, len(runs) - 1)
    low = max(0.0, min(run.pass_rate for run in runs) - 5)  # from 5 points below the lowest rate up to 100%
    points = [(3 + i * step, SPARK_HEIGHT - 3 - (SPARK_HEIGHT - 6) * (run.pass_rate - low) / (100 - low or 1))
              for i, run in enumerate(runs)]
    line = " ".join(f"{x:.1f},{y:.1f}" for x, y in points)
    dots = "".join(
        f'<circle cx="{x:.1f}" cy="{y:.1f}" r="2"><title>{html.escape(f"{run.date[:10]}: {run.pass_rate:.1f}% pass (opset {run.opset}, torch {run.torch})")}</title></circle>'
        for (x, y), run in zip(points, runs))
    return (f'<svg class="opspec-spark" width="{SPARK_WIDTH}" height="{SPARK_HEIGHT}" role="img" '
            f'aria-label="pass rate over {len(runs)} runs"><polyline points="{line}"/>{dots}</svg>')


def rows(folder: Path) -> tuple[list[Row], list[str]]:
    runs, notes = history.read_all(folder)
    return [Row(key, entries, history.changes(entries[-2], entries[-1]) if len(entries) > 1 else None)
            for key, entries in runs.items()], notes


def counts(change: history.Changes | None) -> str:
    """The scoreboard cell: how many cases changed, by kind."""
    if change is None:
        return "first run"
    parts = [f"{len(items)} {label}" for label, items in (
        ("fixed", change.fixed), ("new failures", change.new_failures), ("changed", change.changed),
        ("added", change.added), ("removed", change.removed)) if items]
    return ", ".join(parts) or "no case changed"


def _case(op: str, slugs: dict[str, str], href) -> str:
    """An op of a changed case as HTML, linked to the op's page."""
    slug = slugs.get(op)
    return str(raw_html.link(href(f"../ops/{slug}.md"), raw_html.code(op)) if slug else raw_html.code(op))


def _changes_table(changes: list[tuple[str, tuple[str, str, str]]], slugs: dict[str, str], href) -> str:
    """The cases that changed between two runs: an HTML table (hundreds of rows a page; see raw_html.py). A page
    names the same few ops and statuses thousands of times: each is written once."""
    cases: dict[str, str] = {}  # op -> its link
    names: dict[str, str] = {}

    def case(text: str) -> str:
        op, _, rest = text.partition(" ")
        if op not in cases:
            cases[op] = _case(op, slugs, href)
        return f"{cases[op]} {raw_html.text(rest)}"

    def ident(text: str) -> str:
        if text not in names:
            names[text] = raw_html.ident(text)
        return names[text]

    rows = "".join(f"<tr><td>{ident(label)}</td><td>{case(text)}</td><td>{ident(before)}</td><td>{ident(after)}</td></tr>\n"
                   for label, (text, before, after) in changes)
    return f"<table>\n<thead><tr><th>Change</th><th>Case</th><th>Before</th><th>After</th></tr></thead>\n<tbody>\n{rows}</tbody>\n</table>"


def page(row: Row, slugs: dict[str, str], links: raw_html.Links) -> str:
    lines = [
        "---", yamlio.dump({"title": f"{row.key}: history", "search": {"exclude": True}}).rstrip("\n"), "---", "",
        f"# {sanitize.inline(row.key)}: history", "",
        f"{len(row.runs)} archived run(s) in `conformance/results/history/{row.key}/`, oldest first. A run is dated "
        "when it was published; runs imported from git are dated by the commit that first published them.", "",
        f"{sparkline(row.runs)}", "",
        "| Date | Opset | torch | Backend version | dtypes | Cases | Pass | Pass rate | Statuses |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for run in row.runs:
        statuses = ", ".join(f"{n} {s}" for s, n in run.summary().items())
        lines.append(f"| <span class=\"opspec-id\">{sanitize.cell(_when(run))}</span> | "
                     f"{sanitize.ident(run.opset)} | {sanitize.ident(run.torch)} | {sanitize.cell(run.backend_version or '—')} | "
                     f"{sanitize.cell(', '.join(run.dtypes) or '—')} | {run.total} | {run.passed} | "
                     f"{run.pass_rate:.1f}% | {sanitize.cell(statuses)} |")
    for older, newer in reversed(list(zip(row.runs, row.runs[1:]))):
        change = history.changes(older, newer)
        lines += ["", f"## {sanitize.inline(_when(newer))} against {sanitize.inline(_when(older))}", "",
                  f"Opset {sanitize.inline(older.opset)} → {sanitize.inline(newer.opset)}, torch "
                  f"{sanitize.inline(older.torch)} → {sanitize.inline(newer.torch)}; pass rate "
                  f"{older.pass_rate:.1f}% → {newer.pass_rate:.1f}%: {counts(change)}.", ""]
        moved = [("fixed", c) for c in change.fixed] + [("new failure", c) for c in change.new_failures] + \
                [("changed", c) for c in change.changed]
        appeared = [("added", (case, "—", status)) for case, status in change.added] + \
                   [("removed", (case, status, "—")) for case, status in change.removed]
        if moved or appeared:
            lines.append(_changes_table(moved + appeared, slugs, lambda link: links.href(row.page, link)))
    return "\n".join(lines) + "\n"


def _when(run: history.Run) -> str:
    return run.date[:16].replace("T", " ")


def pages(found: list[Row], slugs: dict[str, str], links: raw_html.Links) -> dict[str, str]:
    return {row.page: page(row, slugs, links) for row in found}
