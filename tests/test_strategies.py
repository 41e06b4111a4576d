"""The schema-to-strategy layer: every core op yields calls its eager kernel accepts, with the variety promised."""
from __future__ import annotations

import functools
import math
import warnings

import pytest
import torch

from opspec.bridge.torch_ops import core_tagged
from opspec.spec import model
from opspec.spec.load import OpsetError, load_opset
from opspec.spec.model import Interval
from opspec.testing.strategies import (
    Call,
    calls,
    draw_examples,
    dtypes_under_test,
    strategy_source,
)
from opspec.testing.strategies.custom import CUSTOM

EXAMPLES_PER_OP = 5


@functools.lru_cache(maxsize=None)
def opset_hints() -> dict[str, model.TestingHints]:
    """The opset's testing hints when the data loads cleanly, else none (the schema alone then drives)."""
    try:
        return {op.name: op.testing for op in load_opset().ops}
    except (OpsetError, OSError):
        return {}


def examples(op: str, n: int = 50, seed: int = 0, hints: model.TestingHints | None = None, dtype=torch.float32) -> list[Call]:
    return draw_examples(calls(core_tagged()[op], hints, dtype), n, seed)


@pytest.mark.parametrize("op", sorted(core_tagged()))
def test_every_core_op_yields_valid_calls(op):
    hints = opset_hints().get(op, model.TestingHints())
    dtype = dtypes_under_test(op, hints)[0]
    drawn = draw_examples(calls(core_tagged()[op], hints, dtype), EXAMPLES_PER_OP, 0)
    assert drawn
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for call in drawn:
            try:
                call.run()
            except Exception as err:  # noqa: BLE001 - the message must carry the repro
                pytest.fail(f"{op} rejected a drawn call: {err}\n{call.repro()}")


def test_strategy_sources_cover_every_core_op():
    sources = {op: strategy_source(op, opset_hints().get(op)) for op in core_tagged()}
    assert set(sources.values()) <= {"generic", "hints", "custom"}
    assert sources["aten::sin"] == "generic"
    assert sources["aten::mm"] == "hints"
    assert sources["aten::gather"] == "custom"
    from opspec.spec import load

    opset = load.load_opset()
    served = set(core_tagged()) | set(opset.core_names()) | set(opset.rules_by_op)  # core by tag or by proposal
    assert set(CUSTOM) <= served, "custom strategies for ops that are neither core nor decomposed by the opset"


# ---- shapes and layouts ----

def test_pointwise_binary_shapes_broadcast_and_span_edge_cases():
    drawn = examples("aten::add.Tensor", 150)
    shapes = [(tuple(c.args[0].shape), tuple(c.args[1].shape)) for c in drawn]
    for a, b in shapes:
        torch.broadcast_shapes(a, b)  # raises if not broadcastable
    flat = [s for pair in shapes for s in pair]
    assert any(len(s) == 0 for s in flat), "no 0-dim tensor"
    assert any(0 in s for s in flat), "no empty tensor"
    assert any(a != b for a, b in shapes), "never broadcasts"
    assert all(math.prod(s) <= 64 for s in flat)


def test_tensors_come_in_non_contiguous_layouts():
    tensors = [c.args[0] for c in examples("aten::sin", 150) if c.args[0].numel() > 1]
    assert any(not t.is_contiguous() for t in tensors)
    assert any(0 in t.stride() for t in tensors if t.dim()), "no expanded (stride 0) tensor"
    assert any(t.storage_offset() > 0 for t in tensors), "no offset view"


def test_dims_are_valid_for_rank_and_sometimes_negative():
    dims = []
    for call in examples("aten::cumsum", 100):
        x, dim = call.args[0], call.args[1]
        assert -max(x.dim(), 1) <= dim < max(x.dim(), 1)
        dims.append(dim)
    assert any(d < 0 for d in dims)
    for call in examples("aten::sum.dim_IntList", 100):
        dim = call.args[1] if len(call.args) > 1 else call.kwargs.get("dim")
        if dim:
            rank = max(call.args[0].dim(), 1)
            assert len({d % rank for d in dim}) == len(dim), "repeated dim"


