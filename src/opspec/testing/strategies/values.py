"""Tensor contents and memory layouts: the values a kernel sees, built fast.

Bulk values come from a seeded torch generator (one hypothesis draw for the
seed), so a 64-element tensor costs a few microseconds instead of 64 draws;
the interesting parts -- the value pattern, the special values and where they
sit, the layout -- are hypothesis draws, so shrinking removes them one by one.
"""
from __future__ import annotations

import math

import torch

from opspec.spec.model import Interval
from opspec.testing.strategies import cached

# Patterns of bulk values. "ties" and "integers" repeat values, which is what
# exposes tie-breaking differences in ops that pick elements (max, sort, topk).
FLOAT_PATTERNS = ("normal", "wide", "ties", "integers")
TIE_HEAVY_PATTERNS = ("ties", "integers", "ties", "normal")
SCALES = (1.0, 1e-3, 1e3)
MAX_SPECIALS = 3
COMPLEX_PART_DOMAIN = Interval(-1e6, 1e6, True, True)
GAP_FILL = 7  # what the skipped elements of a strided view hold; never read by a correct kernel


def integer_bounds(dtype: torch.dtype, domain: Interval | None) -> tuple[int, int]:
    """The integers of ``dtype`` that lie in ``domain``."""
    info = torch.iinfo(dtype)
    low, high = info.min, info.max
    if domain is not None:
        if math.isfinite(domain.low):
            low = max(low, math.ceil(domain.low) + (0 if domain.low_closed or not domain.low.is_integer() else 1))
        if math.isfinite(domain.high):
            high = min(high, math.floor(domain.high) - (0 if domain.high_closed or not domain.high.is_integer() else 1))
    if low > high:
        raise ValueError(f"domain {domain} holds no {dtype} value")
    return low, high


def contains(domain: Interval | None, value: float) -> bool:
    if domain is None:
        return True
    if math.isnan(value):
        return False
    above = value >= domain.low if domain.low_closed else value > domain.low
    below = value <= domain.high if domain.high_closed else value < domain.high
    return above and below


def interior(domain: Interval | None) -> float:
    """A plain value inside ``domain``: what out-of-domain values are replaced by."""
    if domain is None:
        return 0.0
    low, high = domain.low, domain.high
    if math.isfinite(low) and math.isfinite(high):
        return (low + high) / 2
    if math.isfinite(low):
        return low + 1
    if math.isfinite(high):
        return high - 1
    return 0.0


def float_specials(dtype: torch.dtype, domain: Interval | None) -> list[float]:
    """Edge values worth planting: signed zeros, infinities, NaN, extremes of magnitude."""
    info = torch.finfo(dtype)
    candidates = [0.0, -0.0, 1.0, -1.0, 0.5, info.max / 2, -info.max / 2, info.tiny, -info.tiny,
                  info.smallest_normal / 4, float("inf"), float("-inf")]
    if domain is None:
        candidates.append(float("nan"))
    else:
        candidates += [b for b, closed in ((domain.low, domain.low_closed), (domain.high, domain.high_closed)) if closed]
    return [v for v in candidates if contains(domain, v)]


def integer_specials(dtype: torch.dtype, domain: Interval | None) -> list[int]:
    low, high = integer_bounds(dtype, domain)
    return sorted({v for v in (0, 1, -1, low, high) if low <= v <= high})


def _into_domain(raw: torch.Tensor, domain: Interval | None) -> torch.Tensor:
    """Map unconstrained float64 samples into the interval, keeping ties tied."""
    if domain is None:
        return raw
    low, high = domain.low, domain.high
    if math.isfinite(low) and math.isfinite(high):
        return low + (high - low) * torch.sigmoid(raw)
    if math.isfinite(low):
        return low + raw.abs()
    if math.isfinite(high):
        return high - raw.abs()
    return raw


