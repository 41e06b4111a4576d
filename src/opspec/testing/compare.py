"""The comparison rule: when a candidate's output counts as equal to the eager kernel's.

One rule for every runner (decomposition checks, backend conformance), after
PyTorch's test_decomp:
- dtype, shape and numel match exactly; integers and bools match exactly;
- NaN sits in the same places and infinities are equal;
- float16/bfloat16: candidate and kernel are both measured against a float64
  run; the candidate fails when its largest error exceeds the kernel's own
  largest error plus atol (1e-7 unless a tolerance hint says otherwise);
- other floating dtypes: ``torch.testing.assert_close`` with per-dtype (rtol, atol); where a float64 run is
  given too (ops whose kernels are ill-conditioned, ``op_traits.SQUARES_INPUTS``), an element off the kernel
  also passes when it is within a few times the kernel's own distance from the float64 run, plus (rtol,
  atol): a candidate more accurate than the kernel, or adding in another order, is not wrong; and by as much
  as the float64 answer moves when the inputs move by a few ulps (``float64_spread``): a backward-stable
  algorithm's error, large where the op is ill-conditioned (a near-constant group normalised with a small eps);
- a ``TestingHints.tolerance`` replaces the per-dtype pair, its reason on record;
- ``near_zero`` (ops whose kernels keep relative precision near zero, ``op_traits.ACCURATE_NEAR_ZERO``):
  float32/float64 elements smaller than atol, where the absolute tolerance would hide any error, must
  also be within ``NEAR_ZERO_RTOL`` of the kernel relatively (``exp(x) - 1`` giving 0 for 1e-10 fails).
Outputs nest (tuples, lists, None, Python numbers); leaves compare one by one.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable, Mapping

import torch

from opspec.spec.model import Tolerance

DEFAULT_TOLERANCES: Mapping[torch.dtype, tuple[float, float]] = {  # dtype -> (rtol, atol)
    torch.float16: (1e-3, 1e-5),
    torch.bfloat16: (0.016, 1e-4),
    torch.float32: (1.3e-6, 1e-5),
    torch.float64: (1e-7, 1e-7),
    torch.complex64: (1.3e-6, 1e-5),
    torch.complex128: (1e-7, 1e-7),
}
LOW_PRECISION = (torch.float16, torch.bfloat16)
KERNEL_ERROR_SLACK = 1e-7  # test_decomp's default atol over the kernel's own error
# Relative bound below atol for near_zero ops: thousands of ulps of float32, so fused or vectorized
# kernels pass, while a formula that cancels (exp(x) - 1, log(1 + x)) loses percents or everything.
NEAR_ZERO_RTOL = 1e-3
# How far from a float64 run, in multiples of the kernel's own distance, an ill-conditioned op's float32 output
# may be: a correct kernel that adds in another order errs by as much as the kernel, in either direction.
KERNEL_ERROR_FACTOR = 4.0
# How far, in ulps of each input's own dtype, inputs move to measure how ill-conditioned a call is, and how many
# random directions are tried: a two-pass mean in float32 is a few ulps off, and a normalisation multiplies that
# by 1/sqrt(variance + eps).
PERTURBATION_ULPS = 4
PERTURBATIONS = 3


@dataclass(frozen=True)
class Float64Reference:
    """A float64 run and, element by element, how far it moves when its inputs move by a few ulps."""

    value: Any
    spread: Any = None


@dataclass(frozen=True)
class Comparison:
    """The verdict on one output, with the numbers a report needs."""

    ok: bool
    message: str = ""
    max_abs_error: float | None = None
    max_rel_error: float | None = None
    tolerance: tuple[float, float] | None = None  # (rtol, atol) applied; for fp16/bf16 (0, slack)
    kernel_error: float | None = None  # fp16/bf16: the kernel's own largest error against float64
    path: str = ""  # where in a nested output the verdict was reached, e.g. "[1]"
    max_ulp: float | None = None  # judged by an accuracy contract (contract_compare): the largest error in ULPs
    outside: bool = False  # judged by a contract, and failed outside its domain, where the eager kernel decides
    flushed: int = 0  # passed only by the opset's subnormal policy: the subnormals it read as zero

    def __bool__(self) -> bool:
        return self.ok


def tolerance_for(dtype: torch.dtype, override: Tolerance | None = None) -> tuple[float, float]:
    """(rtol, atol) for ``dtype``: the hint's pair when it names the dtype, else PyTorch's default."""
    name = str(dtype).removeprefix("torch.")
    if override is not None and name in override.per_dtype:
        return tuple(override.per_dtype[name])  # type: ignore[return-value]
    return DEFAULT_TOLERANCES.get(dtype, (0.0, 0.0))


def kernel_error_slack(dtype: torch.dtype, override: Tolerance | None = None) -> float:
    """How much worse than the kernel a fp16/bf16 candidate may be: the hint's atol, else 1e-7."""
    name = str(dtype).removeprefix("torch.")
    if override is not None and name in override.per_dtype:
        return float(override.per_dtype[name][1])
    return KERNEL_ERROR_SLACK


