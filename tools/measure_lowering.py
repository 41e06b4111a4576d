"""Measure which core ops a backend lowers and write its manifest (conformance/backends/NAME.yaml).

Maintainer script: run it with the torch the opset version is validated against.
Nothing is written by hand; each backend has one measuring rule:

- eager, aot_eager: an op is lowered when the dispatcher holds a kernel for it on
  CPU (a CPU kernel or a composite one). aot_eager traces with AOT autograd and
  runs the traced ATen graph with those same eager kernels, so the rule is shared.
- inductor: an op is lowered when ``torch._inductor.lowering.lowerings`` holds a
  lowering for its OpOverload that is not a fallback handler, or when Inductor
  (its decomposition table, or AOT autograd for CompositeImplicitAutograd ops)
  rewrites it before lowering. It falls back when its lowering is a
  ``make_fallback`` handler, or when nothing handles it (Inductor then creates an
  implicit fallback at compile time). Lowerings that still fall back for some
  inputs (the op is in ``lowering.fallbacks``) carry a note.
- onnxruntime: an op is lowered when the ONNX exporter's registry (torchlib, as
  ``torch.onnx.export(dynamo=True)`` builds it) holds an ONNX translation for its
  OpOverload (torchlib registers a default overload under the packet's name), or
  when the exporter decomposes it first (with torch's decomposition table) into
  ops it translates: either way ONNX Runtime runs it, and nothing can fall back
  to PyTorch. Assertions the exporter erases before translating (its
  ``remove_assertion_nodes`` pass, run on a one-node graph) are lowered with a
  note: the model runs, the check is not made. An op is listed under
  unsupported when none of this applies: the export fails when it reaches the
  graph, and nothing runs it instead. Needs the onnx extra.

Then the committed conformance reports decide every op they ran, per device and
dtype, from the execution evidence conform recorded
(``opspec.conform.lowering_evidence``; ``tools/lowering_from_reports.py`` applies
the same step alone, without torch), so the manifest cannot disagree with them.
A backend whose declaration names library kernels (Inductor: its ``extern_kernels``
namespace) gets them in its manifest (``library_kernels``): a case where only those ran
outside the generated code is a library call, not a fallback.

Beyond the core ops, each manifest also covers the ops real models carry that
the opset does not make core: the opset's bookkeeping ops (assertions, range
constraints) and the non-core ops left in the graphs of the model zoo
(``benchmarks/model_zoo.json``, from ``benchmarks/model_zoo.py``), measured by
the same rules, so ``opspec coverage`` says "not lowered" only when it is true.

Per device (``--devices cpu``, the default; ``cuda`` where a GPU is present):
Inductor lowerings that can still hand an op back to ATen depending on the
device (a lowering whose source calls a fallback, or an op in
``lowering.fallbacks``) are compiled on a drawn example, and where the generated
code calls ``torch.ops.aten.<op>`` itself the entry records ``fallback_on`` that
device with the reason (on CPU, ``cumsum``: the C++ backend has no scan).

- xla: PyTorch/XLA's own counters decide. Each op is drawn (as conform draws it),
  run on the XLA device (``PJRT_DEVICE=CPU`` unless set) and read back, with
  ``torch_xla.debug.metrics`` cleared before each run. Each drawn input runs twice:
  as drawn, and with its constant arguments at their schema defaults (what
  exported models mostly pass: ``linear`` is ``addmm`` with ``beta`` and ``alpha``
  at 1, while drawn calls set them). An op that ``executed_fallback_ops()`` names
  at the defaults for every drawn input is listed under fallback (PyTorch/XLA ran
  its ATen CPU kernel: its debugging tool prints it as "Op(s) not lowered:
  aten::..."); one it names for some inputs only is lowered with a note saying for
  how many; the others are lowered. An op lowered at its defaults that falls back
  as drawn is lowered with ``fallback_args``: the arguments that, each set alone on
  the defaults call, make it fall back (all the set ones when none does alone), so
  ``opspec coverage`` flags only the model calls that set one. Where a committed
  ``xla`` report saw an op fall back, its special-case rows run too (curated
  inputs: a boolean mask where draws hold integer indices), and the input dtypes
  that every call falling back holds and no other call does join
  ``fallback_args`` as ``NAME:DTYPE`` (``index.Tensor``: ``indices:bool``, which
  goes through ``aten::nonzero``). The manifest says ``runs_model_code``: eager
  PyTorch/XLA runs the model's own Python code, so ``coverage`` counts the tensor
  values that code reads (``_local_scalar_dense``). An op that cannot be
  drawn or run keeps what the dispatcher says: a kernel for the XLA key (or a
  CompositeImplicitAutograd one) is lowered, with a note that it was not run; no
  kernel at all means the boxed fallback. ``openxla`` uses the same manifest. Needs
  the xla extra (torch 2.9).

``export`` has no manifest. Its program is the exported graph after
``run_decompositions`` with the opset's table, run by ``ExportedProgram.module()``,
so every op ends as aten calls to the eager kernels: nothing is lowered into other
code and nothing is handed back. Splitting the ops by whether that table decomposes
them would restate the decomposition table, not say what the backend does.

    python tools/measure_lowering.py                 # rewrite every manifest
    python tools/measure_lowering.py --check         # exit 1 if a manifest is out of date
    python tools/measure_lowering.py --backend eager --opset 2026.11
"""
from __future__ import annotations

