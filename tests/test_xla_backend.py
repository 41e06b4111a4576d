"""The ``xla`` and ``openxla`` backends: who executed each op comes from PyTorch/XLA's own counters.

torch-xla installs beside torch 2.9 only, so these tests run the backend against a
stand-in ``torch_xla`` package written into a temporary folder: its device is the
CPU, and its ``debug.metrics`` counts the ATen ops each run dispatches the way
PyTorch/XLA does (``xla::OP`` for an op it lowers, ``aten::OP`` in
``executed_fallback_ops()`` for one it hands to the ATen kernel), with
``aten::nonzero`` and ``aten::bucketize`` falling back as they do in torch-xla 2.9.0, and
``aten::addmm`` when ``beta`` or ``alpha`` is not 1 (lowered at its defaults, as there).
The tests against the real package are in the last section and skip without it.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from test_conform import FAST, validate

from opspec.cli import main
from opspec.conform import backends, evidence
from opspec.conform.backends import xla

STAND_IN = '''
"""Stand-in for torch_xla: the CPU as the device, counters kept by a dispatch mode between clear_all and reading."""
import torch

def device():
    return torch.device("cpu")
'''

METRICS = '''
import torch
from torch.utils._python_dispatch import TorchDispatchMode

FALLS_BACK = {"nonzero", "bucketize"}
FALLS_BACK_WITH = {"addmm": ("beta", "alpha")}  # lowered only where these scalars are 1, as in torch-xla 2.9.0
EAGER = {eager}  # eager runs are counted by a dispatch mode; compiled graphs count their own nodes (count())
_counters, _fallbacks, _mode = set(), set(), []


def count(func, kwargs=None):
    packet = func._schema.name.split("::")[1]
    settings = [(kwargs or {}).get(name, 1) for name in FALLS_BACK_WITH.get(packet, ())]
    falls_back = packet in FALLS_BACK or any(value != 1 for value in settings)
    (_fallbacks.add(f"aten::{packet}") if falls_back else _counters.add(f"xla::{packet}"))


class _Counting(TorchDispatchMode):
    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        count(func, kwargs)
        return func(*args, **(kwargs or {}))


def clear_all():
    _counters.clear(), _fallbacks.clear()
    if EAGER:
        _mode.append(_Counting())
        _mode[-1].__enter__()


def _stop():
    while _mode:
        _mode.pop().__exit__(None, None, None)


def counter_names():
    _stop()
    return sorted(_counters | {"xla::_copy_from", "CachedCompile"})


def executed_fallback_ops():
    _stop()
    return sorted(_fallbacks)
'''

BRIDGE = '''
"""Stand-in for torch_xla.core.dynamo_bridge, which torch's openxla backend calls: the graph run node by node."""
import torch

from torch_xla.debug import metrics


class _Counted(torch.fx.Interpreter):
    def call_function(self, target, args, kwargs):
        if hasattr(target, "_schema"):
            metrics.count(target, kwargs)
        return super().call_function(target, args, kwargs)


def extract_compiled_graph(model, args):
    interpreter = _Counted(model)
    return lambda *inputs: interpreter.run(*inputs)
