"""Generate the data-driven pages of the site as plain Markdown (no plugins needed to render them).

Inputs: every opset version, every proposal, published conformance results.
Everything a proposal author or a result file supplies goes through
:mod:`opspec.reports.site.sanitize` before it reaches a page.
"""
from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from pathlib import Path

import jinja2

from opspec.proposals import check as checking
from opspec.proposals.model import STATUSES, Proposal
from opspec.reports import changelog
from opspec.reports.site import results as results_mod
from opspec.reports.site import sanitize
from opspec.spec import load, resources, yamlio
from opspec.spec.model import DecompositionRule, Opset
from opspec.spec.workspace import Workspace

TEMPLATES = resources.TEMPLATES / "site"


@dataclass(frozen=True)
class Generated:
    pages: dict[str, str]  # path under the generated folder -> Markdown
    skipped_proposals: list[str]


def op_slugs(names) -> dict[str, str]:
    """File names for op pages: ``aten::add.Tensor`` -> ``aten-add.Tensor``.

    Names that differ only in case get a hash suffix, so pages stay distinct on case-insensitive disks.
    """
    bases = {name: re.sub(r"[^A-Za-z0-9_.]+", "-", name) for name in names}
    folded: dict[str, int] = {}
    for base in bases.values():
        folded[base.lower()] = folded.get(base.lower(), 0) + 1
    return {
        name: base + ("-" + hashlib.sha1(name.encode()).hexdigest()[:6] if folded[base.lower()] > 1 else "")
        for name, base in bases.items()
    }


def _environment() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(TEMPLATES)),
        autoescape=False,  # the output is Markdown; untrusted values pass through the sanitize filters
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        undefined=jinja2.StrictUndefined,
    )
    env.filters.update(inline=sanitize.inline, cell=sanitize.cell, code=sanitize.code)
    return env


def _front(**fields) -> str:
    return yamlio.dump(fields).rstrip("\n")


def _safe_url(url: str) -> str | None:
    return url if re.fullmatch(r"https://[^\s<>\"'`]+", url or "") else None