import argparse
import functools
import importlib.metadata
import json
import logging
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from opspec.bridge import inductor_code, torch_ops
from opspec.conform import lowering_evidence
from opspec.conform.backends import registry
from opspec.results.model import Report
from opspec.spec import atomic, load, manifests, resources, yamlio

HEADER = "# yaml-language-server: $schema=../../opset/schema/backend_manifest.schema.json\n"
EAGER_KEYS = ("CPU", "CompositeExplicitAutograd", "CompositeExplicitAutogradNonFunctional", "CompositeImplicitAutograd")
Verdict = tuple  # ("lowered" | "fallback", note or reason[, the entry's other fields])


def core_ops(version: str) -> list[str]:
    """The version's active core ops, read from core_ops.yaml alone (no decomposition rules needed)."""
    loaded = load.read(resources.opset_root() / version / "core_ops.yaml", "core_ops.schema.json")
    if loaded.findings:
        raise load.OpsetError(loaded.findings)
    return sorted(entry["name"] for entry in loaded.data["ops"] if entry["status"] != "removed")


def measure_eager(op) -> Verdict:
    torch = torch_ops.torch_module()
    name = op.name()
    if any(torch._C._dispatch_has_kernel_for_dispatch_key(name, key) for key in EAGER_KEYS):
        return "lowered", ""
    return "fallback", "the dispatcher has no CPU or composite kernel for it"


def measure_inductor(op) -> Verdict:
    torch = torch_ops.torch_module()
    from torch._inductor import lowering
    from torch._inductor.decomposition import select_decomp_table

    handler = lowering.lowerings.get(op)
    if handler is not None and getattr(handler, "_is_fallback_handler", False):
        return "fallback", "Inductor registers a fallback kernel (make_fallback): the ATen kernel runs"
    if handler is not None:
        note = "lowered, but falls back to the ATen kernel for some inputs or configurations" if op in lowering.fallbacks else ""
        return "lowered", note
    if op in select_decomp_table():
        return "lowered", "Inductor decomposes it into ops it lowers"
    if torch._C._dispatch_has_kernel_for_dispatch_key(op.name(), "CompositeImplicitAutograd"):
        return "lowered", "CompositeImplicitAutograd: AOT autograd decomposes it into ops Inductor lowers"
    return "fallback", "no lowering or decomposition: Inductor creates an implicit fallback to the ATen kernel"


@functools.lru_cache(maxsize=None)
def onnx_registry():
    """The exporter's registry as ``torch.onnx.export(dynamo=True)`` builds it by default."""
    from torch.onnx._internal.exporter import _registration

    quiet = logging.getLogger(_registration.__name__)
    level = quiet.level
    quiet.setLevel(logging.ERROR)  # it warns about every torchvision op when torchvision is absent
    try:
        return _registration.ONNXRegistry.from_torchlib()
    finally:
        quiet.setLevel(level)


