"""Check the behavioural claims in a released version's prose against the installed torch.

Each claim quotes the sealed text (``opset/VERSION/core_ops.yaml`` or ``decompositions.yaml``:
testing notes, rationale, equivalents notes, exception and tolerance reasons) and runs torch to
see whether it holds. A quote that is no longer in its field is an error of this list (exit 2);
a claim torch contradicts is printed FALSE (exit 1) and belongs in ``opset/errata.yaml``.
Claims marked ``corrected`` quote the text as the errata correct it: an erratum whose truth no
special-case row can state (strides, a precondition torch does not check) cites such a claim
(``shown_by: - audit: QUOTE``), and the audit fails while the claim does not hold or an erratum
cites a claim this list does not have.

Claims not about torch's behaviour are not listed: how ONNX or StableHLO spell an op, why the
review kept an op core, what compilers fuse, numerical arguments about formulas that are not
torch's, and drawing advice for the strategies. Claims about other torch versions are skipped too.

    python tools/audit_prose.py [--opset 2026.12] [--false-only]
"""
from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import torch
from torch._decomp import core_aten_decompositions, decomposition_table
from torch.fx.experimental.proxy_tensor import make_fx

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "src"))
from opspec.cli import deprecated  # noqa: E402
from opspec.spec import errata as errata_mod  # noqa: E402
from opspec.spec import load  # noqa: E402

aten = torch.ops.aten
F32, F64, F16, I8, I32, I64, U8, BOOL = (torch.float32, torch.float64, torch.float16, torch.int8, torch.int32,
                                         torch.int64, torch.uint8, torch.bool)


@dataclass(frozen=True)
class Claim:
    entry: str  # op name (core op, or the op a rule decomposes with rule=True)
    field: str
    quote: str  # a substring of the sealed field
    holds: Callable[[], bool]
    rule: bool = False
    no_row: str | None = None  # for a false claim no erratum corrects: why
    corrected: bool = False  # the quote is in the text as corrected by the errata (the evidence an erratum cites)


def t(values, dtype=None) -> torch.Tensor:
    return torch.tensor(values, dtype=dtype)


def raises(call: Callable[[], object]) -> bool:
    try:
        call()
    except Exception:  # noqa: BLE001 - any refusal counts
        return True
    return False


def _compare_complex(name: str, overload: str):
    """An ordering comparison of complex inputs (torch refuses it: complex numbers have no order)."""
    z = torch.ones(2, dtype=torch.complex64)
    return getattr(getattr(aten, name), overload)(z, 1 if overload == "Scalar" else z)


def same(a: torch.Tensor, b: torch.Tensor) -> bool:
    return a.dtype == b.dtype and a.shape == b.shape and bool(torch.equal(a, b) or torch.allclose(a, b, equal_nan=True))


def inductor_generates_code(op) -> bool:
    """Inductor has a lowering of its own for ``op``, not a fallback that calls the ATen kernel."""
    from torch._inductor import lowering

    return op in lowering.lowerings and op not in lowering.fallbacks


def traced_ops(fn: Callable, *args, table=None) -> set[str]:
    """The aten ops a call becomes under torch's core decomposition table (or ``table``)."""
    gm = make_fx(fn, decomposition_table=core_aten_decompositions() if table is None else table)(*args)
    return {str(node.target) for node in gm.graph.nodes if node.op == "call_function"}


def nan_first(values) -> torch.Tensor:
    return t(values)


def _cat_legacy() -> bool:
    return aten.cat([t([1.0, 2.0]), torch.empty(0)], 0).shape == (2,)


def _native_dropout_eval() -> bool:
    x = torch.randn(5)
    out, mask = aten.native_dropout(x, 0.5, False)
    return torch.equal(out, x) and bool(mask.all()) and mask.dtype == BOOL


def _group_norm_backward_without_weight() -> bool:
    x = torch.randn(2, 4, 3)
    _, mean, rstd = aten.native_group_norm(x, None, None, 2, 4, 3, 2, 1e-5)
    return raises(lambda: aten.native_group_norm_backward(torch.randn(2, 4, 3), x, mean, rstd, None, 2, 4, 3, 2,
                                                          [True, True, True]))


def _batch_norm_no_training_placeholders() -> bool:
    x = torch.randn(2, 3, 4)
    out = aten._native_batch_norm_legit_no_training(x, None, None, torch.zeros(3), torch.ones(3), 0.1, 1e-5)
    return out[1].numel() == 0 and out[2].numel() == 0


def _batch_norm_training_invstd() -> bool:
    x = torch.randn(4, 3, 5, dtype=F64)
    _, mean, invstd = aten._native_batch_norm_legit(x, None, None, torch.zeros(3, dtype=F64), torch.ones(3, dtype=F64),
                                                    True, 0.1, 1e-5)
    return torch.allclose(invstd, 1 / torch.sqrt(x.var((0, 2), unbiased=False) + 1e-5))


def _copy_keeps_self_layout() -> bool:
    self = torch.zeros(3, 4).t()
    return aten.copy(self, torch.ones(4, 3, dtype=F64)).stride() == self.stride()


def _copy_broadcasts_and_casts() -> bool:
    out = aten.copy(torch.zeros(2, 3, dtype=F32), t([1.5, 2.5, 3.5], F64))
    return out.dtype == F32 and out.shape == (2, 3)


def _full_like_keeps_strides() -> bool:
    self = torch.zeros(3, 4).t()
    return aten.full_like(self, 1.0).stride() == self.stride()


def _rand_like_contiguous() -> bool:
    self = torch.zeros(2, 3, 4, 5).to(memory_format=torch.channels_last)
    return all(aten.rand_like(self, memory_format=fmt).is_contiguous()
               for fmt in (torch.preserve_format, torch.channels_last))


def _strided_tensors() -> list[torch.Tensor]:
    """Tensors whose strides are not the contiguous ones: transposed, channels_last, sliced."""
    return [torch.zeros(3, 4).t(), torch.zeros(2, 3, 4, 5).to(memory_format=torch.channels_last),
            torch.zeros(4, 6)[:, ::2]]


def _follows_memory_format(like: Callable) -> bool:
    """preserve_format (the default) keeps a channels_last input's layout; contiguous_format and channels_last give
    those layouts."""
    self = torch.zeros(2, 3, 4, 5).to(memory_format=torch.channels_last)
    plain = torch.zeros(2, 3, 4, 5)
    return (like(self).is_contiguous(memory_format=torch.channels_last)
            and like(self, memory_format=torch.preserve_format).is_contiguous(memory_format=torch.channels_last)
            and like(self, memory_format=torch.contiguous_format).is_contiguous()
            and like(plain, memory_format=torch.channels_last).is_contiguous(memory_format=torch.channels_last))


def _randn_like_contiguous() -> bool:
    return aten.randn_like(torch.zeros(2, 3, 4, 5).to(memory_format=torch.channels_last)).is_contiguous()


def _var_mean_welford() -> bool:
    var, mean = aten.var_mean.correction(t([float("inf"), -0.29]), None, correction=1)
    return bool(mean.isnan() and var.isnan()) and bool(aten.mean.dim(t([float("inf"), -0.29]), None).isinf())


def _addr_alpha_zero() -> bool:
    self = torch.zeros(2, 2)
    out = aten.addr(self, t([3e38, 1.0]), t([3e38, 1.0]), alpha=0)
    return not bool(out.isnan().any())


def _log_softmax_backward_0d() -> bool:
    out = aten._log_softmax(torch.tensor(0.5), 0, False)
    decomposition = decomposition_table[aten._log_softmax_backward_data.default]
    got = decomposition(torch.tensor(1.0), out, 0, F32)
    return got.shape == (1,) and aten._log_softmax_backward_data(torch.tensor(1.0), out, 0, F32).shape == ()