def compare(candidate: Any, reference: Any, *, float64: Any = None, tolerance: Tolerance | None = None,
            near_zero: bool = False) -> Comparison:
    """Compare ``candidate`` with the eager kernel's ``reference`` output.

    ``float64`` is the same computation run in float64 (see :func:`float64_run`);
    it is what float16/bfloat16 outputs are measured against. Without it those
    dtypes fall back to their (rtol, atol) pair, and the message says so.
    """
    spread = None
    if isinstance(float64, Float64Reference):
        float64, spread = float64.value, float64.spread
    return _compare(candidate, reference, float64, tolerance, "", near_zero, spread)


def assert_matches(candidate: Any, reference: Any, *, float64: Any = None, tolerance: Tolerance | None = None,
                   near_zero: bool = False) -> Comparison:
    """:func:`compare`, raising AssertionError with the message when the outputs differ."""
    result = compare(candidate, reference, float64=float64, tolerance=tolerance, near_zero=near_zero)
    if not result.ok:
        raise AssertionError(result.message)
    return result


# ---- float64 references ----

def upcast(value: Any, dtypes: tuple[torch.dtype, ...] = LOW_PRECISION) -> Any:
    """``value`` with low-precision float tensors and dtype arguments turned into float64."""
    def wide(leaf: Any) -> Any:
        if isinstance(leaf, torch.Tensor):
            return leaf.to(torch.float64) if leaf.dtype in dtypes else leaf
        if isinstance(leaf, torch.dtype):
            return torch.float64 if leaf in dtypes else leaf
        return leaf
    return _map_leaves(wide, value)


def _map_leaves(fn: Callable[[Any], Any], value: Any) -> Any:
    """``fn`` applied to every leaf of nested lists, tuples and dicts."""
    if isinstance(value, (list, tuple)):
        return type(value)(_map_leaves(fn, v) for v in value)
    if isinstance(value, dict):
        return {k: _map_leaves(fn, v) for k, v in value.items()}
    return fn(value)


def float64_dtypes(ill_conditioned: bool = False) -> tuple[torch.dtype, ...]:
    """The input dtypes whose outputs meet a float64 run: fp16/bf16, and float32 too where the op is ill-conditioned
    (``op_traits.SQUARES_INPUTS``)."""
    return LOW_PRECISION + ((torch.float32,) if ill_conditioned else ())


def float64_run(fn: Callable, args: tuple, kwargs: Mapping[str, Any] | None = None,
                dtypes: tuple[torch.dtype, ...] = LOW_PRECISION) -> Any:
    """Run ``fn`` on float64 copies of the inputs in ``dtypes``: the reference fp16/bf16 outputs meet."""
    return fn(*upcast(tuple(args), dtypes), **upcast(dict(kwargs or {}), dtypes))


def float64_spread(fn: Callable, args: tuple, kwargs: Mapping[str, Any] | None, value: Any,
                   dtypes: tuple[torch.dtype, ...] = (torch.float32,)) -> Float64Reference:
    """``value`` (the float64 run) with its spread: the largest distance, element by element, to float64 runs whose
    inputs in ``dtypes`` moved by PERTURBATION_ULPS ulps of their dtype in PERTURBATIONS fixed random directions.
    Distances that are not finite count as none, so an overflow widens nothing."""
    generator = torch.Generator().manual_seed(0)

    def moved(t: Any) -> Any:
        if not isinstance(t, torch.Tensor) or t.dtype not in dtypes:
            return t
        signs = torch.randint(0, 2, t.shape, generator=generator).to(torch.float64) * 2 - 1
        return t.to(torch.float64) * (1 + signs * PERTURBATION_ULPS * torch.finfo(t.dtype).eps)

    spread = None
    for _ in range(PERTURBATIONS):
        try:
            run = fn(*_map_leaves(moved, tuple(args)), **_map_leaves(moved, dict(kwargs or {})))
        except Exception:  # noqa: BLE001 - a moved input the kernel refuses: no spread from it
            continue
        spread = _widest(spread, _distance(run, value))
    return Float64Reference(value, spread)


