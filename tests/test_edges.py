"""Edge inputs: every edge value of a domain reaches every data tensor, deterministically, within the compile budget."""
from __future__ import annotations

import math

import pytest
import torch

from opspec.conform import cases
from opspec.conform.runner import cached_opset
from opspec.spec.model import Interval
from opspec.spec.model import TestingHints as Hints  # a name pytest does not try to collect
from opspec.testing.strategies import Call, edges


def _as_set(values) -> set:
    return {("nan",) if isinstance(v, float) and math.isnan(v) else (v, math.copysign(1.0, v)) for v in values}


def test_float_edges_hold_the_values_kernels_differ_on():
    found = _as_set(edges.float_edges(torch.float32, None))
    info = torch.finfo(torch.float32)
    for value in (0.0, -0.0, math.inf, -math.inf, info.max, -info.max, info.tiny, info.smallest_normal / 4, 0.5, 2.5,
                  -10.0):
        assert (value, math.copysign(1.0, value)) in found, value
    assert ("nan",) in found


def test_float_edges_keep_finite_values_inside_the_domain_and_nan_unless_told():
    domain = Interval(0.0, 1.0, True, False)
    values = edges.float_edges(torch.float32, domain)
    finite = [v for v in values if not math.isnan(v)]
    assert finite and all(0.0 <= v < 1.0 for v in finite) and 0.0 in finite
    assert any(math.isnan(v) for v in values)  # pow(nan, 0) is 1: NaN is an edge of every domain
    assert not any(math.isnan(v) for v in edges.float_edges(torch.float32, domain, nan=False))


def test_coordinates_get_no_nan():
    call = Call("aten::grid_sampler_2d", (torch.zeros(1, 1, 2, 2), torch.zeros(1, 1, 1, 2), 0, 0, False))
    hints = cached_opset(None).ops_by_name["aten::grid_sampler_2d"].testing
    grids = [v.args[1] for v in edges.value_variants(call, hints, torch.float32)]
    inputs = [v.args[0] for v in edges.value_variants(call, hints, torch.float32)]
    assert grids and not any(g.isnan().any() for g in grids)
    assert any(t.isnan().any() for t in inputs)


def test_several_data_tensors_also_meet_their_own_edges():
    call = Call("aten::eq.Tensor", (torch.zeros(()), torch.zeros(())))
    pairs = [(v.args[0].item(), v.args[1].item()) for v in edges.value_variants(call, Hints(), torch.float32)]
    assert any(math.isnan(a) and math.isnan(b) for a, b in pairs)  # NaN == NaN must be false
    assert (math.inf, math.inf) in pairs and any(a != b for a, b in pairs)


def test_integer_edges_avoid_the_minimum_and_a_zero_divisor():
    values = edges.integer_edges(torch.int8, None, divisor=True)
    assert 127 in values and -128 not in values and 0 not in values


def test_value_variants_put_every_edge_value_in_every_data_tensor_and_keep_layout():
    base = torch.zeros(6, 4)[:, ::2]  # a strided view
    index = torch.tensor([0, 1])
    call = Call("aten::index_select", (base, 1, index))
    variants = edges.value_variants(call, Hints(), torch.float32)
    as_float32 = torch.tensor(edges.float_edges(torch.float32, None), dtype=torch.float64).float()
    wanted = _as_set(as_float32.tolist())
    seen = set()
    for variant in variants:
        tensor = variant.args[0]
        assert tensor.stride() == base.stride() and tensor.shape == base.shape
        assert torch.equal(variant.args[2], index)  # an index tensor keeps its drawn values
        seen |= _as_set(tensor.flatten().tolist())
    assert wanted <= seen


def test_value_variants_fill_an_expanded_view():
    expanded = torch.zeros(1, 3).expand(4, 3)
    variants = edges.value_variants(Call("aten::neg", (expanded,)), Hints(), torch.float32)
    assert variants and all(v.args[0].stride() == expanded.stride() for v in variants)


def test_branch_variants_set_the_branching_arguments():
    call = Call("aten::clamp", (torch.ones(3), -1.0, 1.0))
    first = edges.branch_variants(call)[0]
    assert first.args[1] > first.args[2]  # min > max
    call = Call("aten::div.Tensor_mode", (torch.ones(2), torch.ones(2)), {"rounding_mode": None})
    assert [v.kwargs["rounding_mode"] for v in edges.branch_variants(call)] == ["floor", "trunc"]


def test_a_call_s_settings_are_its_constants_away_from_the_schema_defaults():
    from opspec.bridge.torch_ops import all_aten_schemas
    from opspec.testing.strategies.defaults import at_defaults, set_arguments

    b, m1, m2 = torch.ones(3), torch.ones(2, 4), torch.ones(4, 3)
    addmm = all_aten_schemas()["aten::addmm"]
    assert set_arguments(addmm, (b, m1, m2), {"beta": 4, "alpha": 1.0}) == {"beta": 4}  # 1.0 is the default 1
    assert set_arguments(addmm, (b, m1, m2), {"alpha": True}) == {"alpha": True}  # a bool is another setting
    assert set_arguments(addmm, (b, m1, m2), {}) == {}
    pool = all_aten_schemas()["aten::max_pool2d_with_indices"]
    x = torch.ones(1, 1, 4, 4)
    assert set_arguments(pool, (x, [2, 2], [], (0, 0), [1, 1], True), {}) == {"ceil_mode": True}  # lists compared by value
    assert set_arguments(pool, (x, [2, 2], [], [1, 0]), {}) == {"padding": [1, 0]}
    assert set_arguments(pool, (x, [2, 2], [], [object(), 0]), {})["padding"][1] == 0  # an unknown value is set
    reset = at_defaults(Call("aten::max_pool2d_with_indices", (x, [2, 2], [], [1, 0], [1, 1], True)))
    assert reset.args[1:] == ([2, 2], [], [0, 0], [1, 1], False) and reset.args[0] is x  # the same tensors
    reset = at_defaults(Call("aten::addmm", (b, m1, m2), {"beta": 0.5, "alpha": 1}))
    assert reset.kwargs == {"beta": 1, "alpha": 1} and reset.args == (b, m1, m2)


