"""Flat IR records of an exported graph, their JSON form, and an executor that rebuilds each call from its schema alone.

One record per FX node: the op as a string (``aten.index.Tensor``), the names of
the tensors it takes as one flat list, every other argument as a JSON attribute
by its schema name, and the names of its outputs. Rebuilding the call reads the
op's schema and nothing else, the way IR-extraction frameworks that fall back to
``torch.ops.aten`` do:

- ``Tensor``: the next flat input; where the graph passed a Python scalar
  (``mul.Tensor(x, 0.5)``), the scalar is an attribute of that name instead;
- ``Tensor?``: the next flat input, or an attribute holding null;
- ``Tensor[]``: as many flat inputs as ``_tensor_list_sizes`` says;
- ``Tensor?[]``: ``_tensor_list_none_masks`` restores the None positions;
- everything else (int, SymInt, float, bool, str, ScalarType, Layout, Device,
  MemoryFormat, lists of these): attributes by name; a symbolic size computed by
  another node is a reference to that node's output;
- keyword-only arguments go in as keywords, the rest positionally;
- ``device: meta`` (a graph extracted on the meta device) becomes the device
  the records run on.

Non-aten nodes (``operator.getitem`` picking one output of a multi-output op,
``operator.mul`` on sizes) keep their arguments positionally in ``args``. A
record file with its input tensors (``Recording``) doubles as a portable
op-level repro: ``opspec conform --ops OP --inputs FILE`` replays it.
"""
from __future__ import annotations

import json
import math
import operator
from dataclasses import asdict, dataclass, field
from typing import Any, Callable

import torch
import torch.fx

from opspec.bridge import torch_ops
from opspec.testing.strategies.schema_args import Argument, arguments_of

FORMAT = "opspec-ir/1"
SIZES, MASKS = "_tensor_list_sizes", "_tensor_list_none_masks"
PYTHON_OPS: dict[str, Callable] = {f"operator.{name}": getattr(operator, name) for name in (
    "getitem", "add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "neg", "eq", "ne", "lt", "le", "gt", "ge",
    "and_", "or_", "not_")}
PYTHON_OPS.update({"math.ceil": math.ceil, "math.floor": math.floor, "math.sqrt": math.sqrt,
                   "torch.sym_float": torch.sym_float, "torch.sym_int": torch.sym_int,
                   "torch.sym_max": torch.sym_max, "torch.sym_min": torch.sym_min, "torch.sym_not": torch.sym_not})


class IRError(Exception):
    """A node cannot become a record, or a record cannot become a call; the message names which and why."""


@dataclass
class Record:
    op: str  # "aten.add.Tensor", or a PYTHON_OPS key
    inputs: list[str] = field(default_factory=list)  # flat tensor inputs, by value name
    attrs: dict[str, Any] = field(default_factory=dict)  # JSON values by schema argument name
    outputs: list[str] = field(default_factory=list)


# ---- values <-> JSON ----

def encode(value: Any, node_name: Callable[[torch.fx.Node], str]) -> Any:
    """A non-tensor argument as JSON."""
    if isinstance(value, torch.fx.Node):
        return {"ref": node_name(value)}
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else {"float": repr(value)}
    if isinstance(value, complex):
        return {"complex": [encode(value.real, node_name), encode(value.imag, node_name)]}
    if isinstance(value, torch.dtype):
        return {"dtype": str(value).removeprefix("torch.")}
    if isinstance(value, torch.device):
        return {"device": str(value)}
    if isinstance(value, torch.layout):
        return {"layout": str(value).removeprefix("torch.")}
    if isinstance(value, torch.memory_format):
        return {"memory_format": str(value).removeprefix("torch.")}
    if isinstance(value, (list, tuple)):
        return [encode(v, node_name) for v in value]
    if isinstance(value, (torch.SymInt, torch.SymFloat, torch.SymBool)):
        raise IRError(f"a symbolic value {value} that no node computes")
    raise IRError(f"no JSON form for a {type(value).__name__} argument")


def decode(value: Any, env: dict[str, Any], device: torch.device) -> Any:
    if isinstance(value, list):
        return [decode(v, env, device) for v in value]
    if not isinstance(value, dict):
        return value
    (kind, payload), = value.items()
    if kind == "ref":
        return env[payload]
    if kind == "float":
        return float(payload)
    if kind == "complex":
        return complex(*payload)
    if kind == "dtype":
        return getattr(torch, payload)
    if kind == "device":
        return device if payload == "meta" else torch.device(payload)
    if kind in ("layout", "memory_format"):
        return getattr(torch, payload)
    raise IRError(f"unknown attribute form {kind!r}")


