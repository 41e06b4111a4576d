"""Purpose-built torch.compile backends for tests/test_conform*.py.

``faulty`` runs what it is handed itself (it says so through the evidence hook,
``executed_ops()``) and is right except on one op each: it segfaults on sin,
hangs on cos, returns a wrong dtype for neg, a wrong shape for abs, wrong values
for exp and raises while compiling floor.

``partitioning`` splits its graph with torch.fx's CapabilityBasedPartitioner,
taking only ``ceil`` and ``trunc``: every other op stays a top-level node and
runs in PyTorch, so a right answer there is a ``fallback``. ``fusing_in_place``
does the same in place and hands each partition to a runtime.

``decomposing`` lowers through AOT autograd with a wrong decomposition of
``exp`` (1 everywhere) in its front end, and names that front end to opspec
(``opspec_front_end``): its failure on exp belongs to the front end.

``eager_passthrough`` returns the graph it is handed: it executes nothing.

``poisoning`` fails on floor and every call in its process after that.
"""
from __future__ import annotations

import ctypes
import os
import signal
import tempfile
import time

import torch
from torch._dynamo.backends.common import aot_autograd
from torch._functorch.aot_autograd import make_boxed_func
from torch.fx.passes.infra.partitioner import CapabilityBasedPartitioner
from torch.fx.passes.operator_support import OperatorSupportBase
from torch.utils import _pytree


def _ops(gm: torch.fx.GraphModule) -> set[str]:
    return {str(getattr(n.target, "__name__", n.target)) for n in gm.graph.nodes if n.op == "call_function"}


def _value(node: torch.fx.Node):
    """What the node computes, as dynamo or AOT autograd recorded it (a fake tensor, a SymInt...)."""
    return node.meta.get("example_value", node.meta.get("val"))


def _qualified(gm: torch.fx.GraphModule) -> set[str]:
    return {n.target._schema.name + (f".{n.target._overloadname}" if n.target._overloadname != "default" else "")
            for n in gm.graph.nodes if n.op == "call_function" and hasattr(n.target, "_schema")}


class Executed:
    """A compiled program that says it ran every op it was handed (the evidence hook)."""

    def __init__(self, gm: torch.fx.GraphModule, fn=None):
        self.gm, self.fn, self.ops = gm, fn or gm.forward, _qualified(gm)

    def __call__(self, *inputs):
        return self.fn(*inputs)

    def executed_ops(self):
        return {"backend": sorted(self.ops), "pytorch": []}


def _mapped(gm, fn):
    def run(*inputs):
        return _pytree.tree_map_only(torch.Tensor, fn, gm(*inputs))

    return Executed(gm, run)


def faulty(gm: torch.fx.GraphModule, example_inputs):
    ops = _ops(gm)
    if "sin.default" in ops:
        os.kill(os.getpid(), signal.SIGSEGV)
        ctypes.string_at(0)  # in case the signal is ignored
    if "cos.default" in ops:
        time.sleep(3600)
    if "floor.default" in ops:
        raise RuntimeError("no lowering for aten::floor")
    if "neg.default" in ops:
        return _mapped(gm, lambda t: t.to(torch.float64))
    if "abs.default" in ops:
        return _mapped(gm, lambda t: t.unsqueeze(0))
    if "exp.default" in ops:
        return _mapped(gm, lambda t: t + 1)
    return Executed(gm)


class _Takes(OperatorSupportBase):
    def __init__(self, names: set[str]):
        self.names = names

    def is_node_supported(self, submodules, node: torch.fx.Node) -> bool:
        return node.op == "call_function" and getattr(node.target, "__name__", "") in self.names


def partitioning(gm: torch.fx.GraphModule, example_inputs):
    partitioner = CapabilityBasedPartitioner(gm, _Takes({"ceil.default", "trunc.default"}),
                                             allows_single_node_partition=True)
    return partitioner.partition_and_fuse()


class _Runtime(torch.nn.Module):
    """A partition handed to a runtime: no longer a GraphModule, so only what was handed over says what it ran."""

    def __init__(self, partition: torch.fx.GraphModule):
        super().__init__()
        self.run = [partition.forward]  # in a list: not a submodule opspec could look into

    def forward(self, *inputs):
        return self.run[0](*inputs)


def fusing_in_place(gm: torch.fx.GraphModule, example_inputs):
    """``partitioning``, fused in place (``fuse_partitions`` returns the module it was handed, mutated), each
    partition then wrapped in a runtime, as real partitioning compilers do."""
    partitioner = CapabilityBasedPartitioner(gm, _Takes({"ceil.default", "trunc.default"}),
                                             allows_single_node_partition=True)
    fused = partitioner.fuse_partitions(partitioner.propose_partitions())
    assert fused is gm
    for node in fused.graph.nodes:
        if node.op == "call_module":
            setattr(fused, node.target, _Runtime(fused.get_submodule(node.target)))
    fused.recompile()
    return fused


def opaque(gm: torch.fx.GraphModule, example_inputs):
    """Computes right and says nothing about who did: no hook, no graph handed back."""
    return lambda *inputs: gm.forward(*inputs)


