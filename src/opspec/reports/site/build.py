"""`opspec site build|serve`: generate the pages, run mkdocs, and swap the result into place.

Everything happens in a scratch folder beside the target; the finished tree
replaces the old one in a rename, so a failed build leaves the last good site
(and the last good generated pages) where they were.
"""
from __future__ import annotations

import functools
import http.server
import os
import shutil
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from opspec.reports.site import mkdocs_run, sanitize
from opspec.reports.site.generate import GENERATED, generate
from opspec.spec.workspace import Workspace



class BuildError(Exception):
    """The site cannot be built; the message says why in one or a few lines."""


@dataclass(frozen=True)
class BuildResult:
    out: Path
    pages: int
    seconds: float
    skipped_proposals: list[str]
    generate_seconds: float = 0.0  # of ``seconds``: generating the pages (examples run with torch)


def _swap(new: Path, target: Path) -> None:
    """Put directory ``new`` at ``target``, replacing what was there with two renames."""
    target.parent.mkdir(parents=True, exist_ok=True)
    old = None
    if target.exists():
        old = target.with_name(f".{target.name}.old-{os.getpid()}")
        shutil.rmtree(old, ignore_errors=True)
        os.replace(target, old)
    try:
        os.replace(new, target)
    except BaseException:
        if old is not None:
            os.replace(old, target)
        raise
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)


def build(ws: Workspace, out: Path | None = None, *, write_generated: bool = True) -> BuildResult:
    """Build the site of ``ws`` into ``out`` (default site/build); also refresh site/docs/generated."""
    started = time.perf_counter()
    config = ws.site / "mkdocs.yml"
    if not config.is_file():
        raise BuildError(f"{config}: missing (the site's mkdocs configuration)")
    out = (out or ws.site / "build").resolve()
    out.parent.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(prefix=".opspec-site-", dir=out.parent))
    side = None
    try:
        shutil.copy2(config, scratch / "mkdocs.yml")
        shutil.copytree(ws.site / "docs", scratch / "docs", ignore=shutil.ignore_patterns(GENERATED))

        written: set[str] = set()

        def write(pages: dict[str, str]) -> None:
            # each page once: the second mkdocs may already be reading a page through a hard link to its file
            for relative, text in pages.items():
                if relative not in written:
                    page = scratch / "docs" / GENERATED / relative
                    page.parent.mkdir(parents=True, exist_ok=True)
                    page.write_text(text, encoding="utf-8", newline="\n")
                    written.add(relative)

        def start_side(pages: dict[str, str], later: list[str]) -> None:
            nonlocal side
            write(pages)
            side = mkdocs_run.start_side(scratch, GENERATED, pages, later)

        generated = generate(ws, early=start_side)
        generate_seconds = time.perf_counter() - started
        if generated.problems:
            raise BuildError("\n".join(generated.problems))
        write(generated.pages)
        html_dir = scratch / "html"
        try:
            mkdocs_run.run(scratch, html_dir, GENERATED, side)
        except mkdocs_run.MkdocsFailed as err:
            raise BuildError(str(err)) from None
        problems = []
        for page in sorted((html_dir / GENERATED / "proposals").rglob("*.html")):
            for problem in sanitize.unsafe_html(page.read_text(encoding="utf-8")):
                problems.append(f"{page.relative_to(html_dir)}: active content in a proposal page: {problem}")
        if problems:
            raise BuildError("\n".join(problems))
        _swap(html_dir, out)
        if write_generated:
            _swap(scratch / "docs" / GENERATED, ws.site / "docs" / GENERATED)
    finally:
        if side is not None:
            side.stop()
        shutil.rmtree(scratch, ignore_errors=True)
    return BuildResult(out, sum(1 for page in generated.pages if page.endswith(".md")), time.perf_counter() - started, generated.skipped_proposals,
                       generate_seconds)


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format, *args):  # noqa: A002 - the base class's name
        pass


def server(directory: Path, port: int = 0, quiet: bool = True) -> http.server.ThreadingHTTPServer:
    """An HTTP server for ``directory`` on the loopback interface (search needs http, not file://)."""
    handler = functools.partial(_Quiet if quiet else http.server.SimpleHTTPRequestHandler, directory=str(directory))
    return http.server.ThreadingHTTPServer(("127.0.0.1", port), handler)


def serve_in_thread(directory: Path) -> tuple[http.server.ThreadingHTTPServer, str]:
    httpd = server(directory)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    host, port = httpd.server_address[:2]
    return httpd, f"http://{host}:{port}/"