def _group_norm_decomposition_strided() -> bool:
    x = torch.randn(2, 4, 3, 5)
    _, mean, rstd = aten.native_group_norm(x, torch.ones(4), None, 2, 4, 15, 2, 1e-5)
    strided = torch.randn(2, 4, 5, 3).transpose(2, 3)  # spatial dims swapped: not viewable as [N, G, C/G, HxW]
    call = lambda fn: fn(strided, x, mean, rstd, torch.ones(4), 2, 4, 15, 2, [True, True, True])  # noqa: E731
    return not raises(lambda: call(aten.native_group_norm_backward)) and raises(
        lambda: call(decomposition_table[aten.native_group_norm_backward.default]))


def _std_overflow() -> bool:
    x = t([1e20, -1e20])
    return bool(aten.std.correction(x, None).isfinite()) and bool(aten.var.correction(x, None).sqrt().isinf())


def _decomposes_with(op, args, expected: set[str], forbid: set[str] = frozenset()) -> Callable[[], bool]:
    """The op's own entry in torch's tables (core first), applied once: its output holds an op naming each of
    ``expected`` (a substring such as ``index_put``) and none naming ``forbid``."""
    def check() -> bool:
        entry = core_aten_decompositions().get(op) or decomposition_table.get(op)
        found = traced_ops(lambda *a: op(*a), *args, table={op: entry} if entry else {})
        return all(any(e in f for f in found) for e in expected) and not any(b in f for b in forbid for f in found)
    return check


def _not_in_core_table(op) -> Callable[[], bool]:
    return lambda: op not in core_aten_decompositions()


