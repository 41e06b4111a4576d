"""The page for PyTorch/XLA developers: the core ops PyTorch/XLA does not lower yet, most-used first.

Three committed files feed it: the XLA manifest (``conformance/backends/xla.yaml``,
measured from PyTorch/XLA's own fallback counters; ops it lowers at their default
arguments only get a table of their own), the zoo comparison
(``benchmarks/results/xla_coverage.json``: which models need each op) and the
``xla`` conformance report (each fallback case's repro). An op is ranked by the
number of zoo models whose run PyTorch/XLA sends through it to the ATen CPU
kernel; each row links to the op's page and its special cases, and carries the
repro that showed the fallback, so the lowering guide's steps start from it.
"""
from __future__ import annotations

import json
from pathlib import Path

from opspec.reports.site import sanitize
from opspec.spec import manifests

PAGE = "xla.md"
MANIFEST = Path("conformance") / "backends" / "xla.yaml"
COVERAGE = Path("benchmarks") / "results" / "xla_coverage.json"
REPORT = Path("conformance") / "results" / "xla-cpu.json"


def _read_json(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}


def ranked(fallback: list[str], coverage: dict) -> list[tuple[str, list[str]]]:
    """(op, the zoo models that need it) for each op, most models first, then by name."""
    users: dict[str, list[str]] = {op: [] for op in fallback}
    for model in coverage.get("models", []):
        for op in model.get("flagged", []):
            if op in users:
                users[op].append(model["model"])
    return sorted(users.items(), key=lambda item: (-len(item[1]), item[0]))


def pages(root: Path, slugs: dict[str, str], core: set[str]) -> dict[str, str]:
    head = ["---", "title: For PyTorch/XLA developers", "---", "", "# Core ops PyTorch/XLA does not lower yet", ""]
    if not (root / MANIFEST).is_file():
        return {PAGE: "\n".join(head + ["No XLA manifest in this checkout (`python tools/measure_lowering.py "
                                        "--backend xla`, with the xla extra)."]) + "\n"}
    manifest = manifests.load_manifest(root / MANIFEST)
    coverage = _read_json(root / COVERAGE)
    repros = {r["op"]: r.get("repro", "") for r in _read_json(root / REPORT).get("results", [])
              if r.get("executed") in ("pytorch", "partial")}
    fallback = sorted(op for op in manifest.fallback if op in core)
    lines = head + [
        f"PyTorch/XLA runs these core ops on their ATen CPU kernel (its debugging tool prints them after "
        f"\"Op(s) not lowered:\"), as its own counters (`torch_xla.debug.metrics.executed_fallback_ops()`) "
        f"report on this machine: *{sanitize.inline(manifest.measured_with)}*, "
        f"{len(manifest.devices) and ', '.join(manifest.devices) or 'cpu'}. "
        f"Ranked by how many of the {len(coverage.get('models', []))} zoo models need them "
        "(`benchmarks/xla_coverage.py`: the model run on the XLA device, its fallback counters read). "
        "Each op links to its page, with the special cases a lowering must keep, and to the program that "
        "showed the fallback.",
        "",
        "| op | zoo models that need it | why it falls back | special cases |",
        "|---|---|---|---|",
    ]
    for op, users in ranked(fallback, coverage):
        slug = slugs.get(op)
        name = f"[{sanitize.code(op)}](ops/{slug}.md)" if slug else sanitize.code(op)
        rows = f"[rows](ops/{slug}.md#special-cases)" if slug else "-"
        who = f"{len(users)}: " + ", ".join(sanitize.inline(u) for u in users) if users else "0"
        lines.append(f"| {name} | {who} | {sanitize.inline(manifest.fallback[op][:200])} | {rows} |")
    at_defaults = sorted(op for op in manifest.fallback_args if op in core)
    if at_defaults:
        lines += ["", "## Lowered at the default arguments only", "",
                  "PyTorch/XLA lowers these when a call leaves the named arguments at their defaults, as exported "
                  "models mostly do, and runs the ATen CPU kernel when a call sets one of them (each measured alone). "
                  "`opspec coverage --backend xla` flags only the model calls that set one.", "",
                  "| op | falls back when a call sets | measured |", "|---|---|---|"]
        for op in at_defaults:
            slug = slugs.get(op)
            name = f"[{sanitize.code(op)}](ops/{slug}.md)" if slug else sanitize.code(op)
            args = ", ".join(sanitize.code(a) for a in manifest.fallback_args[op])
            lines.append(f"| {name} | {args} | {sanitize.inline(manifest.lowered[op][:200])} |")
    shown = [(op, repros[op]) for op in fallback if repros.get(op)]
    if shown:
        lines += ["", "## Repros", "",
                  "Each is the program whose run PyTorch/XLA's counters showed falling back (the `xla` report's record); "
                  "run it with `PJRT_DEVICE=CPU python` to print the verdict.", ""]
        for op, repro in shown:
            lines += [f"### {sanitize.inline(op)}", "", "```python", repro.rstrip(), "```", ""]
    return {PAGE: "\n".join(lines).rstrip() + "\n"}
