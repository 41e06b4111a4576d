"""The comparison rule, branch by branch, failures first-class."""
from __future__ import annotations

import pytest
import torch

from opspec.spec.model import Tolerance
from opspec.testing.compare import (
    DEFAULT_TOLERANCES,
    PERTURBATION_ULPS,
    Float64Reference,
    assert_matches,
    compare,
    float64_run,
    float64_spread,
    tolerance_for,
    upcast,
)

nan, inf = float("nan"), float("inf")


def test_identical_tensors_match_with_zero_error():
    x = torch.randn(3, 4)
    result = compare(x.clone(), x)
    assert result.ok and result.max_abs_error == 0.0 and result.tolerance == DEFAULT_TOLERANCES[torch.float32]


@pytest.mark.parametrize("candidate, reference, words", [
    (torch.zeros(3, dtype=torch.float64), torch.zeros(3), "dtype"),
    (torch.zeros(3, 1), torch.zeros(3), "shape"),
    (torch.zeros(1, 3), torch.zeros(3, 1), "shape"),
    (torch.tensor([nan, 1.0]), torch.tensor([1.0, nan]), "NaN"),
    (torch.tensor([1.0, 2.0]), torch.tensor([1.0, nan]), "NaN"),
    (torch.tensor([-inf]), torch.tensor([inf]), "infinity"),
    (torch.tensor([1e30]), torch.tensor([inf]), "infinity"),
    (torch.tensor([1, 2]), torch.tensor([1, 3]), "exact"),
    (torch.tensor([True]), torch.tensor([False]), "exact"),
])
def test_mismatches_fail_with_a_reason(candidate, reference, words):
    result = compare(candidate, reference)
    assert not result.ok and words in result.message
    with pytest.raises(AssertionError, match=words):
        assert_matches(candidate, reference)


def test_nan_and_inf_in_the_same_places_match():
    x = torch.tensor([nan, inf, -inf, 1.0])
    assert compare(x.clone(), x).ok


def test_empty_tensors_match_when_shapes_agree():
    assert compare(torch.empty(0, 3), torch.empty(0, 3)).ok
    assert not compare(torch.empty(3, 0), torch.empty(0, 3)).ok


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.complex64, torch.complex128])
def test_error_just_inside_and_just_above_the_tolerance(dtype):
    rtol, atol = DEFAULT_TOLERANCES[dtype]
    reference = torch.ones(4, dtype=dtype)
    allowed = atol + rtol
    assert compare(reference + 0.5 * allowed, reference).ok
    result = compare(reference + 2 * allowed, reference)
    assert not result.ok and result.max_abs_error == pytest.approx(2 * allowed, rel=0.05)
    assert result.tolerance == (rtol, atol)


def test_tolerance_hint_overrides_its_dtype_only():
    loose = Tolerance("accumulation order differs in the reduction", {"float32": (0.1, 0.1)})
    reference = torch.ones(3)
    assert compare(reference * 1.05, reference, tolerance=loose).ok
    assert not compare(reference * 1.05, reference).ok
    assert tolerance_for(torch.float64, loose) == DEFAULT_TOLERANCES[torch.float64]


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_low_precision_candidate_as_good_as_the_kernel_passes(dtype):
    x = torch.randn(64, dtype=torch.float64)
    truth = x.exp()
    kernel = x.to(dtype).exp()
    result = compare(kernel.clone(), kernel, float64=truth)
    assert result.ok and result.kernel_error is not None and result.kernel_error > 0


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_low_precision_candidate_worse_than_the_kernel_fails(dtype):
    x = torch.linspace(1, 2, 16, dtype=torch.float64)
    truth = x * 3
    kernel = (x.to(dtype) * 3)
    worse = kernel.clone()
    worse[5] = worse[5] * 1.05  # far beyond rounding
    result = compare(worse, kernel, float64=truth)
    assert not result.ok and "kernel's own" in result.message
    assert result.kernel_error is not None and result.tolerance == (0.0, 1e-7)


def test_low_precision_slack_follows_the_tolerance_hint():
    x = torch.linspace(1, 2, 16, dtype=torch.float64)
    kernel = x.to(torch.float16)
    candidate = kernel + 0.01
    generous = Tolerance("the decomposition upcasts differently", {"float16": (0.0, 0.05)})
    assert not compare(candidate, kernel, float64=x).ok
    assert compare(candidate, kernel, float64=x, tolerance=generous).ok


def test_low_precision_without_float64_falls_back_to_rtol_atol():
    kernel = torch.ones(4, dtype=torch.bfloat16)
    assert compare(kernel * 1.0078125, kernel).ok  # one bf16 ulp, inside rtol 0.016
    assert not compare(kernel * 1.25, kernel).ok


def test_float64_run_upcasts_low_precision_inputs_and_dtype_arguments():
    x = torch.randn(5, dtype=torch.float16)
    out = float64_run(torch.ops.aten._to_copy.default, (x,), {"dtype": torch.float16})
    assert out.dtype == torch.float64
    assert upcast([x, 3, torch.bfloat16])[2] == torch.float64