def delegating(gm: torch.fx.GraphModule, example_inputs):
    """A runtime with a delegate that takes ceil only: everything else runs in the runtime around it."""
    ops = _qualified(gm)
    run = lambda *inputs: gm.forward(*inputs)  # noqa: E731
    run.executed_ops = lambda: {"target": sorted(ops & {"aten::ceil"}), "runtime": sorted(ops - {"aten::ceil"})}
    return run


def float_delegate(gm: torch.fx.GraphModule, example_inputs):
    """A delegate that takes floating-point ops only, leaving integer and bool ones to the runtime around it."""
    floating, other = set(), set()
    for node in gm.graph.nodes:
        if node.op == "call_function" and hasattr(node.target, "_schema"):
            value = _value(node)
            (floating if isinstance(value, torch.Tensor) and value.is_floating_point() else other).add(node)
    name = lambda n: n.target._schema.name + (f".{n.target._overloadname}" if n.target._overloadname != "default" else "")  # noqa: E731
    run = lambda *inputs: gm.forward(*inputs)  # noqa: E731
    run.executed_ops = lambda: {"target": sorted({name(n) for n in floating}), "runtime": sorted({name(n) for n in other})}
    return run


def telling_for_integers_only(gm: torch.fx.GraphModule, example_inputs):
    """Says what ran only where the graph holds an integer or bool op (all of it, in its target); a graph of
    floating-point ops alone runs with nothing said, as ``opaque``."""
    ops = _qualified(gm)
    integer = any(node.op == "call_function" and isinstance(_value(node), torch.Tensor)
                  and not _value(node).is_floating_point() for node in gm.graph.nodes)
    run = lambda *inputs: gm.forward(*inputs)  # noqa: E731
    if integer:
        run.executed_ops = lambda: {"target": sorted(ops), "runtime": []}
    return run


class _BoolSumWithAlphaAsAnd(torch.utils._python_dispatch.TorchDispatchMode):
    """``add.Tensor`` of bool tensors with an alpha computed as a logical and (eager: a logical or)."""

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if func is torch.ops.aten.add.Tensor and args[0].dtype == torch.bool and kwargs.get("alpha", 1) != 1:
            return torch.logical_and(args[0], args[1])
        return func(*args, **kwargs)


def wrong_with_symbolic_bool_sizes(gm: torch.fx.GraphModule, example_inputs):
    """Right with static sizes; with a bool input of symbolic size, adds bool tensors with an alpha wrongly (a
    kernel specialised for dynamic shapes, as Inductor's from torch 2.10 is)."""
    symbolic = any(isinstance(v, torch.Tensor) and v.dtype == torch.bool and any(isinstance(s, torch.SymInt) for s in v.shape)
                   for v in (n.meta.get("example_value") for n in gm.graph.nodes if n.op == "placeholder"))

    def run(*inputs):
        if not symbolic:
            return gm.forward(*inputs)
        with _BoolSumWithAlphaAsAnd():
            return gm.forward(*inputs)
    run.executed_ops = lambda: {"target": sorted(_qualified(gm)), "runtime": []}
    return run


def eager_passthrough(gm: torch.fx.GraphModule, example_inputs):
    return gm.forward


def _wrong_exp(x):  # a "decomposition" of exp that returns 1 everywhere
    return torch.ops.aten.add.Scalar(torch.ops.aten.mul.Scalar(x, 0.0), 1.0)


_WRONG = {torch.ops.aten.exp.default: _wrong_exp}


def _run_in_backend(gm, example_inputs):
    return make_boxed_func(Executed(gm))


decomposing = aot_autograd(fw_compiler=_run_in_backend, decompositions=_WRONG)
decomposing.opspec_front_end = aot_autograd(fw_compiler=lambda gm, _: make_boxed_func(gm.forward),
                                            decompositions=_WRONG)


def _segfault_on_sin(gm, example_inputs):
    if "sin.default" in _ops(gm):
        os.kill(os.getpid(), signal.SIGSEGV)
        ctypes.string_at(0)
    return Executed(gm)


def crashing_front_end(gm: torch.fx.GraphModule, example_inputs):
    """Crashes on sin, and names a front end that crashes on sin too: the crash is the front end's."""
    return _segfault_on_sin(gm, example_inputs)


crashing_front_end.opspec_front_end = _segfault_on_sin


def noisy(gm: torch.fx.GraphModule, example_inputs):
    """Right, and loud: what it logs and prints belongs in the run's log file, not on the terminal."""
    import logging
    import sys

    logging.getLogger("torch._dynamo").warning("noisy backend: guard chatter")
    print("noisy backend: native chatter", file=sys.stderr, flush=True)
    return Executed(gm)


def locking(gm: torch.fx.GraphModule, example_inputs):
    """Takes a multiprocessing lock on every compile, as tqdm does inside torch.fx's interpreter where tqdm is
    installed, and aborts on sin: a worker killed while it holds such a lock."""
    import multiprocessing

    locks.append(multiprocessing.RLock())
    if "sin.default" in _ops(gm):
        os.abort()
    return Executed(gm)