# ---- FX nodes -> records ----

def op_string(target) -> str:
    if isinstance(target, torch._ops.OpOverload):
        return f"{target.namespace}.{target._schema.name.split('::')[1]}.{target._overloadname}"
    name = f"{getattr(target, '__module__', '?').removeprefix('_')}.{getattr(target, '__name__', repr(target))}"
    if name in PYTHON_OPS:
        return name
    if isinstance(target, torch._ops.HigherOrderOperator):
        raise IRError(f"higher-order op {target.name()} has a subgraph, which a flat record cannot hold")
    raise IRError(f"{name} is neither an aten op nor a Python operator the executor knows")


def node_record(node: torch.fx.Node) -> Record:
    name = lambda n: n.name  # noqa: E731
    record = Record(op_string(node.target), outputs=[node.name])
    if not isinstance(node.target, torch._ops.OpOverload):
        record.attrs["args"] = encode(list(node.args), name)
        if node.kwargs:
            raise IRError(f"{record.op} with keyword arguments")
        return record
    _, arguments = arguments_of(node.target._schema)
    for position, argument in enumerate(arguments):
        if position < len(node.args) and not argument.kwarg_only:
            value = node.args[position]
        elif argument.name in node.kwargs:
            value = node.kwargs[argument.name]
        elif argument.type == "Optional[Tensor]":
            value = None  # said explicitly: a rebuilder cannot tell an omitted tensor from a flat input
        else:
            continue  # left at its default
        _flatten_argument(argument, value, record)
    return record


def _flatten_argument(argument: Argument, value: Any, record: Record) -> None:
    def is_tensor(v):
        return isinstance(v, torch.fx.Node) and isinstance(v.meta.get("val"), torch.Tensor)

    kind = argument.type
    if kind in ("Tensor", "Optional[Tensor]"):
        if is_tensor(value):
            record.inputs.append(value.name)
        else:  # None, or a Python scalar standing in for a Tensor
            record.attrs[argument.name] = encode(value, lambda n: n.name)
    elif kind == "List[Tensor]":
        record.attrs.setdefault(SIZES, {})[argument.name] = len(value)
        record.inputs += [v.name for v in value]
    elif kind == "List[Optional[Tensor]]":
        record.attrs.setdefault(MASKS, {})[argument.name] = [v is None for v in value]
        record.inputs += [v.name for v in value if v is not None]
    else:
        record.attrs[argument.name] = encode(value, lambda n: n.name)


def records_of(graph: torch.fx.Graph) -> tuple[list[str], list[Record], list[Any]]:
    """(input names, records, outputs as a JSON tree of refs) of a graph with no subgraphs."""
    inputs, records, outputs = [], [], None
    for node in graph.nodes:
        if node.op == "placeholder":
            inputs.append(node.name)
        elif node.op == "call_function":
            records.append(node_record(node))
        elif node.op == "output":
            outputs = encode(list(torch.utils._pytree.tree_leaves(node.args[0])), lambda n: n.name)
        else:
            raise IRError(f"graph node {node.name} is a {node.op}, which flat records do not hold")
    return inputs, records, outputs


# ---- records -> calls ----

def resolve_op(op: str) -> Callable:
    if op in PYTHON_OPS:
        return PYTHON_OPS[op]
    namespace, _, rest = op.partition(".")
    name, _, overload = rest.partition(".")
    try:
        return getattr(getattr(getattr(torch.ops, namespace), name), overload)
    except AttributeError:
        raise IRError(f"no op {op} in torch {torch.__version__}") from None


