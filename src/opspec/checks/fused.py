"""Checking a backend's fused operators against the core-op patterns they replace.

A backend may introduce its own ops (``demo::add_relu``) after lowering to the
portable op set, by a pass that swaps a chain of core ops for one fused kernel.
Three promises are checked, each with the machinery the rest of opspec uses:
- equivalence: the pattern is the fused op's decomposition, so ``decomp_check``
  compares kernel and pattern on drawn calls and traces the pattern for closure
  (it must produce core ops only);
- rewrite: replacing the pattern in an exported, decomposed graph keeps the
  outputs (the shared comparison rule), and fused ops appear exactly where
  pattern instances were;
- isolation: no backend op leaks into the portable op set.
"""
from __future__ import annotations

import importlib
from collections import Counter
from dataclasses import dataclass, field
from typing import Callable

import torch

from opspec.bridge import decomp_table, torch_ops
from opspec.checks import decomp_check
from opspec.spec.model import Opset, TestingHints
from opspec.testing import compare

Rewrite = tuple[Callable, Callable]  # (pattern, replacement), both traceable by torch.fx


@dataclass(frozen=True)
class FusedOp:
    op: str  # qualified, in the backend's namespace: "demo::add_relu"
    pattern: str  # "pkg.module:function" in core aten ops, called exactly like the fused op
    hints: TestingHints = field(default_factory=TestingHints)
    rewrites: tuple[Rewrite, ...] = ()  # graph shapes the pass replaces, longest first

    @property
    def namespace(self) -> str:
        return torch_ops.split_name(self.op)[0]


def load_backend(module_name: str) -> tuple[FusedOp, ...]:
    """The ``FUSED_OPS`` a backend module declares; importing it registers the ops."""
    module = importlib.import_module(module_name)
    try:
        return tuple(module.FUSED_OPS)
    except AttributeError:
        raise LookupError(f"{module_name} declares no FUSED_OPS") from None


# ---- 1. equivalence: the pattern is the decomposition ----

def check_equivalence(opset: Opset, fused: FusedOp, *, dtypes: tuple[torch.dtype, ...] | None = None,
                      max_examples: int = 20, seed: int = 0) -> decomp_check.Outcome:
    subject = decomp_check.subject_for_candidate(opset, fused.op, fused.pattern, fused.hints)
    return decomp_check.run(subject, dtypes=dtypes or decomp_check.dtypes_for(subject),
                            max_examples=max_examples, seed=seed, closure=True)


# ---- 3. isolation: backend ops stay out of the portable set ----

def isolation_problems(opset: Opset, fused_ops: tuple[FusedOp, ...]) -> list[str]:
    problems = []
    for namespace in sorted({f.namespace for f in fused_ops}):
        if namespace == "aten":
            problems.append("fused ops must live in the backend's own namespace, not aten")
            continue
        prefix = f"{namespace}::"
        problems += [f"core op {op} is in the backend namespace {namespace}" for op in sorted(opset.core_names()) if op.startswith(prefix)]
        for rule in opset.rules:
            if rule.op.startswith(prefix):
                problems.append(f"decomposition rule for backend op {rule.op}")
            problems += [f"rule for {rule.op} targets backend op {t}" for t in (rule.targets or ()) if t.startswith(prefix)]
    return problems


# ---- 2. rewrite: swap patterns in an exported graph, outputs unchanged ----

def portable_module(opset: Opset, model: torch.nn.Module, inputs: tuple) -> torch.fx.GraphModule:
    """``model`` exported and decomposed with the opset's table: the graph a backend receives."""
    program = torch.export.export(model, inputs).run_decompositions(decomp_table.decomposition_table(opset))
    return program.module()


def fuse(graph_module: torch.fx.GraphModule, fused_ops: tuple[FusedOp, ...]) -> dict[str, Counter]:
    """Replace every pattern instance in place; per fused op, how often each pattern matched."""
    matched: dict[str, Counter] = {}
    for fused in fused_ops:
        for index, (pattern, replacement) in enumerate(fused.rewrites):
            found = torch.fx.subgraph_rewriter.replace_pattern(graph_module, pattern, replacement)
            matched.setdefault(fused.op, Counter())[index] += len(found)
    graph_module.graph.lint()
    graph_module.recompile()
    return matched


def _pattern_ops(pattern: Callable) -> Counter:
    return torch_ops.graph_ops(torch.fx.symbolic_trace(pattern).graph)


@dataclass
class RewriteCheck:
    before: Counter
    after: Counter
    matched: dict[str, Counter]
    comparison: compare.Comparison | None = None
    problems: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems


def check_rewrite(opset: Opset, fused_ops: tuple[FusedOp, ...], model: torch.nn.Module, inputs: tuple) -> RewriteCheck:
    module = portable_module(opset, model, inputs)
    before = torch_ops.graph_ops(module.graph)
    core = opset.core_names()
    problems = [f"portable graph holds non-core op {op}" for op in sorted(before) if op not in core]
    with torch.no_grad():
        expected = module(*inputs)
    matched = fuse(module, fused_ops)
    after = torch_ops.graph_ops(module.graph)

    # fused ops exactly where patterns were: every match removes its pattern's ops and adds one fused op
    predicted = Counter(before)
    for fused in fused_ops:
        for index, count in matched.get(fused.op, Counter()).items():
            for op, n in _pattern_ops(fused.rewrites[index][0]).items():
                predicted[op] -= n * count
            predicted[fused.op] += count
    predicted = +predicted
    if after != predicted:
        problems.append(f"graph after the pass has {dict(after)}, expected {dict(predicted)} from the matches")
    fused_names = {f.op for f in fused_ops}
    problems += [f"graph after the pass holds {op}: neither core nor a fused op" for op in sorted(after)
                 if op not in core and op not in fused_names]

    with torch.no_grad():
        actual = module(*inputs)
    comparison = compare.compare(actual, expected)
    if not comparison.ok:
        problems.append(f"outputs changed by the pass: {comparison.message}")
    return RewriteCheck(before, after, matched, comparison, problems)


# ---- all three ----

@dataclass
class FusedReport:
    equivalence: dict[str, decomp_check.Outcome]
    isolation: list[str]
    rewrite: RewriteCheck | None

    @property
    def ok(self) -> bool:
        return (all(o.ok for o in self.equivalence.values()) and not self.isolation
                and (self.rewrite is None or self.rewrite.ok))

    def render(self) -> str:
        lines = []
        for op, outcome in self.equivalence.items():
            if outcome.ok:
                lines.append(f"ok    {op} matches its pattern ({outcome.examples} calls)")
            else:
                lines.append(f"FAIL  {op}: {outcome.error or outcome.counterexample.render()}")
        lines += [f"FAIL  isolation: {p}" for p in self.isolation] or ["ok    no backend op in the portable op set"]
        if self.rewrite is not None:
            fused = {op: sum(c.values()) for op, c in self.rewrite.matched.items()}
            if self.rewrite.ok:
                lines.append(f"ok    rewrite keeps outputs; fused {fused}")
            lines += [f"FAIL  rewrite: {p}" for p in self.rewrite.problems]
        return "\n".join(lines)


def check_backend(opset: Opset, fused_ops: tuple[FusedOp, ...], model: torch.nn.Module | None = None,
                  inputs: tuple = (), *, max_examples: int = 20, seed: int = 0) -> FusedReport:
    equivalence = {f.op: check_equivalence(opset, f, max_examples=max_examples, seed=seed) for f in fused_ops}
    rewrite = check_rewrite(opset, fused_ops, model, inputs) if model is not None else None
    return FusedReport(equivalence, isolation_problems(opset, fused_ops), rewrite)