CLAIMS: list[Claim] = [
    # --- testing.notes of core ops
    Claim("aten::_fft_c2r", "testing.notes", "it must be at least 1",
          lambda: raises(lambda: aten._fft_c2r(torch.randn(4, dtype=torch.complex64), [0], 0, 0))),
    Claim("aten::_local_scalar_dense", "testing.notes", "self must contain exactly one element",
          lambda: raises(lambda: aten._local_scalar_dense(t([1.0, 2.0])))),
    Claim("aten::_local_scalar_dense", "testing.notes", "a larger tensor is not checked and gives its first element",
          lambda: aten._local_scalar_dense(t([5.0, 2.0])) == 5.0 and aten._local_scalar_dense(t([[7, 1]])) == 7,
          corrected=True),
    Claim("aten::_local_scalar_dense", "testing.notes", "(shape [] or [1])",
          lambda: raises(lambda: aten._local_scalar_dense(t([[3.0]])))),
    Claim("aten::_log_softmax", "testing.notes", "half_to_float=True is CUDA-only",
          lambda: raises(lambda: aten._log_softmax(torch.randn(3, dtype=F16), 0, True))),
    Claim("aten::_softmax", "testing.notes", "half_to_float=True is only accepted on CUDA with float16 input (the CPU kernel raises)",
          lambda: raises(lambda: aten._softmax(torch.randn(3, dtype=F16), 0, True))),
    Claim("aten::_pdist_forward", "testing.notes", "self must be 2-D and contiguous",
          lambda: raises(lambda: aten._pdist_forward(torch.randn(3, 4).t(), 2.0))),
    Claim("aten::_pdist_forward", "testing.notes", "the output has n*(n-1)/2 entries",
          lambda: aten._pdist_forward(torch.randn(5, 3), 2.0).shape == (10,)),
    Claim("aten::_native_batch_norm_legit", "testing.notes", "input needs more than one value per channel",
          lambda: raises(lambda: aten._native_batch_norm_legit(torch.randn(1, 3), None, None, torch.zeros(3), torch.ones(3), True, 0.1, 1e-5))),
    Claim("aten::abs", "testing.notes", "Integer minimum values (e.g. -128 for int8) wrap around.",
          lambda: int(aten.abs(t([-128], I8))[0]) == -128),
    Claim("aten::add.Scalar", "testing.notes", "it does not raise self's dtype category except int->float/complex",
          lambda: aten.add.Scalar(t([1.0], F16), 1e3).dtype == F16 and aten.add.Scalar(t([1], I32), 2.5).dtype == F32),
    Claim("aten::add.Tensor", "testing.notes", "alpha must be integral for integer dtypes and bool-valued for bool",
          lambda: raises(lambda: aten.add.Tensor(t([1], I64), t([1], I64), alpha=0.5))
          and raises(lambda: aten.add.Tensor(t([True], BOOL), t([True], BOOL), alpha=2))),
    Claim("aten::addmm", "testing.notes", "beta=0 ignores self (NaNs in self are not propagated)",
          lambda: not bool(aten.addmm(torch.full((2, 2), float("nan")), torch.eye(2), torch.eye(2), beta=0).isnan().any())),
    Claim("aten::amax", "testing.notes", "An empty dim list reduces all dims.",
          lambda: aten.amax(torch.randn(2, 3), []).shape == ()),
    Claim("aten::amax", "testing.notes", "Reducing a zero-size dim raises.",
          lambda: raises(lambda: aten.amax(torch.zeros(2, 0), [1]))),
    Claim("aten::amin", "testing.notes", "Reducing a zero-size dim raises.",
          lambda: raises(lambda: aten.amin(torch.zeros(2, 0), [1]))),
    Claim("aten::any.dims", "testing.notes", "dim None or empty reduces all dims.",
          lambda: aten.any.dims(torch.ones(2, 3), None).shape == () and aten.any.dims(torch.ones(2, 3), []).shape == ()),
    Claim("aten::arange.start_step", "testing.notes", "length is ceil((end - start)/step)",
          lambda: aten.arange.start_step(0, 10, 3).numel() == 4 and aten.arange.start_step(1.0, 2.05, 0.5).numel() == 3),
    Claim("aten::argmax", "testing.notes", "dim None flattens the input; a zero-size reduced dim raises.",
          lambda: aten.argmax(t([[1.0, 5.0], [7.0, 2.0]])) == 2 and raises(lambda: aten.argmax(torch.zeros(2, 0), 1))),
    Claim("aten::argmin", "testing.notes", "dim None flattens the input; a zero-size reduced dim raises.",
          lambda: aten.argmin(t([[3.0, 5.0], [0.0, 2.0]])) == 2 and raises(lambda: aten.argmin(torch.zeros(2, 0), 1))),
    Claim("aten::atan2.out", "testing.notes", "an empty out tensor of the right dtype is resized",
          lambda: aten.atan2.out(torch.ones(3), torch.ones(3), out=torch.empty(0)).shape == (3,)),
    Claim("aten::avg_pool1d", "testing.notes", "padding must not exceed half of kernel_size",
          lambda: raises(lambda: aten.avg_pool1d(torch.randn(1, 1, 8), [2], [2], [2]))),
    Claim("aten::avg_pool2d", "testing.notes", "padding must be at most half the kernel size; an empty stride list means stride = kernel_size",
          lambda: raises(lambda: aten.avg_pool2d(torch.randn(1, 1, 8, 8), [2, 2], [2, 2], [2, 2]))
          and aten.avg_pool2d(torch.randn(1, 1, 8, 8), [2, 2], []).shape == (1, 1, 4, 4)),
    Claim("aten::avg_pool2d", "testing.notes", "output size is floor((in + 2*pad - k)/stride) + 1 (ceil with ceil_mode)",
          lambda: aten.avg_pool2d(torch.randn(1, 1, 7, 7), [2, 2], [2, 2]).shape == (1, 1, 3, 3)
          and aten.avg_pool2d(torch.randn(1, 1, 7, 7), [2, 2], [2, 2], [0, 0], True).shape == (1, 1, 4, 4)),
    Claim("aten::avg_pool3d", "testing.notes", "The CPU kernel in torch 2.13 rejects float16/bfloat16.",
          lambda: raises(lambda: aten.avg_pool3d(torch.randn(1, 1, 4, 4, 4, dtype=F16), [2, 2, 2]))
          and raises(lambda: aten.avg_pool3d(torch.randn(1, 1, 4, 4, 4, dtype=torch.bfloat16), [2, 2, 2]))),
    Claim("aten::bitwise_and.Scalar", "testing.notes", "float scalars are rejected",
          lambda: raises(lambda: aten.bitwise_and.Scalar(t([3], I64), 1.5))),
    Claim("aten::bitwise_or.Scalar", "testing.notes", "float scalars are rejected",
          lambda: raises(lambda: aten.bitwise_or.Scalar(t([3], I64), 1.5))),
    Claim("aten::bitwise_xor.Scalar", "testing.notes", "float scalars are rejected",
          lambda: raises(lambda: aten.bitwise_xor.Scalar(t([3], I64), 1.5))),
    Claim("aten::bitwise_left_shift.Tensor", "testing.notes", "Bits shifted out of a signed value wrap as in two's complement.",
          lambda: int(aten.bitwise_left_shift.Tensor(t([64], I8), t([1], I8))[0]) == -128),
    Claim("aten::cat", "testing.notes", "legacy 1-D empty tensors are skipped", _cat_legacy),
    Claim("aten::cat", "testing.notes", "mixed dtypes promote",
          lambda: aten.cat([t([1], I32), t([1.5], F64)]).dtype == F64),
    Claim("aten::clamp", "testing.notes", "At least one of min/max should be given.",
          lambda: raises(lambda: aten.clamp(t([1.0]), None, None))),
    Claim("aten::clamp.Tensor", "testing.notes", "at least one should be given",
          lambda: raises(lambda: aten.clamp.Tensor(t([1.0]), None, None))),
    Claim("aten::clone", "testing.notes", "channels_last requires a 4-d tensor",
          lambda: raises(lambda: aten.clone(torch.randn(2, 3, 4), memory_format=torch.channels_last))),
    Claim("aten::constant_pad_nd", "testing.notes", "negative values crop but must not make a dim negative",
          lambda: aten.constant_pad_nd(torch.randn(4), [-1, -1]).shape == (2,)
          and raises(lambda: aten.constant_pad_nd(torch.randn(4), [-3, -3]))),
    Claim("aten::convolution", "testing.notes", "Integer dtypes also run on CPU",
          lambda: not raises(lambda: aten.convolution(torch.ones(1, 1, 4, dtype=I64), torch.ones(1, 1, 2, dtype=I64), None,
                                                      [1], [0], [1], False, [0], 1))),
    Claim("aten::convolution", "testing.notes", "output_padding < max(stride, dilation) and all zeros unless transposed",
          lambda: raises(lambda: aten.convolution(torch.randn(1, 1, 4), torch.randn(1, 1, 2), None, [2], [0], [1], True, [2], 1))),
    Claim("aten::copy", "testing.notes", "the result has self's shape and dtype and src's values", _copy_broadcasts_and_casts),
    Claim("aten::cumsum", "testing.notes", "integer and bool inputs accumulate in int64 unless dtype is given",
          lambda: aten.cumsum(t([1], I32), 0).dtype == I64 and aten.cumsum(t([True]), 0).dtype == I64
          and aten.cumsum(t([1], I32), 0, dtype=I32).dtype == I32),
    Claim("aten::diagonal", "testing.notes", "any offset is allowed (out-of-range offsets give an empty result)",
          lambda: aten.diagonal(torch.randn(3, 3), 7).numel() == 0),
    Claim("aten::div.Scalar_mode", "testing.notes", "Integer division by zero raises.",
          lambda: raises(lambda: aten.div.Scalar_mode(t([1], I64), 0, rounding_mode="trunc"))),
    Claim("aten::div.Tensor", "testing.notes", "Division by zero yields inf/nan",
          lambda: bool(aten.div.Tensor(t([1.0, 0.0]), t([0.0, 0.0])).isinf()[0])
          and bool(aten.div.Tensor(t([1, 0], I64), t([0, 0], I64)).isnan()[1])),
    Claim("aten::div.Tensor_mode", "testing.notes", "Integer division by zero raises",
          lambda: raises(lambda: aten.div.Tensor_mode(t([1], I64), t([0], I64), rounding_mode="floor"))),
    Claim("aten::embedding", "testing.notes", "indices is an int64 or int32 tensor of any shape",
          lambda: aten.embedding(torch.randn(5, 2), t([[1, 2]], I32)).shape == (1, 2, 2)),
    Claim("aten::expand", "testing.notes", "-1 keeps the existing size; new leading dims may be added",
          lambda: aten.expand(torch.randn(3, 1), [2, -1, 4]).shape == (2, 3, 4)),
    Claim("aten::flip", "testing.notes", "dims are distinct",
          lambda: raises(lambda: aten.flip(torch.randn(3), [0, 0]))),
    Claim("aten::fmod.Scalar", "testing.notes", "Integer modulo by zero raises.",
          lambda: raises(lambda: aten.fmod.Scalar(t([1], I64), 0))),
    Claim("aten::fmod.Tensor", "testing.notes", "Integer division by zero raises.",
          lambda: raises(lambda: aten.fmod.Tensor(t([1], I64), t([0], I64)))),
    Claim("aten::gather", "testing.notes", "index is int64",
          lambda: raises(lambda: aten.gather(torch.randn(3), 0, t([0, 1], I32)))),
    *(Claim(f"aten::{name}.{overload}", "testing.notes", "Complex inputs are rejected (no ordering).",
            lambda name=name, overload=overload: raises(lambda: _compare_complex(name, overload)))
      for name in ("ge", "gt", "le", "lt") for overload in ("Scalar", "Tensor")),
    Claim("aten::index_select", "testing.notes", "index is a 0-D or 1-D int64/int32 tensor",
          lambda: aten.index_select(torch.randn(4), 0, torch.tensor(1, dtype=I32)).shape == (1,)
          and raises(lambda: aten.index_select(torch.randn(4), 0, t([[1]], I64)))),
    Claim("aten::log", "testing.notes", "Values <= 0 give -inf/NaN",
          lambda: bool(aten.log(t([0.0]))[0] == float("-inf")) and bool(aten.log(t([-1.0])).isnan()[0])),
    Claim("aten::max.dim", "testing.notes", "the reduced dim must be non-empty",
          lambda: raises(lambda: aten.max.dim(torch.zeros(2, 0), 1))),
    Claim("aten::min.dim", "testing.notes", "the reduced dim must be non-empty",
          lambda: raises(lambda: aten.min.dim(torch.zeros(2, 0), 1))),
    Claim("aten::mean", "testing.notes", "Integer inputs are rejected unless a floating dtype is passed.",
          lambda: raises(lambda: aten.mean(t([1, 2], I64))) and aten.mean(t([1, 2], I64), dtype=F32) == 1.5),
    Claim("aten::mean.dim", "testing.notes", "dim None or empty reduces all dims.",
          lambda: aten.mean.dim(torch.ones(2, 3), None).shape == () and aten.mean.dim(torch.ones(2, 3), []).shape == ()),
    Claim("aten::native_dropout", "testing.notes", "train=False returns input unchanged with an all-True mask", _native_dropout_eval),
    Claim("aten::native_group_norm_backward", "testing.notes", "the CPU kernel fails with weight=None in that case",
          _group_norm_backward_without_weight),
    Claim("aten::neg", "testing.notes", "Bool is rejected; integer minimum values wrap; uint8 wraps modulo 256.",
          lambda: raises(lambda: aten.neg(t([True]))) and int(aten.neg(t([-128], I8))[0]) == -128
          and int(aten.neg(t([1], U8))[0]) == 255),
    Claim("aten::nonzero", "testing.notes", "The output is int64 with shape [count, self.dim()]",
          lambda: aten.nonzero(t([[1.0, 0.0], [2.0, 3.0]])).shape == (3, 2) and aten.nonzero(t([1.0])).dtype == I64),
    Claim("aten::permute", "testing.notes", "negatives allowed",
          lambda: aten.permute(torch.randn(2, 3), [-1, 0]).shape == (3, 2)),
    Claim("aten::pow.Scalar", "testing.notes", "with an integral base and integer exponent tensor, negative exponents are rejected",
          lambda: raises(lambda: aten.pow.Scalar(2, t([-1], I64)))),
    Claim("aten::pow.Tensor_Scalar", "testing.notes", "Integer self rejects negative integer exponents",
          lambda: raises(lambda: aten.pow.Tensor_Scalar(t([2], I64), -1))),
    Claim("aten::pow.Tensor_Scalar", "testing.notes", "a float exponent promotes integer self to float",
          lambda: aten.pow.Tensor_Scalar(t([4], I64), 0.5).dtype == F32),
    Claim("aten::pow.Tensor_Tensor", "testing.notes", "Negative bases with fractional exponents give NaN",
          lambda: bool(aten.pow.Tensor_Tensor(t([-8.0]), t([0.5])).isnan()[0])),
    Claim("aten::pow.Tensor_Tensor", "testing.notes", "integer dtypes reject negative exponents",
          lambda: raises(lambda: aten.pow.Tensor_Tensor(t([2], I64), t([-1], I64)))),
    Claim("aten::rand", "testing.notes", "Values lie in [0, 1)",
          lambda: bool(((lambda x: (x >= 0) & (x < 1))(aten.rand([10000]))).all())),
    Claim("aten::randperm", "testing.notes", "Output contains each integer in [0, n) exactly once",
          lambda: torch.equal(aten.randperm(50).sort().values, torch.arange(50))),
    Claim("aten::randperm", "testing.notes", "dtype must be able to represent n-1",
          lambda: raises(lambda: aten.randperm(300, dtype=I8))),
    Claim("aten::reciprocal", "testing.notes", "Zero inputs give inf",
          lambda: bool(aten.reciprocal(t([0.0])).isinf()[0])),
    Claim("aten::reflection_pad1d", "testing.notes", "Each padding amount must be smaller than the padded dimension's size.",
          lambda: raises(lambda: aten.reflection_pad1d(torch.randn(1, 3), [3, 0]))
          and aten.reflection_pad1d(torch.randn(1, 3), [2, 2]).shape == (1, 7)),
    Claim("aten::reflection_pad2d", "testing.notes", "each amount must be smaller than the corresponding input size",
          lambda: raises(lambda: aten.reflection_pad2d(torch.randn(1, 3, 3), [3, 0, 0, 0]))),
    Claim("aten::reflection_pad3d", "testing.notes", "each amount must be smaller than the corresponding input size",
          lambda: raises(lambda: aten.reflection_pad3d(torch.randn(1, 3, 3, 3), [3, 0, 0, 0, 0, 0]))),
    Claim("aten::remainder.Scalar", "testing.notes", "Integer modulo by zero raises.",
          lambda: raises(lambda: aten.remainder.Scalar(t([1], I64), 0))),
    Claim("aten::remainder.Tensor", "testing.notes", "Integer modulo by zero raises.",
          lambda: raises(lambda: aten.remainder.Tensor(t([1], I64), t([0], I64)))),
    Claim("aten::repeat", "testing.notes", "len(repeats) >= rank; extra entries add leading dims.",
          lambda: raises(lambda: aten.repeat(torch.randn(2, 3), [2])) and aten.repeat(torch.randn(2), [3, 1]).shape == (3, 2)),
    Claim("aten::replication_pad2d", "testing.notes", "padded dims must be non-empty; amounts may exceed the input size",
          lambda: raises(lambda: aten.replication_pad2d(torch.randn(1, 0, 3), [1, 1, 1, 1]))
          and aten.replication_pad2d(torch.randn(1, 2, 2), [5, 5, 5, 5]).shape == (1, 12, 12)),
    Claim("aten::replication_pad3d", "testing.notes", "padded dims must be non-empty",
          lambda: raises(lambda: aten.replication_pad3d(torch.randn(1, 0, 2, 2), [1, 1, 1, 1, 1, 1]))),
    Claim("aten::scatter_reduce.two", "testing.notes", "amax/amin reject complex; mean rejects bool.",
          lambda: raises(lambda: aten.scatter_reduce.two(torch.ones(3, dtype=torch.complex64), 0, t([0], I64),
                                                         torch.ones(1, dtype=torch.complex64), "amax"))
          and raises(lambda: aten.scatter_reduce.two(t([True, False]), 0, t([0], I64), t([True]), "mean"))),
    Claim("aten::select.int", "testing.notes", "self must have rank >= 1",
          lambda: raises(lambda: aten.select.int(torch.tensor(1.0), 0, 0))),
    Claim("aten::slice.Tensor", "testing.notes", "step >= 1; start/end may be None, negative or out of range (clamped).",
          lambda: raises(lambda: aten.slice.Tensor(torch.randn(4), 0, 0, 4, 0))
          and aten.slice.Tensor(torch.randn(4), 0, -10, 100).shape == (4,)),
    Claim("aten::sort", "testing.notes", "NaNs sort as the largest value",
          lambda: bool(aten.sort(t([float("nan"), 1.0, float("inf")]))[0][-1].isnan())
          and bool(aten.sort(t([float("nan"), 1.0]), descending=True)[0][0].isnan())),
    Claim("aten::split_with_sizes", "testing.notes", "split_sizes are non-negative and sum to self.size(dim)",
          lambda: raises(lambda: aten.split_with_sizes(torch.randn(4), [1, 2]))),
    Claim("aten::squeeze.dim", "testing.notes", "(a 0-d tensor accepts 0 or -1); dims whose size is not 1 are left alone",
          lambda: aten.squeeze.dim(torch.tensor(1.0), -1).shape == () and aten.squeeze.dim(torch.randn(2, 3), 0).shape == (2, 3)),
    Claim("aten::squeeze.dims", "testing.notes", "listed dims whose size is not 1 are left unchanged",
          lambda: aten.squeeze.dims(torch.randn(2, 1, 3), [0, 1]).shape == (2, 3)),
    Claim("aten::sum.dim_IntList", "testing.notes", "dim None or empty reduces all dims.",
          lambda: aten.sum.dim_IntList(torch.ones(2, 3), None).shape == () and aten.sum.dim_IntList(torch.ones(2, 3), []).shape == ()),
    Claim("aten::sym_is_contiguous", "testing.notes", "channels_last needs a 4-d tensor and channels_last_3d a 5-d one",
          lambda: raises(lambda: aten.sym_is_contiguous(torch.randn(2, 3), torch.channels_last))),
    Claim("aten::sym_size.int", "testing.notes", "self must have rank >= 1",
          lambda: raises(lambda: aten.sym_size.int(torch.tensor(1.0), 0))),
    Claim("aten::sym_stride.int", "testing.notes", "self must have rank >= 1",
          lambda: raises(lambda: aten.sym_stride.int(torch.tensor(1.0), 0))),
    Claim("aten::topk", "testing.notes", "0 <= k <= self.size(dim)",
          lambda: raises(lambda: aten.topk(torch.randn(3), 4)) and aten.topk(torch.randn(3), 0)[0].numel() == 0),
    Claim("aten::upsample_bilinear2d.vec", "testing.notes", "Exactly one of output_size and scale_factors must be given",
          lambda: raises(lambda: aten.upsample_bilinear2d.vec(torch.randn(1, 1, 2, 2), [4, 4], False, [2.0, 2.0]))
          and raises(lambda: aten.upsample_bilinear2d.vec(torch.randn(1, 1, 2, 2), None, False, None))),
    Claim("aten::upsample_nearest2d.vec", "testing.notes", "Exactly one of output_size and scale_factors must be given.",
          lambda: raises(lambda: aten.upsample_nearest2d.vec(torch.randn(1, 1, 2, 2), [4, 4], [2.0, 2.0]))),
    Claim("aten::var.correction", "testing.notes", "correction None means 1 (Bessel); the result is inf/nan when N - correction <= 0.",
          lambda: torch.allclose(aten.var.correction(t([1.0, 3.0]), None), t(2.0))
          and not bool(aten.var.correction(t([1.0]), None).isfinite())),
    Claim("aten::var.dim", "testing.notes", "dim None reduces all dims.",
          lambda: aten.var.dim(torch.randn(2, 3), None).shape == ()),
    Claim("aten::view", "testing.notes", "(one -1 entry may be inferred); self's strides must allow the view",
          lambda: aten.view(torch.randn(2, 3), [-1]).shape == (6,) and raises(lambda: aten.view(torch.randn(2, 3).t(), [6]))),
    Claim("aten::where.self", "testing.notes", "condition is a bool tensor",
          lambda: raises(lambda: aten.where.self(t([1.0]), t([1.0]), t([2.0])))),
    Claim("aten::where.self", "testing.notes", "self/other promote",
          lambda: aten.where.self(t([True]), t([1], I32), t([2.0], F64)).dtype == F64),
    Claim("aten::_embedding_bag", "testing.notes", "per_sample_weights is None or shaped like indices and only allowed with mode 0",
          lambda: raises(lambda: aten._embedding_bag(torch.randn(5, 2), t([0, 1], I64), t([0], I64), False, 1, False,
                                                      torch.ones(2)))),
    # --- equivalents.notes of core ops
    Claim("aten::abs", "equivalents.notes", "For complex input torch returns the real magnitude",
          lambda: aten.abs(t([3 + 4j], torch.complex64)).dtype == F32 and float(aten.abs(t([3 + 4j], torch.complex64))[0]) == 5.0),
    Claim("aten::add.Tensor", "equivalents.notes", "bool + bool is logical or in torch.",
          lambda: torch.equal(aten.add.Tensor(t([True, True, False]), t([True, False, False])), t([True, True, False]))),
    Claim("aten::mul.Tensor", "equivalents.notes", "bool * bool is logical and in torch.",
          lambda: torch.equal(aten.mul.Tensor(t([True, True, False]), t([True, False, False])), t([True, False, False]))),
    Claim("aten::sub.Tensor", "equivalents.notes", "torch rejects bool subtraction.",
          lambda: raises(lambda: aten.sub.Tensor(t([True]), t([False])))),
    Claim("aten::amax", "equivalents.notes", "an empty dim list reduces over all dims in torch",
          lambda: aten.amax(torch.randn(2, 3), []).shape == ()),
    Claim("aten::argmax", "equivalents.notes", "torch returns the first occurrence on ties",
          lambda: int(aten.argmax(t([1.0, 3.0, 3.0, 3.0]))) == 1),
    Claim("aten::argmax", "equivalents.notes", "With dim=None torch flattens first",
          lambda: aten.argmax(torch.randn(2, 3)).shape == ()),
    Claim("aten::ceil", "equivalents.notes", "Integer inputs are returned unchanged by torch",
          lambda: same(aten.ceil(t([3, -2], I64)), t([3, -2], I64))),
    Claim("aten::floor", "equivalents.notes", "Integer inputs are returned unchanged by torch",
          lambda: same(aten.floor(t([3, -2], I64)), t([3, -2], I64))),
    Claim("aten::clamp", "equivalents.notes", "When min > max torch sets every element to max",
          lambda: torch.equal(aten.clamp(t([-5.0, 0.0, 5.0]), 2.0, 1.0), t([1.0, 1.0, 1.0]))),
    Claim("aten::div.Tensor", "equivalents.notes", "torch div.Tensor promotes integers to float first",
          lambda: aten.div.Tensor(t([7], I64), t([2], I64)).dtype == F32 and float(aten.div.Tensor(t([7], I64), t([2], I64))[0]) == 3.5),
    Claim("aten::embedding", "equivalents.notes", "padding_idx, scale_grad_by_freq and sparse only affect the backward pass",
          lambda: torch.equal(aten.embedding(w := torch.randn(4, 2), t([0, 1], I64), padding_idx=1),
                              aten.embedding(w, t([0, 1], I64)))),
    Claim("aten::maximum", "equivalents.notes", "torch propagates NaN",
          lambda: bool(aten.maximum(t([float("nan"), 1.0]), t([1.0, float("nan")])).isnan().all())),
    Claim("aten::minimum", "equivalents.notes", "torch propagates NaN",
          lambda: bool(aten.minimum(t([float("nan"), 1.0]), t([1.0, float("nan")])).isnan().all())),
    Claim("aten::_native_batch_norm_legit", "equivalents.notes", "torch returns save_mean and save_invstd (inverse std), not variance",
          _batch_norm_training_invstd),
    Claim("aten::_native_batch_norm_legit_no_training", "equivalents.notes",
          "torch's second and third outputs are empty placeholders in this mode", _batch_norm_no_training_placeholders),
    Claim("aten::max_pool2d_with_indices", "equivalents.notes", "torch indexes within each H*W plane",
          lambda: int(aten.max_pool2d_with_indices(torch.arange(8.0).view(1, 2, 2, 2), [2, 2])[1].max()) == 3),
    Claim("aten::nonzero", "equivalents.notes", "torch's [count, rank]",
          lambda: aten.nonzero(t([[1.0, 0.0, 2.0]])).shape == (2, 2)),
    Claim("aten::prod", "equivalents.notes", "integer/bool inputs accumulate in int64 in torch",
          lambda: aten.prod(t([2, 3], I32)).dtype == I64 and aten.prod(t([True, True])).dtype == I64),
    Claim("aten::sum.dim_IntList", "equivalents.notes", "integer/bool inputs accumulate in int64 in torch",
          lambda: aten.sum.dim_IntList(t([2, 3], I32), [0]).dtype == I64 and aten.sum.dim_IntList(t([True]), [0]).dtype == I64),
    Claim("aten::remainder.Tensor", "equivalents.notes", "ONNX Mod with fmod=0 matches Python semantics",
          lambda: torch.equal(aten.remainder.Tensor(t([-7, 7], I64), t([3, -3], I64)), t([2, -2], I64))),
    Claim("aten::fmod.Tensor", "equivalents.notes", "StableHLO remainder has the same sign-of-dividend semantics",
          lambda: torch.equal(aten.fmod.Tensor(t([-7, 7], I64), t([3, -3], I64)), t([-1, 1], I64))),
    Claim("aten::round", "equivalents.notes", "ONNX Round also rounds half to even",
          lambda: torch.equal(aten.round(t([0.5, 1.5, 2.5, -0.5])), t([0.0, 2.0, 2.0, -0.0]))),
    Claim("aten::sign", "equivalents.notes", "torch.sign(NaN) is NaN in torch",
          lambda: bool(aten.sign(t([float("nan")])).isnan()[0])),
    Claim("aten::slice.Tensor", "equivalents.notes", "start/end are clamped to the dim size in torch",
          lambda: aten.slice.Tensor(torch.randn(4), 0, 2, 100).shape == (2,)),
    Claim("aten::view", "equivalents.notes", "torch treats 0 as a literal size",
          lambda: aten.view(torch.randn(0, 3), [0, 3]).shape == (0, 3) and raises(lambda: aten.view(torch.randn(2, 3), [0, 3]))),
    Claim("aten::upsample_nearest2d.vec", "equivalents.notes", "nearest_mode=floor reproduces torch's legacy nearest rule",
          lambda: torch.equal(aten.upsample_nearest2d.vec(torch.arange(3.0).view(1, 1, 1, 3), [1, 5], None)[0, 0, 0],
                              torch.arange(3.0)[torch.floor(torch.arange(5) * (3 / 5)).long()])),
    Claim("aten::bmm", "equivalents.notes", "torch bmm requires equal batch sizes",
          lambda: raises(lambda: aten.bmm(torch.randn(2, 2, 2), torch.randn(1, 2, 2)))),
    # --- rationale and exception reasons of core ops
    Claim("aten::div.Scalar", "rationale", "integer inputs promote to the default float dtype",
          lambda: aten.div.Scalar(t([3], I64), 2).dtype == torch.get_default_dtype()),
    Claim("aten::div.Tensor", "rationale", "always produces a floating result, even for integer inputs",
          lambda: aten.div.Tensor(t([4], I64), t([2], I64)).dtype.is_floating_point),
    Claim("aten::div.Tensor_mode", "rationale", "1.0 // 0.1 gives 9, whereas floor(1.0/0.1) gives 10",
          lambda: float(aten.div.Tensor_mode(t([1.0]), t([0.1]), rounding_mode="floor")[0]) == 9.0
          and float(torch.floor(t([1.0]) / t([0.1]))[0]) == 10.0),
    Claim("aten::expm1", "rationale", "x = 1e-10 gives 0 instead of 1e-10",
          lambda: float(aten.exp(t([1e-10]))[0] - 1) == 0.0 and abs(float(aten.expm1(t([1e-10]))[0]) - 1e-10) < 1e-16),
    Claim("aten::log1p", "rationale", "x = 1e-10 in float32",
          lambda: float(aten.log(1 + t([1e-10]))[0]) == 0.0 and abs(float(aten.log1p(t([1e-10]))[0]) - 1e-10) < 1e-16),
    Claim("aten::log10", "rationale", "returns exact results for exact powers of ten",
          lambda: torch.equal(aten.log10(t([1.0, 10.0, 100.0, 1000.0, 1e6])), t([0.0, 1.0, 2.0, 3.0, 6.0]))),
    Claim("aten::log2", "rationale", "gives exact results for powers of two",
          lambda: torch.equal(aten.log2(t([1.0, 2.0, 1024.0, 0.125])), t([0.0, 1.0, 10.0, -3.0]))),
    Claim("aten::maximum", "rationale", "Elementwise maximum that propagates NaN",
          lambda: bool(aten.maximum(t([float("nan")]), t([1.0])).isnan()[0])),
    Claim("aten::minimum", "rationale", "Elementwise minimum that propagates NaN",
          lambda: bool(aten.minimum(t([float("nan")]), t([1.0])).isnan()[0])),
    Claim("aten::pow.Scalar", "rationale", "pow(2, int tensor) stays int64, pow(2.5, int tensor) becomes float32",
          lambda: aten.pow.Scalar(2, t([3], I64)).dtype == I64 and aten.pow.Scalar(2.5, t([3], I64)).dtype == F32),
    Claim("aten::reciprocal", "rationale", "integer inputs promote to float",
          lambda: aten.reciprocal(t([2], I64)).dtype == F32),
    Claim("aten::round", "rationale", "torch.round rounds halves to even",
          lambda: torch.equal(aten.round(t([0.5, 1.5, 2.5])), t([0.0, 2.0, 2.0]))),
    Claim("aten::copy", "rationale", "copy(self, src) broadcasts src to self's shape, casts it to self's dtype and keeps self's layout",
          lambda: _copy_broadcasts_and_casts() and _copy_keeps_self_layout()),
    Claim("aten::full_like", "rationale", "(with preserve_format) the strides of self", _full_like_keeps_strides),
    Claim("aten::var.dim", "rationale", "unbiased=True is correction 1, False is 0",
          lambda: torch.allclose(aten.var.dim(x := torch.randn(5), None, True), aten.var.correction(x, None, correction=1))
          and torch.allclose(aten.var.dim(x, None, False), aten.var.correction(x, None, correction=0))),
    Claim("aten::elu", "rationale", "the negative branch should be alpha*(exp(x) - 1)",
          lambda: torch.allclose(aten.elu(t([-1.0]), 2.0, 1.0, 1.0), 2.0 * (torch.exp(t([-1.0])) - 1))),
    Claim("aten::bitwise_right_shift.Tensor", "rationale", "torch's only decomposition produces a prims op",
          lambda: aten.bitwise_right_shift.Tensor not in core_aten_decompositions()
          and any("prims" in op for op in traced_ops(lambda a, b: aten.bitwise_right_shift.Tensor(a, b), t([8], I64), t([1], I64),
                                                     table=decomposition_table))),
    Claim("aten::adaptive_avg_pool1d", "exceptions.reason", "The default entry routes it through the 2-D adaptive pool on an unsqueezed input.",
          _decomposes_with(aten.adaptive_avg_pool1d.default, (torch.randn(1, 2, 6), [3]), {"aten._adaptive_avg_pool2d."})),
    Claim("aten::avg_pool1d", "exceptions.reason", "The default entry lowers it to avg_pool2d on an unsqueezed input.",
          _decomposes_with(aten.avg_pool1d.default, (torch.randn(1, 2, 6), [2]), {"aten.avg_pool2d."})),
    Claim("aten::col2im", "exceptions.reason", "The default entry rewrites it as index arithmetic plus an accumulating _unsafe_index_put.",
          _decomposes_with(aten.col2im.default, (torch.randn(1, 4, 4), [3, 3], [2, 2], [1, 1], [0, 0], [1, 1]),
                           {"aten._unsafe_index_put.", "aten.arange."})),
    Claim("aten::embedding_dense_backward", "exceptions.reason", "The default entry rewrites it with masked index_put accumulation.",
          _decomposes_with(aten.embedding_dense_backward.default, (torch.randn(3, 2), t([0, 1, 1], I64), 4, -1, False),
                           {"masked_index_put"})),
    Claim("aten::fill.Scalar", "exceptions.reason", "The default entry replaces it with full_like.",
          _decomposes_with(aten.fill.Scalar, (torch.randn(3), 2.0), {"aten.full_like."}, {"aten.fill."})),
    Claim("aten::reflection_pad1d", "exceptions.reason", "torch 2.13's table decomposes it into index-based gathers",
          _decomposes_with(aten.reflection_pad1d.default, (torch.randn(1, 4), [2, 2]), {"_unsafe_index", "aten.arange."}, {"reflection_pad"})),
    Claim("aten::replication_pad2d", "exceptions.reason", "The default entry builds it from clamped arange indices and _unsafe_index gathers.",
          _decomposes_with(aten.replication_pad2d.default, (torch.randn(1, 3, 3), [1, 1, 1, 1]),
                           {"aten._unsafe_index.", "aten.arange.", "aten.clamp."})),
    Claim("aten::select_scatter", "exceptions.reason", "The default entry rewrites it as arange/eq/where over an expanded src.",
          _decomposes_with(aten.select_scatter.default, (torch.randn(3, 4), torch.randn(4), 0, 1),
                           {"aten.arange.", "aten.eq.", "aten.where.", "aten.expand."})),
    Claim("aten::squeeze.dim", "exceptions.reason", "The default entry redirects it to squeeze.dims with a one-element list.",
          _decomposes_with(aten.squeeze.dim, (torch.randn(3, 1), 1), {"aten.squeeze.dims"})),
    Claim("aten::var.dim", "exceptions.reason", "the default table replaces it with var.correction",
          _decomposes_with(aten.var.dim, (torch.randn(3, 4), [1]), {"aten.var.correction"})),
    Claim("aten::native_group_norm_backward", "exceptions.reason", "The default entry expands it into reductions and pointwise ops.",
          lambda: "aten.native_group_norm_backward.default" not in traced_ops(
              lambda g, x, m, r, w: aten.native_group_norm_backward(g, x, m, r, w, 2, 4, 3, 2, [True, True, True]),
              torch.randn(2, 4, 3), torch.randn(2, 4, 3), torch.randn(2, 2), torch.rand(2, 2) + 1, torch.ones(4))),
    Claim("aten::native_layer_norm_backward", "exceptions.reason", "The default entry expands it into reductions and pointwise ops.",
          lambda: "aten.native_layer_norm_backward.default" not in traced_ops(
              lambda g, x, m, r: aten.native_layer_norm_backward(g, x, [3], m, r, None, None, [True, False, False]),
              torch.randn(2, 3), torch.randn(2, 3), torch.randn(2, 1), torch.rand(2, 1) + 1)),
    # --- decomposition rules (prose about eager and torch's own decompositions)
    Claim("aten::addcdiv", "testing.notes", "Integer dtypes are rejected by eager.",
          lambda: raises(lambda: aten.addcdiv(t([1], I64), t([1], I64), t([1], I64))), rule=True),
    Claim("aten::clamp_max", "testing.notes", "the kernel rejects a bool bound on bool tensors",
          lambda: raises(lambda: aten.clamp_max(t([True, False]), True)), rule=True),
    Claim("aten::clamp_min", "testing.notes", "the kernel rejects a bool bound on bool tensors",
          lambda: raises(lambda: aten.clamp_min(t([True, False]), True)), rule=True),
    Claim("aten::einsum", "testing.notes", "Bool operands are rejected by eager (bmm).",
          lambda: raises(lambda: aten.einsum("ij,jk->ik", [torch.ones(2, 2, dtype=BOOL), torch.ones(2, 2, dtype=BOOL)])), rule=True),
    Claim("aten::floor_divide", "testing.notes", "For integer dtypes other must be nonzero (eager raises ZeroDivisionError).",
          lambda: raises(lambda: aten.floor_divide(t([1], I64), t([0], I64))), rule=True),
    Claim("aten::div.Tensor_mode", "testing.notes", "Integer division by zero raises in eager",
          lambda: raises(lambda: aten.div.Tensor_mode(t([1], I64), t([0], I64), rounding_mode="trunc")), rule=True),
    Claim("aten::baddbmm", "testing.notes", "beta == 0 ignores self entirely (nan/inf in self do not propagate), as in eager.",
          lambda: not bool(aten.baddbmm(torch.full((1, 2, 2), float("nan")), torch.randn(1, 2, 2), torch.randn(1, 2, 2), beta=0)
                           .isnan().any()), rule=True),
    Claim("aten::addr", "testing.notes", "with alpha = 0 the kernel skips the outer product", _addr_alpha_zero, rule=True),
    Claim("aten::max", "testing.notes", "self must be non-empty; nan propagates as in eager.",
          lambda: raises(lambda: aten.max(torch.zeros(0))) and bool(aten.max(t([1.0, float("nan")])).isnan()), rule=True),
    Claim("aten::min", "testing.notes", "self must be non-empty; nan propagates as in eager.",
          lambda: raises(lambda: aten.min(torch.zeros(0))) and bool(aten.min(t([1.0, float("nan")])).isnan()), rule=True),
    Claim("aten::var_mean.correction", "testing.notes", "var_mean([inf, -0.29]) = (nan, nan)", _var_mean_welford, rule=True),
    Claim("aten::_log_softmax_backward_data", "testing.notes",
          "on 0-dim inputs torch's decomposition returns shape (1,) where the kernel returns ()", _log_softmax_backward_0d, rule=True),
    Claim("aten::native_group_norm_backward", "testing.notes", "torch's decomposition calls view() and fails on strided inputs the kernel accepts",
          _group_norm_decomposition_strided, rule=True),
    Claim("aten::glu", "testing.notes", "self.size(dim) must be even.",
          lambda: raises(lambda: aten.glu(torch.randn(3), 0)), rule=True),
    Claim("aten::group_norm", "testing.notes", "C must be divisible by num_groups.",
          lambda: raises(lambda: aten.group_norm(torch.randn(2, 3, 4), 2)), rule=True),
    Claim("aten::copy", "testing.notes", "the result is contiguous",
          lambda: aten.copy(torch.zeros(3, 4).t(), torch.ones(4, 3)).is_contiguous(), rule=True),
    Claim("aten::copy", "testing.notes", "the result has self's strides",
          lambda: all(aten.copy(s, torch.ones(s.shape)).stride() == s.stride() for s in _strided_tensors()),
          rule=True, corrected=True),
    Claim("aten::rand_like", "testing.notes", "result is contiguous whatever memory_format says", _rand_like_contiguous, rule=True),
    Claim("aten::rand_like", "testing.notes", "the result is laid out as memory_format says",
          lambda: _follows_memory_format(aten.rand_like), rule=True, corrected=True),
    Claim("aten::randn_like", "testing.notes", "result is contiguous", _randn_like_contiguous, rule=True),
    Claim("aten::randn_like", "testing.notes", "the result is laid out as memory_format says",
          lambda: _follows_memory_format(aten.randn_like), rule=True, corrected=True),
    Claim("aten::std.correction", "testing.notes", "sqrt(var(x)) overflows in float32 once the variance exceeds the float32 range (|x| > ~1e19), where the fused std kernel stays finite",
          _std_overflow, rule=True),
    Claim("aten::pow.Scalar", "testing.notes", "Integer exponents should be >= 0 for integer results.",
          lambda: aten.pow.Scalar(2, t([-1], I64)).dtype != I64, rule=True),
    Claim("aten::empty_like", "rationale", "torch lowers it to empty_permuted, which is not core",
          lambda: "aten.empty_permuted.default" in traced_ops(lambda x: aten.empty_like(x), torch.randn(2, 3),
                                                              table=decomposition_table), rule=True),
    Claim("aten::lift_fresh", "rationale", "torch lowers it to alias",
          _decomposes_with(aten.lift_fresh.default, (torch.randn(2),), {"aten.alias."}), rule=True),
    Claim("aten::var_mean.correction", "rationale", "torch 2.13 has no core-table entry (its reference traces to prims)",
          _not_in_core_table(aten.var_mean.correction), rule=True),
    Claim("aten::linalg_vector_norm", "rationale", "torch already registers this decomposition but leaves it out of the core table",
          lambda: aten.linalg_vector_norm.default in decomposition_table
          and aten.linalg_vector_norm.default not in core_aten_decompositions(), rule=True),
    Claim("aten::squeeze.dim", "rationale", "torch's core table maps it onto squeeze.dims",
          _decomposes_with(aten.squeeze.dim, (torch.randn(3, 1), 1), {"aten.squeeze.dims"}), rule=True),
    Claim("aten::var.dim", "rationale", "torch's core table maps the legacy flag onto var.correction",
          _decomposes_with(aten.var.dim, (torch.randn(3, 4), [1]), {"aten.var.correction"}), rule=True),
    Claim("aten::select_scatter", "rationale", "decomposed by torch's core table into a masked where",
          _decomposes_with(aten.select_scatter.default, (torch.randn(3, 4), torch.randn(4), 0, 1), {"aten.where."}), rule=True),
    Claim("aten::fill.Scalar", "rationale", "filling is a full_like",
          _decomposes_with(aten.fill.Scalar, (torch.randn(3), 2.0), {"aten.full_like."}), rule=True),
    Claim("aten::adaptive_avg_pool1d", "rationale", "decomposed (CompositeImplicit) into the 2-d core pool on a unit height",
          _decomposes_with(aten.adaptive_avg_pool1d.default, (torch.randn(1, 2, 6), [3]), {"aten._adaptive_avg_pool2d."}), rule=True),
    Claim("aten::avg_pool1d", "rationale", "decomposed (CompositeImplicit) into the 2-d core pool on a unit height",
          _decomposes_with(aten.avg_pool1d.default, (torch.randn(1, 2, 6), [2]), {"aten.avg_pool2d."}), rule=True),
    Claim("aten::frac", "torch_targets.reason", "torch 2.13 uses x - trunc(x)",
          _decomposes_with(aten.frac.default, (torch.randn(3),), {"aten.trunc.", "aten.sub."}), rule=True),
    Claim("aten::sigmoid_backward", "testing.notes", "Complex inputs decompose through _conj_physical (not core)",
          lambda: "aten._conj_physical.default" in traced_ops(lambda g, y: aten.sigmoid_backward(g, y),
                                                              torch.randn(2, dtype=torch.complex64), torch.randn(2, dtype=torch.complex64)),
          rule=True),
    Claim("aten::tanh_backward", "testing.notes", "Complex inputs decompose through _conj_physical (not core)",
          lambda: "aten._conj_physical.default" in traced_ops(lambda g, y: aten.tanh_backward(g, y),
                                                              torch.randn(2, dtype=torch.complex64), torch.randn(2, dtype=torch.complex64)),
          rule=True),
    Claim("aten::logsumexp", "testing.notes", "Complex inputs decompose through view_as_real, which is not core",
          lambda: "aten.view_as_real.default" in traced_ops(lambda x: aten.logsumexp(x, [0]), torch.randn(3, dtype=torch.complex64)),
          rule=True),
    # Claims about how Inductor handles an op: its lowering registry, which conform's execution evidence confirms.
    Claim("aten::_cdist_forward", "rationale", "Inductor lowers it directly",
          lambda: inductor_generates_code(aten._cdist_forward.default)),
    Claim("aten::_pdist_forward", "rationale", "Inductor lowers it itself",
          lambda: inductor_generates_code(aten._pdist_forward.default)),
    # --- sealed prose of 2027.02, unary pointwise and creation ops
    # --- sealed prose of 2027.02, binary pointwise ops
    # --- sealed prose of 2027.02, reductions, normalization, linear algebra and misc
    # --- sealed prose of 2027.02, pooling, indexing and views
    # --- sealed prose of 2027.02, decomposition rules
]