@functools.lru_cache(maxsize=None)
def onnx_decompositions() -> frozenset:
    """Ops the exporter may decompose before translating: the tables it draws its decompositions from."""
    torch = torch_ops.torch_module()
    import torch._decomp

    return frozenset(torch.export.default_decompositions().keys()) | frozenset(torch._decomp.decomposition_table)


def onnx_removes(op) -> bool:
    """Whether the exporter's assertion-removal pass erases the op before translating (run on a one-node graph)."""
    import torch
    from torch.onnx._internal.exporter import _fx_passes

    graph = torch.fx.Graph()
    x = graph.placeholder("x")
    graph.call_function(op, (x,))
    graph.output(x)
    module = _fx_passes.remove_assertion_nodes(torch.fx.GraphModule(torch.nn.Module(), graph))
    return not any(node.op == "call_function" for node in module.graph.nodes)


def measure_onnxruntime(op) -> Verdict:
    if onnx_removes(op):
        return "lowered", "the exporter removes it before translating: ONNX Runtime runs the graph without it (no check)"
    translations = onnx_registry().get_decomps(op)
    if translations and all(t.is_complex for t in translations):
        return "lowered", "torchlib translates it for complex-valued inputs only"
    if translations:
        return "lowered", ""
    if op in onnx_decompositions():
        return "lowered", "the exporter decomposes it into aten ops torchlib translates"
    return "unsupported", "no ONNX translation in torchlib and no decomposition: the export fails when it reaches the graph"


def _drawn_op(name: str, version: str):
    """The op as conform draws it: the opset's entry with its hints, or, beyond the core set, its schema alone."""
    from opspec.spec.model import CoreOp

    return load.load_opset(version).ops_by_name.get(name) or CoreOp(name, torch_ops.all_aten_schemas()[name], "", "active",
                                                                    "", "")


@dataclass
class XlaRuns:
    """What PyTorch/XLA's counters showed for one op's drawn inputs, each run as drawn and at its defaults."""
    runs: int = 0  # drawn inputs that ran
    fell_back: int = 0  # ... whose call at the default arguments fell back (as drawn where XLA refused the defaults)
    only_at_defaults: int = 0  # ... of those, the ones that showed no fallback as drawn
    named: set = field(default_factory=set)  # the fallback ops the counters named
    args: dict = field(default_factory=dict)  # argument -> a drawn value with which the op fell back, lowered at defaults
    dtypes: set = field(default_factory=set)  # NAME:DTYPE held by every call that fell back and by none that did not