def _distance(run: Any, value: Any) -> Any:
    if isinstance(run, torch.Tensor) and isinstance(value, torch.Tensor):
        if run.shape != value.shape or not value.dtype.is_floating_point:
            return None
        far = (run.detach().to(torch.float64) - value.detach().to(torch.float64)).abs()
        return torch.where(torch.isfinite(far), far, torch.zeros_like(far))
    if isinstance(run, (list, tuple)) and isinstance(value, (list, tuple)) and len(run) == len(value):
        return [_distance(r, v) for r, v in zip(run, value)]
    return None


def _widest(a: Any, b: Any) -> Any:
    if a is None:
        return b
    if isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor):
        return torch.maximum(a, b)
    if isinstance(a, list) and isinstance(b, list):
        return [_widest(x, y) for x, y in zip(a, b)]
    return a


# ---- the rule ----

def _merge(results: list[Comparison], path: str) -> Comparison:
    failed = next((r for r in results if not r.ok), None)

    def worst(field: str) -> float | None:
        values = [getattr(r, field) for r in results if getattr(r, field) is not None]
        return max(values) if values else None

    if failed is not None:
        return failed
    return Comparison(True, "", worst("max_abs_error"), worst("max_rel_error"),
                      next((r.tolerance for r in results if r.tolerance is not None), None), worst("kernel_error"), path)


def _compare(candidate: Any, reference: Any, float64: Any, tolerance: Tolerance | None, path: str,
             near_zero: bool = False, spread: Any = None) -> Comparison:
    if isinstance(reference, torch.Tensor):
        if not isinstance(candidate, torch.Tensor):
            return Comparison(False, f"{path or 'output'}: expected a tensor, got {type(candidate).__name__}", path=path)
        return _compare_tensors(candidate, reference, float64 if isinstance(float64, torch.Tensor) else None,
                                tolerance, path, near_zero, spread if isinstance(spread, torch.Tensor) else None)
    if isinstance(reference, (list, tuple)):
        if not isinstance(candidate, (list, tuple)) or len(candidate) != len(reference):
            got = f"{type(candidate).__name__} of {len(candidate)}" if isinstance(candidate, (list, tuple)) else type(candidate).__name__
            return Comparison(False, f"{path or 'output'}: expected a sequence of {len(reference)}, got {got}", path=path)
        references64 = float64 if isinstance(float64, (list, tuple)) and len(float64) == len(reference) else [None] * len(reference)
        spreads = spread if isinstance(spread, (list, tuple)) and len(spread) == len(reference) else [None] * len(reference)
        return _merge([_compare(c, r, f, tolerance, f"{path}[{i}]", near_zero, d)
                       for i, (c, r, f, d) in enumerate(zip(candidate, reference, references64, spreads))], path)
    if reference is None:
        ok = candidate is None
        return Comparison(ok, "" if ok else f"{path or 'output'}: expected None, got {type(candidate).__name__}", path=path)
    return _compare_numbers(candidate, reference, path)


def _compare_numbers(candidate: Any, reference: Any, path: str) -> Comparison:
    """Python numbers (SymInt/SymFloat/SymBool included): integers and bools exactly, floats like float64."""
    where = path or "output"
    if isinstance(reference, (bool, torch.SymBool)):
        ok = isinstance(candidate, (bool, torch.SymBool)) and bool(candidate) == bool(reference)
        return Comparison(ok, "" if ok else f"{where}: expected {bool(reference)}, got {candidate!r}", path=path)
    if isinstance(reference, (int, torch.SymInt)):
        ok = isinstance(candidate, (int, torch.SymInt)) and not isinstance(candidate, bool) and int(candidate) == int(reference)
        return Comparison(ok, "" if ok else f"{where}: expected {int(reference)}, got {candidate!r}", path=path)
    if isinstance(reference, (float, complex, torch.SymFloat)):
        if not isinstance(candidate, (int, float, complex, torch.SymFloat)) or isinstance(candidate, bool):
            return Comparison(False, f"{where}: expected a number, got {type(candidate).__name__}", path=path)
        dtype = torch.complex128 if isinstance(reference, complex) else torch.float64
        return _compare_tensors(torch.tensor(candidate, dtype=dtype), torch.tensor(reference, dtype=dtype), None, None, path)
    ok = candidate == reference
    return Comparison(bool(ok), "" if ok else f"{where}: expected {reference!r}, got {candidate!r}", path=path)