def test_size_arguments_agree_with_tensors():
    for call in examples("aten::split_with_sizes", 50):
        x, sizes = call.args[0], call.args[1]
        dim = call.args[2] if len(call.args) > 2 else call.kwargs.get("dim", 0)
        assert sum(sizes) == x.shape[dim]
    for call in examples("aten::permute", 50):
        assert sorted(d % max(call.args[0].dim(), 1) for d in call.args[1]) == list(range(call.args[0].dim()))
    for call in examples("aten::gather", 50):
        x, dim, index = call.args[:3]
        if index.numel():
            assert 0 <= int(index.min()) and int(index.max()) < (x.shape[dim] if x.dim() else 1)


def test_symbolic_shape_hints_share_sizes():
    for call in examples("aten::mm", 50):
        assert call.args[0].shape[1] == call.args[1].shape[0]
    hints = model.TestingHints(shapes={"self": ("m", "k"), "mat2": ("k", 3)}, domain={"m": Interval.parse("[2, 2]")})
    for call in examples("aten::mm", 30, hints=hints):
        assert call.args[0].shape[0] == 2 and call.args[1].shape[1] == 3


def test_rank_and_choice_hints_are_respected():
    hints = model.TestingHints(ranks={"self": (2, 3)}, choices={"keepdim": (True,)})
    for call in examples("aten::any.dim", 40, hints=hints):
        assert 2 <= call.args[0].dim() <= 3
        keepdim = call.args[2] if len(call.args) > 2 else call.kwargs.get("keepdim", True)
        assert keepdim is True


def test_defaults_are_sometimes_omitted_and_sometimes_drawn():
    keepdims = [("keepdim" in c.kwargs or len(c.args) > 2) for c in examples("aten::sum.dim_IntList", 60)]
    assert any(keepdims) and not all(keepdims)


# ---- values ----

def test_domain_hint_excludes_zero_negatives_and_nan():
    hints = model.TestingHints(domain={"self": Interval.parse("(0, inf)")})
    for dtype in (torch.float32, torch.float16, torch.bfloat16):
        for call in examples("aten::log", 60, hints=hints, dtype=dtype):
            x = call.args[0]
            assert not x.isnan().any() and bool((x > 0).all()), call.repro()


def test_a_bounded_domain_hint_bounds_complex_parts_too():
    hints = model.TestingHints(domain={"self": Interval.parse("[-10, 10]")})
    parts = torch.cat([torch.view_as_real(c.args[0]).reshape(-1) for c in examples("aten::sin", 40, hints=hints, dtype=torch.complex64)])
    assert parts.isfinite().all() and bool((parts.abs() <= 10).all())
    unbounded = torch.cat([torch.view_as_real(c.args[0]).reshape(-1) for c in examples("aten::sin", 40, dtype=torch.complex64)])
    assert (unbounded.abs() > 10).any()  # the default parts reach 1e6


def test_unrestricted_floats_include_edge_values():
    values = torch.cat([c.args[0].reshape(-1).double() for c in examples("aten::sin", 200)])
    assert values.isnan().any() and values.isposinf().any() and values.isneginf().any()
    assert ((values == 0) & torch.signbit(values)).any(), "no -0.0"
    assert (values.abs() > 1e30).any() and ((values.abs() < 1e-30) & (values != 0)).any()


def test_ops_that_pick_elements_see_ties():
    with_ties = sum(c.args[0].numel() > c.args[0].unique().numel() for c in examples("aten::max.dim", 60))
    assert with_ties >= 20


@pytest.mark.parametrize("dtype", [torch.int8, torch.uint8, torch.int32, torch.int64, torch.bool])
def test_integer_and_bool_tensors_are_valid(dtype):
    for call in examples("aten::bitwise_not", 30, dtype=dtype):
        x = call.args[0]
        assert x.dtype == dtype
        call.run()


