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


# --- helpers of the claims on the unary pointwise and creation ops of 2027.02

def _aten_calls(fn: Callable[[], object]) -> set[str]:
    """The aten ops (by overload packet name, e.g. ``erfinv``) a call dispatches, the backward of autograd included."""
    from torch.utils._python_dispatch import TorchDispatchMode

    class Seen(TorchDispatchMode):
        def __init__(self) -> None:
            super().__init__()
            self.names: set[str] = set()

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            self.names.add(func.overloadpacket.__name__)
            return func(*args, **(kwargs or {}))

    with Seen() as seen:
        fn()
    return seen.names


def _atan2_one_against_atan() -> bool:
    """atan2(x, 1) and atan(x) differ by one ULP at some float32 and float64 inputs (never by more); torch's atan2
    refuses complex input."""
    for dtype in (F32, F64):
        x = (torch.randn(100000, dtype=F64) * 10).to(dtype)
        a, b = aten.atan(x), aten.atan2(x, torch.ones_like(x))
        one_ulp = (b == torch.nextafter(a, torch.full_like(a, float("inf")))) | (
            b == torch.nextafter(a, torch.full_like(a, -float("inf"))))
        if not (bool((a != b).any()) and bool(((a == b) | one_ulp).all())):
            return False
    return raises(lambda: aten.atan2(t([1 + 1j]), t([1 + 0j])))


def _sub_not_through_neg() -> bool:
    """sub.Tensor and sub.Scalar carry the core tag, are not in the core table, and neither table lowers them
    through neg."""
    x = torch.randn(3)
    calls = set()
    for table in (None, decomposition_table):
        calls |= traced_ops(lambda a, b: aten.sub.Tensor(a, b, alpha=2), x, x, table=table)
        calls |= traced_ops(lambda a: aten.sub.Scalar(a, 2.0), x, table=table)
    return (all(torch.Tag.core in op.tags and op not in core_aten_decompositions() for op in (aten.sub.Tensor, aten.sub.Scalar))
            and not any("neg" in op for op in calls))


def _elu_scales_of_selu_and_celu() -> bool:
    """selu is elu with SELU's alpha and scale and input_scale left at 1; celu(x, a) is elu(x, a, 1, 1/a)."""
    x = torch.randn(64)
    calls = [n for n in make_fx(torch.selu, decomposition_table={})(x).graph.nodes if n.op == "call_function"]
    selu = (len(calls) == 1 and calls[0].target == aten.elu.default and len(calls[0].args) == 3 and not calls[0].kwargs
            and torch.equal(torch.selu(x), aten.elu(x, 1.6732632423543772, 1.0507009873554805, 1)))
    return selu and all(torch.equal(torch.celu(x, a), aten.elu(x, a, 1, 1 / a)) for a in (0.5, 2.0, 3.0))


def _trunc_normal_without_erfinv() -> bool:
    """torch.nn.init.trunc_normal_ samples by rejection (normal_ on a wide interval, uniform_ on a narrow one) and
    calls no erfinv."""
    calls = set()
    for a, b in ((-2.0, 2.0), (0.0, 0.1), (0.5, 1.5)):
        calls |= _aten_calls(lambda a=a, b=b: torch.nn.init.trunc_normal_(torch.empty(1000), 0.0, 1.0, a, b))
    return not any("erfinv" in name for name in calls) and {"normal_", "uniform_"} <= calls


def _digamma_in_distributions() -> bool:
    """Gamma, Beta, Dirichlet and Student-t call digamma in the gradient of log_prob in their parameter and in their
    entropy; Poisson's log_prob gradient in rate does not, and its entropy raises."""
    D = torch.distributions
    value = {"Gamma": t([1.5]), "Beta": t([0.3]), "Dirichlet": t([0.3, 0.7]), "StudentT": t([0.5]), "Poisson": t([3.0])}
    make = {"Gamma": lambda c: D.Gamma(c, t([3.0])), "Beta": lambda c: D.Beta(c, t([3.0])),
            "Dirichlet": lambda c: D.Dirichlet(torch.cat([c, t([3.0])])), "StudentT": lambda c: D.StudentT(c),
            "Poisson": lambda c: D.Poisson(c)}
    for name, dist in make.items():
        c = t([2.0]).requires_grad_()
        grad = _aten_calls(lambda: torch.autograd.grad(dist(c).log_prob(value[name]).sum(), c))
        if name == "Poisson":
            if "digamma" in grad or not raises(lambda: dist(c).entropy()):
                return False
        elif "digamma" not in grad or "digamma" not in _aten_calls(lambda: dist(c).entropy()):
            return False
    return True


def _full_like_preserve_strides() -> bool:
    """preserve_format keeps a dense self's strides (transposed, channels_last) and gives a non-dense self (sliced,
    expanded, a diagonal, channels_last sliced) dense strides in self's dim order."""
    dense = [torch.zeros(3, 4).t(), torch.zeros(2, 3, 4, 5).to(memory_format=torch.channels_last)]
    non_dense = [(torch.zeros(4, 6)[:, ::2], (3, 1)), (torch.zeros(6, 4).t()[:, ::2], (1, 4)),
                 (torch.zeros(3, 1).expand(3, 4), (4, 1)), (torch.zeros(4, 4).diagonal(), (1,)),
                 (torch.zeros(2, 3, 4, 10).to(memory_format=torch.channels_last)[..., ::2], (60, 1, 15, 3))]
    return (all(aten.full_like(s, 1.0).stride() == s.stride() for s in dense)
            and all(not s.is_contiguous() or s.dim() == 1 for s, _ in non_dense)
            and all(aten.full_like(s, 1.0).stride() == want for s, want in non_dense))


def _dropout_scale_rounded() -> bool:
    """Each survivor of native_dropout in training is self times 1/(1-p) rounded to self's dtype, the product rounded
    once; a dropped element is 0."""
    for dtype in (F64, F32, F16, torch.bfloat16):
        for p in (0.1, 0.3, 0.7):
            x = torch.randn(4096, dtype=F64).to(dtype)
            out, mask = aten.native_dropout(x, p, True)
            scale = t(1 / (1 - p), F64).to(dtype).double()
            if not (torch.equal(out[mask], (x.double() * scale).to(dtype)[mask]) and bool((out[~mask] == 0).all())):
                return False
    return True