def _errors(candidate: torch.Tensor, reference: torch.Tensor) -> tuple[float, float]:
    """Largest absolute and relative error over the elements where both are finite."""
    wide = torch.complex128 if candidate.dtype.is_complex or reference.dtype.is_complex else torch.float64
    a, b = candidate.to(wide), reference.to(wide)
    finite = torch.isfinite(a) & torch.isfinite(b)
    if not finite.any():
        return 0.0, 0.0
    diff = (a - b).abs()[finite]
    rel = diff / b.abs()[finite].clamp_min(torch.finfo(torch.float64).tiny)
    return float(diff.max()), float(rel.max())


def _structure_mismatch(candidate: torch.Tensor, reference: torch.Tensor, where: str) -> str | None:
    if candidate.dtype != reference.dtype:
        return f"{where}: dtype {candidate.dtype} != expected {reference.dtype}"
    if candidate.shape != reference.shape:
        return f"{where}: shape {tuple(candidate.shape)} != expected {tuple(reference.shape)}"
    if candidate.numel() != reference.numel():
        return f"{where}: numel {candidate.numel()} != expected {reference.numel()}"
    return None


def _special_mismatch(candidate: torch.Tensor, reference: torch.Tensor, where: str) -> str | None:
    """NaN in the same places, infinities equal (sign included)."""
    nan_c, nan_r = candidate.isnan(), reference.isnan()
    if not torch.equal(nan_c, nan_r):
        return f"{where}: NaN at different positions: {_positions(nan_c != nan_r, candidate, reference)}"
    inf_c, inf_r = candidate.isinf(), reference.isinf()
    differs = (inf_c | inf_r) & (candidate != reference) & ~nan_r
    if differs.any():
        return f"{where}: infinity mismatch: {_positions(differs, candidate, reference)}"
    return None


POSITIONS_SHOWN = 5


def _positions(mask: torch.Tensor, candidate: torch.Tensor, reference: torch.Tensor) -> str:
    """``N of M elements, at (i, j) got x expected y, ...``: the places a NaN/inf verdict is about."""
    where = torch.nonzero(mask)
    shown = []
    for row in where[:POSITIONS_SHOWN].tolist():
        index = tuple(row)
        shown.append(f"{index if index else '()'} got {candidate[index].item()} expected {reference[index].item()}")
    more = f", and {len(where) - POSITIONS_SHOWN} more" if len(where) > POSITIONS_SHOWN else ""
    return f"{len(where)} of {mask.numel()} elements, at " + "; ".join(shown) + more


def _compare_tensors(candidate: torch.Tensor, reference: torch.Tensor, float64: torch.Tensor | None,
                     tolerance: Tolerance | None, path: str, near_zero: bool = False,
                     spread: torch.Tensor | None = None) -> Comparison:
    where = path or "output"
    candidate, reference = candidate.detach().cpu(), reference.detach().cpu()
    mismatch = _structure_mismatch(candidate, reference, where)
    if mismatch:
        return Comparison(False, mismatch, path=path)
    if reference.numel() == 0:
        return Comparison(True, "", 0.0, 0.0, path=path)

    dtype = reference.dtype
    if not (dtype.is_floating_point or dtype.is_complex):
        equal = torch.equal(candidate, reference)
        abs_err, rel_err = _errors(candidate, reference)
        message = "" if equal else f"{where}: {dtype} values differ (exact match required; max abs error {abs_err:g})"
        return Comparison(equal, message, abs_err, rel_err, (0.0, 0.0), path=path)

    special = _special_mismatch(candidate, reference, where)
    abs_err, rel_err = _errors(candidate, reference)
    if special:
        return Comparison(False, special, abs_err, rel_err, path=path)
    if dtype in LOW_PRECISION and float64 is not None:
        return _against_float64(candidate, reference, float64.detach().cpu(), tolerance, where, path, abs_err, rel_err)

    rtol, atol = tolerance_for(dtype, tolerance)
    try:
        if not _surely_close(candidate, reference, rtol, atol):  # assert_close only to explain a miss
            torch.testing.assert_close(candidate, reference, rtol=rtol, atol=atol, equal_nan=True,
                                       check_device=False, check_dtype=True, check_stride=False)
    except AssertionError as err:
        if not (float64 is not None and _no_further_than_the_kernel(candidate, reference, float64.detach().cpu(),
                                                                     rtol, atol, spread)):
            return Comparison(False, f"{where}: {err}", abs_err, rel_err, (rtol, atol), path=path)
    if near_zero and not dtype.is_complex:
        lost = _near_zero_mismatch(candidate, reference, atol, where)
        if lost:
            return Comparison(False, lost, abs_err, rel_err, (rtol, atol), path=path)
    return Comparison(True, "", abs_err, rel_err, (rtol, atol), path=path)


