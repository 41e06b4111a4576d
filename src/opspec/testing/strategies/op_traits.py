"""Facts about ops that drawing needs: data only, no logic.

``BUILTIN_HINTS`` are testing hints in the YAML's own format, for ops whose
schema alone does not say how to build a valid call. They apply under the
opset's hints: any field the opset sets for an op wins, so these are the floor
the strategies stand on while the YAML is being written, and the reference for
what it should say.

Hint conventions the strategies read:
- ``shapes``: a symbol shared by two tensors is one size; symbols range over
  [0, 4] (zero only in some examples), or over ``domain[symbol]`` when given.
- ``domain``: an argument's values (per element for lists), or a shape symbol's sizes.
- ``choices``: values for a non-tensor argument; ScalarType, Layout and
  MemoryFormat choices are spelled as torch attribute names ("float64").
"""
from __future__ import annotations

from opspec.testing import comparison_traits

INTEGER_DTYPES = ["int64", "int32", "int16", "int8", "uint8", "bool"]
POSITIVE_SIZE = "[1, 4]"
ANY_MEMORY_FORMAT = [None, "contiguous_format", "preserve_format"]

BUILTIN_HINTS: dict[str, dict] = {
    "aten::_adaptive_avg_pool2d": {
        "shapes": {"self": ["n", "c", "h", "w"]},
        "domain": {"c": POSITIVE_SIZE, "h": POSITIVE_SIZE, "w": POSITIVE_SIZE, "output_size": "[1, 4]"},
    },
    "aten::_adaptive_avg_pool2d_backward": {
        "shapes": {"grad_output": ["n", "c", "oh", "ow"], "self": ["n", "c", "h", "w"]},
        "domain": {s: POSITIVE_SIZE for s in ("c", "h", "w", "oh", "ow")},
    },
    "aten::_adaptive_avg_pool3d": {
        "shapes": {"self": ["n", "c", "d", "h", "w"]},
        "domain": {"c": POSITIVE_SIZE, "d": POSITIVE_SIZE, "h": POSITIVE_SIZE, "w": POSITIVE_SIZE, "output_size": "[1, 3]"},
    },
    "aten::adaptive_avg_pool1d": {
        "shapes": {"self": ["n", "c", "l"]},
        "domain": {"c": POSITIVE_SIZE, "l": POSITIVE_SIZE, "output_size": "[1, 4]"},
    },
    "aten::_cdist_forward": {
        "shapes": {"x1": ["b", "i", "m"], "x2": ["b", "j", "m"]},
        "domain": {"p": "[0, 3]"},
        "choices": {"compute_mode": [None, 0, 1, 2]},
    },
    "aten::_pdist_forward": {"ranks": {"self": [2, 2]}, "domain": {"p": "[0, 3]"}},
    "aten::_local_scalar_dense": {"ranks": {"self": [0, 0]}},
    "aten::_log_softmax": {"choices": {"half_to_float": [False]}},  # True is for CUDA half inputs only
    "aten::_softmax": {"choices": {"half_to_float": [False]}},
    "aten::_native_batch_norm_legit": {"domain": {"eps": "(0, 0.001]", "momentum": "[0, 1]"}},
    "aten::_native_batch_norm_legit.no_stats": {"domain": {"eps": "(0, 0.001]", "momentum": "[0, 1]"}},
    "aten::_native_batch_norm_legit_no_training": {"domain": {"eps": "(0, 0.001]", "momentum": "[0, 1]"}},
    "aten::_to_copy": {"choices": {"memory_format": ANY_MEMORY_FORMAT}},
    "aten::clone": {"choices": {"memory_format": ANY_MEMORY_FORMAT}},
    "aten::full_like": {"choices": {"memory_format": ANY_MEMORY_FORMAT}},
    "aten::addmm": {"shapes": {"self": ["m", "n"], "mat1": ["m", "k"], "mat2": ["k", "n"]}},
    "aten::mm": {"shapes": {"self": ["m", "k"], "mat2": ["k", "n"]}},
    "aten::bmm": {"shapes": {"self": ["b", "m", "k"], "mat2": ["b", "k", "n"]}},
    "aten::copy": {"shapes": {"self": ["a", "b", "c"], "src": ["b", "c"]}},
    "aten::grid_sampler_2d": {
        "shapes": {"input": ["n", "c", "h", "w"], "grid": ["n", "ho", "wo", 2]},
        "domain": {"h": POSITIVE_SIZE, "w": POSITIVE_SIZE, "grid": "[-1.5, 1.5]"},
        "choices": {"interpolation_mode": [0, 1, 2], "padding_mode": [0, 1, 2]},
    },
    "aten::native_dropout": {"domain": {"p": "[0, 1]"}},
    "aten::reflection_pad1d": {
        "shapes": {"self": ["n", "c", "w"]},
        "domain": {"n": "[1, 2]", "c": "[1, 2]", "w": "[3, 5]", "padding": "[0, 2]"},
    },
    "aten::reflection_pad2d": {
        "shapes": {"self": ["n", "c", "h", "w"]},
        "domain": {"n": "[1, 2]", "c": "[1, 2]", "h": "[3, 4]", "w": "[3, 4]", "padding": "[0, 2]"},
    },
    "aten::reflection_pad3d": {
        "shapes": {"self": ["n", "c", "d", "h", "w"]},
        "domain": {"n": "[1, 1]", "c": "[1, 1]", "d": "[3, 3]", "h": "[3, 4]", "w": "[3, 4]", "padding": "[0, 2]"},
    },
    "aten::replication_pad2d": {
        "shapes": {"self": ["n", "c", "h", "w"]},
        "domain": {"n": "[1, 2]", "c": "[1, 2]", "h": POSITIVE_SIZE, "w": POSITIVE_SIZE, "padding": "[0, 2]"},
    },
    "aten::replication_pad3d": {
        "shapes": {"self": ["n", "c", "d", "h", "w"]},
        "domain": {"n": "[1, 1]", "c": "[1, 2]", "d": "[1, 3]", "h": "[1, 3]", "w": "[1, 3]", "padding": "[0, 2]"},
    },
    "aten::gelu": {"choices": {"approximate": ["none", "tanh"]}},
    "aten::div.Tensor_mode": {"choices": {"rounding_mode": [None, "trunc", "floor"]}},
    "aten::div.Scalar_mode": {"choices": {"rounding_mode": [None, "trunc", "floor"]}},
    "aten::randperm": {"domain": {"n": "[0, 8]"}},
    "aten::slice.Tensor": {"ranks": {"self": [1, 3]}},
    "aten::sym_size.int": {"ranks": {"self": [1, 3]}},
    "aten::sym_stride.int": {"ranks": {"self": [1, 3]}},
    "aten::_fft_c2r": {"dtypes": ["complex64", "complex128"]},
    "aten::_fft_r2c": {"dtypes": ["float32", "float64"]},
    **{f"aten::bitwise_{name}": {"dtypes": INTEGER_DTYPES}
       for name in ("and.Scalar", "and.Tensor", "or.Scalar", "or.Tensor", "xor.Scalar", "xor.Tensor", "not")},
}