locks: list = []

ILLEGAL_ACCESS = "CUDA error: an illegal memory access was encountered"


def device_faulty(gm: torch.fx.GraphModule, example_inputs):
    """Like eager, except that compiling acos faults the (simulated) device: from then on every eager
    kernel in this process fails as a poisoned CUDA context does."""
    if "acos.default" in _ops(gm):
        from opspec.conform import cases

        def poisoned(*args, **kwargs):
            def program(*tensors):
                raise RuntimeError(ILLEGAL_ACCESS)
            return program

        cases.make_program = poisoned
        raise RuntimeError(ILLEGAL_ACCESS)
    return gm.forward


poisoned: list[str] = []  # the first failure of ``poisoning`` in this process, once it has failed


def poisoning(gm: torch.fx.GraphModule, example_inputs):
    """Right, except that running floor fails, and from then on every compile and call in the process fails with
    one error, as a real compiler's runtime did ("semaphore already signaled")."""
    if poisoned:
        raise RuntimeError("semaphore already signaled")
    ops = _ops(gm)

    def run(*inputs):
        if poisoned:
            raise RuntimeError("semaphore already signaled")
        if "floor.default" in ops:
            poisoned.append("floor")
            os.write(2, b"floor: no kernel for this rounding mode (diagnostic 7)\n")  # as native code prints
            raise RuntimeError("kernel launch failed. See diagnostics.\n  floor.cu:3: rounding mode not supported")
        return gm.forward(*inputs)

    run.executed_ops = lambda: {"target": sorted(_qualified(gm)), "runtime": []}
    return run


def int64_refusing(gm: torch.fx.GraphModule, example_inputs):
    """Right in every floating dtype; refuses to compile any graph with an int64 tensor."""
    if any(isinstance(_value(n), torch.Tensor) and _value(n).dtype == torch.int64 for n in gm.graph.nodes):
        raise RuntimeError("no int64 kernels")
    return Executed(gm)


def crashing_on_infinity(gm: torch.fx.GraphModule, example_inputs):
    """Right, except that a floating input holding an infinity kills the process (SIGFPE), as a compiled
    integer division by zero does."""
    def run(*inputs):
        if any(isinstance(t, torch.Tensor) and t.is_floating_point() and torch.isinf(t).any() for t in inputs):
            os.kill(os.getpid(), signal.SIGFPE)
        return gm.forward(*inputs)

    run.executed_ops = lambda: {"target": sorted(_qualified(gm)), "runtime": []}
    return run


def loud(gm: torch.fx.GraphModule, example_inputs):
    """Right, and prints a megabyte at every compile, as native code does (straight to the descriptor): one
    line many times over, then lines that never repeat."""
    os.write(2, b"warning: falling back to the slow path\n" * 8192)
    os.write(2, b"".join(os.urandom(48).hex().encode() + b"\n" for _ in range(7000)))
    return Executed(gm)


def hook_naming_nothing(gm: torch.fx.GraphModule, example_inputs):
    """Computes right and has an evidence hook, which names no op."""
    run = lambda *inputs: gm.forward(*inputs)  # noqa: E731
    run.executed_ops = lambda: {"target": [], "runtime": [], "pytorch": []}
    return run



# Where a test arms the stall: the workers' forkserver may have started before the test, with the environment
# of then, so the request goes through a file every process can see.
STALL_FOLDER = os.path.join(tempfile.gettempdir(), f"opspec-test-stall-{os.getuid()}")


def stalled_once(gm: torch.fx.GraphModule, example_inputs):
    """Right, but once armed (``STALL_FOLDER/armed``) its next compile of cos stalls for a minute, as a compile
    does when other workers' cases hold the cores; the stall disarms it (``armed`` becomes ``stalled``)."""
    armed, stalled = os.path.join(STALL_FOLDER, "armed"), os.path.join(STALL_FOLDER, "stalled")
    if "cos.default" in _ops(gm):
        try:
            os.rename(armed, stalled)  # atomic: one compile stalls
        except OSError:
            pass
        else:
            time.sleep(60)
    run = lambda *inputs: gm.forward(*inputs)  # noqa: E731
    run.executed_ops = lambda: {"target": sorted(_qualified(gm)), "runtime": []}
    return run


def _flush_subnormals(value):
    if not isinstance(value, torch.Tensor) or not value.is_floating_point():
        return value
    return torch.where(value.abs() < torch.finfo(value.dtype).tiny, value * 0, value)


def flushing(gm: torch.fx.GraphModule, example_inputs):
    """Right, but reads every subnormal input as zero and flushes every subnormal result, in every dtype (FTZ
    and DAZ, float16 included, as a backend computing float16 natively with its flush mode on would)."""
    def run(*inputs):
        out = gm.forward(*[_flush_subnormals(t) for t in inputs])
        return _pytree.tree_map(_flush_subnormals, out)
    return Executed(gm, run)
