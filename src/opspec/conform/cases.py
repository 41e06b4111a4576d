"""Cases and the programs a backend compiles for them.

A case is (op, dtype, device). Its examples are drawn by the shared strategy
layer; each is split into the tensors it takes (the compiled program's inputs)
and a skeleton holding everything else (constants baked into the program). Two
examples share a compiled program when their *compile keys* match: same
skeleton, same tensor ranks, dtypes, 0/1 sizes and view strides (what
dynamic shapes specialize). Examples are picked from at most ``max_compiles``
keys, so a backend with dynamic shapes compiles at most that many times per case.
"""
from __future__ import annotations

import fnmatch
import linecache
import re
import warnings
from dataclasses import dataclass
from typing import Any, Callable

import torch
from hypothesis.errors import HypothesisDeprecationWarning

from opspec.bridge import torch_ops
from opspec.conform import preconditions
from opspec.results.model import Case  # noqa: F401  (the conform layer's cases are the report's)
from opspec.spec.model import CoreOp, Opset, canonical_op_name
from opspec.testing import kernel_errors, strategies
from opspec.testing.strategies import Call
from opspec.testing.strategies import edges as edge_draws
from opspec.testing.strategies.call import python_literal
from opspec.testing.strategies.schema_args import arguments_of
from opspec.testing.slots import Slot, split_tensors  # noqa: F401 - where a program's skeleton puts each input

POOL_FACTOR = 4  # candidates drawn per wanted example, to find examples sharing a compile key

# Ops returning a SymInt/SymBool/number run in programs spelled the way models use them
# (x.size(0), x.item()), which the tracer lowers to these ops; the program feeds the value
# back into tensor arithmetic (x.sum() + x.size(0)), so it must flow through the graph.
SYMBOLIC: dict[str, Callable] = {
    "aten::_local_scalar_dense": lambda x: x.item(),
    "aten::sym_is_contiguous": lambda x, memory_format=torch.contiguous_format: x.is_contiguous(memory_format=memory_format),
    "aten::sym_numel": lambda x: x.numel(),
    "aten::sym_size.int": lambda x, dim: x.size(dim),
    "aten::sym_storage_offset": lambda x: x.storage_offset(),
    "aten::sym_stride.int": lambda x, dim: x.stride(dim),
}

# the calls whose result torch defines, by op (opspec.conform.preconditions), as other suites ask for them here
PRECONDITIONS = preconditions.PRECONDITIONS


def dtype_name(dtype: torch.dtype) -> str:
    return str(dtype).removeprefix("torch.")


def select_ops(opset: Opset, globs: list[str] | None) -> list[CoreOp]:
    """The opset's active ops matching any glob (with or without ``aten::``); ValueError naming a glob that matches none."""
    ops = list(opset.active_ops())
    if not globs:
        return ops
    chosen: set[str] = set()
    for glob in globs:
        hits = {op.name for op in ops if op_matches(op.name, glob) or op_matches(op.name, canonical_op_name(glob))}
        if not hits:
            raise ValueError(f"--ops {glob!r} matches no op of opset {opset.version}")
        chosen |= hits
    return [op for op in ops if op.name in chosen]


def op_matches(op: str, pattern: str) -> bool:
    return fnmatch.fnmatchcase(op, pattern) or fnmatch.fnmatchcase(op.removeprefix("aten::"), pattern)


def dtypes_for(op: CoreOp, requested: list[str] | None) -> list[str]:
    """The requested dtypes the op takes; an op that takes none of them runs in its first dtype,
    so no op drops out of a run unrecorded. ``None`` or ``["all"]``: every dtype its hints list."""
    supported = [dtype_name(d) for d in strategies.dtypes_under_test(op.name, op.testing)]
    if not requested or requested == ["all"]:
        return supported
    kept = [d for d in requested if d in supported]
    return kept or supported[:1]


def cases_for(ops: list[CoreOp], dtypes: list[str] | None, devices: list[str]) -> list[Case]:
    return [Case(op.name, dtype, device) for op in ops for device in devices for dtype in dtypes_for(op, dtypes)]


# ---- programs ----

def fill(skeleton: Any, tensors: tuple) -> Any:
    if isinstance(skeleton, Slot):
        return tensors[skeleton.index]
    if isinstance(skeleton, (list, tuple)):
        return type(skeleton)(fill(v, tensors) for v in skeleton)
    if isinstance(skeleton, dict):
        return {k: fill(v, tensors) for k, v in skeleton.items()}
    return skeleton


def written_arguments(op: str) -> tuple[str, ...]:
    return tuple(a.name for a in arguments_of(torch_ops.all_aten_schemas()[op])[1] if a.writes)


