"""Run ``mkdocs build --strict`` on the scratch copy of the site, on two cores where there are two.

mkdocs renders one page after another (its Markdown, then the theme around it, for 1,200
pages; the result tables are HTML blocks already, see raw_html.py). Where two cores are free, a second mkdocs
renders the largest pages beside the first. It starts as soon as those pages are
generated, while the op pages still run their examples with torch. Each process gets
its own view of the docs: the pages it renders, and every other page as a stub (its
front matter, or nothing for a page not generated yet), so both see the same files,
nav and links. The second process's pages then replace their stubs in the first one's
output. The files offered for download (5,000 repros) are left out of both mkdocs sites and linked
into the output afterwards: mkdocs copied each one in every process (standalone, the second mkdocs
took 13.3-14.1 s with them, 11.6-11.9 s without).

Only pages left out of search and out of the nav go to the second process: the first
one writes the search index and the nav every page shows, so a page it did not render
cannot be missing from either. What such a page's HTML holds comes from its own
Markdown, the nav's titles and the site's configuration, so the output is byte for
byte what one process builds (``tests/test_site.py`` compares the two).
"""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

import yaml

# The second process takes pages up to this share of the Markdown generated before the op pages: it
# starts while those are generated, and the first one also renders the search index and the op pages.
SIDE_SHARE = 0.8
# Below this much Markdown for the second process, starting it costs more than it saves.
SIDE_MINIMUM = 2_000_000
# mkdocs' own front matter pattern (mkdocs.utils.meta)
FRONT_MATTER_RE = re.compile(r"^-{3}[ \t]*\n(.*?\n)(?:\.{3}|-{3})[ \t]*\n", re.DOTALL)


class MkdocsFailed(Exception):
    """mkdocs refused the site; the message holds its warnings and errors."""


@dataclass
class Side:
    """The second mkdocs process and the pages (paths under docs/) it renders."""
    process: subprocess.Popen
    log: Path
    html: Path
    pages: set[str]

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()


def start_side(scratch: Path, generated: str, pages: dict[str, str], later: list[str]) -> Side | None:
    """Start the second mkdocs on the largest of ``pages`` (generated so far and written under ``scratch/docs``;
    ``later``: the paths of the pages still to come), or None where one process builds the site."""
    settings = _settings(scratch / "mkdocs.yml")
    if settings is None or _cores() < 2:
        return None
    nav = _nav_pages(settings.get("nav"))
    if nav is None:
        return None
    chosen = _side_pages({f"{generated}/{page}": text for page, text in pages.items()}, nav)
    if not chosen:
        return None
    view = scratch / "side"
    _view(scratch / "docs", view / "docs", lambda page: page in chosen)
    for page in later:
        _write(view / "docs" / generated / page, "")
    # Pages it neither renders nor shows in the nav are left out of its site: links to them still resolve.
    left_out = sorted(page.relative_to(view / "docs").as_posix() for page in (view / "docs").rglob("*.md"))
    left_out = [page for page in left_out if page not in chosen and page not in nav]
    # Nor the files the generated pages offer for download: they are linked into the site after mkdocs (run).
    _write(view / "mkdocs.yml", (scratch / "mkdocs.yml").read_text(encoding="utf-8")
           + _exclude_docs(settings, left_out, _download_globs(_downloads(scratch / "docs", generated))))
    process, log = _start(view / "mkdocs.yml", view / "html", scratch / "side.log")
    return Side(process, log, view / "html", chosen)


def run(scratch: Path, html_dir: Path, generated: str, side: Side | None = None) -> None:
    """Build ``scratch/mkdocs.yml`` (docs in ``scratch/docs``) into ``html_dir``, with ``side`` rendering its pages.
    The files the ``generated`` folder offers for download (5,000 repros) are not mkdocs' to copy: they are linked
    into the site from the docs where the disk allows (mkdocs' copies took 0.5 s of the first process's time)."""
    downloads = _downloads(scratch / "docs", generated)
    excluded = _exclude_docs(_settings(scratch / "mkdocs.yml") or {}, [], _download_globs(downloads))
    config = (scratch / "mkdocs.yml").read_text(encoding="utf-8")
    if side is None:
        _write(scratch / "mkdocs.yml", config + excluded)
        _wait([_start(scratch / "mkdocs.yml", html_dir, scratch / "mkdocs.log")])
    else:
        main = scratch / "main"
        _view(scratch / "docs", main / "docs", lambda page: page not in side.pages)
        _write(main / "mkdocs.yml", config + excluded)
        _wait([_start(main / "mkdocs.yml", html_dir, scratch / "main.log"), (side.process, side.log)])
        urls = directory_urls(scratch / "mkdocs.yml")
        for page in side.pages:
            target = _output_of(page, urls)
            os.replace(side.html / target, html_dir / target)
    for download in downloads:
        _link(scratch / "docs" / download, html_dir / download)


def _downloads(docs: Path, generated: str) -> list[str]:
    """The files of the ``generated`` folder that are not pages (paths under ``docs``)."""
    return sorted(path.relative_to(docs).as_posix() for path in (docs / generated).rglob("*")
                  if path.suffix != ".md" and path.is_file())


def _download_globs(downloads: list[str]) -> list[str]:
    """``exclude_docs`` patterns (from the docs folder) that match every one of ``downloads`` and no page: one per
    suffix under the generated folder, and a file without one by its path."""
    by_suffix = {}
    for download in downloads:
        folder, suffix = download.split("/", 1)[0], PurePosixPath(download).suffix
        by_suffix.setdefault((folder, suffix), []).append(download)
    return sorted(f"{folder}/**/*{suffix}" if suffix else _escaped(path)
                  for (folder, suffix), paths in by_suffix.items() for path in (paths[:1] if suffix else paths))