def xla_fallbacks(name: str, version: str, rows: bool = False) -> XlaRuns:
    """Each drawn input of ``name`` run on the XLA device as drawn and with its constant arguments at their schema
    defaults (what exported models mostly pass). Where only the drawn settings fall back, each set argument alone on
    the defaults call names the ones that do (all of them when none does alone). With ``rows``, the op's special-case
    rows run too, to find the input dtypes that fall back (``_separating_dtypes``)."""
    from opspec.conform import cases
    from opspec.conform.backends import xla
    from opspec.testing import strategies
    from opspec.testing.strategies.defaults import at_defaults, set_arguments, with_settings

    op = _drawn_op(name, version)
    dtype = cases.dtype_name(strategies.dtypes_under_test(name, op.testing)[0])
    examples = cases.draw(op, dtype, "cpu", max_examples=4, max_compiles=4, seed=0, edges=False)
    metrics = xla._metrics()
    packet = name.split(".")[0]

    def fallbacks(call, own: bool = True) -> set[str]:
        """The op's fallback ops (by packet; every one the counters name with ``own`` false) for one run of ``call``;
        raises what the run raises."""
        example = cases.Example.of(call)
        metrics.clear_all()
        xla.on_device(example.program())(*example.fresh_inputs())
        return {f for f in xla.executed(metrics.counter_names(), metrics.executed_fallback_ops())[1]
                if not own or f.split(".")[0] == packet}

    def tried(call) -> set[str] | None:  # None: XLA refused the call
        try:
            return fallbacks(call)
        except Exception:  # noqa: BLE001 - a setting XLA refuses says nothing of where the others run
            return None

    found, failure = XlaRuns(), None
    for example in examples:
        try:
            drawn = fallbacks(example.call)
        except Exception as err:  # noqa: BLE001 - an input XLA refuses says nothing of where the others run
            failure = failure or err
            continue
        settings = set_arguments(torch_ops.all_aten_schemas()[name], example.call.args, example.call.kwargs)
        defaults = at_defaults(example.call)
        at_default = tried(defaults) if settings else drawn
        at_default = drawn if at_default is None else at_default
        found.runs += 1
        found.fell_back += bool(at_default)
        found.only_at_defaults += bool(at_default) and not drawn
        found.named |= drawn | at_default
        if drawn and not at_default:  # lowered at the defaults: which set argument makes it fall back
            alone = {arg: value for arg, value in settings.items() if tried(with_settings(defaults, {arg: value}))}
            for arg, value in (alone or settings).items():
                found.args.setdefault(arg, value)
    if not found.runs and failure is not None:
        raise failure
    if rows and found.fell_back < found.runs:
        found.dtypes, named = _separating_dtypes(op, [e.call for e in examples], fallbacks)
        found.named |= named
    return found


def _separating_dtypes(op, drawn: list, fallbacks: Callable) -> tuple[set[str], set[str]]:
    """The input dtypes (``indices:bool``) that every call falling back holds and no other call does, over the drawn
    calls at their defaults and the op's special-case rows (curated inputs: a boolean mask where draws hold integer
    indices). A call falls back here when the counters name any op (``index`` sends a mask through ``nonzero``)."""
    from opspec.conform import special_rows
    from opspec.testing.strategies.defaults import at_defaults, dtype_tokens

    rows = [run.example.call for run in special_rows.rows_for(op, special_rows.anchor_dtype(op), "cpu")]
    schema = torch_ops.all_aten_schemas()[op.name]
    fell, held, named = [], [], set()
    for call in [at_defaults(c) for c in drawn] + rows:
        try:
            seen = fallbacks(call, own=False)
        except Exception:  # noqa: BLE001 - a call XLA refuses says nothing of where the others run
            continue
        (fell if seen else held).append(dtype_tokens(schema, call.args, call.kwargs))
        named |= seen
    separating = set.intersection(*fell) - set.union(*held) if fell and held else set()
    return separating, named if separating else set()


def contested(backend: str, version: str) -> set[str]:
    """The ops a committed report of ``backend`` saw fall back (some input did): where the drawn inputs may not show
    why. Only these run their special-case rows here: some rows kill the process on torch 2.9 (SIGFPE), as
    conform's isolated workers record."""
    found = set()
    for path in lowering_evidence.reports_for(backend, version, RESULTS):
        found |= {op for op, by_device in lowering_evidence.verdicts(Report.load(path)).items()
                  if any(v.status == "fallback" for v in by_device.values())}
    return found