def _randperm_dtype_limits() -> bool:
    """randperm refuses an n whose n - 1 int8, int16, uint8, float16 or float32 cannot hold, but takes any n in
    bfloat16, where from n = 258 the values above 256 are rounded and repeat."""
    refused = ((I8, 129), (U8, 257), (torch.int16, 32769), (F16, 2050), (F32, 2**24 + 2))
    taken = ((I8, 128), (U8, 256), (torch.int16, 32768), (F16, 2049))
    rounded = aten.randperm(258, dtype=torch.bfloat16)
    return (all(raises(lambda d=d, n=n: aten.randperm(n, dtype=d)) for d, n in refused)
            and all(not raises(lambda d=d, n=n: aten.randperm(n, dtype=d)) for d, n in taken)
            and torch.equal(aten.randperm(257, dtype=torch.bfloat16).sort().values, torch.arange(257, dtype=torch.bfloat16))
            and rounded.unique().numel() == 257 and rounded.max().item() == 256)


def _reciprocal_complex_zero() -> bool:
    """The reciprocal of a complex zero, of any signs, is inf+nanj (one element and 131)."""
    for dtype in (torch.complex64, torch.complex128):
        for n in (1, 131):
            z = t([0j, complex(-0.0, 0.0), complex(0.0, -0.0), complex(-0.0, -0.0)], dtype).repeat(n)
            r = aten.reciprocal(z)
            if not (bool((r.real == float("inf")).all()) and bool(r.imag.isnan().all())):
                return False
    return True


def _sqrt_one_ulp_off() -> bool:
    """torch's CPU sqrt is one ULP from the correctly rounded root at a float32 and a float64 input (one element and
    131)."""
    import decimal

    for dtype, x in ((F32, 599.6620483398438), (F64, 522.1055993930038)):
        with decimal.localcontext() as context:
            context.prec = 60
            exact = t(float(decimal.Decimal(x).sqrt()), F64).to(dtype)  # float64's rounding, innocuous for float32
        for n in (1, 131):
            got = aten.sqrt(torch.full((n,), x, dtype=dtype))
            neighbours = (torch.nextafter(exact, t(float("inf"), dtype)), torch.nextafter(exact, t(-float("inf"), dtype)))
            if not bool(((got == neighbours[0]) | (got == neighbours[1])).all()):
                return False
    return True


def _zero_functionalizes_to_zero() -> bool:
    """Functionalization turns x.fill_(v) into fill.Scalar and x.zero_() into aten.zero; the core table rewrites
    aten.zero into full_like."""
    from torch.func import functionalize

    def ops(fn, table=None) -> set[str]:
        graph = make_fx(functionalize(fn), decomposition_table=table)(torch.randn(3)).graph
        return {str(n.target) for n in graph.nodes if n.op == "call_function"}

    return (ops(lambda x: x.clone().fill_(2.0)) == {"aten.clone.default", "aten.fill.Scalar"}
            and ops(lambda x: x.clone().zero_()) == {"aten.clone.default", "aten.zero.default"}
            and "aten.full_like.default" in ops(lambda x: x.clone().zero_(), core_aten_decompositions()))


# --- helpers of the claims on the binary pointwise ops of 2027.02

def _scalar_cases(op: Callable, cases: Callable[[], list]) -> Callable[[], bool]:
    """Each (self, scalar, expected) of ``cases()``: expected is the result's dtype, its values (a list), or None for
    a call refused because the scalar made the dtype complex (the error names a complex dtype)."""
    def check() -> bool:
        for self, scalar, expected in cases():
            if expected is None:
                try:
                    op(self, scalar)
                except (RuntimeError, NotImplementedError) as err:
                    if "Complex" not in str(err):
                        return False
                    continue
                return False
            out = op(self, scalar)
            if (out.dtype != expected) if isinstance(expected, torch.dtype) else (out.tolist() != expected):
                return False
        return True
    return check


def _arith_scalar_cases(bool_self: bool) -> list:
    """A wrapped scalar raises self's category to its own higher one and never widens within a category."""
    cases = [(t([1, 2], I8), 2.5, F32), (t([1, 2], I8), 1j, torch.complex64), (t([1.0]), 1j, torch.complex64),
             (t([1.0], F64), 1j, torch.complex128), (t([1, 2], I8), 300, I8), (t([1.0], F16), 1e5, F16)]
    if bool_self:
        cases += [(t([True, False]), 2, I64), (t([True, False]), 2.5, F32), (t([True, False]), 1j, torch.complex64),
                  (t([True, False]), True, BOOL)]
    return cases


def _compare_scalar_cases(name: str) -> list:
    """Values a comparison gives only in the raised dtype: bool self as an integer (True != 2), int self against a
    float scalar, float self against a complex one (refused by the ordered comparisons), and no widening within a
    category (int8 44 against 300, float16 inf against 70000)."""
    truth = {  # (bool self vs int, bool self vs float, int vs float, float vs complex, int8 vs 300, float16 vs 70000)
        "eq": ([False], [False], [False], [False], [True], [True]),
        "ne": ([True], [True], [True], [True], [False], [False]),
        "ge": ([False], [False], [False], None, [True], [True]),
        "gt": ([True], [False], [False], None, [False], [False]),
        "le": ([False], [True], [True], None, [True], [True]),
        "lt": ([True], [True], [True], None, [False], [False]),
    }[name]
    bool_int = (t([True]), 2) if name in ("eq", "ne", "ge", "lt") else (t([False]), -1)
    cases = [(*bool_int, truth[0]), (t([True]), 1.5, truth[1]), (t([1], I8), 1.5, truth[2]), (t([1.0]), 1 + 1j, truth[3]),
             (t([44], I8), 300, truth[4]), (t([float("inf")], F16), 70000.0, truth[5])]
    if name in ("eq", "ne"):  # bool and int self against a complex scalar: compared as complex, not as bool or int
        cases += [(t([True]), 1j, [name == "ne"]), (t([0], I8), 1j, [name == "ne"])]
    return cases