def generate(ws: Workspace) -> Generated:
    infos = load.load_versions(ws.opset)
    opsets: list[Opset] = [load.load_opset(info.version, ws.opset) for info in infos]
    newest = opsets[-1]
    parsed = checking.load_all(ws.proposals)
    proposals = sorted((p.proposal for p in parsed if p.proposal is not None), key=lambda p: p.id)
    skipped = [str(p.findings[0]) for p in parsed if p.proposal is None and p.findings]
    by_id = {p.id: p for p in proposals}
    results = results_mod.read(ws.results)
    env = _environment()
    pages: dict[str, str] = {}

    names: dict[str, None] = {}
    for opset in opsets:
        for op in opset.ops:
            names.setdefault(op.name)
        for rule in opset.rules:
            names.setdefault(rule.op)
    slugs = op_slugs(names)

    def op_link(name: str, prefix: str) -> str:
        slug = slugs.get(name)
        return f"[{sanitize.code(name)}]({prefix}ops/{slug}.md)" if slug else sanitize.code(name)

    def proposal_link(number: int, prefix: str) -> str:
        p = by_id.get(number)
        return f"[{number:04d}]({prefix}proposals/{number:04d}.md)" if p else f"{number:04d}"

    # One page per op, core or decomposed, in any version.
    for name in names:
        op = next((o.ops_by_name[name] for o in reversed(opsets) if name in o.ops_by_name), None)
        rule: DecompositionRule | None = newest.rules_by_op.get(name)
        history = []
        for opset in opsets:
            entry, ruled = opset.ops_by_name.get(name), opset.rules_by_op.get(name)
            status = entry.status if entry else (f"decomposed ({ruled.kind})" if ruled else "not in the set")
            ids = sorted({*(entry.proposals if entry else ()), *(ruled.proposals if ruled else ())})
            history.append({
                "version": opset.version, "status": status, "schema": entry.schema if entry else None,
                "proposals": ", ".join(proposal_link(i, "../") for i in ids),
            })
        schema = op.schema if op else _torch_schema(name)
        touching = [p for p in proposals if name in p.touched_ops()]
        tags = [op.category, op.status] if op else ["decomposed"]
        pages[f"ops/{slugs[name]}.md"] = env.get_template("op.md.j2").render(
            front=_front(title=name, tags=tags), name=name, op=op if op and name in newest.ops_by_name else None,
            rule=rule, newest=newest.version, schema=schema, history=reversed(history),
            proposals=[f"[Proposal {p.label}](../proposals/{p.label}.md): {sanitize.inline(p.title)} ({p.status})" for p in touching],
            records=results.for_op(name), op_link=lambda n: op_link(n, "../"),
        )
    pages["ops/index.md"] = env.get_template("ops.md.j2").render(
        newest=newest.version, ops=sorted(newest.ops, key=lambda o: o.name), rules=sorted(newest.rules, key=lambda r: r.op),
        op_link=lambda n: op_link(n, "../"),
    )
    pages["decompositions.md"] = env.get_template("decompositions.md.j2").render(
        newest=newest.version, rules=sorted(newest.rules, key=lambda r: r.op), op_link=lambda n: op_link(n, ""),
    )

    sections = []
    for position in range(len(opsets) - 1, -1, -1):
        old = opsets[position - 1] if position else None
        log = changelog.diff(old, opsets[position], changelog.attributions_from(proposals, opsets[position].version))
        info = infos[position]
        state = f"released {info.released}" if info.status == "released" else "draft, not released yet"
        text = changelog.to_markdown(
            log, link=lambda n: f"proposals/{n:04d}.md" if n in by_id else None,
            op_link=lambda n: f"ops/{slugs[n]}.md" if n in slugs else None, escape=sanitize.inline,
        )
        head, _, rest = text.partition("\n")
        sections.append(f"{head}\n\n*Opset {info.version}: {state}; validated against torch {sanitize.inline(info.torch)}.*\n{rest}")
    pages["changelog.md"] = env.get_template("changelog.md.j2").render(sections=sections)

    groups = [(status, [p for p in proposals if p.status == status]) for status in STATUSES]
    pages["proposals/index.md"] = env.get_template("proposals.md.j2").render(
        groups=[g for g in groups if g[1]], count=len(proposals)
    )
    for p in proposals:
        pages[f"proposals/{p.label}.md"] = _proposal_page(env, p, by_id, lambda n: op_link(n, "../"))

    tables = []
    for backend in results.backends():
        records = [r for r in results.records if r.backend == backend]
        columns = sorted({f"{r.dtype} @ {r.device}" for r in records})
        cells: dict[str, dict[str, str]] = {}
        for r in records:
            cells.setdefault(r.op, {})[f"{r.dtype} @ {r.device}"] = r.status
        coverage = results.coverage.get(backend)
        if coverage is not None:  # one more column: what the backend's manifest says about the op
            lowering = {r.op: r.lowering for r in records if r.lowering}
            for op in cells:
                cells[op]["lowering"] = lowering.get(op, "—")
            columns = [*columns, "lowering"]
        rows = [(op, [cells[op].get(c, "—") for c in columns]) for op in sorted(cells)]
        tables.append((backend, columns, rows, coverage))
    pages["scoreboard.md"] = env.get_template("scoreboard.md.j2").render(
        backends=results.backends(), records=results.records, files=results.files, tables=tables,
        functionalization=results.functionalization,
        notes=results.notes, op_link=lambda n: op_link(n, ""),
    )
    return Generated(pages, skipped)


def _torch_schema(name: str) -> str:
    """Schema of an op that was never core (decomposed only), from torch when it is importable."""
    try:
        from opspec.bridge import torch_ops

        return torch_ops.all_aten_schemas().get(name, name)
    except ImportError:
        return name


def _proposal_page(env: jinja2.Environment, p: Proposal, by_id: dict[int, Proposal], op_link) -> str:
    refs = []
    for key, values in (("Requires", p.requires), ("Replaces", p.replaces),
                        ("Superseded by", (p.superseded_by,) if p.superseded_by else ())):
        if values:
            refs.append((key, ", ".join(f"[{v:04d}]({v:04d}.md)" if v in by_id else f"{v:04d}" for v in values)))
    changes = []
    for change in p.changes:
        name = change.get("op") or change.get("rule", {}).get("op", "?")
        changes.append(f"{sanitize.inline(change['action'])} {op_link(name) if isinstance(name, str) else ''}")
    body = p.body
    lines = body.lstrip("\n").splitlines()
    if lines and lines[0].startswith("# "):  # the page has its own title
        body = "\n".join(lines[1:])

    def link(url: str) -> str:
        safe = _safe_url(url)
        return f"<{safe}>" if safe else sanitize.inline(url)

    return env.get_template("proposal.md.j2").render(
        front=_front(title=f"Proposal {p.label}", tags=[p.status, p.type]), p=p, refs=refs, changes=changes,
        body=sanitize.markdown_body(body), link=link,
    )
