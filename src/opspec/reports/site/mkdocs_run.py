"""Run ``mkdocs build --strict`` on the scratch copy of the site, on two cores where there are two.

mkdocs renders one page after another, and Python-Markdown takes about a second per
megabyte: the report pages alone are 20 MB. Where two cores are free, a second mkdocs
renders the largest pages beside the first. Each process gets its own view of the docs:
the pages it renders, and every other page as a stub that keeps only its front matter
(its title, tags and search settings), so both see the same files, nav and links. The
second process's pages then replace their stubs in the first one's output.

Only pages left out of search and out of the nav go to the second process: the first
one writes the search index and the nav every page shows, so a page it did not render
cannot be missing from either. What such a page's HTML holds comes from its own
Markdown and the site's configuration, so the output is byte for byte what one process
builds (``tests/test_site.py`` compares the two).
"""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import yaml

# The second process takes pages up to this share of the Markdown: the first one also renders
# the theme and the search index for every page.
SIDE_SHARE = 0.6
# Below this much Markdown for the second process, starting it costs more than it saves.
SIDE_MINIMUM = 2_000_000
# mkdocs' own front matter pattern (mkdocs.utils.meta)
FRONT_MATTER_RE = re.compile(r"^-{3}[ \t]*\n(.*?\n)(?:\.{3}|-{3})[ \t]*\n", re.DOTALL)


class MkdocsFailed(Exception):
    """mkdocs refused the site; the message holds its warnings and errors."""


def run(scratch: Path, generated: str, pages: dict[str, str], html_dir: Path) -> None:
    """Build ``scratch/mkdocs.yml`` (docs in ``scratch/docs``, generated ``pages`` under its ``generated`` folder)
    into ``html_dir``."""
    config = scratch / "mkdocs.yml"
    try:
        settings = yaml.safe_load(config.read_text(encoding="utf-8"))
    except yaml.YAMLError:  # python tags (!!python/name:...): the nav cannot be read here, so one process builds
        settings = None
    side = set()
    if isinstance(settings, dict) and _cores() > 1:
        side = _side_pages({f"{generated}/{page}": text for page, text in pages.items()}, set(_nav_pages(settings.get("nav"))))
    if not side:
        _wait([_start(config, html_dir, scratch / "mkdocs.log")])
        return
    main, second = scratch / "main", scratch / "side"
    for view, renders in ((main, lambda page: page not in side), (second, lambda page: page in side)):
        _view(scratch / "docs", view / "docs", renders)
        shutil.copy2(config, view / "mkdocs.yml")
    _wait([_start(main / "mkdocs.yml", html_dir, scratch / "main.log"),
           _start(second / "mkdocs.yml", second / "html", scratch / "side.log")])
    for page in side:
        target = _output_of(page, bool(settings.get("use_directory_urls", True)))
        shutil.copy2(second / "html" / target, html_dir / target)


def _cores() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def _side_pages(pages: dict[str, str], in_nav: set[str]) -> set[str]:
    """The largest pages out of search and out of the nav, up to SIDE_SHARE of all the Markdown (paths under
    docs/); none when they come to less than SIDE_MINIMUM."""
    total = sum(len(text) for text in pages.values())
    chosen, size = set(), 0
    for page, text in sorted(pages.items(), key=lambda item: -len(item[1])):
        if page not in in_nav and _out_of_search(text) and size + len(text) <= SIDE_SHARE * total:
            chosen.add(page)
            size += len(text)
    return chosen if size >= SIDE_MINIMUM else set()


def _nav_pages(nav):
    if isinstance(nav, str):
        yield nav
    elif isinstance(nav, list):
        for item in nav:
            yield from _nav_pages(item)
    elif isinstance(nav, dict):
        for item in nav.values():
            yield from _nav_pages(item)


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


def _view(docs: Path, into: Path, renders) -> None:
    """A copy of ``docs`` in which the Markdown pages ``renders`` refuses are stubs: their front matter only."""
    for source in docs.rglob("*"):
        target = into / source.relative_to(docs)
        page = source.relative_to(docs).as_posix()
        if source.is_dir():
            target.mkdir(parents=True, exist_ok=True)
        elif source.suffix == ".md" and not renders(page):
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(_front_matter(source.read_text(encoding="utf-8")), encoding="utf-8", newline="\n")
        else:
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target)


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