def measure_xla_with(version: str) -> Callable:
    torch = torch_ops.torch_module()
    from opspec.testing.strategies.call import python_literal

    seen_falling_back = contested("xla", version)

    def measure(op) -> Verdict:
        name = torch_ops.op_name(op)
        try:
            found = xla_fallbacks(name, version, rows=name in seen_falling_back)
        except Exception as err:  # noqa: BLE001 - an op that cannot be run keeps the dispatcher's word
            found, why = XlaRuns(), f"{type(err).__name__}: {str(err).splitlines()[0][:100] if str(err) else ''}"
        runs, fell_back, named = found.runs, found.fell_back, ", ".join(sorted(found.named))
        if runs and fell_back == runs:
            where = (f"at its default arguments; {found.only_at_defaults} showed no fallback as drawn"
                     if found.only_at_defaults else "")
            return "fallback", (f"PyTorch/XLA runs its ATen CPU kernel (every drawn input{' ' if where else ''}{where}; "
                                f"executed_fallback_ops: {named})")
        some = f"for {fell_back} of {runs} drawn inputs" if fell_back else ""
        if found.args or found.dtypes:
            settings = [f"sets {arg} (measured: {python_literal(value)})" for arg, value in sorted(found.args.items())]
            settings += [f"passes {token.split(':')[0]} as a {token.split(':')[1]} tensor" for token in sorted(found.dtypes)]
            also = f"; also at the defaults {some}" if some else ""
            at = "at its default arguments" if found.args else "for the other input dtypes"
            return "lowered", (f"lowered {at}; PyTorch/XLA runs the ATen CPU kernel when a call {' or '.join(settings)}"
                               f"{also} (executed_fallback_ops: {named})"), \
                {"fallback_args": sorted(found.args) + sorted(found.dtypes)}
        if some:
            return "lowered", f"lowered, but PyTorch/XLA runs the ATen CPU kernel {some} (executed_fallback_ops: {named})"
        if runs:
            return "lowered", ""
        if torch._C._dispatch_has_kernel_for_dispatch_key(op.name(), "XLA"):
            return "lowered", f"PyTorch/XLA registers an XLA kernel; not run here ({why})"
        if torch._C._dispatch_has_kernel_for_dispatch_key(op.name(), "CompositeImplicitAutograd"):
            return "lowered", f"CompositeImplicitAutograd: decomposed into ops XLA lowers; not run here ({why})"
        return "fallback", f"no XLA kernel: the boxed ATen fallback runs it; not run here ({why})"

    return measure


# ---- per device: lowerings whose generated code still calls the ATen kernel ----

def may_fall_back(op) -> bool:
    """A lowering that can hand the op back to ATen depending on inputs or device: worth compiling to see."""
    import inspect
    import re

    from torch._inductor import lowering

    if op in lowering.fallbacks:
        return True
    handler = lowering.lowerings.get(op)
    if handler is None or getattr(handler, "_is_fallback_handler", False):
        return False
    try:
        source = inspect.getsource(inspect.unwrap(handler))
    except (OSError, TypeError):
        return False
    # a call to one of lowering.py's fallback_<op> handlers (not the pointwise triton_fallback hook)
    return re.search(r"(?<![\w.])fallback_\w+\(", source) is not None


def inductor_device_fallback(name: str, device: str, version: str) -> str | None:
    """The reason the code Inductor generates on ``device`` calls the op's ATen kernel; None when it does not."""
    import re

    import torch

    from opspec.conform import cases
    from opspec.spec.model import CoreOp
    from opspec.testing import strategies

    # core ops are drawn with the opset's hints; others from their schema alone
    op = load.load_opset(version).ops_by_name.get(name) or CoreOp(name, torch_ops.all_aten_schemas()[name], "", "active", "", "")
    dtype = cases.dtype_name(strategies.dtypes_under_test(name, op.testing)[0])
    examples = cases.draw(op, dtype, device, max_examples=4, max_compiles=4, seed=0)
    if not examples:
        return None
    # the largest drawn input: 0-dim and single-element ones take shortcuts no real model's tensors take
    example = max(examples, key=lambda e: sum(t.numel() for t in e.inputs))
    torch._dynamo.reset()
    compiled = torch.compile(example.program(), backend="inductor", dynamic=False)
    sources = inductor_code.wrapper_code(compiled, *example.fresh_inputs())
    short, _, overload = name.removeprefix("aten::").partition(".")
    # the wrapper calls it as aten.X.overload(...) (aten = torch.ops.aten) or in full
    call = re.compile(rf"\b(?:torch\.ops\.)?aten\.{re.escape(short)}\.{overload or 'default'}\(")
    if any(call.search(code) for code in sources):
        return f"Inductor's generated {device} code calls torch.ops.aten.{short}.{overload or 'default'} (the ATen kernel)"
    return None


