"""Random ops as transformations of the core generators ``aten::rand`` and ``aten::randn``.

The review decomposes every RNG op onto ``rand``/``randn``; torch 2.13's core table
lacks most of them and its registered references trace to ``prims``.  The streams
differ from eager's (so these are checked by properties and statistics, not values),
but shape, dtype, device and support match.  An explicit ``generator`` cannot be
forwarded through the core overloads, so a non-None one raises NotImplementedError.
"""
from __future__ import annotations

import torch

from opspec.decompositions._common import aten, cast

LOW_PRECISION = (torch.float16, torch.bfloat16)


def _no_generator(generator) -> None:
    if generator is not None:
        raise NotImplementedError("core aten::rand/randn take no generator; pass generator=None")


def _float_work(dtype: torch.dtype) -> torch.dtype:
    return torch.float32 if dtype in LOW_PRECISION else dtype


def _check_float(t: torch.Tensor, what: str) -> None:
    if not t.dtype.is_floating_point:
        raise RuntimeError(f"{what} expects a floating point tensor, got {t.dtype}")


# The C type names the kernels' argument checks print, so a refused call reads the same.
C_NAMES = {torch.float16: "c10::Half", torch.bfloat16: "c10::BFloat16", torch.float32: "float", torch.float64: "double",
           torch.uint8: "unsigned char", torch.int8: "signed char", torch.int16: "short int", torch.int32: "int",
           torch.int64: "long int", torch.bool: "bool"}


def uniform(self: torch.Tensor, from_: float = 0.0, to: float = 1.0, *, generator=None) -> torch.Tensor:
    """U[from, to) shaped like self: from + (to - from) * rand (``from`` is spelled ``from_``)."""
    _no_generator(generator)
    _check_float(self, "uniform")
    largest = torch.finfo(self.dtype).max
    for name, bound in (("from", from_), ("to", to)):  # the kernel refuses bounds it cannot represent, inf included
        if not -largest <= bound <= largest:
            raise RuntimeError(f"{name} is out of bounds for {C_NAMES[self.dtype]}")
    if not from_ <= to:
        raise RuntimeError(f"uniform_ expects to return a [from, to) range, but found from={from_} > to={to}")
    work = _float_work(self.dtype)
    u = aten.rand.default(list(self.shape), dtype=work, device=self.device)
    return cast(aten.add.Scalar(aten.mul.Scalar(u, to - from_), from_), self.dtype)


def exponential(self: torch.Tensor, lambd: float = 1.0, *, generator=None) -> torch.Tensor:
    """Exp(lambd) shaped like self by inversion: -log1p(-u) / lambd, u in [0, 1)."""
    _no_generator(generator)
    _check_float(self, "exponential")
    if not lambd > 0:
        raise RuntimeError(f"exponential_ expects lambda > 0.0, but found lambda={lambd}")
    work = _float_work(self.dtype)
    u = aten.rand.default(list(self.shape), dtype=work, device=self.device)
    sample = aten.mul.Scalar(aten.log1p.default(aten.neg.default(u)), -1.0 / lambd)
    return cast(sample, self.dtype)


def bernoulli_p(self: torch.Tensor, p: float, *, generator=None) -> torch.Tensor:
    """Bernoulli(p) shaped like self, in self's dtype: rand < p."""
    _no_generator(generator)
    if not 0 <= p <= 1:
        raise RuntimeError(f"bernoulli_ expects p to be in [0, 1], but got p={p}")
    work = torch.float64 if self.dtype == torch.float64 else torch.float32
    u = aten.rand.default(list(self.shape), dtype=work, device=self.device)
    return cast(aten.lt.Scalar(u, p), self.dtype)


def normal_Tensor_float(mean: torch.Tensor, std: float = 1.0, *, generator=None) -> torch.Tensor:
    """N(mean, std**2) elementwise: mean + std * randn."""
    _no_generator(generator)
    _check_float(mean, "normal")
    if not std >= 0:
        raise RuntimeError(f"normal expects std >= 0.0, but found std {std}")
    work = _float_work(mean.dtype)
    z = aten.randn.default(list(mean.shape), dtype=work, device=mean.device)
    return cast(aten.add.Tensor(aten.mul.Scalar(z, std), cast(mean, work)), mean.dtype)


