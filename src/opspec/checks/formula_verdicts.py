"""What checking a formula found on one set of its inputs, and the one message a check of all of them reports.

A formula is checked on drawn inputs and on its special-case rows' inputs, two verdicts
kept apart (:mod:`opspec.checks.kept_formulas`); :func:`first_message` puts them together
as one pass over every input would report them. No torch here.
"""
from __future__ import annotations

# ("error", why the inputs cannot be made) or ("problem", the first disagreement), each the whole message;
# None when the formula agrees on every input.
Verdict = tuple[str, str]


def first_message(drawn: Verdict | None, on_rows: Verdict | None) -> str | None:
    """Inputs that cannot be made come first (drawn ones, then the rows'), since every input is made before any is
    checked; then the first disagreement, on drawn inputs before the rows'."""
    verdicts = (drawn, on_rows)
    found = [v for v in verdicts if v and v[0] == "error"] + [v for v in verdicts if v and v[0] == "problem"]
    return found[0][1] if found else None