def _bulk_floats(draw, numel: int, generator: torch.Generator, ties_often: bool) -> torch.Tensor:
    pattern = draw(cached.sampled_from(TIE_HEAVY_PATTERNS if ties_often else FLOAT_PATTERNS))
    if pattern == "normal":
        return torch.randn(numel, generator=generator, dtype=torch.float64) * draw(cached.sampled_from(SCALES))
    if pattern == "wide":  # magnitudes spread over twelve decades
        exponents = torch.randint(-6, 7, (numel,), generator=generator).double()
        return torch.randn(numel, generator=generator, dtype=torch.float64) * 10.0**exponents
    if pattern == "ties":
        pool = torch.randn(draw(cached.integers(1, 3)), generator=generator, dtype=torch.float64)
        return pool[torch.randint(len(pool), (numel,), generator=generator)]
    return torch.randint(-4, 5, (numel,), generator=generator).double()


def _plant(draw, flat: torch.Tensor, specials: list) -> None:
    """Overwrite a few drawn positions with drawn edge values (in place)."""
    if not specials or flat.numel() == 0:
        return
    count = draw(cached.integers(0, min(MAX_SPECIALS, flat.numel())))
    for _ in range(count):
        flat[draw(cached.integers(0, flat.numel() - 1))] = draw(cached.sampled_from(specials))


def float_values(draw, numel: int, dtype: torch.dtype, domain: Interval | None, generator, ties_often: bool,
                 overflowing_squares: bool = True):
    """``overflowing_squares=False``: the op squares its inputs, so no planted value's square overflows
    (op_traits.SQUARES_INPUTS)."""
    raw = _into_domain(_bulk_floats(draw, numel, generator, ties_often), domain)
    specials = float_specials(dtype, domain)
    if not overflowing_squares:
        opmath = torch.float32 if torch.finfo(dtype).bits < 32 else dtype
        limit = math.sqrt(torch.finfo(opmath).max)
        specials = [v for v in specials if not abs(v) >= limit]  # infinities too; NaN stays
    _plant(draw, raw, specials)
    if not overflowing_squares:  # nor may rounding to a narrow dtype make an infinity of a large value
        finite = torch.finfo(dtype).max
        raw = torch.where(raw.isnan(), raw, raw.clamp(-finite, finite))
    values = raw.to(dtype)
    if domain is not None:  # rounding to a narrow dtype can land on an open bound or overflow
        as_double = values.double()
        outside = as_double.isnan()
        outside |= (as_double < domain.low) if domain.low_closed else (as_double <= domain.low)
        outside |= (as_double > domain.high) if domain.high_closed else (as_double >= domain.high)
        values[outside] = interior(domain)
    return values


def integer_values(draw, numel: int, dtype: torch.dtype, domain: Interval | None, generator, ties_often: bool):
    low, high = integer_bounds(dtype, domain)
    small_low, small_high = max(low, -5), min(high, 5)
    if small_low > small_high:  # the domain lies away from zero
        small_low, small_high = low, min(high, low + 10)
    if ties_often or draw(cached.booleans):
        values = torch.randint(small_low, small_high + 1, (numel,), generator=generator, dtype=torch.int64)
    else:
        pool = torch.randint(small_low, small_high + 1, (draw(cached.integers(1, 3)),), generator=generator)
        values = pool[torch.randint(len(pool), (numel,), generator=generator)]
    _plant(draw, values, integer_specials(dtype, domain))
    return values.to(dtype)


def complex_parts(domain: Interval | None) -> Interval:
    """The interval both parts of a complex value come from: the default, or a bounded domain hint within it."""
    if domain is None or not (math.isfinite(domain.low) and math.isfinite(domain.high)):
        return COMPLEX_PART_DOMAIN
    low = max(domain.low, COMPLEX_PART_DOMAIN.low)
    high = min(domain.high, COMPLEX_PART_DOMAIN.high)
    return Interval(low, high, True, True) if low < high else COMPLEX_PART_DOMAIN


