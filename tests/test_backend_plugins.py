"""A backend from another package: registered under the ``opspec_backends`` entry-point group, no opspec change.

The scratch package is written into a temporary folder with its dist-info
(``entry_points.txt``), as ``pip install`` would leave it, and put on the path
of an ``opspec conform`` subprocess.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from opspec.conform import backends

SOURCE = Path(__file__).resolve().parents[1] / "src"

PACKAGE = '''
"""A torch.compile backend that runs what it is handed itself and says so; it negates aten::neg's result wrongly."""
import torch


def _qualified(gm):
    return sorted(n.target._schema.name + (f".{n.target._overloadname}" if n.target._overloadname != "default" else "")
                  for n in gm.graph.nodes if n.op == "call_function" and hasattr(n.target, "_schema"))


def backend(gm, example_inputs):
    ops = _qualified(gm)

    def run(*args):
        out = gm(*args)
        if "aten::neg" in ops:
            out = type(out)(o + 1 for o in out)
        return out

    run.executed_ops = lambda: {"backend": ops, "pytorch": []}
    return run
'''


def scratch_site(root: Path, name: str = "scratch", target: str = "scratch_backend:backend") -> Path:
    site = root / "site"
    (site / "scratch_backend").mkdir(parents=True)
    (site / "scratch_backend" / "__init__.py").write_text(textwrap.dedent(PACKAGE))
    info = site / "scratch_backend-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: scratch-backend\nVersion: 0.1\n")
    (info / "top_level.txt").write_text("scratch_backend\n")
    (info / "entry_points.txt").write_text(f"[opspec_backends]\n{name} = {target}\n")
    return site


def _conform(site: Path, tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(SOURCE), str(site)])}
    return subprocess.run([sys.executable, "-m", "opspec", "conform", *args], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=600)


def test_an_entry_point_backend_runs_with_evidence_and_attribution(tmp_path):
    site = scratch_site(tmp_path)
    report_path = tmp_path / "scratch.json"
    done = _conform(site, tmp_path, "--backend", "scratch", "--ops", "sin.default,neg.default", "--max-examples", "2",
                    "--report", str(report_path))
    assert done.returncode == 1, done.stderr  # neg fails, as the scratch backend computes it wrongly
    report = json.loads(report_path.read_text())
    assert report["backend"] == {"name": "scratch", "version": f"scratch-backend 0.1, torch {_torch_version()}",
                                 "package": "scratch-backend", "target": "the backend"}
    by_op = {r["op"]: r for r in report["results"]}
    sin, neg = by_op["aten::sin"], by_op["aten::neg"]
    assert sin["status"] == "pass"
    assert sin["evidence"]["source"] == "hook" and sin["executed"] == "target"
    assert sin["evidence"]["target_ops"] == ["aten::sin"]
    assert neg["status"] == "fail"
    assert (neg["blame"], neg["blame_stage"]) == ("backend", "backend")
    assert "dynamo" in neg["blame_reason"]  # the front end was replayed with eager kernels and passed


def test_a_broken_entry_point_is_one_line_naming_it(tmp_path):
    site = scratch_site(tmp_path, target="scratch_backend:no_such_thing")
    done = _conform(site, tmp_path, "--backend", "scratch", "--ops", "sin.default", "--report",
                    str(tmp_path / "r.json"))
    assert done.returncode == 2
    assert "Traceback" not in done.stderr
    assert "backend scratch: entry point scratch_backend:no_such_thing (opspec_backends) does not load" in done.stderr
    assert not (tmp_path / "r.json").exists()


def test_an_entry_point_declaration_is_used_as_declared(tmp_path, monkeypatch):
    """A package may register a full Declaration (here: a reference backend, whose evidence is static)."""
    site = tmp_path / "site"
    (site / "declared_backend").mkdir(parents=True)
    (site / "declared_backend" / "__init__.py").write_text(textwrap.dedent('''
        from opspec.conform.backends import dynamo

        DECLARATION = dynamo.declare("declared", evidence="reference", evidence_note="eager kernels by design",
                                     package="", inner=lambda gm, example_inputs: gm.forward)
    '''))
    info = site / "declared_backend-0.2.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: declared-backend\nVersion: 0.2\n")
    (info / "entry_points.txt").write_text("[opspec_backends]\ndeclared = declared_backend:DECLARATION\n")
    monkeypatch.syspath_prepend(str(site))
    assert "declared" in backends.known_names()
    backend = backends.resolve("declared")
    assert backend.static_evidence().source == "reference"
    assert backend.compile(lambda x: x + 1, [_tensor()])(_tensor()).tolist() == [2.0]


def test_a_missing_extra_names_it():
    declared = backends.Declaration("needs-nothing-here", build=lambda *a: None, extra="nothing",
                                    requires=("opspec_no_such_module",))
    with pytest.raises(backends.MissingExtra, match=r"^backend needs-nothing-here needs the nothing extra: "
                                                     r"pip install 'opspec\[nothing\]'"):
        declared.check_extra()


def _tensor():
    import torch

    return torch.ones(1)


def _torch_version() -> str:
    import torch

    return torch.__version__


# ---- the site page's examples are checked, not prose ----

PAGE = Path(__file__).resolve().parents[1] / "site" / "docs" / "own-backend.md"


def _blocks(language: str) -> list[str]:
    import re

    return re.findall(rf"```{language}\n(.*?)```", PAGE.read_text(), flags=re.S)


def test_the_pages_example_backend_runs_and_reports_what_it_executed():
    import torch

    source = next(b for b in _blocks("python") if "run.executed_ops" in b)
    namespace: dict = {}
    exec(compile(source, str(PAGE), "exec"), namespace)
    x, y = torch.randn(3), torch.randn(3)
    compiled = torch.compile(lambda a, b: torch.ops.aten.add.Tensor(a, b), backend=namespace["compile_graph"],
                             fullgraph=True)
    torch.testing.assert_close(compiled(x, y), x + y)
    seen = namespace["compile_graph"](_traced(lambda a, b: torch.ops.aten.add.Tensor(a, b), x, y), [x, y])
    assert seen.executed_ops() == {"target": ["aten::add.Tensor"], "pytorch": []}


def test_the_pages_expectations_and_manifest_are_valid(tmp_path):
    from opspec.conform import expectations
    from opspec.spec import load, manifests

    opset = load.load_opset()
    yaml_blocks = _blocks("yaml")
    expected_path = tmp_path / "my-backend-expectations.yaml"
    expected_path.write_text(next(b for b in yaml_blocks if b.startswith("backend:")))
    expected = expectations.read(expected_path, opset)
    assert expected.warnings == () and len(expected.entries) == 1
    manifest_path = tmp_path / "my-backend.yaml"
    manifest_path.write_text(next(b for b in yaml_blocks if b.startswith("opset:")))
    manifest = manifests.load_manifest(manifest_path)
    assert manifest.opset == opset.version
    assert manifest.status("aten::add.Tensor")[0] == "lowered" and manifest.status("aten::nonzero")[0] == "fallback"


def _traced(fn, *inputs):
    from torch.fx.experimental.proxy_tensor import make_fx

    return make_fx(fn)(*inputs)


# ---- the built-in declarations ----

def test_every_declaring_module_is_in_the_registry_and_names_are_unique():
    import importlib
    import pkgutil

    from opspec.conform.backends import registry

    declared = []
    for info in pkgutil.iter_modules(backends.__path__):
        module = importlib.import_module(f"{backends.__name__}.{info.name}")
        declared += [d.name for d in getattr(module, "DECLARATIONS", ())]
    assert sorted(declared) == sorted(registry.BUILT_IN)  # a module left out of the registry would be missed here
    assert len(declared) == len(set(declared))


def test_a_declaration_with_an_unknown_evidence_kind_is_refused():
    with pytest.raises(ValueError, match="evidence 'maybe' is not one of observed, reference, whole-program"):
        backends.Declaration("x", build=lambda *a: None, evidence="maybe")
