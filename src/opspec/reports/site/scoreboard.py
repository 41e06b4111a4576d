"""The scoreboard: one summary matrix (report x status), an op x report heat map, and one page per report.

Generic over statuses and tolerant of missing fields: whatever statuses and
identity fields a committed report carries are shown; nothing is assumed.
"""
from __future__ import annotations

import html
import json
import re
from pathlib import Path

import jinja2

from opspec.reports.site import results as results_mod
from opspec.reports.site import raw_html, sanitize
from opspec.results import vocabulary
from opspec.spec.manifests import FALLBACK_KINDS
from opspec.spec.model import CATEGORIES, Opset

DEFAULT_MEANING = "Lowered: the backend's manifest lists the op as handled natively; fallback: it hands the op back to PyTorch."


# Fields that describe the machine rather than a result: one long word each (a platform
# string), the same in every row; the Torch versions page shows them.
MACHINE_FIELDS = frozenset({"platform"})


def _declared(backend: str):
    """The built-in declaration of a reported backend (what "lowered" means there), or None."""
    from opspec.conform.backends import registry

    return registry.BUILT_IN.get(backend)


def _meaning(report) -> str:
    declared = _declared(report.backend)
    return (declared.lowering_meaning if declared else "") or report.manifest_description or DEFAULT_MEANING


def anchor(report: str, op: str, dtype: str) -> str:
    return "case-" + re.sub(r"[^A-Za-z0-9_]+", "-", f"{report}-{op}-{dtype}").strip("-").lower()


def _percent(count: int, total: int) -> str:
    return f"{100 * count / total:.1f}%" if total else "—"


def declared_cells(opset: Opset) -> dict[str, tuple[str, ...]]:
    """Each active op of the opset and the dtypes it declares: the op x dtype cells a full run covers."""
    from opspec.conform import cases

    return {op.name: tuple(cases.dtypes_for(op, ["all"])) for op in opset.active_ops()}


def dtype_coverage(records: list[results_mod.Record], declared: dict[str, tuple[str, ...]]) -> tuple[int, int]:
    """How many of the declared op x dtype cells have a result in these records, and how many there are."""
    run = {(r.op, r.dtype) for r in records}
    return sum(1 for op, dtypes in declared.items() for d in dtypes if (op, d) in run), \
        sum(len(dtypes) for dtypes in declared.values())


def _summary(results: results_mod.Results, statuses: list[str], newest: Opset,
             declared: dict[str, tuple[str, ...]]) -> list[dict]:
    rows = []
    for report in sorted(results.reports, key=lambda r: (r.device != "cpu", r.device, r.backend, r.torch)):
        records = results.for_report(report.name)
        counts = {s: sum(1 for r in records if r.status == s) for s in statuses}
        if report.opset == newest.version:
            covered, cells = dtype_coverage(records, declared)
            coverage = f"{covered} of {cells} ({_percent(covered, cells)})"
        else:  # another opset declares other cells (or the report names none): not counted against this one
            coverage = f"— (opset {report.opset})" if report.opset else "—"
        rows.append({"report": report, "counts": counts, "total": len(records), "dtype_coverage": coverage,
                     "cells": [f"{counts[s]} ({_percent(counts[s], len(records))})" if counts[s] else "·" for s in statuses]})
    return rows