def _cores() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def directory_urls(config: Path) -> bool:
    """Whether the site serves ``page.md`` at ``page/`` (mkdocs' default), as its configuration says (the default
    where the configuration is not plain YAML: mkdocs reads python tags, this module does not)."""
    try:
        settings = _settings(config)
    except OSError:
        return True
    return bool(settings.get("use_directory_urls", True)) if settings is not None else True


def _settings(config: Path) -> dict | None:
    try:
        settings = yaml.safe_load(config.read_text(encoding="utf-8"))
    except yaml.YAMLError:  # python tags (!!python/name:...): not read here, so one process builds
        return None
    return settings if isinstance(settings, dict) else None


def _nav_pages(nav) -> set[str] | None:
    """The pages the nav names, or None when a page's title there would come from the page itself."""
    if not isinstance(nav, list):  # no nav: mkdocs lists every page under the title its content gives
        return None
    found: set[str] = set()
    items = list(nav)
    while items:
        item = items.pop()
        if isinstance(item, str):
            return None
        for value in item.values() if isinstance(item, dict) else ():
            if isinstance(value, str):
                found.add(value)
            elif isinstance(value, list):
                items += value
    return found


def _side_pages(pages: dict[str, str], in_nav: set[str]) -> set[str]:
    """The largest pages out of search and out of the nav, up to SIDE_SHARE of all of ``pages``' Markdown
    (paths under docs/); none when they come to less than SIDE_MINIMUM."""
    total = sum(len(text) for text in pages.values())
    chosen, size = set(), 0
    for page, text in sorted(pages.items(), key=lambda item: -len(item[1])):
        if page not in in_nav and _out_of_search(text) and size + len(text) <= SIDE_SHARE * total:
            chosen.add(page)
            size += len(text)
    return chosen if size >= SIDE_MINIMUM else set()


def _front_matter(text: str) -> str:
    match = FRONT_MATTER_RE.match(text)
    return match.group(0) if match else ""


def _out_of_search(text: str) -> bool:
    try:
        meta = yaml.safe_load(_front_matter(text).strip().strip("-."))
    except yaml.YAMLError:
        return False
    search = meta.get("search") if isinstance(meta, dict) else None
    return isinstance(search, dict) and search.get("exclude") is True


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8", newline="\n")


def _view(docs: Path, into: Path, renders) -> None:
    """``docs`` again (as hard links where the disk allows), with the Markdown pages ``renders`` refuses as stubs:
    their front matter only."""
    for source in docs.rglob("*"):
        page = source.relative_to(docs).as_posix()
        if source.is_dir():
            (into / page).mkdir(parents=True, exist_ok=True)
        elif source.suffix == ".md" and not renders(page):
            _write(into / page, _front_matter(source.read_text(encoding="utf-8")))
        else:
            _link(source, into / page)


def _link(source: Path, target: Path) -> None:
    """``source`` at ``target`` as a hard link (nothing to copy, nor to discard again when the scratch goes), or a
    copy where the disk allows no link."""
    target.parent.mkdir(parents=True, exist_ok=True)
    try:
        os.link(source, target)
    except OSError:
        shutil.copy2(source, target)


def _exclude_docs(settings: dict, pages: list[str], globs: list[str] = ()) -> str:
    """An ``exclude_docs`` setting, to append to the configuration, that adds ``pages`` and ``globs`` (patterns
    from the docs folder) to the site's own."""
    patterns = str(settings.get("exclude_docs") or "").splitlines()
    patterns += ["/" + _escaped(page) for page in pages]
    patterns += ["/" + glob for glob in globs]
    return "\nexclude_docs: |\n" + "".join(f"  {pattern}\n" for pattern in patterns)


def _escaped(path: str) -> str:
    """``path`` as a gitignore pattern that matches it alone."""
    return re.sub(r"([\\*?\[\]!#])", r"\\\1", path)


def _output_of(page: str, directory_urls: bool) -> str:
    """Where mkdocs writes ``page`` (a path under docs/), by its own rule."""
    from mkdocs.structure.files import File

    return File(page, None, "", directory_urls).dest_uri


def _start(config: Path, html_dir: Path, log: Path) -> tuple[subprocess.Popen, Path]:
    with log.open("w", encoding="utf-8") as output:  # a file, not a pipe: two processes' logs never block either
        process = subprocess.Popen(
            [sys.executable, "-m", "mkdocs", "build", "--strict", "-f", str(config), "-d", str(html_dir)],
            stdout=output, stderr=subprocess.STDOUT, text=True, cwd=config.parent,
            env={**os.environ, "NO_MKDOCS_2_WARNING": "1", "NO_COLOR": "1"},
        )
    return process, log


def _wait(processes: list[tuple[subprocess.Popen, Path]]) -> None:
    """Wait for every process; MkdocsFailed with the warnings and errors of those that failed."""
    try:
        codes = [process.wait() for process, _ in processes]
    finally:
        for process, _ in processes:
            if process.poll() is None:
                process.kill()
                process.wait()
    important: list[str] = []
    for code, (_, log) in zip(codes, processes):
        if code == 0:
            continue
        lines = [line for line in log.read_text(encoding="utf-8").splitlines() if line.strip()]
        found = [line.strip() for line in lines if "WARNING" in line or "ERROR" in line or "Error" in line] or lines[-5:]
        important += [line for line in found if line not in important]
    if important:
        raise MkdocsFailed("mkdocs build --strict failed:\n" + "\n".join(important[:20]))