def rebuild_call(record: Record, env: dict[str, Any], device: torch.device) -> tuple[Callable, list, dict]:
    """(callable, args, kwargs) from the record and the op's schema alone."""
    fn = resolve_op(record.op)
    if record.op in PYTHON_OPS:
        return fn, decode(record.attrs["args"], env, device), {}
    tensors = iter(env[name] for name in record.inputs)
    sizes, masks = record.attrs.get(SIZES, {}), record.attrs.get(MASKS, {})
    args: list = []
    kwargs: dict = {}
    gap = False  # an argument left at its default: later ones go by name
    for argument in arguments_of(fn._schema)[1]:
        kind, name = argument.type, argument.name
        if kind in ("Tensor", "Optional[Tensor]"):
            value = decode(record.attrs[name], env, device) if name in record.attrs else next(tensors)
        elif kind == "List[Tensor]" and name in sizes:
            value = [next(tensors) for _ in range(sizes[name])]
        elif kind == "List[Optional[Tensor]]" and name in masks:
            value = [None if is_none else next(tensors) for is_none in masks[name]]
        elif name in record.attrs:
            value = decode(record.attrs[name], env, device)
        else:
            gap = True
            continue
        if argument.kwarg_only or gap:
            kwargs[name] = value
        else:
            args.append(value)
    leftover = next(tensors, None)
    if leftover is not None:
        raise IRError(f"{record.op}: more flat tensor inputs than its schema takes")
    return fn, args, kwargs


@dataclass
class Program:
    """A whole graph as records, runnable from its JSON form."""

    inputs: list[str]
    records: list[Record]
    outputs: Any
    constants: dict[str, torch.Tensor] = field(default_factory=dict, repr=False)  # weights: by name, not in the JSON
    mutations: list[list] = field(default_factory=list)  # [graph input, ref of its new value]: written back after a run

    def to_json(self) -> str:
        return json.dumps({"format": FORMAT, "inputs": self.inputs, "outputs": self.outputs, "mutations": self.mutations,
                           "records": [asdict(r) for r in self.records]}, allow_nan=False)

    @classmethod
    def from_json(cls, text: str, constants: dict[str, torch.Tensor] | None = None) -> "Program":
        data = json.loads(text)
        if data.get("format") != FORMAT:
            raise IRError(f"not an {FORMAT} program")
        return cls(data["inputs"], [Record(**r) for r in data["records"]], data["outputs"], dict(constants or {}),
                   data.get("mutations", []))

    def run(self, *values, device: torch.device | None = None) -> list:
        """The outputs, flat, for the graph inputs ``values`` (constants first where the graph takes them)."""
        env: dict[str, Any] = dict(self.constants)
        feed = iter(values)
        for name in self.inputs:
            if name not in env:
                env[name] = next(feed)
        device = device or next((v.device for v in values if isinstance(v, torch.Tensor)), torch.device("cpu"))
        for record in self.records:
            fn, args, kwargs = rebuild_call(record, env, device)
            result = fn(*args, **kwargs)
            env[record.outputs[0]] = result
        for name, value in self.mutations:  # functionalized writes to graph inputs, as eager would leave them
            target, new = env[name], decode(value, env, device)
            if target.shape != new.shape:
                target.resize_(new.shape)
            target.copy_(new)
        return decode(self.outputs, env, device)


def program_of(exported) -> Program:
    """The records of an ExportedProgram: parameters, buffers and constants kept aside by name."""
    from torch.export.graph_signature import InputKind, OutputKind

    graph = exported.graph_module.graph
    for module in exported.graph_module.modules():
        if module is not exported.graph_module and hasattr(module, "graph"):
            raise IRError("the graph has subgraphs (control flow), which flat records do not hold")
    inputs, records, outputs = records_of(graph)
    constants = {}
    for spec in exported.graph_signature.input_specs:
        if spec.kind in (InputKind.PARAMETER, InputKind.BUFFER):
            constants[spec.arg.name] = exported.state_dict.get(spec.target, None)
            if constants[spec.arg.name] is None:  # non-persistent buffers live with the constants
                constants[spec.arg.name] = exported.constants[spec.target]
        elif spec.kind == InputKind.CONSTANT_TENSOR:
            constants[spec.arg.name] = exported.constants[spec.target]
        elif spec.kind != InputKind.USER_INPUT:
            raise IRError(f"graph input {spec.arg.name} is a {spec.kind.name}, which the records do not feed")
    user_outputs, mutations = [], []
    for spec, ref in zip(exported.graph_signature.output_specs, outputs):
        if spec.kind == OutputKind.USER_OUTPUT:
            user_outputs.append(ref)
        elif spec.kind in (OutputKind.USER_INPUT_MUTATION, OutputKind.BUFFER_MUTATION):
            placeholder = next(s.arg.name for s in exported.graph_signature.input_specs if s.target == spec.target
                               or s.arg.name == spec.target)
            mutations.append([placeholder, ref])
        else:
            raise IRError(f"graph output {spec.arg.name} is a {spec.kind.name}, which the records do not return")
    return Program(inputs, records, user_outputs, constants, mutations)


