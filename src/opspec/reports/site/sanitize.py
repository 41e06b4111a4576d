"""Make untrusted text (proposal titles and bodies, result files) safe to put in generated Markdown.

Markdown passes raw HTML through, so nothing a proposal author writes may reach
the page as markup: every ``&`` and ``<`` is escaped, code the author marked as
code is emitted as ``<code>`` with escaped contents (so a disagreement with the
Markdown parser about where code ends can only cost looks, never safety), and
link schemes that run script are broken. ``unsafe_html`` re-checks the built
pages, so a gap here fails the build instead of shipping.
"""
from __future__ import annotations

import functools
import html
import json
import re
from html.parser import HTMLParser

FENCE_RE = re.compile(r"^( {0,3})(`{3,}|~{3,})(.*)$")
CONTROL_RE = re.compile(r"[\x00-\x08\x0b-\x1f\x7f\t]")
# Schemes that execute or smuggle content; broken with a zero-width space, which survives
# the browser's entity decoding and makes the scheme invalid (the link becomes relative).
SCHEME_RE = re.compile(r"(?i)\b(javascript|vbscript|livescript|data|file)(\s*):")
MD_SPECIAL_RE = re.compile(r"([\\`*_\[\]{}()#+!|~>])")
CODE_CHARS = {"*": "&#42;", "_": "&#95;", "`": "&#96;", "[": "&#91;", "]": "&#93;", "\\": "&#92;", "|": "&#124;"}


def front_matter(fields: dict) -> str:
    """A page's YAML front matter (without its ``---`` lines), each value written as JSON, which YAML reads as
    written: a tenth of the time of PyYAML's emitter, over a thousand pages. A value that JSON would escape
    (anything not printable ASCII) goes through PyYAML, since YAML reads some escapes JSON writes otherwise."""
    lines = [f"{key}: {json.dumps(value)}" for key, value in fields.items()]
    if any("\\" in line for line in lines):
        from opspec.spec import yamlio

        return yamlio.dump(fields).rstrip("\n")
    return "\n".join(lines)


def escape_text(text: str) -> str:
    """HTML-escape ``&`` and ``<`` (so no tag or entity survives) and break script schemes."""
    text = CONTROL_RE.sub(" ", text)
    text = text.replace("&", "&amp;").replace("<", "&lt;")
    return SCHEME_RE.sub(lambda m: f"{m.group(1)}\u200b{m.group(2)}:", text)


def code_html(text: str) -> str:
    escaped = html.escape(CONTROL_RE.sub(" ", text), quote=True)
    for char, entity in CODE_CHARS.items():  # one str.replace each: several times faster than str.translate
        escaped = escaped.replace(char, entity)
    return escaped


def inline(text: str) -> str:
    """One line of plain text (a title, a name): no Markdown or HTML meaning survives."""
    return _inline(str(text))


@functools.lru_cache(maxsize=1 << 16)
def _inline(text: str) -> str:
    # Report pages escape the same names, dtypes and statuses tens of thousands of times.
    return MD_SPECIAL_RE.sub(r"\\\1", escape_text(" ".join(text.split())))


def cell(text: str) -> str:
    """Plain text for a table cell."""
    return inline(text)


def ident(text: str) -> str:
    """A name that must not wrap inside a table cell (a category, a status, a date): plain text kept on one line."""
    return f'<span class="opspec-id">{inline(text)}</span>'


def code(text: str) -> str:
    """Inline code from untrusted text."""
    return f"<code>{code_html(' '.join(str(text).split()))}</code>"


def pre(text: str) -> str:
    """A block of untrusted text (a repro, a message) as one inert <pre> line: nothing for Markdown to reinterpret."""
    content = "&#10;".join(code_html(line) for line in str(text).splitlines())
    return f'<pre class="opspec-pre"><code>{content}</code></pre>'


LINK_RE = re.compile(r"(!?)\[([^\]\n]*)\]\(([^)\n]*)\)")
REFERENCE_RE = re.compile(r"^\s{0,3}\[[^\]]+\]:\s*(\S*)")
SAFE_URL_RE = re.compile(r"^(https?://[^\s<>\"'`]+|mailto:[^\s<>\"'`]+|#[A-Za-z0-9_-]*)$")


def _safe_destination(destination: str) -> bool:
    url = html.unescape(destination.strip().strip("<>").split(" ", 1)[0])
    return bool(SAFE_URL_RE.match(url))


def _links(text: str) -> str:
    """Keep absolute http(s), mailto and in-page links; any other link becomes its plain text.

    Relative links would point into the repository layout, not the site's, and every
    other scheme is a way to run or smuggle content.
    """
    return LINK_RE.sub(lambda m: m.group(0) if _safe_destination(m.group(3)) else m.group(2), text)


def _inline_segments(line: str) -> str:
    """Escape a line of Markdown, turning backtick code spans into escaped <code> elements."""
    reference = REFERENCE_RE.match(line)
    if reference and not _safe_destination(reference.group(1)):
        return ""
    out, position = [], 0
    pattern = re.compile(r"(?<!\\)(`+)(.+?)(?<!`)\1(?!`)")
    for match in pattern.finditer(line):
        out.append(escape_text(_links(line[position : match.start()])))
        out.append(f"<code>{code_html(match.group(2).strip())}</code>")
        position = match.end()
    out.append(escape_text(_links(line[position:])))
    return "".join(out)


def markdown_body(text: str) -> str:
    """An untrusted Markdown document, made inert: formatting, headings and http(s) links keep working."""
    lines = text.splitlines()
    out: list[str] = []
    index = 0
    while index < len(lines):
        line = lines[index]
        opener = FENCE_RE.match(line)
        if opener:
            marker = opener.group(2)
            block = []
            index += 1
            while index < len(lines):
                closing = FENCE_RE.match(lines[index])
                if closing and closing.group(2)[0] == marker[0] and len(closing.group(2)) >= len(marker) and not closing.group(3).strip():
                    break
                block.append(lines[index])
                index += 1
            index += 1
            # One line, newlines as entities: the Markdown parser has nothing to reinterpret.
            content = "&#10;".join(code_html(b) for b in block)
            out += ["", f'<pre class="proposal-code"><code>{content}</code></pre>', ""]
            continue
        out.append(_inline_segments(line))
        index += 1
    return "\n".join(out) + "\n"


class _Scanner(HTMLParser):
    """Collects active content inside the page's article (the theme's own scripts live outside it)."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.depth = 0
        self.problems: list[str] = []

    def handle_starttag(self, tag, attrs):
        if tag == "article":
            self.depth += 1
        if not self.depth:
            return
        if tag in ("script", "iframe", "object", "embed", "form", "base", "meta", "link", "style", "svg", "math"):
            self.problems.append(f"<{tag}> element")
        for name, value in attrs:
            if name.lower().startswith("on"):
                self.problems.append(f"{name} attribute on <{tag}>")
            if name.lower() in ("href", "src", "action", "formaction", "xlink:href") and value:
                cleaned = re.sub(r"[\x00-\x20]", "", value).lower()
                if re.match(r"^(javascript|vbscript|livescript|data|file):", cleaned):
                    self.problems.append(f"{name}={value!r} on <{tag}>")

    def handle_endtag(self, tag):
        if tag == "article" and self.depth:
            self.depth -= 1


def unsafe_html(page: str) -> list[str]:
    """Active content found in a built page's article; empty when it is inert."""
    scanner = _Scanner()
    scanner.feed(page)
    scanner.close()
    return scanner.problems
