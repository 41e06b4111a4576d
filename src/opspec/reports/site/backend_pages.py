"""Pages for a backend's own developers: the core ops the backend does not lower yet, most-used first.

A backend's declaration asks for one (``Declaration.site_page``, a :class:`GapsPage`: its wording and where
its inputs lie). Three committed files feed it: the backend's manifest (``conformance/backends/NAME.yaml``;
ops it lowers at their default arguments only get a table of their own), the zoo comparison (which models
need each op) and the backend's conformance report (each fallback case's repro). An op is ranked by the
number of zoo models whose run sends it to the ATen kernel; each row links to the op's page and its special
cases, and carries the repro that showed the fallback, so the lowering guide's steps start from it.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Iterable

from opspec.conform.backends.base import Declaration, GapsPage
from opspec.reports.site import sanitize
from opspec.results.model import Report
from opspec.spec import manifests

MANIFESTS = Path("conformance") / "backends"  # below the checkout's root


def _read_json(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}


def _fallback_repros(report_path: Path) -> dict[str, str]:
    """op -> the repro of a case of the op PyTorch ran, from the backend's conformance report (none without one):
    the first that has one (a published report keeps a right answer's repro for the first case of its op)."""
    if not report_path.is_file():
        return {}
    repros: dict[str, str] = {}
    for r in Report.load(report_path).records:
        if r.executed in ("pytorch", "partial"):
            repros[r.op] = repros.get(r.op) or r.repro or ""
    return repros


def ranked(fallback: list[str], coverage: dict) -> list[tuple[str, list[str]]]:
    """(op, the zoo models that need it) for each op, most models first, then by name."""
    users: dict[str, list[str]] = {op: [] for op in fallback}
    for model in coverage.get("models", []):
        for op in model.get("flagged", []):
            if op in users:
                users[op].append(model["model"])
    return sorted(users.items(), key=lambda item: (-len(item[1]), item[0]))


def declared() -> list[Declaration]:
    """The built-in declarations that ask for a page."""
    from opspec.conform.backends import registry

    return [d for d in registry.BUILT_IN.values() if d.site_page is not None]


def manifest_of(root: Path, declaration: Declaration) -> Path:
    """The backend's manifest in the checkout at ``root`` (it may not exist)."""
    return root / MANIFESTS / f"{declaration.manifest.stem if declaration.manifest else declaration.name}.yaml"


def pages(root: Path, slugs: dict[str, str], core: set[str],
          declarations: Iterable[Declaration] | None = None) -> dict[str, str]:
    """Each declared page, by its file name."""
    return {d.site_page.page: page(root, d.site_page, manifest_of(root, d), slugs, core)
            for d in (declared() if declarations is None else declarations) if d.site_page is not None}


def _op(op: str, slugs: dict[str, str]) -> str:
    slug = slugs.get(op)
    return f"[{sanitize.code(op)}](ops/{slug}.md)" if slug else sanitize.code(op)


def page(root: Path, wanted: GapsPage, manifest_path: Path, slugs: dict[str, str], core: set[str]) -> str:
    head = ["---", f"title: {wanted.title}", "---", "", f"# {wanted.heading}", ""]
    if not manifest_path.is_file():
        return "\n".join(head + [wanted.missing]) + "\n"
    manifest = manifests.load_manifest(manifest_path)
    coverage = _read_json(root / wanted.coverage)
    repros = _fallback_repros(root / wanted.report)
    fallback = sorted(op for op in manifest.fallback if op in core)
    intro = wanted.intro.format(measured_with=sanitize.inline(manifest.measured_with),
                                devices=len(manifest.devices) and ", ".join(manifest.devices) or "cpu",
                                models=len(coverage.get("models", [])))
    lines = head + [intro, "",
                    "| op | zoo models that need it | why it falls back | special cases |",
                    "|---|---|---|---|"]
    for op, users in ranked(fallback, coverage):
        slug = slugs.get(op)
        rows = f"[rows](ops/{slug}.md#special-cases)" if slug else "-"
        who = f"{len(users)}: " + ", ".join(sanitize.inline(u) for u in users) if users else "0"
        lines.append(f"| {_op(op, slugs)} | {who} | {sanitize.inline(manifest.fallback[op][:200])} | {rows} |")
    at_defaults = sorted(op for op in manifest.fallback_args if op in core)
    if at_defaults:
        lines += ["", "## Lowered at the default arguments only", "", wanted.at_defaults, "",
                  "| op | falls back when a call sets | measured |", "|---|---|---|"]
        for op in at_defaults:
            args = ", ".join(sanitize.code(a) for a in manifest.fallback_args[op])
            lines.append(f"| {_op(op, slugs)} | {args} | {sanitize.inline(manifest.lowered[op][:200])} |")
    shown = [(op, repros[op]) for op in fallback if repros.get(op)]
    if shown:
        lines += ["", "## Repros", "", wanted.repros, ""]
        for op, repro in shown:
            lines += [f"### {sanitize.inline(op)}", "", "```python", repro.rstrip(), "```", ""]
    return "\n".join(lines).rstrip() + "\n"