def _atan_of_quotient_against_atan2() -> bool:
    """atan(y / x) against atan2(y, x): off by pi for x < 0 and x = -0.0 (NaN where both are infinite or both zero),
    NaN for y = ±0 at x = +0.0, and equal at x = +0.0 for a non-zero y."""
    inf = float("inf")
    for dtype in (F64, F32, F16, torch.bfloat16):
        def pair(ys, xs):
            y, x = t(ys, dtype), t(xs, dtype)
            return aten.atan2(y, x).double(), aten.atan(aten.div.Tensor(y, x)).double()
        ys = [1.0, -1.0, 0.0, -0.0, inf, -inf, 2.0]
        for x in (-1.0, -inf, -0.0, -1e-3):
            exact, quotient = pair(ys, [x] * len(ys))
            both_infinite = t([abs(y) == inf and x == -inf for y in ys])
            both_zero = t([y == 0 and x == 0 for y in ys])
            off = (exact - quotient).abs()
            if not (bool(quotient[both_infinite | both_zero].isnan().all())
                    and bool(torch.allclose(off[~(both_infinite | both_zero)], torch.full_like(off[~(both_infinite | both_zero)], torch.pi), atol=2e-2))):
                return False
        exact, quotient = pair([1.0, -1.0, inf, -inf, 2.0, 0.0, -0.0], [0.0] * 7)
        if not (torch.equal(exact[:5], quotient[:5]) and bool(quotient[5:].isnan().all()) and bool((exact[5:] == 0).all())):
            return False
    return True


def _shifts_exact_in_core(left: bool) -> Callable[[], bool]:
    """torch's tables decompose a shift only into a prims op, while within the width x << k equals x * 2**k wrapping in
    x's dtype and x >> k the floor division by 2**k taken in int64 (k up to 62)."""
    def check() -> bool:
        op = aten.bitwise_left_shift.Tensor if left else aten.bitwise_right_shift.Tensor
        x8, k8 = t([5, -7], I8), t([1, 2], I8)
        found = traced_ops(lambda a, b: op(a, b), x8, k8, table={op: decomposition_table[op]})
        if op in core_aten_decompositions() or not found or not all(f.startswith("prims.") for f in found):
            return False
        torch.manual_seed(0)
        for dtype, width in ((I8, 8), (U8, 8), (torch.int16, 16), (I32, 32), (I64, 64)):
            info = torch.iinfo(dtype)
            if width <= 16:
                x = torch.arange(info.min, info.max + 1, dtype=I64).to(dtype)
            else:
                x = torch.cat([torch.randint(info.min, info.max, (4096,), dtype=I64),
                               t([info.min, info.max, -1, 0, 1], I64)]).to(dtype)
            for k in range(width if left else min(width, 63)):
                shift = torch.full_like(x, k)
                if left:
                    want = aten.mul.Tensor(x, aten.pow.Scalar(2, shift))
                else:
                    want = aten.div.Tensor_mode(x.to(I64), aten.pow.Scalar(2, shift.to(I64)), rounding_mode="floor").to(dtype)
                if not torch.equal(op(x, shift), want):
                    return False
        return True
    return check


def _default_dtype_division() -> bool:
    """An integer self divided by a real scalar is the default float dtype, by a complex one the default complex dtype,
    under a float32 and a float64 default."""
    before = torch.get_default_dtype()
    try:
        for default, complex_default in ((F32, torch.complex64), (F64, torch.complex128)):
            torch.set_default_dtype(default)
            for dtype in (I8, U8, I32, I64):
                x = t([1, 2], dtype)
                if (aten.div.Scalar(x, 2).dtype, aten.div.Scalar(x, 2.5).dtype, aten.div.Scalar(x, 1j).dtype) != (
                        default, default, complex_default):
                    return False
    finally:
        torch.set_default_dtype(before)
    return True


def _negative_bases_fractional_nan() -> bool:
    """Negative bases to fractional exponents give NaN in every dtype of pow.Tensor_Tensor: a -inf base included (C pow
    gives +inf or +0.0) and complex negative bases included (the principal power is complex, not NaN)."""
    real = all(bool(aten.pow.Tensor_Tensor(t([-8.0, -2.0, float("-inf"), float("-inf")], dtype),
                                           t([0.5, 1.5, 0.5, -0.5], dtype)).isnan().all())
               for dtype in (F64, F32, F16, torch.bfloat16))
    complex_ = all(bool(aten.pow.Tensor_Tensor(t([-8 + 0j, -2 + 0j], dtype), t([1 / 3, 0.5], dtype)).isnan().all())
                   for dtype in (torch.complex64, torch.complex128))
    return real and complex_


# --- helpers of the claims on the reductions, normalization, linear algebra and misc ops of 2027.02

def _ops_called(call: Callable[[], object]) -> list[str]:
    """The aten ops a call dispatches, in order (what its Python-level decomposition runs)."""
    from torch.utils._python_dispatch import TorchDispatchMode

    class Record(TorchDispatchMode):
        def __init__(self):
            super().__init__()
            self.ops: list[str] = []

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            self.ops.append(str(func))
            return func(*args, **(kwargs or {}))

    with Record() as record:
        call()
    return record.ops


def _fft_transforms_of_complex() -> bool:
    """fft, ifft and their 2-d and n-d forms run _fft_c2c alone on complex input; irfft, irfft2, irfftn and hfft run
    _fft_c2r and no _fft_c2c; hfft2 and hfftn run _fft_c2c before _fft_c2r; the other transforms refuse complex input."""
    z = torch.randn(4, 6, dtype=torch.complex64)
    c2c, c2r = "aten._fft_c2c.default", "aten._fft_c2r.default"
    called = {name: _ops_called(lambda name=name: getattr(torch.fft, name)(z))
              for name in ("fft", "ifft", "fft2", "ifft2", "fftn", "ifftn", "irfft", "irfft2", "irfftn", "hfft", "hfft2", "hfftn")}
    return (all(called[name] == [c2c] for name in ("fft", "ifft", "fft2", "ifft2", "fftn", "ifftn"))
            and all(c2r in called[name] and c2c not in called[name] for name in ("irfft", "irfft2", "irfftn", "hfft"))
            and all(c2c in called[name] and c2r in called[name] and called[name].index(c2c) < called[name].index(c2r)
                    for name in ("hfft2", "hfftn"))
            and all(raises(lambda name=name: getattr(torch.fft, name)(z)) for name in ("rfft", "rfft2", "rfftn", "ihfft", "ihfft2", "ihfftn")))


