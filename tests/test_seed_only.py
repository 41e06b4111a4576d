"""Draws depend on the seed and the strategy alone, not on which local modules the process imported before."""
from __future__ import annotations

import importlib
import sys

from hypothesis import HealthCheck, Phase, given, seed, settings
from hypothesis import strategies as st

from opspec.testing.strategies import draw_examples

MARKER = 12345.678125  # a float no strategy here would draw on its own
# a range only MARKER among all local and global constants falls in, so Hypothesis draws it when it draws a constant
NEAR_MARKER = st.floats(min_value=12345.0, max_value=12346.0)


def raw_draws(n: int) -> list[float]:
    """``n`` draws of a plain Hypothesis run, local constants allowed."""
    drawn: list[float] = []

    @seed(7)
    @settings(max_examples=n, database=None, phases=(Phase.generate,), deadline=None,
              suppress_health_check=list(HealthCheck))
    @given(NEAR_MARKER)
    def collect(x):
        drawn.append(x)

    collect()
    return drawn


def test_a_module_imported_between_two_draws_changes_nothing(tmp_path, monkeypatch):
    before = draw_examples(NEAR_MARKER, 300, random_seed=7)
    (tmp_path / "opspec_local_constants.py").write_text(f"THRESHOLD = {MARKER!r}\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    importlib.import_module("opspec_local_constants")
    try:
        assert MARKER in raw_draws(300)  # Hypothesis does pick up the new module's constant...
        after = draw_examples(NEAR_MARKER, 300, random_seed=7)
    finally:
        sys.modules.pop("opspec_local_constants", None)
    assert after == before  # ...draw_examples does not
    assert MARKER not in after