# Ops that pick elements: their inputs repeat values often, so tie-breaking is exercised.
PICKS_ELEMENTS = frozenset({
    "aten::amax", "aten::amin", "aten::argmax", "aten::argmin", "aten::max.dim", "aten::min.dim",
    "aten::sort", "aten::topk", "aten::maximum", "aten::minimum", "aten::clamp", "aten::clamp.Tensor",
    "aten::max_pool2d_with_indices", "aten::max_pool3d_with_indices", "aten::max_pool2d_with_indices_backward",
    "aten::nonzero", "aten::eq.Tensor", "aten::ne.Tensor", "aten::ge.Tensor", "aten::le.Tensor",
})

# Normalisations whose kernels square their inputs in one pass (E[x^2] - E[x]^2): where the square overflows,
# at huge or infinite inputs, torch gives NaN where a two-pass form gives the right answer, a difference of
# torch's kernel, not of the op; so planted values keep below the square root of the largest value
# (values.float_values), and the comparison rule meets their float32 results with a float64 run. The accuracy
# data names them (``ill_conditioned`` in opset/accuracy.yaml, with the reason).
SQUARES_INPUTS = comparison_traits.ILL_CONDITIONED

# Ops whose kernels reject zero-size inputs (a reduction with no identity, an FFT of nothing).
REJECTS_EMPTY = frozenset({
    "aten::amax", "aten::amin", "aten::argmax", "aten::argmin", "aten::max.dim", "aten::min.dim",
    "aten::_fft_r2c", "aten::_fft_c2r",
})

# CPU kernels that refuse strided inputs outright.
CONTIGUOUS_ONLY = frozenset({"aten::_pdist_forward", "aten::native_group_norm"})