# ---- the call record ----

def test_repro_rebuilds_exact_inputs_and_calls_the_op():
    for call in examples("aten::add.Tensor", 30) + examples("aten::where.self", 10):
        namespace: dict = {}
        exec(call.repro(), namespace)  # noqa: S102 - our own generated source
        rebuilt = [v for k, v in namespace.items() if isinstance(v, torch.Tensor) and k != "result"]
        for original, copy in zip(call.tensors(), rebuilt):
            assert (original.shape, original.stride(), original.dtype) == (copy.shape, copy.stride(), copy.dtype)
            assert torch.equal(original.nan_to_num(), copy.nan_to_num())
            assert torch.equal(original.isnan(), copy.isnan())


def test_copy_preserves_strides_and_run_does_not_mutate():
    for call in examples("aten::resize_", 10) + examples("aten::sin", 20):
        copied = call.copy()
        for a, b in zip(call.tensors(), copied.tensors()):
            assert a.stride() == b.stride() and a.storage_offset() == b.storage_offset()
            assert a.data_ptr() != b.data_ptr() or a.numel() == 0
        before = [t.shape for t in call.tensors()]
        call.run()
        assert [t.shape for t in call.tensors()] == before


def test_draw_examples_is_deterministic():
    first = [c.repro() for c in examples("aten::add.Tensor", 10, seed=7)]
    second = [c.repro() for c in examples("aten::add.Tensor", 10, seed=7)]
    assert first == second


def test_every_argument_type_has_a_strategy():
    schema = ("aten::everything(Tensor self, Tensor? opt, Tensor[] many, int i, int? oi, int[] li, int[2] l2, "
              "SymInt s, SymInt[] ls, SymInt[3] l3, float f, float? of, float[]? lf, bool b, bool[3] lb, "
              "Scalar sc, Scalar? osc, ScalarType? st, Layout? lay, Device? dev, MemoryFormat? mf, str mode=\"a\", "
              "str? os=None, Generator? generator=None, *, int dim=0, Tensor(a!) out) -> Tensor(a!)")
    for call in draw_examples(calls(schema), 20, 0):
        assert isinstance(call.args[0], torch.Tensor)
        assert call.kwargs.get("generator") is None
        assert call.kwargs["out"].numel() == 0
        assert "import torch" in call.repro()


@pytest.mark.parametrize("op", ["aten::native_group_norm", "aten::native_layer_norm"])
def test_normalisations_that_square_their_inputs_get_no_planted_value_whose_square_overflows(op):
    limit = math.sqrt(torch.finfo(torch.float32).max)
    drawn = [t for call in examples(op, n=200, hints=opset_hints().get(op)) for t in call.args
             if isinstance(t, torch.Tensor) and t.is_floating_point()]
    values = torch.cat([t.flatten() for t in drawn])
    assert not (values.abs() >= limit).any()  # no ±max/2, no infinity: the kernel's NaN there is not the op's
    assert values.isnan().any()  # NaN is still planted: its propagation is the op's
    big = [t for call in examples("aten::abs", n=200) for t in call.args if isinstance(t, torch.Tensor)]
    assert any((t.abs() >= limit).any() for t in big)  # other ops still get them


def test_normalisation_draws_in_a_narrow_dtype_round_no_large_value_to_an_infinity(dtype="float16"):
    drawn = [t for call in examples("aten::native_group_norm", n=200, hints=opset_hints().get("aten::native_group_norm"),
                                    dtype=getattr(torch, dtype))
             for t in call.args if isinstance(t, torch.Tensor) and t.is_floating_point()]
    assert drawn and all(t.dtype == getattr(torch, dtype) for t in drawn)
    assert not any(t.isinf().any() for t in drawn)  # float16's max is far below sqrt(float32 max)
