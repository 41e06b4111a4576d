"""How opspec says what went wrong: a finding pinned to its place, the one error that
carries findings, and the one-line form of any exception.

Every layer reports through these, so a user sees ``path:line:col: message`` or one
line naming the exception, never a traceback.
"""
from __future__ import annotations

from dataclasses import dataclass

from opspec.spec.yamlio import Mark


@dataclass(frozen=True)
class Finding:
    mark: Mark
    message: str

    def __str__(self) -> str:
        return f"{self.mark}: {self.message}"


class OpsetError(Exception):
    """The data, or an operation on it (a release), cannot go on; ``findings`` says every place why."""

    def __init__(self, findings: list[Finding]):
        super().__init__("\n".join(map(str, findings)))
        self.findings = findings


def first_line(text: str, limit: int = 500) -> str:
    """The first non-blank line of ``text``, at most ``limit`` characters."""
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return lines[0][:limit] if lines else ""


def root_cause(err: BaseException) -> BaseException:
    """The innermost cause: exporters and compilers wrap the real error in a banner naming their step."""
    seen = {id(err)}
    while True:
        inner = getattr(err, "inner_exception", None) or err.__cause__  # BackendCompilerFailed keeps it aside
        if not isinstance(inner, BaseException) or id(inner) in seen:
            return err
        seen.add(id(inner))
        err = inner


def one_line(err: BaseException, limit: int = 500, *, cause: bool = False) -> str:
    """``TypeName: first line of the message`` (the root cause's, with ``cause``)."""
    if cause:
        err = root_cause(err)
    text = first_line(str(err), limit)
    return f"{type(err).__name__}: {text}" if text else type(err).__name__


def detail_lines(err: BaseException, limit: int = 12) -> list[str]:
    """The lines of the root cause's message after its first (a compiler's diagnostic, where its first line says
    "see diagnostics"), at most ``limit``, each cut to 300 characters."""
    lines = [line.rstrip()[:300] for line in str(root_cause(err)).strip().splitlines() if line.strip()]
    return lines[1:1 + limit]