def _conj_in_fft_decompositions() -> bool:
    """ifft of a real input and ihfft emit _conj after _fft_r2c, hfft, hfft2 and hfftn before _fft_c2r; ihfft2 and
    ihfftn emit _conj_physical and no _conj."""
    x, x2, z, z2 = torch.randn(8), torch.randn(4, 6), torch.randn(5, dtype=torch.complex64), torch.randn(4, 5, dtype=torch.complex64)
    conj, r2c, c2r = "aten._conj.default", "aten._fft_r2c.default", "aten._fft_c2r.default"
    after_r2c = [_ops_called(lambda: torch.fft.ifft(x)), _ops_called(lambda: torch.fft.ihfft(x))]
    before_c2r = [_ops_called(lambda: torch.fft.hfft(z)), _ops_called(lambda: torch.fft.hfft2(z2)), _ops_called(lambda: torch.fft.hfftn(z2))]
    physical = [_ops_called(lambda: torch.fft.ihfft2(x2)), _ops_called(lambda: torch.fft.ihfftn(x2))]
    return (all(r2c in ops and conj in ops and ops.index(r2c) < ops.index(conj) for ops in after_r2c)
            and all(conj in ops and c2r in ops and ops.index(conj) < ops.index(c2r) for ops in before_c2r)
            and all("aten._conj_physical.default" in ops and conj not in ops for ops in physical))


def _conj_flips_bit() -> bool:
    z = t([1 + 2j, -3j], torch.complex64)
    once = aten._conj(z)
    twice = aten._conj(once)
    return (once.is_conj() and not twice.is_conj() and once._base is z and twice._is_view()
            and torch.equal(once.resolve_conj(), t([1 - 2j, 3j], torch.complex64)) and torch.equal(twice, z))


def _copy_keeps_strides_unless_expanded() -> bool:
    """A transposed, channels_last, sliced or offset self keeps its strides and storage offset; an expanded self (stride 0)
    gives a result with the dense strides empty_like chooses."""
    for self in [*_strided_tensors(), torch.zeros(10)[2:5]]:
        out = aten.copy(self, torch.ones(self.shape))
        if out.stride() != self.stride() or out.storage_offset() != self.storage_offset() or not bool((out == 1).all()):
            return False
    for self in (torch.zeros(2, 1).expand(2, 3), torch.zeros(()).expand(3, 3), torch.zeros(3, 1, 4).expand(3, 5, 4).transpose(0, 2)):
        out = aten.copy(self, torch.arange(float(self.numel())).view(self.shape))
        if out.stride() == self.stride() or out.stride() != torch.empty_like(self).stride() or not torch.equal(
                out, torch.arange(float(self.numel())).view(self.shape)):
            return False
    return True


def _resize_keeps_storage_order() -> bool:
    """resize_ lays a transposed or strided self out contiguously over its storage: growing a transposed [3, 2] view of
    arange(6) gives 0..5 in storage order (not its own 0, 3, 1, 4, 2, 5), a [::2] slice of arange(10) gives 0..5; a
    contiguous self keeps its own values as the prefix."""
    transposed = torch.arange(6.0).view(2, 3).t()
    aten.resize_(transposed, [4, 2])
    sliced = torch.arange(10.0)[::2]
    aten.resize_(sliced, [6])
    plain = torch.arange(6.0)
    aten.resize_(plain, [4, 2])
    return (transposed.flatten()[:6].tolist() == [0.0, 1.0, 2.0, 3.0, 4.0, 5.0] and sliced.tolist() == [0.0, 1.0, 2.0, 3.0, 4.0, 5.0]
            and plain.flatten()[:6].tolist() == [0.0, 1.0, 2.0, 3.0, 4.0, 5.0])


def _batch_norm_longer_params(op: str) -> bool:
    """A weight, bias (and running_mean, running_var where the op takes them) one entry longer than the channel count
    give the same results, and the extra running entries are left unchanged."""
    torch.manual_seed(0)
    longer = lambda v, extra: torch.cat([v, t([extra])])  # noqa: E731
    weight, bias, mean, var = t([1.5, 0.5, 2.0]), t([0.1, -0.2, 0.3]), t([0.1, 0.2, 0.3]), t([1.0, 2.0, 3.0])
    for x in (torch.randn(4, 3), torch.randn(4, 3, 5), torch.randn(2, 3, 2, 2, 2)):
        if op == "no_stats":
            pairs = [(aten._native_batch_norm_legit.no_stats(x, weight, bias, True, 0.1, 1e-5),
                      aten._native_batch_norm_legit.no_stats(x, longer(weight, 5.0), longer(bias, 4.0), True, 0.1, 1e-5))]
        elif op == "no_training":
            pairs = [(aten._native_batch_norm_legit_no_training(x, weight, bias, mean, var, 0.1, 1e-5),
                      aten._native_batch_norm_legit_no_training(x, longer(weight, 5.0), longer(bias, 4.0), longer(mean, 7.0),
                                                                longer(var, 9.0), 0.1, 1e-5))]
        else:
            pairs = []
            for training in (True, False):
                mean_a, var_a, mean_b, var_b = mean.clone(), var.clone(), longer(mean, 7.0), longer(var, 9.0)
                pairs.append((aten._native_batch_norm_legit(x, weight, bias, mean_a, var_a, training, 0.1, 1e-5),
                              aten._native_batch_norm_legit(x, longer(weight, 5.0), longer(bias, 4.0), mean_b, var_b, training, 0.1, 1e-5)))
                if not (torch.equal(mean_a, mean_b[:3]) and torch.equal(var_a, var_b[:3]) and mean_b[3] == 7.0 and var_b[3] == 9.0):
                    return False
        if not all(torch.equal(a, b) for short, long in pairs for a, b in zip(short, long)):
            return False
    return True


def _group_norm_checks_numel_only() -> bool:
    """N, C and HxW are checked only through N * C * HxW == input.numel(): N = 1, HxW = 6 on a [2, 4, 3] input
    normalises it as the [1, 4, 6] tensor of its values; a product other than numel raises."""
    x = torch.arange(24.0).view(2, 4, 3)
    odd = aten.native_group_norm(x, None, None, 1, 4, 6, 2, 1e-5)
    flat = aten.native_group_norm(x.reshape(1, 4, 6), None, None, 1, 4, 6, 2, 1e-5)
    return (odd[0].shape == (2, 4, 3) and torch.equal(odd[0], flat[0].view(2, 4, 3)) and torch.equal(odd[1], flat[1])
            and raises(lambda: aten.native_group_norm(x, None, None, 2, 4, 4, 2, 1e-5)))


def _var_correction_is_the_target() -> bool:
    x = torch.randn(4, 3)
    into = [traced_ops(fn, x) for fn in (lambda a: aten.var.default(a), lambda a: aten.var.dim(a, [0]),
                                         lambda a: aten.std.default(a), lambda a: aten.std.dim(a, [0]),
                                         lambda a: aten.std.correction(a, [0]))]
    kept = [traced_ops(fn, x) for fn in (lambda a: aten.var_mean.correction(a, [0]), lambda a: aten.std_mean.correction(a, [0]))]
    return (all("aten.var.correction" in found for found in into)
            and all("aten.var_mean.correction" in found and "aten.var.correction" not in found for found in kept))


