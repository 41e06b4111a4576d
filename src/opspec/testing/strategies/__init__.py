"""Hypothesis strategies that build valid calls of any aten overload from its schema and testing hints.

``calls(schema, hints, dtype, device)`` is the one entry point every runner
uses; ``draw_examples`` draws a fixed list deterministically outside of tests.
Hypothesis is imported on first use of what needs it: the hint helpers
(``effective_hints``, ``dtypes_under_test``) and ``schema_args`` serve the
special-case rows, which run without it.
"""
from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Literal

import torch

from opspec.spec.model import TestingHints
from opspec.testing.strategies.op_traits import BUILTIN_HINTS
from opspec.testing.strategies.schema_args import arguments_of
from opspec.testing.strategies.seed_only import without_local_constants

if TYPE_CHECKING:
    from hypothesis import strategies as st

    from opspec.testing.strategies.call import Call

__all__ = ["Call", "calls", "draw_examples", "effective_hints", "strategy_source", "dtype_of", "dtypes_under_test",
           "CUSTOM", "OMIT", "Drawer"]

StrategySource = Literal["generic", "hints", "custom"]


def __getattr__(name: str):
    """The names this package passes on from its Hypothesis-backed modules, imported when first asked for."""
    if name == "Call":
        from opspec.testing.strategies.call import Call as value
    elif name == "CUSTOM":
        from opspec.testing.strategies.custom import CUSTOM as value
    elif name in ("OMIT", "Drawer"):
        from opspec.testing.strategies import generic

        value = getattr(generic, name)
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    globals()[name] = value
    return value


def dtype_of(name: "str | torch.dtype") -> torch.dtype:
    return name if isinstance(name, torch.dtype) else getattr(torch, name)


def effective_hints(op: str, hints: TestingHints | None = None) -> TestingHints:
    """The opset's hints over the built-in ones: a field the opset sets wins, mappings merge by key."""
    builtin = TestingHints.from_dict(BUILTIN_HINTS.get(op))
    hints = hints or TestingHints()
    return replace(
        hints,
        dtypes=hints.dtypes or builtin.dtypes,
        domain={**builtin.domain, **hints.domain},
        shapes=dict(hints.shapes) if hints.shapes else dict(builtin.shapes),  # symbols only make sense together
        ranks={**builtin.ranks, **hints.ranks},
        choices={**builtin.choices, **hints.choices},
        tolerance=hints.tolerance or builtin.tolerance,
    )


def strategy_source(op: str, hints: TestingHints | None = None) -> StrategySource:
    """How calls of ``op`` are built: from the schema alone, with hints, or by a custom strategy."""
    from opspec.testing.strategies.custom import CUSTOM

    if op in CUSTOM:
        return "custom"
    merged = effective_hints(op, hints)
    return "hints" if (merged.domain or merged.shapes or merged.ranks or merged.choices) else "generic"


def dtypes_under_test(op: str, hints: TestingHints | None = None) -> tuple[torch.dtype, ...]:
    """The dtypes worth testing: the hints' list, else float32."""
    merged = effective_hints(op, hints)
    return tuple(dtype_of(name) for name in merged.dtypes) or (torch.float32,)


def calls(schema: "str | torch._C.FunctionSchema", hints: TestingHints | None = None,
          dtype: "torch.dtype | str" = torch.float32, device: str = "cpu") -> st.SearchStrategy[Call]:
    """Valid calls of the overload ``schema`` names, its tensors of ``dtype`` on ``device``."""
    from opspec.testing.strategies.custom import CUSTOM
    from opspec.testing.strategies.generic import call_strategy

    op, arguments = arguments_of(schema)
    return call_strategy(op, arguments, effective_hints(op, hints), dtype_of(dtype), device, CUSTOM.get(op))


def draw_examples(strategy: st.SearchStrategy, n: int, random_seed: int = 0) -> list:
    """``n`` examples of ``strategy``, the same ones for the same seed, without a test runner."""
    from hypothesis import HealthCheck, Phase, given, seed, settings

    drawn: list = []

    @seed(random_seed)
    @settings(max_examples=n, database=None, phases=(Phase.generate,), deadline=None,
              suppress_health_check=list(HealthCheck))
    @given(strategy)
    def collect(example):
        drawn.append(example)

    with without_local_constants():  # the same draws whatever the process imported before
        collect()
    return drawn[:n]