# Integer division by zero raises instead of giving inf: the divisor avoids 0 for integer dtypes.
INTEGER_DIVISOR = {
    "aten::div.Tensor_mode": "other", "aten::div.Scalar_mode": "other",
    "aten::fmod.Tensor": "other", "aten::fmod.Scalar": "other",
    "aten::remainder.Tensor": "other", "aten::remainder.Scalar": "other",
}

# Float tensors whose values are coordinates: a NaN there selects no defined element, so the
# edge inputs (edges.float_edges) keep NaN out of their domain as they keep out other values.
NAN_UNDEFINED = {"aten::grid_sampler_2d": "grid"}

# Argument names whose tensors are masks whatever dtype is under test.
BOOL_TENSOR_NAMES = frozenset({"condition", "mask"})
DIM_NAMES = frozenset({"dim", "dims", "dim0", "dim1", "dim2"})

# Ops whose eager kernels keep relative precision near zero: compare holds their tiny outputs to a relative
# bound the absolute tolerance would hide (compare.compare's near_zero). The accuracy data names them
# (``near_zero`` in opset/accuracy.yaml, with the measurement).
ACCURATE_NEAR_ZERO = comparison_traits.NEAR_ZERO

# Constant arguments where an op's semantics branch, most telling first: the edge layer
# (edges.branch_variants) runs a drawn call again with each setting, as long as compiles allow.
BRANCHES: dict[str, tuple[dict, ...]] = {
    "aten::div.Tensor_mode": ({"rounding_mode": "floor"}, {"rounding_mode": "trunc"}),
    "aten::div.Scalar_mode": ({"rounding_mode": "floor", "other": -2.5}, {"rounding_mode": "trunc", "other": -2.5}),
    "aten::div.Scalar": ({"other": 0.0},),
    "aten::clamp": ({"min": 0.5, "max": -0.5}, {"min": None, "max": 0.0}),
    "aten::hardtanh": ({"min_val": 0.5, "max_val": -0.5},),
    "aten::pow.Tensor_Scalar": ({"exponent": 0}, {"exponent": 0.5}, {"exponent": -1}),
    "aten::pow.Scalar": ({"self": 1.0}, {"self": 0.0}),
    "aten::fmod.Scalar": ({"other": -1.5},),
    "aten::remainder.Scalar": ({"other": -1.5},),
    "aten::mul.Scalar": ({"other": float("inf")},),
    "aten::eq.Scalar": ({"other": float("nan")},),
    "aten::ne.Scalar": ({"other": float("nan")},),
    "aten::gelu": ({"approximate": "tanh"}, {"approximate": "none"}),
    "aten::var.correction": ({"correction": 0},),
    "aten::leaky_relu": ({"negative_slope": -1.0},),
}

# Ops that add up many elements (reductions, products of matrices, pooling by average, norms):
# with large finite values of both signs their result is rounding noise whose size depends on
# the order of summation, which kernels may choose, so edge inputs keep to |x| < 1e4 there
# (infinities, NaN, zeros, tiny and denormal values stay: they propagate the same in any order).
ACCUMULATES = frozenset({
    "aten::_adaptive_avg_pool2d", "aten::_adaptive_avg_pool2d_backward", "aten::_adaptive_avg_pool3d",
    "aten::adaptive_avg_pool1d", "aten::_cdist_forward", "aten::_pdist_forward", "aten::_embedding_bag",
    "aten::_fft_c2r", "aten::_fft_r2c", "aten::_log_softmax", "aten::_softmax",
    "aten::_native_batch_norm_legit", "aten::_native_batch_norm_legit.no_stats",
    "aten::_native_batch_norm_legit_no_training", "aten::native_group_norm", "aten::native_group_norm_backward",
    "aten::native_layer_norm", "aten::native_layer_norm_backward", "aten::addmm", "aten::mm", "aten::bmm",
    "aten::avg_pool1d", "aten::avg_pool2d", "aten::avg_pool2d_backward", "aten::avg_pool3d", "aten::col2im",
    "aten::convolution", "aten::convolution_backward", "aten::cumsum", "aten::grid_sampler_2d", "aten::mean",
    "aten::mean.dim", "aten::prod", "aten::prod.dim_int", "aten::scatter_add", "aten::scatter_reduce.two",
    "aten::sum.dim_IntList", "aten::upsample_bilinear2d.vec", "aten::var.correction", "aten::var.dim",
})