def _heatmap(results: results_mod.Results, newest: Opset, declared: dict[str, tuple[str, ...]], page_prefix: str,
             op_page) -> str:
    """An HTML picture: one row per report, one square per op, in chunks that fit the page width."""
    categories = {op.name: op.category for op in newest.ops}
    ops = sorted({*categories, *(r.op for r in results.records)},
                 key=lambda n: (CATEGORIES.index(categories[n]) if n in categories else len(CATEGORIES), n))
    reports = sorted(results.reports, key=lambda r: (r.device != "cpu", r.device, r.backend, r.torch))
    worst: dict[tuple[str, str], results_mod.Record] = {}
    dtypes_run: dict[tuple[str, str], set[str]] = {}
    for r in results.records:
        key = (r.report, r.op)
        dtypes_run.setdefault(key, set()).add(r.dtype)
        if key not in worst or vocabulary.status_key(r.status) > vocabulary.status_key(worst[key].status):
            worst[key] = r
    chunk = -(-len(ops) // max(1, -(-len(ops) // 65)))  # equal chunks of at most 65 squares
    lines = ['<div class="opspec-heatmap" data-search-exclude>']
    for start in range(0, len(ops), chunk):
        part = ops[start : start + chunk]
        lines.append('<table class="opspec-hm"><tbody>')
        band = "".join(
            f'<td class="hm-cat hm-cat-{CATEGORIES.index(categories[o]) if o in categories else len(CATEGORIES)}" '
            f'title="{html.escape(categories.get(o, "not core"))}"></td>' for o in part)
        lines.append(f'<tr><th class="hm-label">ops {start + 1}–{start + len(part)}</th>{band}</tr>')
        for report in reports:
            cells = []
            for op in part:
                record = worst.get((report.name, op))
                if record is None:
                    cells.append(f'<td><a class="hm hm-none" href="{op_page(op)}" '
                                 f'title="{html.escape(op)} on {html.escape(report.name)}: not run"></a></td>')
                    continue
                why = record.ran_instead or record.reason or record.message
                wanted = declared.get(op, ())
                ran = len(dtypes_run[(report.name, op)] & set(wanted)) if wanted else 0
                partial = bool(wanted) and ran < len(wanted)
                title = (f"{op} on {report.name}: worst {record.status} ({record.dtype})"
                         + (f", {ran} of {len(wanted)} declared dtypes run" if wanted else "")
                         + (f" — {why}" if why else ""))
                href = f"{page_prefix}reports/{report.name}/#{anchor(report.name, op, record.dtype)}"
                css = (re.sub(r"[^a-z0-9-]", "", record.status.lower()) or "unknown") + (" hm-partial" if partial else "")
                cells.append(f'<td><a class="hm hm-{css}" href="{html.escape(href)}" '
                             f'title="{html.escape(title[:300])}"></a></td>')
            label = html.escape(f"{report.backend} · {report.device}")
            lines.append(f'<tr><th class="hm-label">{label}</th>{"".join(cells)}</tr>')
        lines.append("</tbody></table>")
    legend = "".join(f'<span><i class="hm hm-cat-{i}"></i>{html.escape(c)}</span>' for i, c in enumerate(CATEGORIES))
    lines.append(f'<div class="opspec-legend">Band above each chunk, by category: {legend}</div>')
    lines.append("</div>")
    return "\n".join(lines)


def _version_matrix(path: Path) -> tuple[list[str], list[list[str]], str] | None:
    """benchmarks/results/version_matrix.json in brief: one row per torch version, each step ok or differs.

    Read whatever its shape: ``{"versions": {VERSION: {STEP: {"ok": ..., "summary": ...}}}}`` or a list
    of flat rows. The full matrix, with the details, is on the Torch versions page.
    """
    if not path.is_file():
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return [], [], f"{path.name}: not readable JSON"
    rows = data.get("versions") if isinstance(data, dict) else data
    if isinstance(rows, dict):
        rows = [{"torch": version, **entry} for version, entry in rows.items() if isinstance(entry, dict)]
    if not isinstance(rows, list):
        return [], [], f"{path.name}: no rows found"
    columns: list[str] = []
    table_rows = []
    for row in (r for r in rows if isinstance(r, dict)):
        flat = {}
        for key, value in row.items():
            if key in MACHINE_FIELDS:
                continue
            if isinstance(value, dict) and "ok" in value:
                flat[key] = "ok" if value.get("ok") else "differs"
            elif not isinstance(value, (list, dict)):
                flat[key] = str(value)
            else:
                continue
            if key not in columns:
                columns.append(key)
        table_rows.append(flat)
    table = [[sanitize.cell(row.get(c, "—")) for c in columns] for row in table_rows]
    return [sanitize.cell(c) for c in columns], table, ""


def pages(env: jinja2.Environment, results: results_mod.Results, newest: Opset, slugs: dict[str, str],
          version_matrix: Path, links: raw_html.Links, torch_versions_page: str | None = None,
          history_folder: Path | None = None) -> dict[str, str]:
    from opspec.reports.site import history_pages

    statuses = results.statuses()
    cells = declared_cells(newest)  # the op x dtype cells a full run covers: the summary and the heat map count them
    history_rows, history_notes = history_pages.rows(history_folder) if history_folder else ([], [])
    out = history_pages.pages(history_rows, slugs, links)

    meanings = []
    for report in sorted(results.reports, key=lambda r: r.backend):
        if report.backend in (m[0] for m in meanings):
            continue
        coverage = results.coverage.get(report.backend)
        declared = _declared(report.backend)
        meaning = _meaning(report)
        figure = None if (declared is not None and not declared.lowering_figure) or coverage is None else coverage
        meanings.append((report.backend, meaning, figure))
    out["scoreboard.md"] = env.get_template("scoreboard.md.j2").render(
        reports=results.reports, statuses=statuses, summary=_summary(results, statuses, newest, cells),
        heatmap=_heatmap(results, newest, cells, "../", lambda n: f"../ops/{slugs[n]}/" if n in slugs else "#")
        if results.reports else "",
        meanings=meanings, devices=sorted({r.device for r in results.reports}), fallback_kinds=FALLBACK_KINDS,
        version_matrix=_version_matrix(version_matrix), torch_versions_page=torch_versions_page, functionalization=results.functionalization,
        notes=results.notes + history_notes, files=results.files, records=results.records,
        history=history_rows, sparkline=history_pages.sparkline, history_counts=history_pages.counts,
    )
    for report in results.reports:
        records = sorted(results.for_report(report.name), key=lambda r: (r.op, r.dtype))
        counts = {s: sum(1 for r in records if r.status == s) for s in statuses}
        by_dtype: dict[str, dict[str, int]] = {}
        for r in records:
            row = by_dtype.setdefault(r.dtype, {})
            row[r.status] = row.get(r.status, 0) + 1
        not_passing = [r for r in records if r.status not in vocabulary.GOOD]
        repros = {}  # anchor -> file beside the page: a static file mkdocs copies, not Markdown it renders
        for r in not_passing:
            if r.repro:
                case = anchor(report.name, r.op, r.dtype)
                repros[case] = f"{report.name}/{case}.py"
                out[f"reports/{repros[case]}"] = r.repro if r.repro.endswith("\n") else r.repro + "\n"
        ops, dtypes, cells, lowering = _case_matrix(records)
        out[f"reports/{report.name}.md"] = env.get_template("report.md.j2").render(
            front=yaml_front(f"{report.backend} on {report.device}: conformance report", search_exclude=True),
            report=report, ops=ops, dtypes=dtypes, cells=cells, lowering=lowering, repros=repros,
            counts=counts, total=len(records),
            by_dtype=dict(sorted(by_dtype.items())), statuses_run=[s for s in statuses if counts[s]],
            percent=_percent, anchor=anchor, coverage=results.coverage.get(report.backend),
            meaning=_meaning(report),
            not_passing=not_passing, pre=sanitize.pre,
            op_page=lambda n: f"../ops/{slugs[n]}.md" if n in slugs else None,
            href=lambda link, page=f"reports/{report.name}.md": links.href(page, link),
        )
    return out


def _case_matrix(records: list) -> tuple[list[str], list[str], dict, dict[str, str]]:
    """A report's cases as ops by dtypes: the ops, the dtypes (in the order the records have them), the record
    of each (op, dtype), and each op's lowering where the report has one (its values, joined)."""
    ops = sorted({r.op for r in records})
    dtypes = list(dict.fromkeys(r.dtype for r in records))
    cells = {(r.op, r.dtype): r for r in records}
    lowering: dict[str, list[str]] = {}
    for r in records:
        if r.lowering and r.lowering not in lowering.setdefault(r.op, []):
            lowering[r.op].append(r.lowering)
    return ops, dtypes, cells, {op: ", ".join(values) for op, values in lowering.items() if values}


def yaml_front(title: str, search_exclude: bool = False) -> str:
    """Front matter; report pages stay out of search, which is for finding ops and pages about them."""
    return sanitize.front_matter({"title": title, **({"search": {"exclude": True}} if search_exclude else {})})