'''


def write_stand_in(root: Path, eager: bool) -> Path:
    """The stand-in package under ``root``: ``eager`` counts eager runs; otherwise compiled graphs count themselves
    (dynamo does not trace under a dispatch mode)."""
    package = root / "torch_xla"
    for folder in (package / "debug", package / "core"):
        folder.mkdir(parents=True)
        (folder / "__init__.py").write_text("")
    (package / "__init__.py").write_text(textwrap.dedent(STAND_IN))
    (package / "debug" / "metrics.py").write_text(textwrap.dedent(METRICS).replace("{eager}", str(eager)))
    (package / "core" / "dynamo_bridge.py").write_text(textwrap.dedent(BRIDGE))
    return root


@pytest.fixture
def stand_in(tmp_path, monkeypatch):
    """The stand-in on the path of this process and of the workers opspec conform starts."""

    def install(eager: bool) -> Path:
        monkeypatch.syspath_prepend(str(write_stand_in(tmp_path / "site", eager)))
        for name in [m for m in sys.modules if m.startswith("torch_xla")]:
            monkeypatch.delitem(sys.modules, name)
        return tmp_path / "site"

    yield install
    for name in [m for m in sys.modules if m.startswith("torch_xla")]:  # what the test imported of the stand-in
        del sys.modules[name]


def conform(tmp_path: Path, backend: str, ops: str) -> dict:
    path = tmp_path / f"{backend}.json"
    main(["conform", "--backend", backend, "--ops", ops, "--report", str(path), "--no-expectations",
          "--dtypes", "float32", *FAST])
    report = json.loads(path.read_text())
    validate(report)
    return {r["op"]: r for r in report["results"]}


# ---- the counters, read ----

def test_lowered_ops_come_from_xla_counters_and_fallbacks_from_executed_fallback_ops():
    lowered, fell_back = xla.executed(["xla::sin", "xla::_copy_from", "CachedCompile", "xla::add"],
                                      ["aten::nonzero", "aten::nonzero"])
    assert lowered == ["aten::add", "aten::sin"]  # transfers and XLA's own counters are not the computation
    assert fell_back == ["aten::nonzero"]


def test_an_op_in_the_fallback_counters_is_pytorch_even_beside_lowered_ops():
    found = evidence.judge("aten::nonzero", [evidence.Seen("hook", {"aten::gt"}, {"aten::nonzero"})])
    assert found.executed == "pytorch"
    other = evidence.judge("aten::gt.Scalar", [evidence.Seen("hook", {"aten::gt"}, {"aten::nonzero"})])
    assert other.executed == "partial"


def test_a_case_with_no_counters_left_is_unknown_not_pass():
    assert evidence.judge("aten::sin", [evidence.Seen("hook", set(), set())]).executed == "unknown"


# ---- through opspec conform, against the stand-in ----

def test_a_lowered_op_passes_and_a_fallen_back_one_is_fallback(stand_in, tmp_path):
    stand_in(eager=True)
    results = conform(tmp_path, "xla", "sin,nonzero")
    sin, nonzero = results["aten::sin"], results["aten::nonzero"]
    assert sin["status"] == "pass" and sin["executed"] == "target"
    assert sin["evidence"]["source"] == "hook" and "aten::sin" in sin["evidence"]["target_ops"]
    assert nonzero["status"] == "fallback" and nonzero["executed"] == "pytorch"
    assert nonzero["evidence"]["pytorch_ops"] == ["aten::nonzero"]
    assert nonzero["blame"] == "backend" and "aten::nonzero" in nonzero["message"]


def test_openxla_reads_the_same_counters(stand_in, tmp_path):
    stand_in(eager=False)  # torch's own openxla backend, calling the stand-in's dynamo bridge
    results = conform(tmp_path, "openxla", "sin,bucketize.Tensor")
    sin = results["aten::sin"]
    assert sin["status"] == "pass" and sin["evidence"]["target_ops"] == ["aten::sin"]
    bucketize = results["aten::bucketize.Tensor"]
    assert bucketize["status"] == "fallback" and bucketize["evidence"]["pytorch_ops"] == ["aten::bucketize"]


# ---- the manifest's measuring rule: at the drawn arguments and at the defaults ----

def measuring_tool() -> dict:
    import runpy

    return runpy.run_path(str(Path(__file__).resolve().parents[1] / "tools" / "measure_lowering.py"))


def test_an_op_lowered_at_its_defaults_is_not_reported_not_lowered(stand_in):
    from collections import Counter

    import torch

    from opspec.bridge import decomp_table, torch_ops
    from opspec.checks import coverage
    from opspec.spec import load
    from opspec.spec.manifests import BackendManifest

    stand_in(eager=True)
    opset = load.load_opset()
    table = decomp_table.decomposition_table(opset)
    measure = measuring_tool()["measure_xla_with"](opset.version)
    status, note, fields = measure(torch_ops.resolve("aten::addmm"))
    # every drawn call set beta or alpha and fell back; at the defaults XLA lowered it, and each argument alone,
    # set as drawn, makes it fall back
    assert status == "lowered" and fields == {"fallback_args": ["alpha", "beta"]}
    assert note.startswith("lowered at its default arguments; PyTorch/XLA runs the ATen CPU kernel when a call sets "
                           "alpha (measured: ") and note.endswith("(executed_fallback_ops: aten::addmm)")
    assert measure(torch_ops.resolve("aten::nonzero"))[0] == "fallback"  # no argument explains that one
    assert measure(torch_ops.resolve("aten::sin")) == ("lowered", "")

    manifest = BackendManifest.from_dict({"opset": opset.version, "backend": "xla", "measured_with": "the stand-in",
                                          "lowered": [{"op": "aten::addmm", "note": note, **fields}, "aten::permute"],
                                          "fallback": []})
    linear = torch.nn.Linear(4, 3)
    at_defaults = coverage.ExampleModel(linear, (torch.randn(2, 4),))
    report = coverage.coverage(at_defaults, opset, table, [manifest], "linear")
    assert report.not_lowered("xla") == [] and report.exit_code == 0

    class Scaled(torch.nn.Module):  # the same op with beta set: that call falls back, and coverage says which
        def forward(self, b, x, w):
            return torch.addmm(b, x, w, beta=0.5)

    scaled = coverage.coverage(coverage.ExampleModel(Scaled(), (torch.randn(3), torch.randn(2, 4), torch.randn(4, 3))),
                               opset, table, [manifest], "scaled")
    assert scaled.not_lowered("xla") == ["aten::addmm"]
    assert next(u for u in scaled.ops if u.op == "aten::addmm").backends["xla"][1].startswith("the calls set beta: lowered at its default arguments")
    # with no graph to read (any arguments), the op is a fallback, as conform's drawn calls see it
    assert coverage.classify(Counter({"aten::addmm": 1}), opset, manifest).not_lowered("xla") == ["aten::addmm"]


def test_an_op_lowered_for_integer_indices_is_not_reported_for_them():
    import torch

    from opspec.bridge import decomp_table
    from opspec.checks import coverage
    from opspec.spec import load
    from opspec.spec.manifests import BackendManifest

    opset = load.load_opset()
    table = decomp_table.decomposition_table(opset)
    manifest = BackendManifest.from_dict({"opset": opset.version, "backend": "xla", "measured_with": "by hand",
                                          "lowered": [{"op": "aten::index.Tensor", "note": "a mask goes through nonzero",
                                                       "fallback_args": ["indices:bool"]}], "fallback": []})

    class Gather(torch.nn.Module):
        def forward(self, x, where):
            return x[where]

    x = torch.randn(4, 3)
    by_position = coverage.coverage(coverage.ExampleModel(Gather(), (x, torch.tensor([0, 2]))), opset, table, [manifest])
    assert {u.op: u.backends["xla"][0] for u in by_position.ops}["aten::index.Tensor"] == "lowered"
    by_mask = coverage.coverage(coverage.ExampleModel(Gather(), (x, torch.tensor([True, False, True, False]))),
                                opset, table, [manifest])
    assert "aten::index.Tensor" in by_mask.not_lowered("xla")


def test_a_host_read_in_the_model_s_code_counts_for_a_backend_that_runs_that_code():
    import torch

    from opspec.bridge import decomp_table
    from opspec.checks import coverage
    from opspec.spec import load
    from opspec.spec.manifests import BackendManifest

    opset = load.load_opset()
    table = decomp_table.decomposition_table(opset)

    class SkipsWhenAllPositive(torch.nn.Module):  # as transformers' masks: a branch on a value, taken in Python
        def forward(self, x):
            if torch.compiler.is_compiling() or not bool((x > 0).all()):
                return x.relu()
            return x

    def manifest(name, runs_model_code):
        return BackendManifest.from_dict({"opset": opset.version, "backend": name, "measured_with": "by hand",
                                          "runs_model_code": runs_model_code, "lowered": ["aten::relu"],
                                          "fallback": [{"op": "aten::_local_scalar_dense", "reason": "no host reads"}]})

    example = coverage.ExampleModel(SkipsWhenAllPositive(), (torch.randn(3),))
    report = coverage.coverage(example, opset, table, [manifest("eagerish", True), manifest("graphish", False)])
    # export takes the compiling branch: the graph holds no read; the eager run reads once
    read = next(u for u in report.ops if u.op == "aten::_local_scalar_dense")
    assert read.count == 1 and "by the model's Python code" in read.note
    assert report.not_lowered("eagerish") == ["aten::_local_scalar_dense"]
    assert report.not_lowered("graphish") == [] and read.backends["graphish"][0] == coverage.NOT_RUN
    # no backend that runs the model's code: no eager run, no such row
    alone = coverage.coverage(example, opset, table, [manifest("graphish", False)])
    assert [u.op for u in alone.ops] == ["aten::relu"]


def test_an_eager_call_export_decomposes_counts_where_it_was_measured_to_fall_back():
    import torch

    from opspec.bridge import decomp_table
    from opspec.checks import coverage
    from opspec.spec import load
    from opspec.spec.manifests import BackendManifest

    opset = load.load_opset()
    table = decomp_table.decomposition_table(opset)

    class WeightNormed(torch.nn.Module):  # as wav2vec2's positional convolution: torch._weight_norm in forward
        def forward(self, v, g):
            return torch._weight_norm(v, g, 0)

    def manifest(name, runs_model_code, eager_ops):
        return BackendManifest.from_dict({"opset": opset.version, "backend": name, "measured_with": "by hand",
                                          "runs_model_code": runs_model_code, "lowered": [], "fallback": [],
                                          "eager_ops": eager_ops})

    example = coverage.ExampleModel(WeightNormed(), (torch.randn(3, 4), torch.randn(3, 1)))
    measured = [{"op": "aten::_weight_norm_interface", "status": "fallback", "note": "measured alone"}]
    report = coverage.coverage(example, opset, table, [manifest("eagerish", True, measured), manifest("graphish", False, [])])
    use = next(u for u in report.ops if u.op == "aten::_weight_norm_interface")
    assert use.count == 1 and "eager code" in use.note and use.opset == coverage.OUTSIDE
    assert "aten::_weight_norm_interface" in report.not_lowered("eagerish")
    assert use.backends["graphish"][0] == coverage.NOT_RUN  # a graph compiler sees the decomposition only
    # measured lowered, or not measured: the eager call adds nothing
    lowered = [{**measured[0], "status": "lowered"}]
    for eager_ops in (lowered, []):
        quiet = coverage.coverage(example, opset, table, [manifest("eagerish", True, eager_ops)])
        assert "aten::_weight_norm_interface" not in {u.op for u in quiet.ops}


def test_without_torch_xla_the_backend_is_one_line_naming_the_extra(tmp_path):
    if _has_torch_xla():
        pytest.skip("torch_xla is installed here")
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1] / "src")}
    done = subprocess.run([sys.executable, "-m", "opspec", "conform", "--backend", "xla", "--ops", "sin"],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 2
    assert done.stderr.strip().count("\n") == 0 and "Traceback" not in done.stderr
    assert "backend xla needs the xla extra: pip install 'opspec[xla]'" in done.stderr


def test_both_backends_are_declared_with_the_extra():
    for name in ("xla", "openxla"):
        declaration = backends.lookup(name)
        assert declaration.extra == "xla" and declaration.packages == ("torch-xla",)
    assert backends.lookup("openxla").manifest_path() == backends.lookup("xla").manifest_path()


# ---- the real package (the torch 2.9 venv: PJRT_DEVICE=CPU) ----

def _has_torch_xla() -> bool:
    import importlib.util

    return importlib.util.find_spec("torch_xla") is not None


real = pytest.mark.skipif(not _has_torch_xla(), reason="torch-xla is not installed (the xla extra needs torch 2.9)")


@real
def test_real_xla_counts_nonzero_as_a_fallback(tmp_path):
    results = conform(tmp_path, "xla", "sin,nonzero")
    assert results["aten::sin"]["status"] == "pass"
    assert results["aten::nonzero"]["status"] == "fallback"
    assert results["aten::nonzero"]["evidence"]["pytorch_ops"] == ["aten::nonzero"]


@real
def test_real_xla_lowers_addmm_at_its_defaults_only():
    from opspec.bridge import torch_ops
    from opspec.spec import load

    status, note, fields = measuring_tool()["measure_xla_with"](load.latest_version())(torch_ops.resolve("aten::addmm"))
    assert status == "lowered" and fields == {"fallback_args": ["alpha", "beta"]}, note
