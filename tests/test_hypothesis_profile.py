"""The conformance suite's default hypothesis profile is the derandomized one, whatever the environment."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

CONFTEST = Path(__file__).resolve().parents[1] / "conformance" / "conftest.py"
PRINT_PROFILE = (
    "import runpy, hypothesis; runpy.run_path(%r); s = hypothesis.settings.default; "
    "print(s.derandomize, s.max_examples, s.database)" % str(CONFTEST)
)


def _profile(**env: str) -> str:
    clean = {k: v for k, v in os.environ.items() if k not in ("CI", "OPSPEC_HYPOTHESIS_PROFILE")}
    done = subprocess.run([sys.executable, "-c", PRINT_PROFILE], env={**clean, **env},
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


@pytest.mark.parametrize("env", [{}, {"CI": "1"}], ids=["no-variables", "CI=1"])
def test_default_profile_is_derandomized_without_any_variable(env):
    assert _profile(**env) == "True 10 None"


def test_random_exploration_is_asked_for_by_name():
    derandomize, examples, _ = _profile(OPSPEC_HYPOTHESIS_PROFILE="dev").split(" ", 2)
    assert (derandomize, examples) == ("False", "50")
