"""PyTorch/XLA (the ``xla`` extra): ``xla``, each case run eagerly on the XLA device, and ``openxla``,
``torch.compile(backend="openxla")`` on it.

Inputs go to the XLA device (``PJRT_DEVICE=CPU`` unless set: a TPU or GPU where
PyTorch/XLA finds one), the program runs there, and its outputs come back to
the CPU to be compared with eager. PyTorch/XLA lowers most ATen ops to XLA and
forwards the others to the CPU through a boxed ATen fallback; who executed
each op is read from its own metrics (``torch_xla.debug.metrics``), cleared
before every run: the ``xla::OP`` counters name the ops its lowerings ran, and
``executed_fallback_ops()`` (the ``aten::OP`` fallback counters) the ops that
went to the ATen kernel, so such an op is a ``fallback``, never a ``pass``.
Names are printed the way PyTorch/XLA's own tool prints them (``aten::nonzero``).
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import Callable, Iterable

from opspec.conform import evidence, lowering
from opspec.conform.backends import dynamo
from opspec.conform.backends.base import Backend, Declaration, GapsPage, versioned

DEFAULT_DEVICE = "CPU"  # PJRT_DEVICE when the environment names none
LOWERED_PREFIX = "xla::"  # counters PyTorch/XLA's lowerings bump, one per op (``xla::sin``)
# counters of moving data on and off the device and of XLA's own bookkeeping: not the computation under test
TRANSFERS = frozenset({"xla::_copy_from", "xla::_to_copy", "xla::_copy_from_and_resize", "xla::empty_strided_symint",
                       "xla::empty_symint", "xla::_to_cpu", "xla::_propagate_xla_data"})
SOURCE_NOTE = "torch_xla.debug.metrics counters"


def executed(counters: Iterable[str], fallback_ops: Iterable[str]) -> tuple[list[str], list[str]]:
    """(ops XLA's lowerings ran, ops that fell back to ATen), from one run's counter names and fallback ops.

    ``counters``: ``torch_xla.debug.metrics.counter_names()`` (``xla::sin``, ...);
    ``fallback_ops``: ``executed_fallback_ops()`` (``aten::nonzero``, ...)."""
    lowered = sorted("aten::" + name.removeprefix(LOWERED_PREFIX) for name in counters
                     if name.startswith(LOWERED_PREFIX) and name not in TRANSFERS)
    return lowered, sorted(set(fallback_ops))


def _metrics():
    import torch_xla.debug.metrics as metrics

    return metrics


def observed_run(run: Callable) -> Callable:
    """``run`` with XLA's metrics cleared before it and read after it, reported as the case's evidence."""

    def observed(*inputs):
        metrics = _metrics()
        metrics.clear_all()
        try:
            return run(*inputs)
        finally:
            lowered, fell_back = executed(metrics.counter_names(), metrics.executed_fallback_ops())
            evidence.report(lowered, fell_back, SOURCE_NOTE)

    return observed


def device():
    os.environ.setdefault("PJRT_DEVICE", DEFAULT_DEVICE)
    import torch_xla

    return torch_xla.device()


def _moved(tree, target):
    import torch
    from torch.utils import _pytree

    return _pytree.tree_map(lambda t: t.to(target) if isinstance(t, torch.Tensor) else t, tree)


def _creating_on(target):
    """A mode that gives ATen calls left on the default device (``device=None``: creation ops) ``target``.
    ``with torch.device(...)`` covers the ``torch.*`` constructors only, not ``torch.ops.aten`` calls."""
    import torch
    from torch.overrides import TorchFunctionMode

    class CreatingOn(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            kwargs = kwargs or {}
            if isinstance(func, torch._ops.OpOverload) and "device" in kwargs and kwargs["device"] is None:
                kwargs = {**kwargs, "device": target}
            return func(*args, **kwargs)

    return CreatingOn()


def on_device(fn: Callable, creating: bool = True) -> Callable:
    """``fn`` over CPU tensors, run on the XLA device: inputs moved there, outputs brought back (which runs the
    graph XLA traced lazily). With ``creating``, tensors it creates on the default device are made there too
    (not under dynamo, which traces the function itself)."""
    import contextlib

    def run(*inputs):
        xla = device()
        with _creating_on(xla) if creating else contextlib.nullcontext():
            outputs = fn(*_moved(list(inputs), xla))
        return _moved(outputs, "cpu")

    return run


def _compile_eager(backend: Backend, fn: Callable, example_inputs: list) -> Callable:
    backend.compiles += 1
    return observed_run(on_device(fn))


def _compile_openxla(backend: Backend, fn: Callable, example_inputs: list) -> Callable:
    # compiled at its first call, on XLA tensors: dynamo's failures there are CompileErrors (compile_program)
    return observed_run(on_device(dynamo.compile_program(backend, fn, example_inputs), creating=False))


def _build_eager(declaration: Declaration, opset, dynamic: bool) -> Backend:
    device()
    return Backend(declaration.name, _compile_eager, versioned(*declaration.packages), dynamic, package="torch-xla",
                   declaration=declaration)


def _build_openxla(declaration: Declaration, opset, dynamic: bool) -> Backend:
    from torch._dynamo.backends.registry import lookup_backend

    device()
    # the bridge traces one XLA graph per input shape: dynamic sizes are not what users give it
    return Backend(declaration.name, _compile_openxla, versioned(*declaration.packages), False,
                   inner=lookup_backend("openxla"), package="torch-xla", declaration=declaration)


# torch-xla pins its torch (2.9 for torch-xla 2.9.0), which constraints.txt's torch would refuse
INSTALL = "pip install 'opspec[xla]' (it brings torch 2.9; not with constraints.txt)"
LOWERING_MEANING = ("Lowered: PyTorch/XLA has an XLA lowering for the op (an XLA kernel, or a composite one whose "
                    "parts it lowers). Fallback: the op goes to its ATen CPU kernel through the boxed fallback, "
                    "as XLA's metrics report it (executed_fallback_ops).")

# the site's page for PyTorch/XLA developers: three committed files feed it, the XLA manifest (measured from
# PyTorch/XLA's own fallback counters; ops it lowers at their default arguments only get a table of their own), the
# zoo comparison (which models need each op) and the ``xla`` conformance report (each fallback case's repro)
SITE_PAGE = GapsPage(
    page="xla.md",
    title="For PyTorch/XLA developers",
    heading="Core ops PyTorch/XLA does not lower yet",
    intro="PyTorch/XLA runs these core ops on their ATen CPU kernel (its debugging tool prints them after "
          "\"Op(s) not lowered:\"), as its own counters (`torch_xla.debug.metrics.executed_fallback_ops()`) "
          "report on this machine: *{measured_with}*, {devices}. "
          "Ranked by how many of the {models} zoo models need them "
          "(`benchmarks/xla_coverage.py`: the model run on the XLA device, its fallback counters read). "
          "Each op links to its page, with the special cases a lowering must keep, and to the program that "
          "showed the fallback.",
    missing="No XLA manifest in this checkout (`python tools/measure_lowering.py --backend xla`, with the xla extra).",
    coverage=Path("benchmarks") / "results" / "xla_coverage.json",
    report=Path("conformance") / "results" / "xla-cpu.json",
    at_defaults="PyTorch/XLA lowers these when a call leaves the named arguments at their defaults, as exported "
                "models mostly do, and runs the ATen CPU kernel when a call sets one of them (each measured alone). "
                "`opspec coverage --backend xla` flags only the model calls that set one.",
    repros="Each is the program whose run PyTorch/XLA's counters showed falling back (the `xla` report's record); "
           "run it with `PJRT_DEVICE=CPU python` to print the verdict.",
)

DECLARATIONS = (
    Declaration("xla", _build_eager, stages=lambda backend: [], extra="xla", requires=("torch_xla",),
                packages=("torch-xla",), install=INSTALL, lowering_meaning=LOWERING_MEANING, site_page=SITE_PAGE),
    Declaration("openxla", _build_openxla, stages=dynamo.stages_with(), extra="xla",
                requires=("torch_xla",), packages=("torch-xla",), install=INSTALL,
                manifest=lowering.manifest_for("xla"), lowering_meaning=LOWERING_MEANING),
)