def values(draw, shape: tuple[int, ...], dtype: torch.dtype, domain: Interval | None = None,
           *, ties_often: bool = False, overflowing_squares: bool = True) -> torch.Tensor:
    """A contiguous CPU tensor of ``shape`` and ``dtype`` with values drawn as described above."""
    numel = math.prod(shape)
    if numel == 0:
        return torch.empty(shape, dtype=dtype)
    generator = torch.Generator().manual_seed(draw(cached.integers(0, 2**32 - 1)))
    if dtype == torch.bool:
        flat = torch.rand(numel, generator=generator) < draw(cached.sampled_from((0.5, 0.1, 0.9)))
    elif dtype.is_complex:
        real_dtype = torch.float32 if dtype == torch.complex64 else torch.float64
        # Complex parts stay finite and moderate: with infinite or overflowing parts, kernels follow
        # C99 Annex G while a decomposition's separate real arithmetic yields other NaN/inf patterns,
        # a difference no decomposition promises to match. A bounded domain hint narrows the parts.
        parts = complex_parts(domain)
        real = float_values(draw, numel, real_dtype, parts, generator, ties_often)
        imag = float_values(draw, numel, real_dtype, parts, generator, ties_often)
        flat = torch.complex(real, imag)
    elif dtype.is_floating_point:
        flat = float_values(draw, numel, dtype, domain, generator, ties_often, overflowing_squares)
    else:
        flat = integer_values(draw, numel, dtype, domain, generator, ties_often)
    return flat.reshape(shape)


# ---- layouts: the same values seen through the strides real graphs produce ----

LAYOUTS = ("contiguous", "contiguous", "transposed", "strided", "expanded")


def _transposed(draw, dense: torch.Tensor) -> torch.Tensor:
    rank = dense.dim()
    order = draw(cached.permutations(rank))
    inverse = sorted(range(rank), key=order.__getitem__)
    return dense.permute(order).contiguous().permute(inverse)


def _strided(draw, dense: torch.Tensor) -> torch.Tensor:
    """Every other element along one dim of a larger buffer, optionally offset by one."""
    dim = draw(cached.integers(0, dense.dim() - 1))
    offset = draw(cached.integers(0, 1))
    size = list(dense.shape)
    size[dim] = 2 * size[dim] + offset
    buffer = torch.full(size, GAP_FILL if dense.dtype != torch.bool else True, dtype=dense.dtype, device=dense.device)
    view = buffer.narrow(dim, offset, 2 * dense.shape[dim]).unflatten(dim, (dense.shape[dim], 2)).select(dim + 1, 0)
    view.copy_(dense)
    return view


def _expanded(draw, dense: torch.Tensor) -> torch.Tensor:
    """A size-1 slice broadcast along one dim (stride 0): its values repeat."""
    candidates = [d for d, size in enumerate(dense.shape) if size > 1]
    dim = draw(cached.sampled_from(candidates))
    return dense.narrow(dim, 0, 1).expand(dense.shape)


def layout(draw, dense: torch.Tensor, *, allow_views: bool = True) -> torch.Tensor:
    """``dense`` as a contiguous, transposed, strided or expanded tensor (same logical shape)."""
    if not allow_views or dense.numel() == 0:
        return dense
    kind = draw(cached.sampled_from(LAYOUTS))
    if kind == "transposed" and dense.dim() >= 2:
        return _transposed(draw, dense)
    if kind == "strided" and dense.dim() >= 1:
        return _strided(draw, dense)
    if kind == "expanded" and any(size > 1 for size in dense.shape):
        return _expanded(draw, dense)
    return dense


def storage_view(tensor: torch.Tensor) -> torch.Tensor:
    """The whole storage behind ``tensor`` as a flat tensor (what a repro must rebuild)."""
    length = tensor.untyped_storage().nbytes() // tensor.element_size()
    return tensor.as_strided((length,), (1,), 0)


def copy_preserving_layout(tensor: torch.Tensor) -> torch.Tensor:
    """A fresh tensor with the same values, sizes, strides and storage offset."""
    if tensor.numel() == 0:
        return tensor.clone()
    return storage_view(tensor).clone().as_strided(tensor.shape, tensor.stride(), tensor.storage_offset())
