"""The result tables and case lists of the generated pages, written as HTML blocks rather than Markdown.

Python-Markdown takes about a second per megabyte of tables and links, and the published results are
most of the site's Markdown; an HTML block passes through it whole, several times faster. mkdocs does
not rewrite or check links inside HTML, so :class:`Links` writes each one as mkdocs writes a Markdown
link (the same URL rules, from its own ``File``) and remembers its target: a target that is not a page
or file of the site is a problem of the build, as a broken Markdown link is for ``mkdocs build --strict``.
"""
from __future__ import annotations

import functools
import posixpath
from pathlib import Path

import markupsafe

from opspec.reports.site import sanitize


class Links:
    """Links between generated pages, as mkdocs writes them in the built site."""

    def __init__(self, directory_urls: bool = True, folder: str = "generated"):
        self.directory_urls = directory_urls
        self.folder = folder  # the generated pages' folder in the site's docs
        self.targets: dict[str, str] = {}  # target (a path under the docs) -> a page linking to it

    def href(self, page: str, link: str) -> str:
        """``link``, written in ``page`` (a path under the generated folder; the link relative to the page as in
        Markdown, with an optional ``#anchor``), as the URL the built page holds."""
        target, hash_, anchor = link.partition("#")
        if not target:
            return link
        page = f"{self.folder}/{page}"
        path = posixpath.normpath(posixpath.join(posixpath.dirname(page), target))
        self.targets.setdefault(path, page)
        return _relative(path, page, self.directory_urls) + hash_ + anchor

    def problems(self, pages, docs: Path) -> list[str]:
        """The links whose target is neither one of ``pages`` (paths under the generated folder) nor a file of
        ``docs`` (the site's docs folder)."""
        found = []
        for target, page in sorted(self.targets.items()):
            generated = target.removeprefix(f"{self.folder}/") if target.startswith(f"{self.folder}/") else None
            if generated in pages or (docs / target).resolve().is_file():
                continue
            found.append(f"{page}: a link to {target}, which is not a page or file of the site")
        return found


@functools.lru_cache(maxsize=1 << 16)
def _relative(target: str, page: str, directory_urls: bool) -> str:
    from mkdocs.utils import get_relative_url

    return get_relative_url(_url(target, directory_urls), _url(page, directory_urls))


@functools.lru_cache(maxsize=1 << 14)
def _url(path: str, directory_urls: bool) -> str:
    """Where mkdocs serves ``path`` (a page or file under the docs folder), by its own rule."""
    from mkdocs.structure.files import File

    return File(path, None, "", directory_urls).url


def text(value) -> markupsafe.Markup:
    """Untrusted text for an HTML element: escaped, with schemes that run script broken (as in Markdown pages)."""
    return markupsafe.Markup(sanitize.escape_text(" ".join(str(value).split())).replace(">", "&gt;").replace('"', "&quot;"))


def ident(value) -> markupsafe.Markup:
    """A name kept on one line (a status, a dtype)."""
    return markupsafe.Markup('<span class="opspec-id">') + text(value) + markupsafe.Markup("</span>")


def code(value) -> markupsafe.Markup:
    return markupsafe.Markup(sanitize.code(value))


def link(href: str, content) -> markupsafe.Markup:
    """An ``<a>`` to ``href`` (made by :meth:`Links.href`) around ``content`` (escaped unless it is markup)."""
    return markupsafe.Markup('<a href="{}">{}</a>').format(href, content)
