"""A run looks its backend up in the registry once per process, and carries the declaration from there on."""
from __future__ import annotations

import pytest

from opspec.cli import main
from opspec.conform.backends import registry
from opspec.conform.runner import CaseRunner, Settings

@pytest.fixture
def lookups(monkeypatch):
    """The names looked up in the registry in this process, in order (a read of the built-in table that goes
    around :func:`registry.lookup` counts too)."""
    seen: list[str] = []
    real = registry.lookup

    class Counted(dict):
        def get(self, name, default=None):
            seen.append(name)
            return super().get(name, default)

    def counted(name):
        seen.append(name)
        return real(name)

    monkeypatch.setattr(registry, "BUILT_IN", Counted(registry.BUILT_IN))
    monkeypatch.setattr(registry, "lookup", counted)
    return seen

def test_one_run_looks_the_backend_up_once_in_this_process(tmp_path, lookups):
    out = tmp_path / "eager.json"
    args = ["conform", "--backend", "eager", "--ops", "aten::abs", "--report", str(out),
            "--max-examples", "1", "--max-compiles", "1", "-j", "1"]
    assert main(args) == 0
    assert lookups == ["eager"]  # the plan's; the suite, the carried records and the report read its declaration
    lookups.clear()
    assert main([*args, "--resume", str(out)]) == 0  # carried records are judged with the same declaration
    assert lookups == ["eager"]

def test_a_worker_resolves_the_backend_once(lookups):
    runner = CaseRunner(Settings(backend="eager"))
    assert runner.backend.declaration.name == "eager"
    assert lookups == ["eager"]

def test_an_unknown_backend_is_one_line_from_the_plan(tmp_path, capsys):
    code = main(["conform", "--backend", "inductr", "--ops", "aten::abs", "--report", str(tmp_path / "x.json")])
    assert code != 0
    assert "did you mean inductor?" in capsys.readouterr().err