def inductor_device_fallbacks(names: list[str], devices: tuple[str, ...], version: str) -> dict[str, dict[str, str]]:
    """Ops Inductor lowers that still call the ATen kernel on one of ``devices``, with the reason per device."""
    found: dict[str, dict[str, str]] = {}
    for name in names:
        if not may_fall_back(torch_ops.resolve(name)):
            continue
        for device in devices:
            try:
                reason = inductor_device_fallback(name, device, version)
            except Exception as err:  # noqa: BLE001 - an op that cannot be probed keeps its static verdict
                print(f"  {name} on {device}: not probed ({type(err).__name__}: {str(err)[:120]})", file=sys.stderr)
                continue
            if reason:
                found.setdefault(name, {})[device] = reason
    return found


# ---- ops beyond the core set that real models carry ----

ZOO_RESULTS = Path(__file__).resolve().parents[1] / "benchmarks" / "model_zoo.json"
RESULTS = Path(__file__).resolve().parents[1] / "conformance" / "results"


def beyond_opset(version: str) -> list[str]:
    """The version's bookkeeping ops and the non-core ops of the model zoo's graphs."""
    names = set()
    bookkeeping = load.read_bookkeeping(resources.opset_root(), version)
    if bookkeeping is not None and not bookkeeping.findings:
        names |= {entry["name"] for entry in bookkeeping.data["ops"]}
    if ZOO_RESULTS.is_file():
        for model in json.loads(ZOO_RESULTS.read_text(encoding="utf-8"))["models"]:
            names |= set(model["outside_opset"]) | set(model["bookkeeping"])
    live = torch_ops.all_aten_schemas()
    return sorted(name for name in names - set(core_ops(version)) if name in live)


@dataclass(frozen=True)
class Rule:
    measure: Callable
    description: str
    packages: tuple[str, ...] = ("torch",)  # whose versions the measurement depends on
    per_version: bool = False  # measure(version) gives the measuring function (it draws inputs from the opset)
    # fields of the manifest's head beyond the common ones, from the devices asked for (--devices)
    head: Callable[[tuple[str, ...]], dict] = lambda devices: {}
    # ops lowered in general that fall back on some device: on_device(names, devices, version) -> op -> device -> why
    on_device: Callable[[list[str], tuple[str, ...], str], dict[str, dict[str, str]]] | None = None
    in_all: bool = True  # measured by --backend all (False: it needs an environment of its own)


BACKENDS: dict[str, Rule] = {
    "eager": Rule(measure_eager, "Eager PyTorch: every op runs its ATen kernel (CPU dispatch key or a composite kernel)."),
    "aot_eager": Rule(
        measure_eager,
        "torch.compile(backend='aot_eager'): AOT autograd traces to ATen and runs each op with its eager kernel.",
    ),
    "inductor": Rule(
        measure_inductor,
        "torch.compile(backend='inductor'): ops with a code-generating lowering (or rewritten by Inductor "
        "before lowering) versus ops handed back to the ATen kernel.",
        head=lambda devices: {"devices": list(devices)},
        on_device=inductor_device_fallbacks,
    ),
    "onnxruntime": Rule(
        measure_onnxruntime,
        "torch.onnx.export(dynamo=True) run by ONNX Runtime: ops the exporter translates to ONNX directly (torchlib) "
        "versus ops it first decomposes into other aten ops, or cannot export.",
        ("torch", "onnxscript"),
    ),
    "xla": Rule(
        measure_xla_with,
        "PyTorch/XLA on the XLA device (PJRT_DEVICE=CPU): ops it lowers to XLA versus ops its counters report as run "
        "on the ATen CPU kernel (torch_xla.debug.metrics.executed_fallback_ops).",
        ("torch", "torch-xla"),
        per_version=True,
        # eager lazy tensors: the model's Python runs on the device
        head=lambda devices: {"devices": [xla_device()], "runs_model_code": True},
        in_all=False,
    ),
}


def xla_device() -> str:
    """The device PyTorch/XLA ran on, as opspec names devices (cpu, cuda, tpu)."""
    import os

    return os.environ.get("PJRT_DEVICE", "CPU").lower().replace("gpu", "cuda")