def test_nested_outputs_compare_element_wise():
    values, indices = torch.randn(3), torch.tensor([0, 1, 2])
    assert compare((values.clone(), indices.clone(), None, 4), (values, indices, None, 4)).ok
    result = compare((values.clone(), torch.tensor([0, 2, 2])), (values, indices))
    assert not result.ok and result.path == "[1]"
    assert not compare([values], (values, indices)).ok
    assert not compare((values, None), (values, indices)).ok


def test_python_numbers_compare_by_kind():
    assert compare(3, 3).ok and not compare(3, 4).ok
    assert not compare(True, 1).ok
    assert compare(1.0 + 1e-12, 1.0).ok and not compare(1.1, 1.0).ok
    assert compare(nan, nan).ok
    assert compare(True, True).ok and not compare(False, True).ok


def test_metrics_are_reported_on_success():
    reference = torch.tensor([1.0, 2.0, 4.0])
    result = compare(reference + torch.tensor([0.0, 1e-6, 0.0]), reference)
    assert result.ok and result.max_abs_error == pytest.approx(1e-6, rel=0.1)
    assert result.max_rel_error == pytest.approx(5e-7, rel=0.1)


def test_near_zero_catches_relative_error_that_atol_hides():
    reference = torch.expm1(torch.tensor([1e-10, -3e-7, 0.5], dtype=torch.float32))
    naive = torch.exp(torch.tensor([1e-10, -3e-7, 0.5], dtype=torch.float32)) - 1
    assert compare(naive, reference).ok  # within atol: the absolute rule cannot see it
    result = compare(naive, reference, near_zero=True)
    assert not result.ok and "relative error" in result.message
    assert compare(reference * (1 + 1e-6), reference, near_zero=True).ok  # a few ulps stay allowed
    subnormal = torch.tensor([1e-40], dtype=torch.float32)
    assert compare(torch.zeros(1), subnormal, near_zero=True).ok  # below the normal range: atol only


def test_float32_closer_to_a_float64_run_than_the_kernel_passes_only_where_one_is_given():
    truth = torch.tensor([0.0, 2.0], dtype=torch.float64)  # e.g. a normalised constant group: exactly 0
    kernel = torch.tensor([3.5e-5, 2.0])  # the kernel's rounding, amplified
    exact = torch.tensor([0.0, 2.0])
    assert not compare(exact, kernel).ok  # 3.5e-5 > atol: without a float64 run the exact answer fails
    assert compare(exact, kernel, float64=truth).ok
    # as far again as the kernel is, in the other direction (another order of summation), still passes
    assert compare(torch.tensor([-3.5e-5, 2.0]), kernel, float64=truth).ok
    # well beyond a few times the kernel's own error fails, and the message is the kernel comparison's
    far = compare(torch.tensor([1e-3, 2.0]), kernel, float64=truth)
    assert not far.ok and "not close" in far.message


def _group_norm(x, eps):
    return torch.ops.aten.native_group_norm(x, None, None, 1, x.shape[1], x.shape[2], 1, eps)


def test_an_ill_conditioned_call_allows_the_error_a_few_ulps_of_input_make():
    # a constant group normalised with a small eps: the kernel's mean is exact and its output 0, a two-pass
    # float32 mean one ulp off gives 1/sqrt(eps) ulps; a few ulps of input move the exact answer as far
    x = torch.full((1, 3, 4), 7.3)
    kernel = _group_norm(x, 1e-6)[0]
    one_ulp_off = (x - (7.3 + torch.finfo(torch.float32).eps * 4)) * 1000.0
    truth = _group_norm(x.double(), 1e-6)[0]
    assert not compare(one_ulp_off, kernel, float64=truth).ok  # the kernel's own error is 0: no room
    spread = float64_spread(lambda t: _group_norm(t, 1e-6)[0], (x,), None, truth)
    assert isinstance(spread, Float64Reference) and float(spread.spread.max()) > float(one_ulp_off.abs().max())
    assert compare(one_ulp_off, kernel, float64=spread).ok
    # the same error on a well-spread group, where a few ulps move nothing, fails
    y = torch.arange(12.0).reshape(1, 3, 4)
    wide = float64_spread(lambda t: _group_norm(t, 1e-6)[0], (y,), None, _group_norm(y.double(), 1e-6)[0])
    off = _group_norm(y, 1e-6)[0] + 1e-3
    assert not compare(off, _group_norm(y, 1e-6)[0], float64=wide).ok
    assert float(wide.spread.max()) < 1e-5 * PERTURBATION_ULPS


def test_a_spread_that_overflows_widens_nothing():
    x = torch.tensor([3e38, -3e38])  # moved by a few ulps, the doubled values overflow float32's max only in float64
    spread = float64_spread(lambda t: (t * 1e300) * 1e300, (x,), None, (x.double() * 1e300) * 1e300)
    assert torch.equal(spread.spread, torch.zeros(2, dtype=torch.float64))
