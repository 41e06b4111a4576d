"""Which ops a model's exported graph needs, and which of them an opset and a backend cover.

The model is exported with ``torch.export``, decomposed with the opset's table, and
every ``call_function`` op left in the graph is counted. An op is flagged when it
is outside the opset (not core: nothing in the opset decomposes it away) or when
the backend's manifest does not say it is lowered — the "ops not lowered" list a
backend author needs before shipping the model.
"""
from __future__ import annotations

import contextlib
import importlib
import io
import os
import sys
import warnings
from collections import Counter
from dataclasses import asdict, dataclass, field
from typing import Any

from opspec.bridge import torch_ops
from opspec.spec.manifests import BackendManifest
from opspec.spec.model import Opset


class ModelError(Exception):
    """The model cannot be built or exported; the message is one line naming the case."""


@dataclass(frozen=True)
class OpUse:
    op: str
    count: int
    opset: str  # core | outside
    backend: str | None  # lowered | fallback | undeclared; None without a manifest
    note: str = ""

    @property
    def flagged(self) -> bool:
        return self.opset == "outside" or self.backend not in (None, "lowered")


@dataclass(frozen=True)
class Report:
    model: str
    opset_version: str
    backend: str | None
    ops: tuple[OpUse, ...] = field(default_factory=tuple)

    @property
    def flagged(self) -> tuple[OpUse, ...]:
        return tuple(use for use in self.ops if use.flagged)

    @property
    def exit_code(self) -> int:
        return 1 if self.flagged else 0

    def to_dict(self) -> dict[str, Any]:
        return {
            "model": self.model,
            "opset": self.opset_version,
            "backend": self.backend,
            "ops": [asdict(use) for use in self.ops],
            "outside_opset": [use.op for use in self.ops if use.opset == "outside"],
            "not_lowered": [use.op for use in self.ops if use.backend not in (None, "lowered")],
        }


def load_model(spec: str) -> tuple[Any, tuple]:
    """Call ``pkg.module:factory`` and check it returned ``(nn.Module, tuple of tensors)``."""
    module_name, sep, attribute = spec.partition(":")
    if not sep or not module_name or not attribute:
        raise ModelError(f"MODEL must be pkg.module:factory, got {spec!r}")
    # Like ``python -m``: a model module next to the user resolves without installing it.
    if os.getcwd() not in sys.path and "" not in sys.path:
        sys.path.insert(0, os.getcwd())
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as err:
        raise ModelError(f"cannot import {module_name}: no module named {err.name!r}") from None
    except Exception as err:  # the user's module may fail in any way
        raise ModelError(f"cannot import {module_name}: {_one_line(err)}") from None
    factory = getattr(module, attribute, None)
    if not callable(factory):
        raise ModelError(f"{module_name} has no factory {attribute}")
    try:
        result = factory()
    except Exception as err:
        raise ModelError(f"factory {spec} raised {_one_line(err)}") from None
    torch = torch_ops.torch_module()
    if not (isinstance(result, tuple) and len(result) == 2 and isinstance(result[0], torch.nn.Module)):
        raise ModelError(f"factory {spec} must return (nn.Module, example_inputs), got {type(result).__name__}")
    model, inputs = result
    if not isinstance(inputs, tuple) or not all(isinstance(t, torch.Tensor) for t in inputs):
        raise ModelError(f"factory {spec}: example_inputs must be a tuple of tensors")
    return model, inputs


def _one_line(err: BaseException) -> str:
    text = str(err).strip().splitlines()
    return f"{type(err).__name__}: {text[0]}" if text else type(err).__name__


def export_decomposed(model, inputs: tuple, table: dict):
    """Export, then decompose with ``table``.

    A plain dict is enough in torch 2.13: run_decompositions decomposes the
    CompositeImplicitAutograd ops that are keys of the table and keeps the others,
    and torch's core table (which the opset's table starts from) lists every CIA op
    but the upsample ``.vec`` overloads export deliberately preserves — the same
    result as ``torch.export.default_decompositions()``.
    """
    torch = torch_ops.torch_module()
    # On failure torch.export prints the partial graph to stderr; the error line says enough.
    captured = io.StringIO()
    try:
        with contextlib.redirect_stderr(captured):
            exported = torch.export.export(model, inputs)
    except Exception as err:
        raise ModelError(f"torch.export failed: {_one_line(err)}") from None
    sys.stderr.write(captured.getvalue())
    try:
        with warnings.catch_warnings():
            # torch 2.13 warns about its own pytree internals while copying the program.
            warnings.simplefilter("ignore", FutureWarning)
            return exported.run_decompositions(table)
    except Exception as err:
        raise ModelError(f"decomposing the exported graph failed: {_one_line(err)}") from None


def count_ops(graph_module) -> Counter:
    """call_function targets of the graph and its subgraphs (control flow), by qualified name.

    Python's ``operator`` functions (tuple indexing, size arithmetic) run on the host,
    not on the backend, so they are not ops.
    """
    counts: Counter = Counter()
    for submodule in graph_module.modules():
        graph = getattr(submodule, "graph", None)
        if graph is None:
            continue
        for node in graph.nodes:
            if node.op != "call_function" or getattr(node.target, "__module__", None) == "_operator":
                continue
            counts[_target_name(node.target)] += 1
    return counts


def _target_name(target) -> str:
    if hasattr(target, "_schema"):
        return torch_ops.op_name(target)
    if isinstance(target, torch_ops.torch_module()._ops.HigherOrderOperator):
        return f"higher_order::{target.name()}"
    return f"{getattr(target, '__module__', '?')}.{getattr(target, '__qualname__', repr(target))}"


def classify(counts: Counter, opset: Opset, manifest: BackendManifest | None, model: str = "") -> Report:
    core = opset.core_names()
    rules = opset.rules_by_op
    uses = []
    for op, count in sorted(counts.items(), key=lambda item: (-item[1], item[0])):
        notes = []
        if op in core:
            status = "core"
        else:
            status = "outside"
            # A rule that exists but left the op in the graph did not apply to these inputs.
            notes.append("has a decomposition rule that did not apply" if op in rules else "not in the opset")
        backend = None
        if manifest is not None:
            backend, note = manifest.status(op)
            if note:
                notes.append(note)
        uses.append(OpUse(op, count, status, backend, "; ".join(notes)))
    return Report(model, opset.version, manifest.backend if manifest else None, tuple(uses))


def coverage(model, inputs: tuple, opset: Opset, table: dict, manifest: BackendManifest | None, name: str = "") -> Report:
    exported = export_decomposed(model, inputs, table)
    return classify(count_ops(exported.graph_module), opset, manifest, name)