def normal_Tensor_Tensor(mean: torch.Tensor, std: torch.Tensor, *, generator=None) -> torch.Tensor:
    """N(mean, std**2) with both broadcast: mean + std * randn(broadcast shape)."""
    _no_generator(generator)
    _check_float(mean, "normal")
    out_dtype = torch.result_type(mean, std)
    work = _float_work(out_dtype)
    shape = torch.broadcast_shapes(mean.shape, std.shape)
    z = aten.randn.default(list(shape), dtype=work, device=mean.device)
    sample = aten.add.Tensor(aten.mul.Tensor(z, cast(std, work)), cast(mean, work))
    return cast(sample, out_dtype)


def rand_like(self, *, dtype=None, layout=None, device=None, pin_memory=None, memory_format=None):
    """aten::rand with self's shape; dtype/layout/device default to self's (result is contiguous)."""
    return aten.rand.default(
        list(self.shape),
        dtype=self.dtype if dtype is None else dtype,
        layout=self.layout if layout is None else layout,
        device=self.device if device is None else device,
        pin_memory=pin_memory,
    )


def randn_like(self, *, dtype=None, layout=None, device=None, pin_memory=None, memory_format=None):
    """aten::randn with self's shape; dtype/layout/device default to self's (result is contiguous)."""
    return aten.randn.default(
        list(self.shape),
        dtype=self.dtype if dtype is None else dtype,
        layout=self.layout if layout is None else layout,
        device=self.device if device is None else device,
        pin_memory=pin_memory,
    )


def _randint(low, high, size, dtype, layout, device, pin_memory):
    if not high > low:
        raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got from={low} >= to={high}")
    # The schema's default is int64, but an explicit None means the default float dtype, as in the kernel.
    dtype = torch.get_default_dtype() if dtype is None else dtype
    if not dtype.is_floating_point:  # the kernel refuses a range its integer dtype cannot hold
        info = (0, 1) if dtype == torch.bool else (torch.iinfo(dtype).min, torch.iinfo(dtype).max)
        if low < info[0]:
            raise RuntimeError(f"from is out of bounds for {C_NAMES[dtype]}")
        if high - 1 > info[1]:
            raise RuntimeError(f"to - 1 is out of bounds for {C_NAMES[dtype]}")
    # float64 draws keep every integer of a range below 2**52 reachable; the clamp guards
    # against low + (high - low) * u rounding up to high.
    u = aten.rand.default(list(size), dtype=torch.float64, layout=layout, device=device, pin_memory=pin_memory)
    value = aten.floor.default(aten.add.Scalar(aten.mul.Scalar(u, high - low), low))
    value = aten.clamp.default(value, low, high - 1)
    return aten._to_copy.default(value, dtype=dtype)


def randint(high, size, *, dtype=torch.int64, layout=None, device=None, pin_memory=None):
    """Integers uniform on [0, high): floor(high * rand) in float64, cast to dtype."""
    return _randint(0, high, size, dtype, layout, device, pin_memory)


def randint_low(low, high, size, *, dtype=torch.int64, layout=None, device=None, pin_memory=None):
    """Integers uniform on [low, high): floor(low + (high - low) * rand) in float64, cast to dtype."""
    return _randint(low, high, size, dtype, layout, device, pin_memory)


def rrelu_with_noise_functional(self: torch.Tensor, noise: torch.Tensor, lower=0.125, upper=1.0 / 3.0,
                                training: bool = False, generator=None):
    """Randomized leaky ReLU and its noise. Evaluating, the slope is the mean (lower + upper) / 2, exactly
    leaky_relu, and the noise comes back unchanged; training, each element at or below zero takes a slope
    from U[lower, upper), the others 1, and the noise returned is those slopes."""
    _no_generator(generator)
    if not training:
        return aten.leaky_relu.default(self, (lower + upper) / 2), aten.clone.default(noise)
    _check_float(self, "rrelu_with_noise")
    work = _float_work(self.dtype)
    u = aten.rand.default(list(self.shape), dtype=work, device=self.device)
    slope = cast(aten.add.Scalar(aten.mul.Scalar(u, upper - lower), lower), self.dtype)
    one = aten.scalar_tensor.default(1, dtype=self.dtype, device=self.device)
    slopes = aten.where.self(aten.le.Scalar(self, 0), slope, one)
    return aten.mul.Tensor(self, slopes), slopes
