"""Golden programs: a released version's exported programs with recorded inputs and outputs, replayed.

``conformance/golden/VERSION/index.yaml`` (schema ``golden_index.schema.json``) lists
each program (``tools/make_golden.py`` writes them): the ops whose calls it holds, or the
model it was exported from, the torch that exported it and the file's digest. Replaying
one answers three questions on the installed torch: does it load, does it run on its
recorded inputs, do its outputs match the recorded ones (by the one comparison rule;
ops whose values the inputs do not determine, such as ``rand``, by dtype and shape).
With a backend, the program's module is compiled with ``torch.compile`` first.
"""
from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from opspec.bridge import torch_ops
from opspec.checks import program as programs
from opspec.spec import load, resources
from opspec.spec.errors import Finding, OpsetError, one_line
from opspec.spec.yamlio import Mark
from opspec.testing import compare, native_warnings

INDEX = "index.yaml"
SCHEMA = "golden_index.schema.json"


def golden_root() -> Path:
    return resources.CHECKOUT / "conformance" / "golden"


def plain(value: Any) -> list:
    """The tensors and numbers of a (possibly nested, possibly ModelOutput) result, in order."""
    from torch.utils import _pytree

    return list(_pytree.tree_leaves(value))


def judge(candidate: Any, reference: Any, check: str) -> compare.Comparison:
    """``values``: the comparison rule; ``structure``: dtype and shape of every tensor (values left free)."""
    if check == "values":
        return compare.compare(candidate, reference)
    torch = torch_ops.torch_module()
    got, want = plain(candidate), plain(reference)
    if len(got) != len(want):
        return compare.Comparison(False, f"{len(got)} outputs, expected {len(want)}")
    for position, (a, b) in enumerate(zip(got, want)):
        if isinstance(b, torch.Tensor) and (not isinstance(a, torch.Tensor) or (a.dtype, a.shape) != (b.dtype, b.shape)):
            described = f"{a.dtype} {tuple(a.shape)}" if isinstance(a, torch.Tensor) else type(a).__name__
            return compare.Comparison(False, f"[{position}]: {described}, expected {b.dtype} {tuple(b.shape)}")
    return compare.Comparison(True)


@dataclass
class Outcome:
    file: str
    kind: str
    loads: bool = False
    runs: bool = False
    matches: bool = False
    detail: str = ""
    failed_ops: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.matches

    def to_dict(self) -> dict[str, Any]:
        return {"file": self.file, "kind": self.kind, "loads": self.loads, "runs": self.runs, "matches": self.matches,
                "detail": self.detail, "failed_ops": self.failed_ops}


def read_index(folder: Path) -> dict[str, Any]:
    data = load.read_checked(folder / INDEX, SCHEMA, "golden index")
    for entry in data["programs"]:
        path = folder / entry["file"]
        if not path.is_file():
            raise OpsetError([Finding(Mark(str(folder / INDEX), entry.mark.line, 1), f"{entry['file']}: no such program")])
    return data


def replay(folder: Path, backend: str | None = None) -> tuple[dict[str, Any], list[Outcome]]:
    index = read_index(folder)
    return index, [replay_one(folder, entry, backend) for entry in index["programs"]]


def replay_one(folder: Path, entry: dict[str, Any], backend: str | None = None) -> Outcome:
    torch = torch_ops.torch_module()
    path = folder / entry["file"]
    outcome = Outcome(entry["file"], entry["kind"])
    if hashlib.sha256(path.read_bytes()).hexdigest() != entry["sha256"]:
        outcome.detail = "the file differs from the digest its index records"
        return outcome
    try:
        loaded = programs.load_program(path)
    except programs.ProgramError as err:
        outcome.detail = str(err).removeprefix(f"{path}: ")
        return outcome
    outcome.loads = True
    recorded = loaded.recorded
    if not recorded:
        outcome.detail = "no recorded inputs and outputs"
        return outcome
    try:
        module = loaded.exported.module()
        if backend:
            module = torch.compile(module, backend=backend)
        torch.manual_seed(recorded.get("seed", 0))
        with native_warnings.held_back():  # the programs call kernels at their edges on purpose (var of one element)
            got = module(*recorded["args"], **recorded.get("kwargs", {}))
    except Exception as err:  # any failure to run is the verdict, in one line
        outcome.detail = one_line(err, 300, cause=True)
        return outcome
    outcome.runs = True
    if entry["kind"] == "ops":
        for op, check, candidate, reference in zip(recorded["ops"], recorded["checks"], got, recorded["outputs"]):
            verdict = judge(candidate, reference, check)
            if not verdict.ok:
                outcome.failed_ops.append(op)
                outcome.detail = outcome.detail or f"{op}: {verdict.message}"
    else:
        verdict = judge(plain(got), recorded["outputs"], "values")
        if not verdict.ok:
            outcome.detail = verdict.message
            outcome.failed_ops.append(entry["model"])
    outcome.matches = not outcome.failed_ops
    return outcome