def _sort_stable_false_is_sort() -> bool:
    """sort.stable with stable False or None gives aten.sort's values and indices, which for 17 alternating zeros and
    ones are not in input order among the ties."""
    torch.manual_seed(0)
    alternating = torch.arange(17) % 2
    for x in (alternating, torch.randint(0, 3, (1000,)), torch.randint(0, 5, (40,)).float(), torch.randint(0, 3, (6, 200)).to(I8)):
        for stable in (False, None):
            for descending in (False, True):
                got, want = aten.sort.stable(x, stable=stable, dim=-1, descending=descending), aten.sort(x, -1, descending)
                if not (torch.equal(got[0], want[0]) and torch.equal(got[1], want[1])):
                    return False
    values, indices = aten.sort.stable(alternating, stable=False)
    return not all(bool((indices[values == v].diff() > 0).all()) for v in (0, 1))


def _sum_in_torch_decompositions() -> bool:
    """torch's rules for linalg_vector_norm, _softmax and logsumexp use sum.dim_IntList; its rules for mean.dim and
    var.correction trace to prims.sum and prims.var and never reach it."""
    x = torch.randn(3, 4)
    uses = [traced_ops(lambda a: aten.linalg_vector_norm(a, 2, [1]), x,
                       table={aten.linalg_vector_norm.default: decomposition_table[aten.linalg_vector_norm.default]}),
            traced_ops(lambda a: aten._softmax(a, 1, False), x, table={aten._softmax.default: decomposition_table[aten._softmax.default]}),
            traced_ops(lambda a: aten.logsumexp(a, [1]), x)]
    mean = traced_ops(lambda a: aten.mean.dim(a, [1]), x, table={aten.mean.dim: decomposition_table[aten.mean.dim]})
    var = traced_ops(lambda a: aten.var.correction(a, [1]), x, table={aten.var.correction: decomposition_table[aten.var.correction]})
    return (all("aten.sum.dim_IntList" in found for found in uses) and "prims.sum.default" in mean and "prims.var.default" in var
            and "aten.sum.dim_IntList" not in mean and "aten.sum.dim_IntList" not in var)


# --- helpers of the claims on the pooling, indexing and view ops of 2027.02

def _adaptive_max_pool2d_rule_falls_back() -> bool:
    """torch's decomposition of adaptive_max_pool2d keeps the op (falls back) for sizes that do not divide, and
    answers an output size of 0 with empty tensors of its own, without the op."""
    op = aten.adaptive_max_pool2d.default
    table = {op: decomposition_table[op]}
    kept = lambda x, size: "aten.adaptive_max_pool2d.default" in traced_ops(  # noqa: E731
        lambda a: aten.adaptive_max_pool2d(a, size), x, table=table)
    return (kept(torch.randn(1, 4, 5), [3, 3]) and not kept(torch.randn(1, 4, 4), [2, 2])
            and not kept(torch.randn(1, 4, 5), [0, 2]) and not kept(torch.randn(1, 4, 5), [2, 0]))


def _conv_backward_half_returns_weight_grad() -> bool:
    """On CPU, output_mask [*, False, True] gives a weight gradient in float16 and bfloat16 (None in float32 and
    float64), in 1-d, 2-d and 3-d, plain and transposed."""
    for nd in (1, 2, 3):
        for transposed in (False, True):
            for dtype in (F16, torch.bfloat16, F32, F64):
                for mask in ([False, False, True], [True, False, True]):
                    x = torch.randn((1, 2) + (4,) * nd, dtype=dtype)
                    w = torch.randn((2, 2) + (2,) * nd, dtype=dtype)
                    out = aten.convolution(x, w, None, [1] * nd, [0] * nd, [1] * nd, transposed, [0] * nd, 1)
                    grads = aten.convolution_backward(torch.ones_like(out), x, w, [2], [1] * nd, [0] * nd, [1] * nd,
                                                      transposed, [0] * nd, 1, mask)
                    if (grads[1] is not None) != (dtype in (F16, torch.bfloat16)) or grads[2] is None:
                        return False
    return True


def _pad_replicate_composite() -> bool:
    """aten::pad with mode 'replicate' has no kernel of its own and traces to the per-rank replication pads."""
    per_rank = {3: "aten.replication_pad1d.default", 4: "aten.replication_pad2d.default",
                5: "aten.replication_pad3d.default"}
    for rank, name in per_rank.items():
        x = torch.randn((1, 2) + (3,) * (rank - 2))
        if traced_ops(lambda a: aten.pad(a, [1, 1] * (rank - 2), "replicate"), x, table={}) != {name}:
            return False
    return (torch._C._dispatch_has_kernel_for_dispatch_key("aten::pad", "CompositeImplicitAutograd")
            and not torch._C._dispatch_has_kernel_for_dispatch_key("aten::pad", "CPU")
            and raises(lambda: aten.pad(torch.randn(1, 2, 3, 3, 3, 3), [1] * 8, "replicate")))


