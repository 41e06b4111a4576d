"""Generate the data-driven pages of the site as plain Markdown (no plugins needed to render them), their
result tables as HTML blocks (:mod:`opspec.reports.site.raw_html`).

Inputs: every opset version, every proposal, published conformance results.
Everything a proposal author or a result file supplies goes through
:mod:`opspec.reports.site.sanitize` before it reaches a page.
"""
from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import jinja2

from opspec.proposals import check as checking
from opspec.proposals.model import STATUSES, Proposal
from opspec.reports import changelog
from opspec.reports.site import accuracy_page, accuracy_section, mkdocs_run, raw_html
from opspec.reports.site import arguments as arguments_mod
from opspec.reports.site import examples as examples_mod
from opspec.reports.site import backend_pages, compatibility_page, findings, models_page, sanitize, scoreboard, version_matrix
from opspec.reports.site import errata as errata_mod
from opspec.reports.site import special_cases as special_mod
from opspec.reports.site import results as results_mod
from opspec.results import vocabulary
from opspec.spec import errata as spec_errata
from opspec.spec import file_memo, load, manifests, resources, special_cases as spec_cases, yamlio
from opspec.spec.errata import Erratum
from opspec.spec.model import DecompositionRule, Opset, TestingHints
from opspec.spec.workspace import Workspace

TEMPLATES = resources.TEMPLATES / "site"
GENERATED = "generated"  # the folder of the site's docs the pages are generated into
# Op pages outrank proposals and indexes that mention the op, so typing an op's name lands on its page.
SEARCH_BOOST = 5


@dataclass(frozen=True)
class Generated:
    pages: dict[str, str]  # path under the generated folder -> Markdown
    skipped_proposals: list[str]
    problems: list[str] = field(default_factory=list)  # data the site cannot show (a failing example)


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
    env.filters.update(inline=sanitize.inline, cell=sanitize.cell, code=sanitize.code, ident=sanitize.ident)
    return env


def _front(**fields) -> str:
    return sanitize.front_matter(fields)


def _safe_url(url: str) -> str | None:
    return url if re.fullmatch(r"https://[^\s<>\"'`]+", url or "") else None


def spellings(name: str) -> list[str]:
    """Every way people write an aten overload: ``add.Tensor``, ``aten::add.Tensor``, ``aten.add.Tensor``, ...

    They go on the op's page so that search finds the page whichever one is typed.
    """
    namespace, _, rest = name.partition("::")
    if not rest:
        return [name]
    base, _, overload = rest.partition(".")
    forms = [rest, name, f"{namespace}.{rest}", f"torch.ops.{namespace}.{rest}"]
    if not overload:  # the default overload is also written out
        forms += [f"{namespace}.{base}.default", f"torch.ops.{namespace}.{base}.default"]
    return forms


def first_sentence(text: str) -> str:
    match = re.match(r"(.+?[.;])(\s|$)", text)
    return (match.group(1) if match else text).rstrip(";.") + "."


def _dtype_device_table(records, dtypes: tuple[str, ...], report_link) -> tuple[list[str], list[tuple[str, list]]]:
    """Rows per dtype (tested ones first), columns per device; each cell lists every backend's (name, status,
    link to its case) there."""
    devices = sorted({"cpu", "cuda", *(r.device for r in records)}, key=lambda d: (d != "cpu", d != "cuda", d))
    by_cell: dict[tuple[str, str], list] = {}
    for r in records:
        by_cell.setdefault((r.dtype, r.device), []).append(r)
    rows = []
    for dtype in dict.fromkeys([*dtypes, *sorted({r.dtype for r in records})]):
        cells = []
        for device in devices:
            here = sorted(by_cell.get((dtype, device), ()), key=lambda r: r.backend)
            cells.append([(r.backend, r.status, report_link(r)) for r in here])
        rows.append((dtype, cells))
    return devices, rows


def generate(ws: Workspace, *, run_examples: bool = True,
             early: Callable[[dict[str, str], list[str]], None] | None = None) -> Generated:
    """Every page. ``early`` is called once every page but the op pages is done, before anything runs with
    torch, with those pages and the paths the op pages will have."""
    from opspec.checks import part_cache

    # What the last `opspec validate` kept: each data file as read (while its bytes are the same) and the rows'
    # verdicts on this torch. Nothing is written back: a build leaves validate's cache as it found it.
    parts = part_cache.validate_store()
    with file_memo.kept_in(parts):
        return _generate(ws, run_examples, early, parts)