@dataclass
class Example:
    """One drawn call, split into the program's tensor inputs and its constant skeleton."""

    call: Call
    inputs: list[torch.Tensor]
    args: tuple
    kwargs: dict
    key: tuple
    written: tuple[int, ...] = ()  # input slots the op writes to (in-place and out= ops)

    @classmethod
    def of(cls, call: Call) -> "Example":
        args, kwargs, inputs = split_tensors(call.args, call.kwargs)
        names = [a.name for a in arguments_of(torch_ops.all_aten_schemas()[call.op])[1]]
        written = []
        for name in written_arguments(call.op):
            position = names.index(name)
            value = kwargs.get(name, args[position] if position < len(args) else None)
            if isinstance(value, Slot):
                written.append(value.index)
        key = (repr(args), repr(kwargs), tuple(_tensor_key(t) for t in inputs))
        return cls(call, inputs, args, kwargs, key, tuple(written))

    def fresh_inputs(self) -> list[torch.Tensor]:
        """Copies of the inputs, strides and storage offset kept, so in-place ops do not leak."""
        return list(Call(self.call.op, tuple(self.inputs)).copy().args)

    def program(self) -> Callable:
        """The function a backend compiles: the op over the tensor inputs, constants baked in."""
        return make_program(self.call.op, self.args, self.kwargs, self.written)


def _tensor_key(t: torch.Tensor) -> tuple:
    # dynamic shapes make sizes, strides and offsets symbolic except 0 and 1, and guard on a view's strides
    def small(n: int) -> int:
        return min(n, 2)

    layout = "contiguous" if t.is_contiguous() else tuple(t.stride())
    return (t.dtype, t.dim(), tuple(map(small, t.shape)), tuple(map(small, t.stride())), small(t.storage_offset()), layout)


def make_program(op: str, args: tuple, kwargs: dict, written: tuple[int, ...]) -> Callable:
    """The program as Python source run through ``exec``, every constant a literal.

    Literals, not values read from a closure: dynamo turns a float or int it reads from
    a closure into a graph input (a SymFloat, a SymInt), so the backend would see another
    program than a model spelling the constant, and than the repro. The source is the
    same text the repro carries.
    """
    source = program_source(op, args, kwargs, written)
    filename = f"<opspec program {op}>"
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    namespace = program_globals()
    exec(compile(source, filename, "exec"), namespace)  # noqa: S102 - source built from literals above
    return namespace["program"]


def program_globals() -> dict[str, Any]:
    return {"torch": torch, "nan": float("nan"), "inf": float("inf"), "SYMBOLIC": SYMBOLIC}


def program_source(op: str, args: tuple, kwargs: dict, written: tuple[int, ...]) -> str:
    """``def program(t0, t1, ...)``: the op on the tensor inputs, constants spelled as literals."""
    slots = sorted({s.index for s in _slots((args, kwargs))} | set(written))
    params = ", ".join(f"t{i}" for i in slots)
    arguments = [literal(a) for a in args] + [f"{k}={literal(v)}" for k, v in kwargs.items()]
    if op in SYMBOLIC:  # e.g. x.sum() + x.size(0): the symbolic value must flow through the graph
        expression = f"t0.sum() + SYMBOLIC[{op!r}]({', '.join(arguments)})"
    else:
        namespace, _, rest = op.partition("::")
        name, _, overload = rest.partition(".")
        expression = f"torch.ops.{namespace}.{name}.{overload or 'default'}({', '.join(arguments)})"
    if written:
        expression = f"({', '.join([expression, *(f't{i}' for i in written)])})"
    return f"def program({params}):\n    return {expression}\n"


def _slots(value: Any) -> list[Slot]:
    if isinstance(value, Slot):
        return [value]
    if isinstance(value, (list, tuple)):
        return [s for v in value for s in _slots(v)]
    if isinstance(value, dict):
        return [s for v in value.values() for s in _slots(v)]
    return []


def literal(value: Any, prefix: str = "t") -> str:
    """Source for a skeleton value: slots as ``t0, t1, ...``, everything else a literal."""
    if isinstance(value, Slot):
        return f"{prefix}{value.index}"
    if isinstance(value, (list, tuple)) and any(_slots(value)):
        inner = ", ".join(literal(v, prefix) for v in value)
        return f"[{inner}]" if isinstance(value, list) else f"({inner}{',' if len(value) == 1 else ''})"
    return python_literal(value)


