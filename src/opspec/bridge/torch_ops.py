"""Everything opspec asks of the installed torch, in one place.

Imports torch lazily: loading and schema-checking the opset data never needs it.
"""
from __future__ import annotations

import contextlib
import functools
import os
import sys
import warnings
from collections import Counter
from typing import Callable


def torch_module():
    import torch

    return torch


@contextlib.contextmanager
def quiet():
    """Keep torch's warnings about drawn inputs ("degrees of freedom is <= 0") out of a report:
    Python warnings, and the C++ ones some builds print straight to file descriptor 2."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sys.stderr.flush()
        saved, sink = os.dup(2), os.open(os.devnull, os.O_WRONLY)
        os.dup2(sink, 2)
        try:
            yield
        finally:
            os.dup2(saved, 2)
            os.close(saved)
            os.close(sink)


@contextlib.contextmanager
def single_threaded():
    """Kernels run on one intra-op thread while the block runs: for many calls on small tensors (special-case rows,
    formula checks) threads only add contention: on a busy 2-core machine two threads waiting on each other made the
    rows' check take about 3 s instead of 0.45 s. Their verdicts are the same on 1, 2, 4 and 16 threads."""
    torch = torch_module()
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(threads)


def version() -> str:
    """The installed torch's release, without a local build tag: ``2.13.0`` for ``2.13.0+cpu``."""
    return torch_module().__version__.split("+")[0]


def split_name(qualified: str) -> tuple[str, str, str]:
    """``aten::add.Tensor`` -> ("aten", "add", "Tensor"); the default overload is ""."""
    namespace, sep, rest = qualified.partition("::")
    if not sep or not namespace or not rest:
        raise ValueError(f"not a qualified operator name: {qualified!r}")
    base, _, overload = rest.partition(".")
    return namespace, base, overload


def qualified_name(schema) -> str:
    """The opset's spelling of an overload: ``aten::name`` plus ``.overload`` when it has one."""
    return schema.name + (f".{schema.overload_name}" if schema.overload_name else "")


@functools.lru_cache(maxsize=None)
def all_aten_schemas() -> dict[str, str]:
    """Every registered aten overload -> its schema string exactly as torch prints it.

    Walks the full registry; ``torch.ops.aten`` only knows the packets loaded so far.
    """
    torch = torch_module()
    return {
        qualified_name(s): str(s)
        for s in torch._C._jit_get_all_schemas()
        if s.name.startswith("aten::")
    }


def schema_of(qualified: str) -> str:
    """The schema string of any registered overload: aten ones from the full registry,
    other namespaces (backend or custom ops, defined with ``torch.library``) from ``torch.ops``."""
    known = all_aten_schemas().get(qualified)
    return known if known is not None else str(resolve(qualified)._schema)


def overload_packet(qualified: str):
    torch = torch_module()
    namespace, base, overload = split_name(qualified)
    packet = getattr(getattr(torch.ops, namespace), base)
    return getattr(packet, overload or "default")


def resolve(qualified: str):
    """The ``torch.ops`` OpOverload for a qualified name; LookupError when torch has none."""
    try:
        return _aten_overload(qualified) if qualified.startswith("aten::") else overload_packet(qualified)
    except (AttributeError, RuntimeError, ValueError) as err:
        raise LookupError(f"torch {torch_module().__version__} has no operator {qualified}") from err


@functools.lru_cache(maxsize=None)  # aten's operators live as long as the process (a library's may be destroyed)
def _aten_overload(qualified: str):
    return overload_packet(qualified)


@functools.lru_cache(maxsize=None)
def core_tagged() -> dict[str, str]:
    """The overloads torch tags ``core``, with their schema strings."""
    torch = torch_module()
    found = {}
    for name, schema in all_aten_schemas().items():
        try:
            op = overload_packet(name)
        except (AttributeError, RuntimeError):
            continue
        if torch.Tag.core in op.tags:
            found[name] = schema
    return dict(sorted(found.items()))


@functools.lru_cache(maxsize=None)
def pointwise_tagged(names: tuple[str, ...]) -> frozenset[str]:
    """Those of ``names`` (qualified overloads) that torch tags ``pointwise``: each output element a function of
    the input elements at the same place (after broadcasting)."""
    torch = torch_module()
    found = set()
    for name in names:
        try:
            if torch.Tag.pointwise in overload_packet(name).tags:
                found.add(name)
        except (AttributeError, RuntimeError, ValueError):
            continue
    return frozenset(found)


def op_name(op) -> str:
    """Qualified name of an OpOverload (``aten::add.Tensor``)."""
    return qualified_name(op._schema)


@functools.lru_cache(maxsize=None)
def core_decomposition_table() -> dict[str, Callable]:
    """torch's default core ATen decomposition table, keyed by qualified name."""
    from torch._decomp import core_aten_decompositions

    return {op_name(op): fn for op, fn in core_aten_decompositions().items() if hasattr(op, "_schema")}


@functools.lru_cache(maxsize=None)
def registered_decompositions() -> dict[str, Callable]:
    """Every decomposition torch registers (a superset of the core table)."""
    from torch._decomp import decomposition_table

    return {op_name(op): fn for op, fn in decomposition_table.items() if hasattr(op, "_schema")}


def is_functional(schema_str: str) -> bool:
    """False for in-place (``op_``) and ``out=`` overloads: anything that writes to an argument."""
    torch = torch_module()
    schema = torch._C.parse_schema(schema_str)
    return not any(arg.alias_info is not None and arg.alias_info.is_write for arg in schema.arguments)


def trace_ops(fn: Callable, args: tuple, kwargs: dict, table: dict, *, fake: bool = False) -> dict[str, int]:
    """Run ``fn`` under make_fx with a decomposition table; count the ops it produced.

    ``fake=True`` traces on fake tensors: no kernel runs, so inputs a kernel would
    not survive (unchecked preconditions) raise instead of crashing the process.
    """
    from torch.fx.experimental.proxy_tensor import make_fx

    mode = "fake" if fake else "real"
    with contextlib.nullcontext() if fake else _one_fake_mode():
        graph = make_fx(lambda *a: fn(*a, **kwargs), decomposition_table=table, tracing_mode=mode)(*args).graph
    return dict(graph_ops(graph))


@contextlib.contextmanager
def _one_fake_mode():
    """One fake mode for a whole real-mode trace. make_fx records each traced value's metadata through the ambient
    fake mode and, finding none, makes a new one per value, each walking the Python stack (40% of a trace under a
    test runner). The metadata goes to the nodes' ``meta`` only; which ops the graph calls is the same."""
    from torch._guards import TracingContext, tracing
    from torch._subclasses.fake_tensor import FakeTensorMode

    if TracingContext.try_get() is not None:  # inside someone's compile: theirs stays in charge
        yield
        return
    with tracing(TracingContext(FakeTensorMode(allow_fallback_kernels=True))):
        yield


def graph_ops(graph) -> Counter:
    """The torch operators an FX graph calls, by qualified name, with how often each is called."""
    return Counter(op_name(node.target) for node in graph.nodes
                   if node.op == "call_function" and hasattr(node.target, "_schema"))