def _generate(ws: Workspace, run_examples: bool, early: Callable[[dict[str, str], list[str]], None] | None,
              parts) -> Generated:
    infos = load.load_versions(ws.opset)
    opsets: list[Opset] = [load.load_opset(info.version, ws.opset) for info in infos]
    newest = opsets[-1]
    descriptions = load.load_descriptions(ws.opset)
    contracts = accuracy_section.read(ws.opset)
    parsed = checking.load_all(ws.proposals)
    proposals = sorted((p.proposal for p in parsed if p.proposal is not None), key=lambda p: p.id)
    skipped = [str(p.findings[0]) for p in parsed if p.proposal is None and p.findings]
    by_id = {p.id: p for p in proposals}
    results = results_mod.read(ws.results, _manifest_descriptions(ws.root / "conformance" / "backends"))
    env = _environment()
    links = raw_html.Links(mkdocs_run.directory_urls(ws.site / "mkdocs.yml"), GENERATED)
    pages: dict[str, str] = {}
    problems: list[str] = []
    errata_problems: list[str] = []
    errata = _errata(ws, errata_problems)

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

    worst = _worst_by_op(results.records)
    for opset in opsets:
        is_newest = opset is newest
        folder = "ops/index.md" if is_newest else f"{opset.version}/ops/index.md"
        index = env.get_template("ops.md.j2").render(
            version=opset.version, newest=newest.version, versions=[i.version for i in infos],
            ops=sorted(opset.ops, key=lambda o: o.name), rules=sorted(opset.rules, key=lambda r: r.op),
            summary={n: first_sentence(d.description) for n, d in descriptions.items()}, worst=worst,
            op_link=(lambda n: op_link(n, "../")) if is_newest else (lambda n, v=opset.version: (
                f"[{sanitize.code(n)}](../ops/{slugs[n]}.md)" if n in slugs else sanitize.code(n))),
            front=_front(title="Op index" if is_newest else f"Op index ({opset.version})", hide=["navigation", "toc"],
                         **({} if is_newest else {"search": {"exclude": True}})),
        )
        pages[folder] = index
    pages["opsets.md"] = env.get_template("opsets.md.j2").render(
        infos=list(reversed(infos)), counts={o.version: (len(o.ops), len(o.rules)) for o in opsets},
        newest=newest.version, index={i.version: "ops/index.md" if i.version == newest.version else f"{i.version}/ops/index.md"
                                      for i in infos})
    pages["decompositions.md"] = env.get_template("decompositions.md.j2").render(
        newest=newest.version, rules=sorted(newest.rules, key=lambda r: r.op), op_link=lambda n: op_link(n, ""),
        since={r.op: r.since or _first_version(opsets, r.op) for r in newest.rules},
    )

    sections = []
    for position in range(len(opsets) - 1, -1, -1):
        old = opsets[position - 1] if position else None
        log = changelog.diff(old, opsets[position], changelog.attributions_from(proposals, opsets[position].version),
                             changelog.decisions_from(proposals, opsets[position].version), errata)
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

    pages["errata.md"] = env.get_template("errata.md.j2").render(
        front=_front(title="Errata"),
        errata=[{"published": e.published, "versions": e.versions, "field": e.field, "was": e.was, "now": e.now,
                 "entry": op_link(e.name, "") + (" (rule)" if e.kind == "rule" else ""),
                 "evidence": errata_mod.evidence_links(e, f"ops/{slugs[e.name]}.md") if e.name in slugs else ""}
                for e in sorted(errata, key=lambda e: (e.published, e.name, e.field))])
    pages["torch-versions.md"] = env.get_template("torch_versions.md.j2").render(
        rows=version_matrix.read(ws.version_matrix), steps=version_matrix.STEPS)
    pages.update(scoreboard.pages(env, results, newest, slugs, ws.version_matrix, links,
                                  torch_versions_page="torch-versions.md" if "torch-versions.md" in pages else None,
                                  history_folder=ws.results / "history"))
    pages.update(models_page.pages(ws.root / "benchmarks" / "model_zoo.json"))
    backend_findings, findings_problems = findings.read(ws.root / "conformance" / "expectations", ws.root, results)
    problems += findings_problems
    pages.update(findings.pages(
        backend_findings, lambda n: f"ops/{slugs[n]}.md" if n in slugs else None,
        lambda r: f"reports/{r.report}.md#{scoreboard.anchor(r.report, r.op, r.dtype)}", links))
    pages["compatibility.md"] = env.get_template("compatibility.md.j2").render(**compatibility_page.context(ws, infos))
    pages.update(accuracy_page.pages(env, ws.opset, ws.root / "conformance" / "accuracy", contracts, slugs))
    pages.update(backend_pages.pages(ws.root, slugs, set(newest.core_names())))
    def op_pages(canonical_pages: bool, examples_by_op: dict, special: dict, special_built: dict, built_torch) -> dict:
        """One page per op and version: the newest version it appears in at ops/ (``canonical_pages``), older ones at
        VERSION/ops/ (the others)."""
        out = {}
        special_matrix = special_mod.matrix_versions(ws.version_matrix) if canonical_pages else {}
        for name in names:
            history = []
            for opset in opsets:
                entry, ruled = opset.ops_by_name.get(name), opset.rules_by_op.get(name)
                status = entry.status if entry else (f"decomposed ({ruled.kind})" if ruled else "not in the set")
                ids = sorted({*(entry.proposals if entry else ()), *(ruled.proposals if ruled else ())})
                history.append({
                    "version": opset.version, "status": status, "schema": entry.schema if entry else None,
                    "ids": ids, "present": bool(entry or ruled),
                })
            present = [h["version"] for h in history if h["present"]]
            touching = [p for p in proposals if name in p.touched_ops()]
            for opset in opsets:
                canonical = opset.version == present[-1] if present else False
                if opset.version not in present or canonical != canonical_pages:
                    continue
                op = opset.ops_by_name.get(name) or next(
                    (o.ops_by_name[name] for o in reversed(opsets[: opsets.index(opset)]) if name in o.ops_by_name), None)
                entry = opset.ops_by_name.get(name)
                rule: DecompositionRule | None = opset.rules_by_op.get(name)
                schema = op.schema if op else _torch_schema(name)
                hints = entry.testing if entry else (rule.testing if rule else TestingHints())
                try:
                    signature = arguments_mod.parse(schema, hints)
                except Exception:  # noqa: BLE001 - a name without a schema (torch not importable) has no table
                    signature = None
                produced_by = [r for r in opset.rules if name in r.targets]
                tags = [entry.category, entry.status] if entry else ["decomposed"]
                base, _, overload = name.partition("::")[2].partition(".")
                prefix = "../" if canonical else "../../"
                page_of_rows = "" if canonical else f"{prefix}ops/{slugs[name]}.md"  # errata cite rows there
                page = f"ops/{slugs[name]}.md" if canonical else f"{opset.version}/ops/{slugs[name]}.md"
                devices, matrix = _dtype_device_table(
                    results.for_op(name), hints.dtypes,
                    lambda r, page=page: links.href(page, f"../reports/{r.report}.md#{scoreboard.anchor(r.report, r.op, r.dtype)}"),
                ) if canonical else ([], [])
                front = ({"title": name, "tags": tags, "search": {"boost": SEARCH_BOOST}} if canonical
                         else {"title": f"{name} ({opset.version})", "search": {"exclude": True}})
                out[page] = env.get_template("op.md.j2").render(
                    front=_front(**front), name=name, base=base, overload=overload, op=entry, version=opset.version,
                    newest=newest.version, canonical=canonical, rule=rule, schema=schema,
                    history=[dict(h, proposals=[(f"{i:04d}", links.href(page, f"{prefix}proposals/{i:04d}.md") if i in by_id else None)
                                                for i in h["ids"]]) for h in reversed(history)],
                    spellings=spellings(name), description=descriptions.get(name), example=examples_by_op.get(name),
                    signature=signature, devices=devices, matrix=matrix, produced_by=produced_by,
                    versions=[(v, f"{prefix}ops/{slugs[name]}.md" if v == present[-1] else f"{prefix}{v}/ops/{slugs[name]}.md")
                              for v in present],
                    proposals=[f"[Proposal {p.label}]({prefix}proposals/{p.label}.md): {sanitize.inline(p.title)} ({p.status})"
                               for p in touching],
                    op_link=lambda n, prefix=prefix: op_link(n, prefix),
                    prose=errata_mod.entry_prose(errata, opset.version, "op", name, page_of_rows),
                    rule_prose=errata_mod.entry_prose(errata, opset.version, "rule", name, page_of_rows),
                    accuracy=accuracy_section.for_op(contracts, name),
                    special_cases=special_mod.rows_for(special.get(name, ()), special_matrix, special_built, built_torch,
                                                      results.for_op(name)) if canonical else [],
                )
        return out

    # An older version's op page shows neither the example nor the special-case rows: it is made before anything
    # runs with torch, and the build renders it with the pages above.
    pages.update(op_pages(False, {}, {}, {}, None))
    if early is not None:
        early(dict(pages), [path for path in _op_page_paths(names, opsets, slugs) if path not in pages])

    # The newest version's op pages are rendered last: their examples and special-case rows run with torch, and
    # the build renders the pages above into HTML meanwhile. They stay first in ``pages``.
    other_pages = pages
    examples_by_op: dict[str, examples_mod.Example] = {}
    if run_examples:
        for name, description in descriptions.items():
            if name not in names:
                continue
            try:
                examples_by_op[name] = examples_mod.run(name, description.example)
            except examples_mod.ExampleError as err:
                problems.append(f"{ws.opset / load.DESCRIPTIONS}: the example of {name} {err}"
                                if str(err).startswith("it ") else
                                f"{ws.opset / load.DESCRIPTIONS}: the example of {name} fails: {err}")

    special, special_built, built_torch = _special_cases(ws, newest, run_examples, problems, parts)
    pages = op_pages(True, examples_by_op, special, special_built, built_torch)

    pages.update(other_pages)
    problems += links.problems(pages, ws.site / "docs")
    return Generated(pages, skipped, problems + errata_problems)