def _bucketize_is_a_count() -> bool:
    """For sorted boundaries (ties, +-inf and none at all included) bucketize is the count of boundaries not >= x
    (not > x with right), NaN values included, in the op's testing dtypes and past 131 elements."""
    torch.manual_seed(0)
    for dtype in (F32, F64, I64, I32):
        for n in (0, 1, 5, 140):
            boundaries = torch.sort((torch.randn(n) * 3).round().to(dtype)).values
            x = (torch.randn(200) * 4).round().to(dtype)
            if dtype.is_floating_point:
                x[:3] = t([float("nan"), float("inf"), -float("inf")])
            for right in (False, True):
                below = ~(boundaries > x[:, None]) if right else ~(boundaries >= x[:, None])
                if not torch.equal(aten.bucketize.Tensor(x, boundaries, right=right), below.sum(-1)):
                    return False
    return True


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
          lambda: aten.add.Scalar(t([1.0], F16), 1e3).dtype == F16 and aten.add.Scalar(t([1], I32), 2.5).dtype == F32
          and aten.add.Scalar(t([True]), 2).dtype == BOOL and aten.add.Scalar(t([1.0]), 1j).dtype == F32),  # bool, float self
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
          lambda: raises(lambda: aten.div.Scalar_mode(t([1], I64), 0, rounding_mode="trunc"))
          and raises(lambda: aten.div.Scalar_mode(t([1], I64), 0, rounding_mode=None))  # a mode of the note's choices
          and raises(lambda: aten.div.Scalar_mode(torch.empty(0, dtype=I64), 0, rounding_mode="floor"))),
    Claim("aten::div.Tensor", "testing.notes", "Division by zero yields inf/nan",
          lambda: bool(aten.div.Tensor(t([1.0, 0.0]), t([0.0, 0.0])).isinf()[0])
          and bool(aten.div.Tensor(t([1, 0], I64), t([0, 0], I64)).isnan()[1])),
    Claim("aten::div.Tensor_mode", "testing.notes", "Integer division by zero raises",
          lambda: raises(lambda: aten.div.Tensor_mode(t([1], I64), t([0], I64), rounding_mode="floor"))
          and raises(lambda: aten.div.Tensor_mode(t([1], I64), t([0], I64), rounding_mode=None))  # a mode of the note's choices
          and raises(lambda: aten.div.Tensor_mode(torch.empty(0, dtype=I64), t(0, I64), rounding_mode="floor"))),
    Claim("aten::embedding", "testing.notes", "indices is an int64 or int32 tensor of any shape",
          lambda: aten.embedding(torch.randn(5, 2), t([[1, 2]], I32)).shape == (1, 2, 2)),
    Claim("aten::expand", "testing.notes", "-1 keeps the existing size; new leading dims may be added",
          lambda: aten.expand(torch.randn(3, 1), [2, -1, 4]).shape == (2, 3, 4)),
    Claim("aten::flip", "testing.notes", "dims are distinct",
          lambda: raises(lambda: aten.flip(torch.randn(3), [0, 0]))),
    Claim("aten::fmod.Scalar", "testing.notes", "Integer modulo by zero raises.",
          lambda: raises(lambda: aten.fmod.Scalar(t([1], I64), 0)) and raises(lambda: aten.fmod.Scalar(torch.empty(0, dtype=I64), 0))),
    Claim("aten::fmod.Tensor", "testing.notes", "Integer division by zero raises.",
          lambda: raises(lambda: aten.fmod.Tensor(t([1], I64), t([0], I64)))
          and raises(lambda: aten.fmod.Tensor(torch.empty(0, dtype=I64), t(0, I64)))),
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
          _negative_bases_fractional_nan),  # every dtype of the op, -inf and complex bases included
    Claim("aten::pow.Tensor_Tensor", "testing.notes", "complex dtypes give the principal power",
          lambda: all(torch.allclose(aten.pow.Tensor_Tensor(t([-8 + 0j], dtype), t([1 / 3], dtype)),
                                     t([1 + 1.7320508075688772j], dtype), atol=1e-5)
                      for dtype in (torch.complex64, torch.complex128)), corrected=True),
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
          lambda: raises(lambda: aten.remainder.Scalar(t([1], I64), 0))
          and raises(lambda: aten.remainder.Scalar(torch.empty(0, dtype=I64), 0))),
    Claim("aten::remainder.Tensor", "testing.notes", "Integer modulo by zero raises.",
          lambda: raises(lambda: aten.remainder.Tensor(t([1], I64), t([0], I64)))
          and raises(lambda: aten.remainder.Tensor(torch.empty(0, dtype=I64), t(0, I64)))),
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
          lambda: raises(lambda: aten.where.self(t([1.0]), t([1.0]), t([2.0])))
          and raises(lambda: aten.where.self(t([1, 0], U8), t([1.0, 1.0]), t([2.0, 2.0])))),  # uint8: deprecated, taken
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
          lambda: aten.div.Scalar(t([3], I64), 2).dtype == torch.get_default_dtype()
          and aten.div.Scalar(t([3], I64), 1j).dtype == torch.get_default_dtype()),  # a complex scalar
    Claim("aten::div.Tensor", "rationale", "always produces a floating result, even for integer inputs",
          lambda: aten.div.Tensor(t([4], I64), t([2], I64)).dtype.is_floating_point
          and aten.div.Tensor(t([4.0], torch.complex64), t([2.0], torch.complex64)).dtype.is_floating_point),  # complex
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
          lambda: aten.pow.Scalar(2, t([3], I64)).dtype == I64 and aten.pow.Scalar(2.5, t([3], I64)).dtype == F32
          and aten.pow.Scalar(2, t([3], I32)).dtype == I64),  # "int tensor": an int32 one stays int32
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
    Claim("aten::atan", "equivalents.notes",
          "torch's atan2(x, 1) and atan(x) differ by one ULP at some float32 and float64 inputs, and torch's atan2 refuses complex input",
          _atan2_one_against_atan, corrected=True),
    Claim("aten::neg", "rationale", "torch keeps sub core and its decomposition tables do not route sub through neg",
          _sub_not_through_neg, corrected=True),
    Claim("aten::elu", "rationale", "input_scale (used by CELU, as 1/alpha; SELU passes 1)", _elu_scales_of_selu_and_celu,
          corrected=True),
    Claim("aten::erfinv", "rationale", "trunc_normal_ initialization does not call it: it samples by rejection",
          _trunc_normal_without_erfinv, corrected=True),
    Claim("aten::digamma", "rationale",
          "the gradient of its log_prob in rate does not call it, and torch gives Poisson no entropy",
          _digamma_in_distributions, corrected=True),
    Claim("aten::full_like", "rationale",
          "a sliced, expanded or otherwise non-dense self gives dense strides in self's dim order",
          _full_like_preserve_strides, corrected=True),
    Claim("aten::native_dropout", "rationale", "rescales survivors by 1/(1-p) rounded to the input's dtype",
          _dropout_scale_rounded, corrected=True),
    Claim("aten::randperm", "testing.notes",
          "torch refuses a larger n for int8, int16, uint8, float16 and float32 but not for bfloat16, whose values above 256 are rounded from n = 258 on, so some repeat",
          _randperm_dtype_limits, corrected=True),
    Claim("aten::reciprocal", "testing.notes", "a complex zero inf+nanj", _reciprocal_complex_zero, corrected=True),
    Claim("aten::sqrt", "rationale", "torch 2.13's CPU kernel is not correctly rounded in float32 and float64",
          _sqrt_one_ulp_off, corrected=True),
    Claim("aten::fill.Scalar", "rationale", "x.zero_() becomes aten.zero instead, which torch's core table rewrites into full_like",
          _zero_functionalizes_to_zero, corrected=True),
    # --- sealed prose of 2027.02, binary pointwise ops
    Claim("aten::add.Scalar", "testing.notes", "bool->int/float/complex, int->float/complex, float->complex",
          _scalar_cases(aten.add.Scalar, lambda: _arith_scalar_cases(True)), corrected=True),
    Claim("aten::mul.Scalar", "testing.notes", "bool->int/float/complex, int->float/complex, float->complex",
          _scalar_cases(aten.mul.Scalar, lambda: _arith_scalar_cases(True)), corrected=True),
    Claim("aten::sub.Scalar", "testing.notes", "int->float/complex, float->complex; a bool self or bool scalar is refused",
          lambda: _scalar_cases(aten.sub.Scalar, lambda: _arith_scalar_cases(False))()
          and raises(lambda: aten.sub.Scalar(t([True]), 1)) and raises(lambda: aten.sub.Scalar(t([1]), True)),
          corrected=True),
    Claim("aten::div.Scalar", "testing.notes", "bool or int->float/complex, float->complex",
          _scalar_cases(aten.div.Scalar, lambda: [
              (t([1, 2], I8), 2.5, F32), (t([1, 2], I8), 1j, torch.complex64), (t([1.0]), 1j, torch.complex64),
              (t([1.0], F64), 1j, torch.complex128), (t([True]), 2.5, F32), (t([True]), 1j, torch.complex64),
              (t([1.0], F16), 1e-8, F16), (t([100], I8), 300, F32), (t([1, 2], I8), 2, F32), (t([True]), 2, F32)]),
          corrected=True),
    Claim("aten::div.Scalar_mode", "testing.notes", "bool->int/float, int->float, and a complex scalar",
          lambda: _scalar_cases(lambda s, c: aten.div.Scalar_mode(s, c, rounding_mode="trunc"), lambda: [
              (t([True, False]), 2, I64), (t([1, 2], I8), 2.5, F32), (t([True]), 2.5, F32), (t([1, 2], I8), 1j, None),
              (t([1.0]), 1j, None), (t([100], I8), 300, I8), (t([1.0], F16), 1e5, F16)])()
          and _scalar_cases(lambda s, c: aten.div.Scalar_mode(s, c, rounding_mode="floor"), lambda: [
              (t([1.0]), 1j, None), (t([7], I8), 2, I8)])()
          and _scalar_cases(lambda s, c: aten.div.Scalar_mode(s, c, rounding_mode=None), lambda: [
              (t([7], I8), 2, F32), (t([True]), 2, F32), (t([1], I8), 1j, torch.complex64),
              (t([1.0]), 1j, torch.complex64)])(),
          corrected=True),
    *[Claim(f"aten::{name}.Scalar", "testing.notes", "bool->int/float/complex, int->float/complex, float->complex",
            _scalar_cases(getattr(aten, name).Scalar, lambda name=name: _compare_scalar_cases(name)), corrected=True)
      for name in ("eq", "ne")],
    *[Claim(f"aten::{name}.Scalar", "testing.notes", "bool->int/float, int->float; a complex scalar is refused",
            _scalar_cases(getattr(aten, name).Scalar, lambda name=name: _compare_scalar_cases(name)), corrected=True)
      for name in ("ge", "gt", "le", "lt")],
    *[Claim(f"aten::{name}.Scalar", "testing.notes", "bool->int/float, int->float; a complex scalar is refused",
            _scalar_cases(getattr(aten, name).Scalar, lambda: [
                (t([True, False]), 2, I64), (t([True]), 2.5, F32), (t([1, 2], I8), 2.5, F32), (t([1, 2], I8), 1j, None),
                (t([1.0]), 1j, None), (t([100], I8), 300, I8), (t([1.0], F16), 1e5, F16)]), corrected=True)
      for name in ("fmod", "remainder")],
    Claim("aten::div.Scalar", "rationale", "to the default complex dtype with a complex scalar",
          lambda: _default_dtype_division(), corrected=True),
    Claim("aten::atan2", "rationale", "it returns an angle off by pi, or NaN where both are infinite or both zero",
          _atan_of_quotient_against_atan2, corrected=True),
    Claim("aten::bitwise_right_shift.Tensor", "rationale", "x >> k is floor division by 2**k taken in int64 for k up to 62",
          _shifts_exact_in_core(left=False), corrected=True),
    Claim("aten::bitwise_left_shift.Tensor", "rationale", "x << k within the width is exactly x * 2**k wrapping in x's dtype",
          _shifts_exact_in_core(left=True), corrected=True),
    # --- sealed prose of 2027.02, reductions, normalization, linear algebra and misc
    Claim("aten::sort.stable", "rationale", "with stable False or None it gives aten.sort's values and indices, which for 17 alternating zeros and ones are not in input order among the ties",
          _sort_stable_false_is_sort, corrected=True),
    Claim("aten::sort.stable", "testing.notes", "with stable False or None it gives aten.sort's values and indices, which for 17 alternating zeros and ones are not in input order among the ties",
          _sort_stable_false_is_sort, corrected=True),
    Claim("aten::var.correction", "rationale", "var, var.dim, std, std.dim and std.correction decompose into in torch's core table",
          _var_correction_is_the_target, corrected=True),
    Claim("aten::var.correction", "rationale", "var_mean and std_mean are not decomposed into it (the table keeps var_mean.correction)",
          _var_correction_is_the_target, corrected=True),
    Claim("aten::_native_batch_norm_legit", "testing.notes", "which torch does not check (a longer weight, bias, running_mean or running_var is accepted, its extra entries unused and left unchanged)",
          lambda: _batch_norm_longer_params("training"), corrected=True),
    Claim("aten::_native_batch_norm_legit.no_stats", "testing.notes", "which torch does not check (a longer weight or bias is accepted, its extra entries unused)",
          lambda: _batch_norm_longer_params("no_stats"), corrected=True),
    Claim("aten::_native_batch_norm_legit_no_training", "testing.notes", "which torch does not check (a longer weight, bias, running_mean or running_var is accepted, its extra entries unused)",
          lambda: _batch_norm_longer_params("no_training"), corrected=True),
    Claim("aten::native_group_norm", "testing.notes", "torch checks only that N * C * HxW is input.numel() (N = 1 with HxW = 6 for a [2, 4, 3] input is accepted and normalises it as the [1, 4, 6] tensor of its values)",
          _group_norm_checks_numel_only, corrected=True),
    Claim("aten::_fft_c2c", "rationale", "every torch.fft transform that takes complex input lowers to it, except irfft, irfft2, irfftn and hfft, which return a real signal through _fft_c2r alone (hfft2 and hfftn run it before _fft_c2r)",
          _fft_transforms_of_complex, corrected=True),
    Claim("aten::_pdist_forward", "testing.notes", "torch refuses a 1-d or non-contiguous self, but accepts one of higher rank without an error",
          lambda: raises(lambda: aten._pdist_forward(torch.randn(4), 2.0)) and raises(lambda: aten._pdist_forward(torch.randn(3, 4).t(), 2.0))
          and aten._pdist_forward(torch.randn(2, 3, 4), 2.0).shape == (1,) and aten._pdist_forward(torch.randn(3, 2, 4, 2), 2.0).shape == (3,),
          corrected=True),
    Claim("aten::_conj", "rationale", "ifft of a real input, ihfft, hfft, hfft2 and hfftn emit around _fft_r2c and _fft_c2r (ihfft2 and ihfftn emit _conj_physical instead)",
          _conj_in_fft_decompositions, corrected=True),
    Claim("aten::_conj", "testing.notes", "torch returns a view with the conjugate bit flipped (set for an input without it, cleared for one that has it)",
          _conj_flips_bit, corrected=True),
    Claim("aten::copy", "rationale", "keeps self's layout (its strides and storage offset; an expanded self, whose elements share memory, gives dense strides instead)",
          _copy_keeps_strides_unless_expanded, corrected=True),
    Claim("aten::resize_", "testing.notes", "a transposed or strided self is laid out contiguously over its storage, so its leading values after resize_ are its storage's, not its own in order",
          _resize_keeps_storage_order, corrected=True),
    Claim("aten::sum.dim_IntList", "rationale", "is used by many of torch's decompositions, e.g. of norms, softmax and logsumexp (its rules for mean and var trace to prims.sum and prims.var instead)",
          _sum_in_torch_decompositions, corrected=True),
    # --- sealed prose of 2027.02, pooling, indexing and views
    Claim("aten::adaptive_max_pool2d", "rationale", "unless the sizes divide evenly or an output size is 0",
          _adaptive_max_pool2d_rule_falls_back, corrected=True),
    Claim("aten::convolution_backward", "rationale",
          "asking for the bias gradient without the weight gradient returns the weight gradient as well",
          _conv_backward_half_returns_weight_grad, corrected=True),
    Claim("aten::replication_pad3d", "rationale",
          "aten::pad with mode 'replicate' takes 1 to 3 padded dims, but it is composite and calls replication_pad1d, 2d or 3d",
          _pad_replicate_composite, corrected=True),
    Claim("aten::bucketize.Tensor", "rationale",
          "the count of boundaries not >= x, or not > x with right, which puts NaN after every boundary as torch does",
          _bucketize_is_a_count, corrected=True),
    # --- sealed prose of 2027.02, decomposition rules
    Claim("aten::addr", "testing.notes", "so an overflowing product of finite elements gives 0 there",
          lambda: same(aten.addr(torch.zeros(2, 2), t([3e38, 1.0]), t([3e38, 1.0]), alpha=0), torch.zeros(2, 2))
          and bool(decomposition_table[aten.addr.default](torch.zeros(2, 2), t([3e38, 1.0]), t([3e38, 1.0]), alpha=0)
                   .isnan().any()), rule=True, corrected=True),
    Claim("aten::baddbmm", "testing.notes", "a beta that underflows to 0 in float32",
          lambda: all(aten.baddbmm(torch.full((1, 1, 1), float("inf"), dtype=d), torch.ones(1, 1, 1, dtype=d),
                                   torch.ones(1, 1, 1, dtype=d), beta=1e-50).item() == 1.0
                      and decomposition_table[aten.baddbmm.default](torch.full((1, 1, 1), float("inf"), dtype=d),
                                                                    torch.ones(1, 1, 1, dtype=d), torch.ones(1, 1, 1, dtype=d),
                                                                    beta=1e-50).isnan().all()
                      for d in (F32, torch.bfloat16))
          and aten.baddbmm(torch.full((1, 1, 1), float("inf"), dtype=F16), torch.ones(1, 1, 1, dtype=F16),
                           torch.ones(1, 1, 1, dtype=F16), beta=1e-10).isinf().all(), rule=True, corrected=True),
    Claim("aten::empty_like", "formula", "for a self that is not dense, preserve_format gives dense strides in the order of self's strides",
          lambda: aten.empty_like(torch.zeros(4, 6).t()[::2]).stride() == (1, 3)
          and aten.empty_like(torch.zeros(2, 3, 4, 5).permute(0, 2, 3, 1)[:, :, ::2]).stride() == (36, 3, 1, 12),
          rule=True, corrected=True),
    Claim("aten::exponential", "testing.notes", "A rate that is subnormal as a double overflows every draw to inf",
          lambda: all(aten.exponential(torch.empty(20000, dtype=d), 1e-310).isinf().all() for d in (F64, F32, F16, torch.bfloat16))
          and 0.1 < float(aten.exponential(torch.empty(20000), 1e-39).isfinite().float().mean()) < 0.5,
          rule=True, corrected=True),
    Claim("aten::lerp.Tensor", "testing.notes", "torch's decomposition (the same two-sided formula) rounds weight * (end - self)",
          lambda: (lambda s, e, w: bool(aten.lerp.Tensor(s, e, w).isfinite().all())
                   and bool(decomposition_table[aten.lerp.Tensor](s, e, w).isinf().all()))(
              t([-1.959345798188543e+37] * 3), t([2.2662953990591307e+38] * 3), t([-0.8309678435325623] * 3))
          and (lambda s, e, w: torch.equal(aten.lerp.Tensor(s, e, w).isinf(), decomposition_table[aten.lerp.Tensor](s, e, w).isinf()))(
              t([-1.7e38, -1.0e38, 3.0e38]), t([1.7e38, 2.0e38, -3.0e38]), t([0.0, 0.7, 1.0])),
          rule=True, corrected=True),
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
        if entry is None:  # the version has no such op or rule (one made core or decomposed later): nothing to check
            continue
        texts = errata_mod.field_texts(entry.raw, claim.field)
        if claim.corrected:
            applied = errata_mod.for_entry(errata, opset.version, "rule" if claim.rule else "op", claim.entry).get(claim.field, ())
            if not applied and not any(claim.quote in text for text in texts):
                continue  # an erratum of other versions: this version's text neither holds the mistake nor the fix
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