def draw(op: CoreOp, dtype: str, device: str, *, max_examples: int, max_compiles: int, seed: int,
         edges: bool = True) -> list[Example]:
    """Examples the eager kernel accepts, from at most ``max_compiles`` compile keys.

    Up to ``max_examples`` random draws; with ``edges``, the op's branch settings take
    compile keys beyond the first (``edges.branch_variants``), and every key also runs
    its first example with the domain's edge values (``edges.value_variants``), which
    needs no compile of its own. Random draws come first, so a failure they show is
    reported on plain inputs where it can be.
    """
    strategy = strategies.calls(op.schema, op.testing, dtype, device)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", HypothesisDeprecationWarning)  # said once per process, noise in a run
        calls = strategies.draw_examples(strategy, max_examples * POOL_FACTOR, seed)
    pool = [Example.of(call) for call in calls]
    refusals: list[BaseException] = []
    valid = _accepted(op, pool, device, refusals)
    if not valid and pool:
        raise NoValidCall(_why_refused(refusals, dtype, device))
    order: dict[tuple, int] = {}
    counts: dict[tuple, int] = {}
    for example in valid:
        order.setdefault(example.key, len(order))
        counts[example.key] = counts.get(example.key, 0) + 1
    ranked = sorted(counts, key=lambda k: (-counts[k], order[k]))
    branches: list[Example] = []
    if edges and ranked:
        first = next(e for e in valid if e.key == ranked[0])
        for variant in _accepted(op, [Example.of(c) for c in edge_draws.branch_variants(first.call)], device):
            if len(branches) + 1 < max_compiles and variant.key != ranked[0] and \
                    all(variant.key != b.key for b in branches):
                branches.append(variant)
    keys = ranked[:max(0, max_compiles - len(branches))]
    groups = {key: [e for e in valid if e.key == key] for key in keys}
    chosen: list[Example] = []
    while len(chosen) < max_examples and any(groups.values()):
        for key in keys:  # round-robin, so a second key adds variety without starving the first
            if groups[key] and len(chosen) < max_examples:
                chosen.append(groups[key].pop(0))
    if not edges:
        return chosen
    hints = strategies.effective_hints(op.name, op.testing)
    firsts = [next(e for e in chosen if e.key == key) for key in keys if any(e.key == key for e in chosen)]
    extra = list(branches)
    for example in [*firsts, *branches]:
        variants = [Example.of(c) for c in edge_draws.value_variants(example.call, hints, strategies.dtype_of(dtype))]
        extra += [v for v in _accepted(op, variants, device) if v.key == example.key]
    return chosen + extra


def _accepted(op: CoreOp, examples: list[Example], device: str,
              refusals: list[BaseException] | None = None) -> list[Example]:
    refusals = [] if refusals is None else refusals
    return [example for example in examples if preconditions.defined(example.call)
            and (device == "cpu" or _cpu_accepts(example, refusals)) and _eager_accepts(example, refusals)]


# a CPU kernel that lacks the dtype says nothing about the call: the device's kernel may have it
CPU_LACKS = re.compile(r"not implemented for '|[Uu]nsupported dtype|scalar type|dtype|on the same device")


def _cpu_accepts(example: Example, refusals: list[BaseException]) -> bool:
    """Whether the CPU kernel takes a call drawn for another device, asked before the call goes there.

    A CUDA kernel checks what only the data can tell (an index in range, a probability in
    [0, 1]) with a device-side assert, which poisons the process: the case would end in a
    crash that says nothing of the backend, and so would every later case in that worker.
    The CPU kernel raises instead, so a call it refuses is refused here and never sent.
    """
    try:
        example.program()(*[t.cpu() for t in example.fresh_inputs()])
    except Exception as err:  # noqa: BLE001 - any refusal of the CPU kernel
        if CPU_LACKS.search(str(err)):
            return True
        refusals.append(err)
        return False
    return True


class NoValidCall(Exception):
    """The eager kernel refused every drawn call; the message says why, in the kernel's words."""


def _eager_accepts(example: Example, refusals: list[BaseException]) -> bool:
    try:
        example.program()(*example.fresh_inputs())
    except Exception as err:  # the kernel refuses these inputs: not a valid call
        kernel_errors.screen(err)  # unless the device itself failed: that is the case's crash
        refusals.append(err)
        return False
    return True


def _why_refused(refusals: list[BaseException], dtype: str, device: str) -> str:
    """The skip's reason: the device lacks a kernel for the dtype, or the kernel's most common refusal."""
    for err in refusals:
        missing = kernel_errors.missing_kernel(err, dtype)
        if missing:
            return f"the {device} kernel has no {dtype} implementation: {missing}"
    if not refusals:
        return "every drawn input broke a precondition the kernel does not check"
    lines = [f"{type(err).__name__}: {kernel_errors.first_line(err)}" for err in refusals]
    common = max(set(lines), key=lines.count)
    return f"the eager kernel rejected every drawn input ({len(refusals)}; most often {common})"
