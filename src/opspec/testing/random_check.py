"""Checks for decompositions of random ops, which cannot match the kernel draw for draw.

Two kinds of evidence, both from the same call:
- properties: the decomposition's output has the kernel's shape, dtype and device,
  is finite where the kernel's is, and (for discrete outputs) takes only values the
  kernel takes;
- statistics: many draws from each side are compared with a two-sample
  Kolmogorov-Smirnov test. With ``ALPHA`` = 1e-4 a correct decomposition fails one
  test in 10,000 by chance; the generated tests seed torch's RNG, so a given seed
  either always passes or always fails (no flaky runs).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

ALPHA = 1e-4
SAMPLES_PER_SIDE = 5_000
MAX_CALLS = 500  # bounds the cost when each call draws only a few values


@dataclass(frozen=True)
class RandomVerdict:
    ok: bool
    message: str
    statistic: float = 0.0
    p_value: float = 1.0
    samples: int = 0


def _collect(fn: Callable, args: tuple, kwargs: dict, clone_args: Callable) -> tuple[Any, Any]:
    import torch

    first = fn(*clone_args(args), **kwargs)
    if not isinstance(first, torch.Tensor):
        raise TypeError(f"random op returned {type(first).__name__}, not a tensor")
    chunks = [first.detach().reshape(-1).to("cpu", torch.float64)]
    total = chunks[0].numel()
    calls = 1
    while total and total < SAMPLES_PER_SIDE and calls < MAX_CALLS:
        out = fn(*clone_args(args), **kwargs)
        chunks.append(out.detach().reshape(-1).to("cpu", torch.float64))
        total += chunks[-1].numel()
        calls += 1
    return first, torch.cat(chunks)


def check_random(kernel: Callable, candidate: Callable, args: tuple, kwargs: dict, clone_args: Callable, seed: int = 0) -> RandomVerdict:
    import torch
    from scipy.stats import ks_2samp

    torch.manual_seed(seed)
    expected_one, expected = _collect(kernel, args, kwargs, clone_args)
    torch.manual_seed(seed + 1)  # a different stream: identical draws would prove nothing
    try:
        actual_one, actual = _collect(candidate, args, kwargs, clone_args)
    except Exception as err:  # the candidate is under test; its failures are verdicts
        return RandomVerdict(False, f"decomposition raised {type(err).__name__}: {err}")

    for what, got, want in (
        ("shape", tuple(actual_one.shape), tuple(expected_one.shape)),
        ("dtype", actual_one.dtype, expected_one.dtype),
        ("device", actual_one.device.type, expected_one.device.type),
    ):
        if got != want:
            return RandomVerdict(False, f"{what} differs: decomposition {got}, kernel {want}")
    if expected.numel() == 0:
        return RandomVerdict(True, "empty output: properties match", samples=0)

    if bool(torch.isfinite(expected).all()) and not bool(torch.isfinite(actual).all()):
        return RandomVerdict(False, "decomposition produced non-finite values where the kernel never does")
    if not expected_one.is_floating_point():
        unexpected = set(actual.unique().tolist()) - set(expected.unique().tolist())
        # Discrete outputs: values outside what the kernel produced in as many draws are suspect
        # only when the kernel's support is small enough to have been seen in full.
        if unexpected and expected.unique().numel() <= 64:
            return RandomVerdict(False, f"decomposition produced values the kernel never did: {sorted(unexpected)[:5]}")
    finite_expected = expected[torch.isfinite(expected)]
    finite_actual = actual[torch.isfinite(actual)]
    if finite_expected.numel() == 0 or finite_actual.numel() == 0:
        # e.g. an exponential with a subnormal rate: every draw overflows; compare what was drawn instead
        same = finite_expected.numel() == finite_actual.numel() == 0 and bool(
            (torch.isnan(expected).any() == torch.isnan(actual).any())
        )
        return RandomVerdict(same, "no finite draws on " + ("both sides" if same else "one side only"), samples=int(actual.numel()))
    if finite_expected.unique().numel() == 1 and finite_actual.unique().numel() == 1:
        same = bool(finite_expected[0] == finite_actual[0])
        return RandomVerdict(same, "degenerate distribution " + ("matches" if same else "differs"), samples=int(actual.numel()))
    result = ks_2samp(finite_expected.numpy(), finite_actual.numpy())
    ok = result.pvalue >= ALPHA
    message = (
        f"two-sample KS on {finite_actual.numel()} vs {finite_expected.numel()} draws: "
        f"D={result.statistic:.4f}, p={result.pvalue:.3g} ({'>=' if ok else '<'} alpha {ALPHA:g})"
    )
    return RandomVerdict(ok, message, float(result.statistic), float(result.pvalue), int(actual.numel()))

