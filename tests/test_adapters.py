"""The real-backend adapters: refused with one line without their extra; with it, they run ops and say where.

The OpenVINO and ExecuTorch packages are optional extras, absent from the default
test environment: those tests skip with the reason, and run in an environment
with the extras (``pip install -e '.[test,openvino,executorch]' -c constraints.txt``).
"""
from __future__ import annotations

import importlib.util

import pytest
import torch

from opspec.conform import backends
from opspec.conform.cases import Case
from opspec.conform.runner import CaseRunner, Settings

HAS_OPENVINO = importlib.util.find_spec("openvino") is not None
HAS_EXECUTORCH = importlib.util.find_spec("executorch") is not None
needs_openvino = pytest.mark.skipif(not HAS_OPENVINO, reason="the openvino extra is not installed")
needs_executorch = pytest.mark.skipif(not HAS_EXECUTORCH, reason="the executorch extra is not installed")


@pytest.mark.parametrize("name, present", [("openvino", HAS_OPENVINO), ("executorch-xnnpack", HAS_EXECUTORCH)])
def test_a_missing_extra_is_one_line_naming_it(name, present):
    if present:
        pytest.skip(f"{name}'s package is installed here")
    with pytest.raises(backends.UnknownBackend, match=r"needs the \w+ extra: pip install 'opspec\[\w+\]'"):
        backends.resolve(name)


def test_backends_with_an_extra_are_known_names():
    with_extra = {name for name, declared in backends.registry.BUILT_IN.items() if declared.extra}
    assert {"onnxruntime", "openvino", "openvino-single-op", "executorch", "executorch-xnnpack", "xla",
            "openxla"} == with_extra
    assert with_extra <= set(backends.known_names())


def _traced(fn, *inputs) -> torch.fx.GraphModule:
    from torch.fx.experimental.proxy_tensor import make_fx

    return make_fx(fn)(*inputs)


@needs_openvino
@pytest.mark.parametrize("name, where", [("openvino-single-op", "backend"), ("openvino", "pytorch")])
def test_openvino_reports_which_ops_it_ran(name, where):
    x, y = torch.randn(3, 4), torch.randn(3, 4)
    observed = backends.resolve(name).inner
    compiled = observed(_traced(lambda a, b: torch.ops.aten.add.Tensor(a, b), x, y), [x, y])
    result = compiled(x, y)
    torch.testing.assert_close(result[0] if isinstance(result, (list, tuple)) else result, x + y)
    assert "aten::add.Tensor" in compiled.executed_ops()[where]  # a lone op runs in PyTorch by default


@needs_openvino
def test_openvino_case_passes_and_a_conversion_failure_is_not_inductors_pass():
    record = CaseRunner(Settings(backend="openvino-single-op")).run(Case("aten::add.Tensor", "float32", "cpu"))
    assert record["status"] == "pass", record["message"]


@needs_executorch
@pytest.mark.parametrize("name", ["executorch", "executorch-xnnpack"])
def test_executorch_runs_the_program_in_its_runtime(name):
    x, y = torch.randn(3, 4), torch.randn(3, 4)
    backend = backends.resolve(name)
    run = backend.compile(lambda a, b: torch.ops.aten.add.Tensor(a, b), [x, y])
    torch.testing.assert_close(run(x, y), x + y)
    assert run.executed_ops() == {"backend": ["aten::add.Tensor"], "pytorch": []}
    assert (run.delegated_ops == ["aten::add.Tensor"]) == (name == "executorch-xnnpack")