def _op_page_paths(names, opsets: list[Opset], slugs: dict[str, str]) -> list[str]:
    """Where the op pages go: the newest version an op appears in at ops/, older ones at VERSION/ops/."""
    paths = []
    for name in names:
        present = [o.version for o in opsets if name in o.ops_by_name or name in o.rules_by_op]
        paths += [f"ops/{slugs[name]}.md" if v == present[-1] else f"{v}/ops/{slugs[name]}.md" for v in present]
    return paths


def _worst_by_op(records) -> dict[str, tuple[str, str]]:
    """op -> its worst status over every backend's report, naming the backends that gave it (the op index's column)."""
    found: dict[str, tuple[str, list[str]]] = {}
    for r in records:
        status, backends = found.get(r.op, ("", []))
        if not status or vocabulary.status_key(r.status) > vocabulary.status_key(status):
            found[r.op] = (r.status, [r.backend])
        elif r.status == status and r.backend not in backends:
            backends.append(r.backend)
    return {op: (status, ", ".join(sorted(backends)[:2]) + (f" +{len(backends) - 2}" if len(backends) > 2 else ""))
            for op, (status, backends) in found.items()}


def _special_cases(ws: Workspace, newest: Opset, run_rows: bool, problems: list[str], parts):
    """(op -> rows, row key -> status on the installed torch, that torch's version): rows are run with the examples;
    those the last `opspec validate` ran (kept in ``parts``) are not run again."""
    try:
        cases = spec_cases.load_special_cases(ws.opset)
    except yamlio.DataError as err:
        problems.append(str(err))
        return {}, {}, None
    if not run_rows or not cases:
        return cases, {}, None
    from opspec.bridge import torch_ops
    from opspec.checks import special_cases as check

    return cases, check.row_statuses(cases, newest, parts), torch_ops.version()


def _errata(ws: Workspace, problems: list[str]) -> tuple[Erratum, ...]:
    """The errata to apply where sealed prose is shown; bad data is a problem of the build (validate names it)."""
    try:
        return spec_errata.load_errata(ws.opset)
    except yamlio.DataError as err:
        problems.append(str(err))
        return ()


def _manifest_descriptions(folder: Path) -> dict[str, str]:
    """backend -> its manifest's description, for the manifests that load (others are validate's business)."""
    found = {}
    for path in sorted(folder.glob("*.yaml")) if folder.is_dir() else ():
        try:
            manifest = manifests.load_manifest(path)
        except (load.OpsetError, KeyError, TypeError):
            continue
        found[manifest.backend] = manifest.description
    return found


def _first_version(opsets: list[Opset], op: str) -> str:
    return next((o.version for o in opsets if op in o.rules_by_op), "—")


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