def _surely_close(candidate: torch.Tensor, reference: torch.Tensor, rtol: float, atol: float) -> bool:
    """What ``assert_close`` decides for two dense tensors of one dtype and shape, without its first call's import of
    torch.distributed (half a second, for every process that compares)."""
    if candidate.layout != torch.strided or reference.layout != torch.strided:
        return False
    return bool(torch.isclose(candidate, reference, rtol=rtol, atol=atol, equal_nan=True).all())


def _no_further_than_the_kernel(candidate: torch.Tensor, reference: torch.Tensor, float64: torch.Tensor,
                                rtol: float, atol: float, spread: torch.Tensor | None = None) -> bool:
    """Every element is within (rtol, atol) of the float64 run beyond KERNEL_ERROR_FACTOR times the kernel's own
    distance from it, and beyond the run's ``spread`` where one is given (NaN and infinities already agree:
    ``_special_mismatch``)."""
    if float64.shape != reference.shape or reference.dtype.is_complex:
        return False
    truth = float64.to(torch.float64)
    finite = torch.isfinite(reference) & torch.isfinite(truth)
    kernel = (reference.to(torch.float64) - truth).abs()
    bound = KERNEL_ERROR_FACTOR * kernel + atol + rtol * truth.abs()
    if spread is not None and spread.shape == truth.shape:
        bound = bound + spread.detach().cpu()
    off = (candidate.to(torch.float64) - truth).abs() > bound
    return bool(finite.all()) and not bool(off.any())


def _near_zero_mismatch(candidate: torch.Tensor, reference: torch.Tensor, atol: float, where: str) -> str | None:
    """Elements of normal magnitude below ``atol`` that differ from the kernel by more than NEAR_ZERO_RTOL relatively."""
    wide_c, wide_r = candidate.to(torch.float64), reference.to(torch.float64)
    size = wide_r.abs()
    tiny = torch.isfinite(wide_r) & (size < atol) & (size >= torch.finfo(reference.dtype).smallest_normal)
    off = tiny & ~((wide_c - wide_r).abs() <= NEAR_ZERO_RTOL * size)
    if not off.any():
        return None
    return (f"{where}: relative error above {NEAR_ZERO_RTOL:g} at magnitudes below atol {atol:g}: "
            f"{_positions(off, candidate, reference)}")


def _against_float64(candidate, reference, float64, tolerance, where, path, abs_err, rel_err) -> Comparison:
    """test_decomp's rule for fp16/bf16: no worse than the kernel itself, plus a little slack."""
    if float64.shape != reference.shape:
        return Comparison(False, f"{where}: float64 reference has shape {tuple(float64.shape)}, "
                                 f"expected {tuple(reference.shape)}", path=path)
    truth = float64.to(torch.float64)
    # positions where the low-precision outputs agree on NaN/inf carry no error
    agreed = (candidate.isnan() & reference.isnan()) | (candidate.isinf() & (candidate == reference))

    def largest_error(output: torch.Tensor) -> float:
        error = (output.to(torch.float64) - truth).abs()
        error = torch.where(agreed, torch.zeros_like(error), error.nan_to_num(nan=math.inf))
        return float(error.max())

    candidate_error, kernel_error = largest_error(candidate), largest_error(reference)
    slack = kernel_error_slack(reference.dtype, tolerance)
    ok = not candidate_error > kernel_error + slack
    message = "" if ok else (
        f"{where}: {reference.dtype} error against float64 is {candidate_error:g}, more than the kernel's own "
        f"{kernel_error:g} + {slack:g}")
    return Comparison(ok, message, abs_err, rel_err, (0.0, slack), kernel_error, path)
