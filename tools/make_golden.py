"""Write the golden programs of an opset version: exported programs that call every core op, with recorded inputs and outputs.

    python tools/make_golden.py 2026.12 [--out conformance/golden/2026.12] [--models] [--zoo MODEL ...] [--ops GLOB ...]

Each core op gets one call drawn by the shared strategy layer (seeded, float32 where the
op takes it), as ``opspec conform`` draws it; the calls of one category run in one
module, exported with ``torch.export`` and decomposed with the version's table minus
its core ops (so every core op stays in the graph). Ops whose value a backend computes
by a SymInt (``sym_*``) run alone with dynamic shapes. A program is kept only when
its graph calls each of its ops and its exported module reproduces the eager outputs;
an op that cannot be kept is listed under ``uncovered`` with the reason.
With ``--models``, small models are added: opspec's examples, and with ``--zoo`` models of
the zoo (where their library is installed), decomposed with the version's table. The
committed sets: ``2026.11 --models --zoo transformers:wav2vec2`` and ``2026.12 --models``.
The index (``index.yaml``, schema ``golden_index.schema.json``) names every program, the
ops it holds, the torch that exported it and its digest; ``opspec golden`` replays them.
"""
from __future__ import annotations

import argparse
import hashlib
import importlib.util
import sys
import warnings
from pathlib import Path

import torch

from opspec.bridge import decomp_table, torch_ops
from opspec.checks import golden
from opspec.checks import program as programs
from opspec.checks.coverage import count_ops
from opspec.checks.models import load_model
from opspec.conform import cases, properties
from opspec.conform.backends.program import dynamic_shapes
from opspec.spec import atomic, load, portable, yamlio
from opspec.spec.errors import one_line

REPO = Path(__file__).resolve().parents[1]
SEED = 0
MODELS = ("opspec.examples.models:mlp", "opspec.examples.models:small_cnn", "opspec.examples.models:transformer_block")


class Group(torch.nn.Module):
    """The calls of several ops over one flat list of tensor inputs; one output per op."""

    def __init__(self, functions: list, widths: list[int]):
        super().__init__()
        self.functions, self.widths = functions, widths

    def forward(self, *inputs):
        outputs, start = [], 0
        for function, width in zip(self.functions, self.widths):
            outputs.append(function(*inputs[start:start + width]))
            start += width
        return tuple(outputs)


class Flat(torch.nn.Module):
    """A model whose outputs are a flat tuple of tensors: a program that loads without the model's library
    (transformers' ModelOutput classes would otherwise be part of the saved output spec)."""

    def __init__(self, model: torch.nn.Module):
        super().__init__()
        self.model = model

    def forward(self, *args, **kwargs):
        return tuple(golden.plain(self.model(*args, **kwargs)))


def draw_call(op) -> cases.Example:
    dtype = "float32" if "float32" in cases.dtypes_for(op, None) else cases.dtypes_for(op, None)[0]
    examples = cases.draw(op, dtype, "cpu", max_examples=1, max_compiles=1, seed=SEED, edges=False)
    if not examples:
        raise ValueError(f"no valid call drawn in {dtype}")
    return examples[0]


def fresh(examples: list[cases.Example]) -> list[torch.Tensor]:
    return [t for example in examples for t in example.fresh_inputs()]


def export_group(names: list[str], examples: list[cases.Example], table: dict, dynamic: bool):
    module = Group([e.program() for e in examples], [len(e.inputs) for e in examples])
    torch.manual_seed(SEED)
    reference = module(*fresh(examples))
    inputs = fresh(examples)
    shapes = dynamic_shapes(inputs) if dynamic else None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        exported = torch.export.export(module, tuple(inputs), dynamic_shapes=shapes, strict=False).run_decompositions(table)
    held = set(count_ops(exported.graph_module))
    missing = [name for name in names if name not in held]
    if missing:
        calls = ", ".join(sorted(held)) or "no op"
        raise ValueError(f"export rewrites {', '.join(missing)}: the decomposed graph calls {calls}")
    checks = ["structure" if name in properties.CHECKERS else "values" for name in names]
    torch.manual_seed(SEED)
    replayed = exported.module()(*fresh(examples))
    for name, check, got, want in zip(names, checks, replayed, reference):
        verdict = golden.judge(got, want, check)
        if not verdict.ok:
            raise ValueError(f"{name}: the exported program differs from eager: {verdict.message}")
    recorded = {"args": fresh(examples), "kwargs": {}, "outputs": list(reference), "ops": names, "checks": checks,
                "seed": SEED}
    return exported, recorded


def neutral_stack_traces(exported) -> None:
    """Stack traces naming files from the repository or the installed package on: the saved node metadata
    would otherwise carry the absolute paths of the checkout and the venv that exported the program."""
    for module in exported.graph_module.modules():
        graph = getattr(module, "graph", None)
        for node in graph.nodes if isinstance(graph, torch.fx.Graph) else ():
            if node.meta.get("stack_trace"):
                node.meta["stack_trace"] = portable.portable_text(node.meta["stack_trace"], REPO)


def save(out: Path, name: str, exported, recorded: dict) -> dict:
    path = out / f"{name}.pt2"
    neutral_stack_traces(exported)
    extra = {programs.RECORDED: programs.recorded_text(recorded)}
    atomic.write_with(path, lambda tmp: torch.export.save(exported, str(tmp), extra_files=extra))
    return {"file": path.name, "sha256": hashlib.sha256(path.read_bytes()).hexdigest()}