def test_a_call_s_tensor_arguments_are_named_with_their_dtypes():
    from opspec.bridge.torch_ops import all_aten_schemas
    from opspec.testing.strategies.defaults import dtype_tokens

    index = all_aten_schemas()["aten::index.Tensor"]
    x = torch.ones(3, 2)
    assert dtype_tokens(index, (x, [torch.tensor([True, False, True])]), {}) == {"self:float32", "indices:bool"}
    assert dtype_tokens(index, (x, [None, torch.tensor([0])]), {}) == {"self:float32", "indices:int64"}


@pytest.mark.parametrize("op", ["aten::clamp", "aten::sigmoid", "aten::div.Tensor_mode"])
def test_draw_adds_edges_without_more_compile_keys_and_is_deterministic(op):
    definition = cached_opset(None).ops_by_name[op]
    drawn = cases.draw(definition, "float32", "cpu", max_examples=4, max_compiles=2, seed=3)
    again = cases.draw(definition, "float32", "cpu", max_examples=4, max_compiles=2, seed=3)
    plain = cases.draw(definition, "float32", "cpu", max_examples=4, max_compiles=2, seed=3, edges=False)
    assert len({e.key for e in drawn}) <= 2
    assert len(drawn) > len(plain)
    assert [e.key for e in drawn] == [e.key for e in again]
    assert all(torch.equal(a, b) or (a.isnan() == b.isnan()).all()
               for x, y in zip(drawn, again) for a, b in zip(x.inputs, y.inputs))
    values = {v for e in drawn for t in e.inputs for v in t.flatten().tolist()}
    assert math.inf in values and any(math.isnan(v) for v in values)


def test_draw_spends_the_second_compile_on_a_branch():
    definition = cached_opset(None).ops_by_name["aten::clamp"]
    drawn = cases.draw(definition, "float32", "cpu", max_examples=4, max_compiles=2, seed=0)
    bounds = {(e.call.args[1], e.call.args[2]) for e in drawn if len(e.call.args) == 3}
    assert (0.5, -0.5) in bounds


def test_a_repro_rebuilds_a_one_element_strided_nan_bit_for_bit():
    from opspec.conform import replay

    view = torch.zeros(4)[::2][:1]  # one element, stride 2: contiguous() keeps the stride
    view.copy_(-torch.tensor([math.nan]))  # a NaN whose sign the readable literal loses
    rebuilt = eval(replay.exact_tensor_source(view), {"torch": torch, "nan": math.nan, "inf": math.inf})
    assert rebuilt.stride() == view.stride()
    assert torch.equal(rebuilt.view(torch.int32), view.view(torch.int32))


def test_accumulating_ops_get_no_large_finite_edges():
    call = Call("aten::sum.dim_IntList", (torch.zeros(2, 3), [1]))
    values = {v for variant in edges.value_variants(call, Hints(), torch.float32)
              for v in variant.args[0].flatten().tolist()}
    assert math.inf in values and -math.inf in values
    assert not any(math.isfinite(v) and abs(v) >= edges.ACCUMULATING_LIMIT for v in values)


def test_ops_that_pick_elements_get_ties_in_every_slice_with_no_nan_beside_them():
    hints = cached_opset(None).ops_by_name["aten::argmin"].testing
    fills = [v.args[0] for v in edges.value_variants(Call("aten::argmin", (torch.zeros(3, 2),)), hints, torch.float32)]
    ties = [t for t in fills if not t.isnan().any() and t.abs().unique().numel() <= 2]
    signs = {tuple(t.flatten()[:2].signbit().tolist()) for t in ties if (t == 0).all()}
    assert signs == {(True, False), (False, True)}  # +0 and -0 tie, in both orders
    # a tied minimum away from the first place, in rows and down the columns: a scan in another order picks another
    assert any(int(t.argmin()) != 0 and (t == t.min()).sum() > 1 and (t[:, 0] == t.min()).any() for t in ties)
    integers = [v.args[0] for v in edges.value_variants(Call("aten::argmin", (torch.zeros(3, 2, dtype=torch.int64),)),
                                                         hints, torch.int64)]
    assert len({tuple(t.flatten().tolist()) for t in integers}) == len(integers)  # -0 and +0 fills collapse once
    assert not [v for v in edges.value_variants(Call("aten::abs", (torch.zeros(3, 2),)), Hints(), torch.float32)
                if (v.args[0] == 0).all()]  # ops that pick nothing get none


def test_normalisations_that_square_their_inputs_get_no_infinite_edges_but_nan():
    op = "aten::native_layer_norm"
    call = Call(op, (torch.zeros(2, 3), [3], None, None, 1e-5))
    inputs = [v.args[0] for v in edges.value_variants(call, cached_opset(None).ops_by_name[op].testing, torch.float32)]
    assert inputs and not any(t.isinf().any() for t in inputs)
    assert any(t.isnan().any() for t in inputs)
    others = [v.args[0] for v in edges.value_variants(Call("aten::abs", (torch.zeros(2, 3),)), Hints(), torch.float32)]
    assert any(t.isinf().any() for t in others)