# ---- a recorded call: the portable op-level repro ----

def tensor_to_json(t: torch.Tensor) -> dict[str, Any]:
    """Values, dtype, shape, strides and storage offset exactly (floats as hex where JSON would round them)."""
    from opspec.testing.strategies.values import storage_view

    storage = storage_view(t.detach()).cpu()
    flat = storage.float() if storage.dtype in (torch.float16, torch.bfloat16) else storage
    if flat.is_complex():
        values = [[_exact(v.real), _exact(v.imag)] for v in flat.tolist()]
    else:
        values = [_exact(v) for v in flat.tolist()]
    return {"dtype": str(t.dtype).removeprefix("torch."), "shape": list(t.shape), "stride": list(t.stride()),
            "offset": t.storage_offset(), "storage": values, "device": str(t.device)}


def _exact(value):
    return float.hex(value) if isinstance(value, float) else value


def tensor_from_json(data: dict[str, Any], device: str | None = None) -> torch.Tensor:
    dtype = getattr(torch, data["dtype"])
    values = data["storage"]
    parse = lambda v: float.fromhex(v) if isinstance(v, str) else v  # noqa: E731
    if dtype.is_complex:
        values = [complex(parse(re), parse(im)) for re, im in values]
    else:
        values = [parse(v) for v in values]
    work_dtype = torch.float32 if dtype in (torch.float16, torch.bfloat16) else dtype
    storage = torch.tensor(values, dtype=work_dtype).to(dtype) if values else torch.empty(0, dtype=dtype)
    target = device or data["device"]
    if target == "meta":
        target = "cpu"
    return storage.to(target).as_strided(data["shape"], data["stride"], data["offset"])


def call_to_json(op: str, args: tuple, kwargs: dict, note: str = "") -> dict[str, Any]:
    """One aten call with its actual inputs, as a record plus its tensors: the op-level repro."""
    overload = torch_ops.resolve(op)
    env_tensors: dict[str, torch.Tensor] = {}
    placeholders: dict[int, torch.fx.Node] = {}
    graph = torch.fx.Graph()

    def to_node(value):
        if isinstance(value, torch.Tensor):
            if id(value) not in placeholders:
                node = graph.placeholder(f"t{len(placeholders)}")
                node.meta["val"] = value
                placeholders[id(value)] = node
                env_tensors[node.name] = value
            return placeholders[id(value)]
        if isinstance(value, (list, tuple)):
            return type(value)(to_node(v) for v in value)
        return value

    node = graph.call_function(overload, to_node(tuple(args)), to_node(dict(kwargs)))
    record = node_record(node)
    return {"format": FORMAT, "op": op, "note": note, "record": asdict(record),
            "tensors": {name: tensor_to_json(t) for name, t in env_tensors.items()}}


def call_from_json(data: dict[str, Any], device: str | None = None) -> tuple[str, tuple, dict]:
    """(qualified op, args, kwargs) rebuilt from a recorded call."""
    if data.get("format") != FORMAT:
        raise IRError(f"not an {FORMAT} recorded call")
    record = Record(**data["record"])
    env = {name: tensor_from_json(t, device) for name, t in data["tensors"].items()}
    target = torch.device(device or next((t["device"] for t in data["tensors"].values()), "cpu"))
    fn, args, kwargs = rebuild_call(record, env, target)
    return torch_ops.op_name(fn), tuple(args), kwargs


def read_calls(path: str) -> list[dict[str, Any]]:
    """The recorded calls of a file: one object or a list of them; IRError (one line naming the file) otherwise."""
    try:
        with open(path, encoding="utf-8") as handle:
            data = json.load(handle)
    except (OSError, ValueError) as err:
        raise IRError(f"{path}: cannot read recorded calls: {err}") from None
    calls = data if isinstance(data, list) else [data]
    for position, call in enumerate(calls):
        if not isinstance(call, dict) or call.get("format") != FORMAT or not {"op", "record", "tensors"} <= set(call):
            raise IRError(f"{path}: entry {position} is not an {FORMAT} recorded call (op, record, tensors)")
    return calls