def op_programs(opset, out: Path, globs: list[str] | None) -> tuple[list[dict], list[dict]]:
    core = opset.core_names()
    table = decomp_table.as_torch_table({k: v for k, v in decomp_table.table_by_name(opset).items() if k not in core})
    drawn: dict[str, list[tuple[str, cases.Example]]] = {}
    uncovered = []
    for op in cases.select_ops(opset, globs):
        try:
            example = draw_call(op)
        except Exception as err:  # noqa: BLE001 - an op without a valid call is listed, not fatal
            uncovered.append({"op": op.name, "reason": f"no call drawn: {one_line(err, 200)}"})
            continue
        group = f"symbolic-{op.name.removeprefix('aten::')}" if op.name in cases.SYMBOLIC else op.category
        drawn.setdefault(group, []).append((op.name, example))
    entries = []
    for group, members in sorted(drawn.items()):
        dynamic = group.startswith("symbolic-")
        kept = list(members)
        while kept:
            names, examples = [n for n, _ in kept], [e for _, e in kept]
            try:
                exported, recorded = export_group(names, examples, table, dynamic)
                break
            except Exception as err:  # noqa: BLE001 - find the op that breaks the group, list it, go on
                culprit = _culprit(kept, table, dynamic)
                if culprit is None:
                    uncovered += [{"op": n, "reason": f"group {group}: {one_line(err, 200)}"} for n in names]
                    kept = []
                    break
                uncovered.append({"op": culprit[0], "reason": culprit[1]})
                kept = [(n, e) for n, e in kept if n != culprit[0]]
        if not kept:
            continue
        entry = save(out, group, exported, recorded)
        entries.append({**entry, "kind": "ops", "ops": [n for n, _ in kept]})
        print(f"{group}: {len(kept)} ops", flush=True)
    return entries, sorted(uncovered, key=lambda u: u["op"])


def _culprit(members, table, dynamic) -> tuple[str, str] | None:
    for name, example in members:
        try:
            export_group([name], [example], table, dynamic)
        except Exception as err:  # noqa: BLE001
            return name, one_line(err, 300)
    return None


def model_programs(opset, out: Path, zoo_models: list[str]) -> list[dict]:
    from opspec.examples import zoo

    table = decomp_table.decomposition_table(opset)
    names = list(MODELS) + [m for m in zoo_models if importlib.util.find_spec(m.partition(":")[0])]
    entries = []
    for spec in names:
        example = load_model(spec, zoo.ZOO)
        torch.manual_seed(SEED)
        reference = example.run()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            exported = torch.export.export(Flat(example.model), example.args, example.kwargs,
                                           strict=False).run_decompositions(table)
        reference = golden.plain(reference)
        recorded = {"args": list(example.args), "kwargs": dict(example.kwargs), "outputs": reference,
                    "checks": ["values"], "model": spec, "seed": SEED}
        name = "model-" + spec.rpartition(":")[2].replace("_", "-")
        if spec.startswith("transformers:"):
            name = "model-transformers-" + spec.rpartition(":")[2].replace("_", "-")
        entry = save(out, name, exported, recorded)
        outside = sorted(op for op in count_ops(exported.graph_module) if op not in opset.core_names()
                         and op not in opset.bookkeeping_by_name)
        entries.append({**entry, "kind": "model", "model": spec, "ops": sorted(count_ops(exported.graph_module)),
                        **({"outside": outside} if outside else {})})
        print(f"{spec}: {len(entries[-1]['ops'])} ops" + (f", outside {opset.version}: {', '.join(outside)}" if outside else ""),
              flush=True)
    return entries


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("version")
    parser.add_argument("--out", type=Path, help="default: conformance/golden/VERSION")
    parser.add_argument("--models", action="store_true", help="add opspec's example models")
    parser.add_argument("--zoo", nargs="+", default=[], metavar="MODEL",
                        help="add zoo models too (e.g. transformers:wav2vec2, whose weight norm calls linalg_vector_norm); "
                             "skipped where their library is not installed")
    parser.add_argument("--ops", nargs="+", metavar="GLOB", help="only these ops (for a quick look)")
    args = parser.parse_args(argv)
    opset = load.load_opset(args.version)
    out = args.out or REPO / "conformance" / "golden" / opset.version
    out.mkdir(parents=True, exist_ok=True)
    entries, uncovered = op_programs(opset, out, args.ops)
    if args.models:
        entries += model_programs(opset, out, args.zoo)
    index = {"opset": opset.version, "torch": str(torch.__version__).split("+")[0], "seed": SEED,
             "programs": entries, "uncovered": uncovered}
    header = "# yaml-language-server: $schema=../../../opset/schema/golden_index.schema.json\n" \
             "# Written by tools/make_golden.py; `opspec golden` replays every program listed here.\n"
    atomic.write_text(out / golden.INDEX, yamlio.dump(index, header=header))
    covered = {op for e in entries if e["kind"] == "ops" for op in e["ops"]}
    print(f"{len(covered)} of {len(opset.active_ops())} core ops in {len(entries)} programs; uncovered: "
          f"{', '.join(u['op'] for u in uncovered) or 'none'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
