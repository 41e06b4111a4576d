"""`make test` runs with ``--dist loadgroup``: tests marked with one ``xdist_group`` share an expensive module
fixture (a built site, a conformance run) and must land on one worker, or each worker makes it again. Some
pytest and pytest-xdist pairs silently stop grouping (pytest 9.2 with pytest-xdist 3.8): this says so."""
from __future__ import annotations

import re
import subprocess
import sys
import textwrap

import pytest

pytest.importorskip("xdist", reason="pytest-xdist is not installed")


@pytest.mark.sweep  # a pytest of its own with two workers (7 s): `make sweep`, which CI runs after `make test`
def test_tests_of_one_group_run_on_one_worker(tmp_path):
    (tmp_path / "test_grouped.py").write_text(textwrap.dedent("""
        import time
        import pytest

        pytestmark = pytest.mark.xdist_group("shared")

        @pytest.mark.parametrize("i", range(6))
        def test_member(i):
            time.sleep(0.1)
        """))
    (tmp_path / "test_other.py").write_text("import time\n\ndef test_alone():\n    time.sleep(0.5)\n")
    ran = subprocess.run([sys.executable, "-m", "pytest", "-n", "2", "--dist", "loadgroup", "-p", "no:cacheprovider",
                          "-v", str(tmp_path)], capture_output=True, text=True, cwd=tmp_path, timeout=300)
    assert ran.returncode == 0, ran.stdout[-2000:] + ran.stderr[-2000:]
    workers = {worker for worker, name in re.findall(r"\[(gw\d+)\].*PASSED \S*::(test_member\[\d\])", ran.stdout)}
    assert len(re.findall(r"PASSED \S*::test_member", ran.stdout)) == 6, ran.stdout[-2000:]
    assert len(workers) == 1, f"one group ran on {sorted(workers)}: --dist loadgroup does not group here"
