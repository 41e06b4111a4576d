"""Distances in ULPs of a floating dtype, from the order of its bit patterns.

A value's *ordinal* is its bit pattern read as a sign-magnitude integer: consecutive floats have consecutive
ordinals, +0 and -0 share ordinal 0, and +inf sits one above the largest finite value. The distance between two
results is the difference of their ordinals; an error against the exact value is that distance less the exact
value's offset from its correctly rounded neighbour (:func:`ulp_error`), so a correctly rounded result errs by at
most 0.5 and a faithfully rounded one by less than 1.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

HUGE = float("inf")  # the error of a NaN against a number, or of a finite value against an infinity


@dataclass(frozen=True)
class Format:
    """The shape of an IEEE-style binary floating format."""

    dtype: torch.dtype
    bits: int  # storage width
    precision: int  # significand bits, the implicit one included

    @property
    def name(self) -> str:
        return str(self.dtype).removeprefix("torch.")

    @property
    def max_exponent(self) -> int:
        """The exponent of the largest binade (15 for float16)."""
        return 2 ** (self.bits - self.precision - 1) - 1

    @property
    def min_exponent(self) -> int:
        """The exponent of the smallest normal binade (-14 for float16)."""
        return 1 - self.max_exponent

    @property
    def normal_ordinal(self) -> int:
        """The ordinal of the smallest positive normal value; below it lie the subnormals."""
        return 1 << (self.precision - 1)

    @property
    def infinity_ordinal(self) -> int:
        return (2 ** (self.bits - self.precision) - 1) << (self.precision - 1)

    @property
    def nan_ordinal(self) -> int:
        """The canonical quiet NaN."""
        return self.infinity_ordinal + (1 << (self.precision - 2))

    def binade(self, exponent: int) -> tuple[int, int]:
        """The ordinals of the positive values in [2**exponent, 2**(exponent+1))."""
        start = (exponent - self.min_exponent + 1) << (self.precision - 1)
        return start, start + self.normal_ordinal - 1


FORMATS: dict[torch.dtype, Format] = {
    torch.float16: Format(torch.float16, 16, 11),
    torch.bfloat16: Format(torch.bfloat16, 16, 8),
    torch.float32: Format(torch.float32, 32, 24),
    torch.float64: Format(torch.float64, 64, 53),
}
_SIGNED = {16: torch.int16, 32: torch.int32, 64: torch.int64}


def format_of(dtype: torch.dtype) -> Format:
    if dtype not in FORMATS:
        raise ValueError(f"{dtype} is not a floating dtype with ULPs (float16, bfloat16, float32, float64)")
    return FORMATS[dtype]


def ordinals(values: torch.Tensor) -> np.ndarray:
    """The ordinal of each element (int64); NaNs get ordinals above infinity's."""
    fmt = format_of(values.dtype)
    bits = values.detach().cpu().contiguous().view(_SIGNED[fmt.bits]).numpy().astype(np.int64)
    magnitude = bits & np.int64((1 << (fmt.bits - 1)) - 1)
    return np.where(bits < 0, -magnitude, magnitude)


def from_ordinals(ords: np.ndarray, dtype: torch.dtype) -> torch.Tensor:
    """The values with these ordinals (ordinal 0 is +0)."""
    fmt = format_of(dtype)
    ords = np.asarray(ords, dtype=np.int64)
    magnitude = np.abs(ords)
    bits = np.where(ords < 0, magnitude | np.int64(-(1 << (fmt.bits - 1))), magnitude)
    signed = {16: np.int16, 32: np.int32, 64: np.int64}[fmt.bits]
    return torch.from_numpy(bits.astype(signed)).view(dtype)


def wide_values(ords: np.ndarray, fmt: Format, wide: type = np.longdouble) -> np.ndarray:
    """The values of ``ords`` in the numpy type ``wide`` for rounding decisions: infinity's ordinal stands for
    2**(emax+1) (round to nearest overflows exactly where it would round to that), ordinals beyond it for inf."""
    ords = np.asarray(ords, dtype=np.int64)
    inside = np.clip(ords, -fmt.infinity_ordinal + 1, fmt.infinity_ordinal - 1)
    values = from_ordinals(inside, fmt.dtype).to(torch.float64).numpy().astype(wide)
    magnitude = np.abs(ords)
    with np.errstate(over="ignore"):  # 2**1024 is inf in float64: only long double holds float64's
        overflow = np.ldexp(wide(1), fmt.max_exponent + 1)
    values = np.where(magnitude == fmt.infinity_ordinal, np.where(ords < 0, -overflow, overflow), values)
    return np.where(magnitude > fmt.infinity_ordinal, np.where(ords < 0, -np.inf, np.inf).astype(wide), values)


def distance(a: torch.Tensor, b: torch.Tensor) -> np.ndarray:
    """Signed distance ``a - b`` in ULPs of their dtype, element by element (float64).

    NaN against NaN is 0 and against anything else HUGE; an infinity against the same infinity is 0 and against
    anything else HUGE; +0 and -0 are 0 apart; the largest finite value and the smallest subnormal of the other
    sign are as far apart as the ordinals say."""
    if a.dtype != b.dtype:
        raise ValueError(f"distance between {a.dtype} and {b.dtype}: the dtypes must match")
    oa, ob = ordinals(a), ordinals(b)
    a64, b64 = a.detach().cpu().to(torch.float64).numpy(), b.detach().cpu().to(torch.float64).numpy()
    same_side = (oa >= 0) == (ob >= 0)  # there the int64 difference cannot overflow; across zero it is huge anyway
    far = np.where(same_side, (oa - ob).astype(np.float64), oa.astype(np.float64) - ob.astype(np.float64))
    nan_a, nan_b = np.isnan(a64), np.isnan(b64)
    inf_either = np.isinf(a64) | np.isinf(b64)
    far = np.where(inf_either, np.where(a64 == b64, 0.0, HUGE), far)
    return np.where(nan_a | nan_b, np.where(nan_a & nan_b, 0.0, HUGE), far)


def ulp_error(got: torch.Tensor, rounded: torch.Tensor, residual: np.ndarray) -> np.ndarray:
    """|got - exact| in ULPs, where the exact value lies ``residual`` ULPs from its correctly rounded ``rounded``
    (``residual`` in [-0.5, 0.5], signed like exact - rounded)."""
    steps = distance(got, rounded)
    return np.where(np.isinf(steps), HUGE, np.abs(steps - residual))