def _corrected_at_release(claim: Claim, texts: list[str], errata) -> "errata_mod.Erratum | None":
    """The erratum of an earlier version that corrects the claim's quote, where this version's text is already the
    corrected one (``opspec release`` applies the errata of the version it starts from)."""
    kind = "rule" if claim.rule else "op"
    return next((e for e in errata if e.kind == kind and e.name == claim.entry and e.field == claim.field
                 and (claim.quote in e.was or e.was in claim.quote) and any(e.now in text for text in texts)), None)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--opset", dest="version", metavar="V", help="opset version whose prose is checked (default: newest)")
    deprecated.renamed(parser, "--version", "--opset V", dest="version")
    parser.add_argument("--false-only", action="store_true", help="print only the claims torch contradicts")
    args = parser.parse_args(argv)
    opset = load.load_opset(args.version)
    errata = errata_mod.load_errata()
    missing, false, unrecorded, released_corrected = [], [], [], []
    for claim in CLAIMS:
        entry = (opset.rules_by_op if claim.rule else opset.ops_by_name).get(claim.entry)
        texts = errata_mod.field_texts(entry.raw, claim.field) if entry else []
        if claim.corrected:
            applied = errata_mod.for_entry(errata, opset.version, "rule" if claim.rule else "op", claim.entry).get(claim.field, ())
            texts = [errata_mod.corrected(text, applied) for text in texts]
        fixed = None if claim.corrected else _corrected_at_release(claim, texts, errata)
        if fixed is not None:  # the version was released with the erratum's text: the mistake is not in it
            released_corrected.append(claim)
            if not args.false_only:
                print(f"corrected at release by {fixed.where}  {claim.entry} {claim.field}: {claim.quote!r}")
            continue
        if not any(claim.quote in text for text in texts):
            missing.append(claim)
            continue
        torch.manual_seed(0)
        try:
            holds, problem = bool(claim.holds()), ""
        except Exception as err:  # noqa: BLE001 - a check that cannot run is reported, not hidden
            holds, problem = False, f" (check failed to run: {type(err).__name__}: {str(err).splitlines()[0][:120]})"
        if holds and args.false_only:
            continue
        kind = "rule " if claim.rule else ""
        status = "holds"
        if not holds and claim.corrected:  # the errata's own text is wrong: no erratum can excuse that
            false.append(claim)
            unrecorded.append(claim)
            print(f"FALSE CORRECTION  {kind}{claim.entry} {claim.field}: {claim.quote!r}{problem}")
            continue
        if not holds:
            false.append(claim)
            corrected = [e for e in errata_mod.for_entry(errata, opset.version, "rule" if claim.rule else "op", claim.entry)
                         .get(claim.field, ()) if claim.quote in e.was or e.was in claim.quote]
            status = (f"FALSE, corrected by {corrected[0].where}" if corrected else
                      f"FALSE, no erratum: {claim.no_row}" if claim.no_row else "FALSE, NO ERRATUM")
            if not corrected and not claim.no_row:
                unrecorded.append(claim)
        print(f"{status}  {kind}{claim.entry} {claim.field}: {claim.quote!r}{problem}")
    for claim in missing:
        print(f"NOT IN {'CORRECTED' if claim.corrected else 'SEALED'} TEXT  {claim.entry} {claim.field}: {claim.quote!r}",
              file=sys.stderr)
    audited, uncited = {(c.entry, c.rule, c.field, c.quote) for c in CLAIMS if c.corrected}, []
    for erratum in errata:
        for cited in erratum.shown_by:
            if (isinstance(cited, errata_mod.AuditRef) and opset.version in erratum.versions
                    and (erratum.name, erratum.kind == "rule", erratum.field, cited.quote) not in audited):
                print(f"NO AUDIT CLAIM  {erratum.where} cites {cited.quote!r}, which no corrected claim of "
                      f"{erratum.name} {erratum.field} quotes", file=sys.stderr)
                uncited.append(cited)
    checked = len(CLAIMS) - len(missing) - len(released_corrected)
    print(f"{checked} claim(s) of opset {opset.version} checked on torch {torch.__version__}: "
          f"{len(false)} false, {len(false) - len(unrecorded)} of them corrected by an erratum or recorded as needing no row"
          + (f"; {len(released_corrected)} released corrected" if released_corrected else ""))
    return 2 if missing or uncited else (1 if unrecorded else 0)


if __name__ == "__main__":
    sys.exit(main())