def measured_with(packages: tuple[str, ...]) -> str:
    """Versions without local build tags (2.13.0+cpu measures like 2.13.0)."""
    versions = [f"{name} {importlib.metadata.version(name).split('+')[0]}" for name in packages]
    return ", ".join([*versions, "tools/measure_lowering.py"])


def measure(backend: str, version: str, devices: tuple[str, ...] = ("cpu",)) -> dict:
    rule = BACKENDS[backend]
    names = sorted(set(core_ops(version)) | set(beyond_opset(version)))
    measuring = rule.measure(version) if rule.per_version else rule.measure
    verdicts = {name: measuring(torch_ops.resolve(name)) for name in names}
    on_device = rule.on_device([n for n in names if verdicts[n][0] == "lowered"], devices, version) \
        if rule.on_device is not None else {}
    lowered, fallback, unsupported = [], [], []
    for name in names:
        verdict, text, *fields = verdicts[name]
        if verdict == "lowered":
            entry = {"op": name, **({"note": text} if text else {}), **(fields[0] if fields else {}),
                     **({"fallback_on": on_device[name]} if name in on_device else {})}
            lowered.append(entry if len(entry) > 1 else name)
        else:
            (fallback if verdict == "fallback" else unsupported).append({"op": name, "reason": text})
    data = {
        "opset": version,
        "backend": backend,
        "measured_with": measured_with(rule.packages),
        "description": rule.description,
        **rule.head(devices),
    }
    declaration = registry.BUILT_IN.get(backend)
    if declaration is not None and declaration.library_kernels is not None:
        data["library_kernels"] = declaration.library_kernels()
    data = {**data, "lowered": lowered, "fallback": fallback, **({"unsupported": unsupported} if unsupported else {})}
    # the committed reports' execution evidence decides the ops they ran (tools/lowering_from_reports.py)
    reports = lowering_evidence.reports_for(backend, version, RESULTS)
    return lowering_evidence.from_reports(data, reports, RESULTS.parents[1])[0] if reports else data


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backend", choices=[*BACKENDS, "all"], default="all",
                        help="all: every backend but xla, which needs the xla extra (torch 2.9)")
    parser.add_argument("--opset", dest="version", metavar="V", help="opset version (default: newest)")
    parser.add_argument("--out", type=Path, default=manifests.backends_dir(), help="folder of manifests")
    parser.add_argument("--check", action="store_true", help="compare with the files instead of writing them")
    parser.add_argument("--devices", nargs="+", choices=("cpu", "cuda"), default=["cpu"],
                        help="devices on which Inductor's conditional lowerings are compiled (default cpu)")
    args = parser.parse_args()

    version = args.version or load.latest_version()
    stale = 0
    for backend in [b for b, rule in BACKENDS.items() if rule.in_all] if args.backend == "all" else [args.backend]:
        path = args.out / f"{backend}.yaml"
        try:
            data = measure(backend, version, tuple(args.devices))
        except (ImportError, importlib.metadata.PackageNotFoundError) as err:
            needs = ", ".join(BACKENDS[backend].packages)
            print(f"{path}: cannot measure {backend} (needs {needs}): {err}", file=sys.stderr)
            return 2
        if path.is_file():  # measured by tools/measure_eager_ops.py, from models: kept as it is
            data.update({k: v for k, v in yamlio.load_file(path).items() if k == "eager_ops"})
        text = yamlio.dump(data, HEADER)
        summary = f"{len(data['lowered'])} lowered, {len(data['fallback'])} fallback, {len(data.get('unsupported', ()))} unsupported"
        if args.check:
            current = path.read_text(encoding="utf-8") if path.is_file() else ""
            if current != text:
                stale += 1
                print(f"{path}: out of date with the installed packages (measured: {summary})")
            continue
        atomic.write_text(path, text)
        print(f"{path}: {summary}")
    return 1 if stale else 0


if __name__ == "__main__":
    sys.exit(main())
