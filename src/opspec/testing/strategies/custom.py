"""Per-op strategies for relations the hints format cannot state.

Each entry draws only the related arguments and returns them by name; the
generic path fills in the rest (flags, eps, dtype keywords). An op belongs here
only when a valid call needs a relation between values: an index inside a
dim, sizes that sum to a dim, a window that fits its input, one of two
arguments set, a kernel's own output shape.
"""
from __future__ import annotations

import math
from typing import Callable

import torch

from opspec.spec.model import Interval
from opspec.testing.strategies import cached
from opspec.testing.strategies import shapes as shape_draws
from opspec.testing.strategies.generic import OMIT, Drawer

_POSITIVE = Interval(0.0, float("inf"), False, False)
CUSTOM: dict[str, Callable[[Drawer], dict]] = {}


def strategy(*names: str):
    def register(fn):
        for name in names:
            CUSTOM[f"aten::{name}"] = fn
        return fn

    return register


def _size_along(shape: tuple[int, ...], dim: int) -> int:
    return shape[dim] if shape else 1


def _on_meta(fn, *args, **kwargs):
    """Run a kernel on meta tensors: the output shape without the arithmetic."""
    meta = [a.to("meta") if isinstance(a, torch.Tensor) else a for a in args]
    return fn(*meta, **kwargs)


# ---- views and shape manipulation ----

@strategy("permute")
def permute(d: Drawer) -> dict:
    x = d.tensor("self", d.shape())
    order = d.draw(cached.permutations(x.dim()))
    return {"self": x, "dims": [o - x.dim() if d.boolean() else o for o in order]}


def _factorization(d: Drawer, numel: int) -> list[int]:
    """A shape with ``numel`` elements: zero to three dims."""
    if numel == 0:
        sizes = [d.integer(0, 3) for _ in range(d.integer(1, 3))]
        sizes[d.integer(0, len(sizes) - 1)] = 0
        return sizes
    sizes, remaining = [], numel
    for _ in range(d.integer(0 if numel == 1 else 1, 3) - 1):
        divisors = [k for k in range(1, remaining + 1) if remaining % k == 0]
        sizes.append(d.pick(divisors))
        remaining //= sizes[-1]
    return sizes + [remaining] if sizes or remaining != 1 or d.boolean() else []


@strategy("view")
def view(d: Drawer) -> dict:
    x = d.tensor("self", d.shape())
    if x.is_contiguous():
        size = _factorization(d, x.numel())
        if size and x.numel() > 0 and d.boolean():
            size[d.integer(0, len(size) - 1)] = -1
    else:  # strided inputs view safely only through added or removed size-1 dims
        size = [s for s in x.shape if s != 1 or d.boolean()]
        for _ in range(d.integer(0, 2)):
            size.insert(d.integer(0, len(size)), 1)
    return {"self": x, "size": size}


@strategy("expand")
def expand(d: Drawer) -> dict:
    x = d.tensor("self", d.shape())
    size = [(d.integer(0, 3) if s == 1 and d.boolean() else s) if not d.boolean() else -1 for s in x.shape]
    leading = [d.integer(0, 2) for _ in range(d.integer(0, 2))]
    return {"self": x, "size": leading + size}


@strategy("as_strided")
def as_strided(d: Drawer) -> dict:
    x = d.tensor("self", d.shape(min_dims=1, smallest=1), views=False)
    offset = d.integer(0, x.numel() - 1)
    size, stride, extent = [], [], offset
    for _ in range(d.integer(0, 3)):
        length, step = d.integer(0, 3), d.integer(0, 3)
        if length and extent + (length - 1) * step >= x.numel():
            step = 0
        extent += max(length - 1, 0) * step
        size.append(length)
        stride.append(step)
    return {"self": x, "size": size, "stride": stride, "storage_offset": offset if offset or d.boolean() else OMIT}


@strategy("empty_strided")
def empty_strided(d: Drawer) -> dict:
    size = list(d.shape())
    return {"size": size, "stride": [d.integer(0, 4) for _ in size]}


@strategy("select.int")
def select(d: Drawer) -> dict:
    x = d.tensor("self", d.shape(min_dims=1, smallest=1))
    dim = d.dim(x.dim())
    size = x.shape[dim]
    return {"self": x, "dim": dim, "index": d.integer(-size, size - 1)}


@strategy("select_scatter")
def select_scatter(d: Drawer) -> dict:
    chosen = select(d)
    x = chosen["self"]
    chosen["src"] = d.tensor("src", tuple(x.select(chosen["dim"], chosen["index"]).shape))
    return chosen


@strategy("diagonal_scatter")
def diagonal_scatter(d: Drawer) -> dict:
    x = d.tensor("self", d.shape(min_dims=2))
    dim1, dim2 = d.draw(cached.permutations(x.dim()))[:2]
    offset = d.integer(-3, 3)
    to_negative = [lambda v: v, lambda v: v - x.dim()]
    dim1, dim2 = d.pick(to_negative)(dim1), d.pick(to_negative)(dim2)
    shape = tuple(x.diagonal(offset, dim1, dim2).shape)
    return {"self": x, "src": d.tensor("src", shape), "offset": offset, "dim1": dim1, "dim2": dim2}


@strategy("slice_scatter")
def slice_scatter(d: Drawer) -> dict:
    x = d.tensor("self", d.shape(min_dims=1))
    dim = d.dim(x.dim())
    start = d.pick((None, d.integer(-5, 5)))
    end = d.pick((None, d.integer(-5, 5)))
    step = d.integer(1, 3)
    shape = tuple(torch.ops.aten.slice.Tensor(x, dim, start, end, step).shape)
    return {"self": x, "src": d.tensor("src", shape), "dim": dim, "start": start, "end": end, "step": step}


@strategy("split_with_sizes")
def split_with_sizes(d: Drawer) -> dict:
    x = d.tensor("self", d.shape(min_dims=1))
    dim = d.dim(x.dim())
    cuts = sorted(d.integer(0, x.shape[dim]) for _ in range(d.integer(0, 2)))
    bounds = [0, *cuts, x.shape[dim]]
    return {"self": x, "dim": dim, "split_sizes": [b - a for a, b in zip(bounds, bounds[1:])]}


@strategy("diagonal")
def diagonal(d: Drawer) -> dict:
    x = d.tensor("self", d.shape(min_dims=2))
    dim1, dim2 = d.dims(x.dim(), min_size=2, max_size=2)
    return {"self": x, "dim1": dim1, "dim2": dim2, "offset": d.integer(-3, 3)}


@strategy("cat")
def cat(d: Drawer) -> dict:
    base = list(d.shape(min_dims=1))
    dim = d.dim(len(base))
    tensors = []
    for _ in range(d.integer(1, 3)):
        if d.pick((False, False, False, True)):
            tensors.append(d.tensor("tensors", (0,)))  # legacy empty 1-d tensors are skipped by cat
            continue
        shape = list(base)
        shape[dim] = d.integer(0, 3)
        tensors.append(d.tensor("tensors", tuple(shape)))
    return {"tensors": tensors, "dim": dim}


@strategy("repeat")
def repeat(d: Drawer) -> dict:
    x = d.tensor("self", d.shape(max_dims=2))
    return {"self": x, "repeats": [d.integer(0, 2) for _ in range(x.dim() + d.integer(0, 1))]}


@strategy("constant_pad_nd")
def constant_pad_nd(d: Drawer) -> dict:
    x = d.tensor("self", d.shape(min_dims=1))
    pad = []
    for size in reversed(x.shape[x.dim() - d.integer(0, x.dim()):]):  # pairs apply from the last dim backwards
        before = d.integer(max(-size, -1), 2)
        pad += [before, d.integer(max(-size - before, -1), 2)]
    return {"self": x, "pad": pad}


# ---- indexing ----

def _index_like(d: Drawer, shape: tuple[int, ...], dim: int, *, at_most: tuple[int, ...] | None = None) -> torch.Tensor:
    """An index for gather/scatter: same rank, no larger than ``at_most`` off ``dim``, values inside ``dim``."""
    at_most = at_most or shape
    high = _size_along(shape, dim)
    sizes = [d.integer(0, limit) if i != dim % max(len(shape), 1) else d.integer(0, 3) for i, limit in enumerate(at_most)]
    if high == 0 and sizes:
        sizes[dim] = 0
    return d.index(tuple(sizes), max(high, 1))


@strategy("bucketize.Tensor")
def bucketize(d: Drawer) -> dict:
    """Boundaries must be sorted for the result to be defined; ties and repeated boundaries stay in."""
    x = d.tensor("self", d.shape())
    boundaries = d.tensor("boundaries", (d.integer(0, 6),), views=False)
    return {"self": x, "boundaries": torch.sort(boundaries.nan_to_num()).values}


@strategy("gather")
def gather(d: Drawer) -> dict:
    x = d.tensor("self", d.shape())
    dim = d.dim(x.dim())
    return {"self": x, "dim": dim, "index": _index_like(d, tuple(x.shape), dim)}


@strategy("scatter.src", "scatter_add", "scatter.value", "scatter_reduce.two")
def scatter(d: Drawer) -> dict:
    x = d.tensor("self", d.shape())
    dim = d.dim(x.dim())
    # index sizes may not exceed self's off ``dim``; src is then drawn at least as large as index
    index = _index_like(d, tuple(x.shape), dim, at_most=tuple(x.shape) if x.dim() else None)
    if x.dim() and x.shape[dim] == 0:
        index = index.narrow(dim, 0, 0)
    chosen = {"self": x, "dim": dim, "index": index}
    if d.op != "aten::scatter.value":
        chosen["src"] = d.tensor("src", tuple(s + d.integer(0, 1) for s in index.shape))
    if d.op == "aten::scatter_reduce.two":
        chosen["reduce"] = d.pick(d.hints.choices.get("reduce", ("sum", "prod", "mean", "amax", "amin")))
    return chosen


@strategy("index_select")
def index_select(d: Drawer) -> dict:
    x = d.tensor("self", d.shape())
    dim = d.dim(x.dim())
    size = _size_along(tuple(x.shape), dim)
    if x.dim() == 0:  # a 0-dim input takes exactly one index
        return {"self": x, "dim": dim, "index": d.index(d.pick(((), (1,))), 1)}
    length = d.integer(0, 4) if size else 0
    return {"self": x, "dim": dim, "index": d.index((length,) if length != 1 or d.boolean() else (), max(size, 1))}


def _indices(d: Drawer, x: torch.Tensor) -> list:
    """Optional int64 index tensors for leading dims of ``x``, broadcastable together, at least one set."""
    count = d.integer(1, x.dim())
    present = [d.boolean() for _ in range(count)]
    present[d.integer(0, count - 1)] = True
    shapes = iter(shape_draws.broadcastable(d.draw, sum(present), max_dims=2))
    return [d.index(next(shapes), x.shape[i], low=-x.shape[i]) if set_ else None for i, set_ in enumerate(present)]


@strategy("index.Tensor", "_unsafe_index.Tensor")
def index(d: Drawer) -> dict:
    x = d.tensor("self", d.shape(min_dims=1, smallest=1))
    return {"self": x, "indices": _indices(d, x)}


@strategy("index_copy", "index_add")
def index_along_dim(d: Drawer) -> dict:
    """A 1-D index into ``dim``; index_copy needs distinct entries (a repeated one has no defined winner)."""
    x = d.tensor("self", d.shape(min_dims=1))
    dim = d.dim(x.dim())
    size = x.shape[dim]
    if d.op == "aten::index_copy":
        length = d.integer(0, size)
        index = d.draw(cached.permutations(size))[:length] if size else []
        index_tensor = torch.tensor(index, dtype=torch.int64, device=d.device)
    else:
        length = d.integer(0, 4) if size else 0
        index_tensor = d.index((length,), max(size, 1))
    chosen = {"self": x, "dim": dim, "index": index_tensor}
    if d.op in ("aten::index_copy", "aten::index_add"):
        source_shape = list(x.shape)
        source_shape[dim] = len(index_tensor)
        chosen["source"] = d.tensor("source", tuple(source_shape))
    return chosen


@strategy("nll_loss_forward")
def nll_loss_forward(d: Drawer) -> dict:
    """Log-probabilities (N, C) or (C,), class targets in [0, C) with some ignored, optional class weights."""
    classes = d.integer(1, 4)
    batch = d.pick(((), (d.integer(0 if d.allow_empty else 1, 4),)))
    x = d.tensor("self", (*batch, classes))
    ignore_index = d.pick((-100, 0))
    target = d.index(batch, classes)
    weight = d.tensor("weight", (classes,), domain=_POSITIVE) if d.boolean() else None
    return {"self": x, "target": target, "weight": weight, "reduction": d.integer(0, 2), "ignore_index": ignore_index}


# Contractions real models write, with the shape of each operand by letter.
EINSUM_EQUATIONS = ("ij,jk->ik", "bij,bjk->bik", "i,i->", "ij->ji", "ii->i", "bhqd,bhkd->bhqk", "i,j->ij", "ijk->")


@strategy("einsum")
def einsum(d: Drawer) -> dict:
    equation = d.pick(d.hints.choices.get("equation", EINSUM_EQUATIONS))
    inputs = equation.split("->")[0].split(",")
    sizes = {letter: d.integer(0 if d.allow_empty else 1, 3) for letter in sorted(set("".join(inputs)))}
    operands = [d.tensor(f"tensors[{i}]", tuple(sizes[c] for c in term)) for i, term in enumerate(inputs)]
    return {"equation": equation, "tensors": operands}


@strategy("index_put")
def index_put(d: Drawer) -> dict:
    x = d.tensor("self", d.shape(min_dims=1, smallest=1))
    indices = _indices(d, x)
    target = tuple(_on_meta(torch.ops.aten.index.Tensor, x, [i.to("meta") if i is not None else None for i in indices]).shape)
    trailing = target[len(target) - d.integer(0, len(target)):] if target else ()
    return {"self": x, "indices": indices, "values": d.tensor("values", trailing)}


@strategy("masked_scatter")
def masked_scatter(d: Drawer) -> dict:
    x = d.tensor("self", d.shape())
    mask_shape = tuple(1 if d.pick((False, False, True)) else s for s in x.shape[x.dim() - d.integer(0, x.dim()):])
    mask = d.tensor("mask", mask_shape, torch.bool)
    return {"self": x, "mask": mask, "source": d.tensor("source", tuple(x.shape))}


@strategy("embedding")
def embedding(d: Drawer) -> dict:
    rows = d.integer(1, 5)
    weight = d.tensor("weight", (rows, d.integer(0, 4)))
    return {"weight": weight, "indices": d.index(d.shape(max_dims=2), rows),
            "padding_idx": d.pick((OMIT, -1, d.integer(0, rows - 1)))}


@strategy("embedding_dense_backward")
def embedding_dense_backward(d: Drawer) -> dict:
    rows = d.integer(1, 5)
    indices = d.index(d.shape(max_dims=2), rows)
    grad = d.tensor("grad_output", tuple(indices.shape) + (d.integer(0, 4),))
    return {"grad_output": grad, "indices": indices, "num_weights": rows, "padding_idx": d.integer(-1, rows - 1)}


@strategy("_embedding_bag")
def embedding_bag(d: Drawer) -> dict:
    rows = d.integer(1, 5)
    weight = d.tensor("weight", (rows, d.integer(1, 4)))
    length = d.integer(0, 6)
    indices = d.index((length,), rows, views=False)
    include_last = d.boolean()
    offsets = [0] + sorted(d.integer(0, length) for _ in range(d.integer(0, 3)))
    if include_last:
        offsets.append(length)
    mode = d.integer(0, 2)
    weights = d.tensor("per_sample_weights", (length,)) if mode == 0 and d.boolean() else OMIT
    return {"weight": weight, "indices": indices, "offsets": torch.tensor(offsets, device=d.device), "mode": mode,
            "per_sample_weights": weights, "include_last_offset": include_last,
            "padding_idx": d.pick((OMIT, -1, d.integer(0, rows - 1))), "sparse": False}


# ---- convolution and pooling ----

def _window(d: Drawer, spatial: int, *, dilation: bool, max_kernel: int = 3) -> dict:
    """Kernel, stride, padding (at most half the kernel) and dilation per spatial dim, and input sizes that fit."""
    kernel = [d.integer(1, max_kernel) for _ in range(spatial)]
    stride = [d.integer(1, 2) for _ in range(spatial)]
    padding = [d.integer(0, k // 2) for k in kernel]
    dilations = [d.integer(1, 2) if dilation else 1 for _ in range(spatial)]
    # every window must touch the input: one lying wholly in padding corrupts memory in
    # max_pool2d_with_indices_backward (torch 2.13, CPU)
    sizes = [dl * (k - 1) + 1 + d.integer(0, 1) for k, dl in zip(kernel, dilations)]
    return {"kernel": kernel, "stride": stride, "padding": padding, "dilation": dilations, "sizes": sizes}


def _pool_input(d: Drawer, spatial_sizes: list[int]) -> torch.Tensor:
    leading = (d.integer(1, 2), d.integer(1, 2)) if d.pick((True, True, False)) else (d.integer(1, 2),)
    return d.tensor("self", leading + tuple(spatial_sizes))


def _pool(d: Drawer, spatial: int, *, dilation: bool) -> tuple[dict, dict]:
    w = _window(d, spatial, dilation=dilation, max_kernel=3 if spatial < 3 else 2)
    chosen = {"self": _pool_input(d, w["sizes"]), "kernel_size": w["kernel"],
              "stride": d.pick((w["stride"], w["stride"], [])), "padding": w["padding"]}
    if dilation:
        chosen["dilation"] = w["dilation"]
    return chosen, w


@strategy("avg_pool1d", "avg_pool2d", "avg_pool3d")
def avg_pool(d: Drawer) -> dict:
    spatial = int(d.op[-2])
    chosen, _ = _pool(d, spatial, dilation=False)
    if spatial > 1:
        chosen["divisor_override"] = d.pick((OMIT, None, d.integer(1, 3)))
    return chosen


@strategy("max_pool2d_with_indices", "max_pool3d_with_indices", "max_pool2d")
def max_pool(d: Drawer) -> dict:
    return _pool(d, int(d.op.split("max_pool")[1][0]), dilation=True)[0]


@strategy("avg_pool2d_backward")
def avg_pool2d_backward(d: Drawer) -> dict:
    chosen, w = _pool(d, 2, dilation=False)
    chosen["stride"] = w["stride"]
    chosen.update(ceil_mode=d.boolean(), count_include_pad=d.boolean(), divisor_override=d.pick((None, d.integer(1, 3))))
    out = _on_meta(torch.ops.aten.avg_pool2d, chosen["self"], chosen["kernel_size"], chosen["stride"], chosen["padding"],
                   chosen["ceil_mode"], chosen["count_include_pad"], chosen["divisor_override"])
    chosen["grad_output"] = d.tensor("grad_output", tuple(out.shape))
    return chosen


@strategy("max_pool2d_with_indices_backward")
def max_pool2d_with_indices_backward(d: Drawer) -> dict:
    chosen, w = _pool(d, 2, dilation=True)
    chosen["stride"] = w["stride"]
    chosen["ceil_mode"] = d.boolean()
    _, indices = torch.ops.aten.max_pool2d_with_indices(chosen["self"], chosen["kernel_size"], chosen["stride"],
                                                        chosen["padding"], chosen["dilation"], chosen["ceil_mode"])
    chosen["indices"] = indices
    chosen["grad_output"] = d.tensor("grad_output", tuple(indices.shape))
    return chosen


def _convolution(d: Drawer) -> dict:
    spatial = d.integer(1, 2)
    groups = d.integer(1, 2)
    in_channels, out_channels = groups * d.integer(1, 2), groups * d.integer(1, 2)
    transposed = d.boolean()
    w = _window(d, spatial, dilation=True)
    if transposed:
        weight_shape = (in_channels, out_channels // groups, *w["kernel"])
        output_padding = [d.integer(0, max(s, dl) - 1) for s, dl in zip(w["stride"], w["dilation"])]
        sizes = [d.integer(1, 3) for _ in range(spatial)]
        # a transposed output must keep at least one element: (L-1)s - 2p + dl(k-1) + op + 1 >= 1
        padding = [min(p, ((l - 1) * s + dl * (k - 1) + op) // 2) for p, l, s, dl, k, op in
                   zip(w["padding"], sizes, w["stride"], w["dilation"], w["kernel"], output_padding)]
    else:
        weight_shape = (out_channels, in_channels // groups, *w["kernel"])
        output_padding, sizes, padding = [0] * spatial, w["sizes"], w["padding"]
    return {
        "input": d.tensor("input", (d.integer(1, 2), in_channels, *sizes)),
        "weight": d.tensor("weight", weight_shape),
        "stride": w["stride"], "padding": padding, "dilation": w["dilation"], "transposed": transposed,
        "output_padding": output_padding, "groups": groups,
        "out_channels": out_channels,
    }


@strategy("convolution")
def convolution(d: Drawer) -> dict:
    chosen = _convolution(d)
    channels = chosen.pop("out_channels")
    chosen["bias"] = d.tensor("bias", (channels,)) if d.boolean() else None
    return chosen


@strategy("convolution_backward")
def convolution_backward(d: Drawer) -> dict:
    chosen = _convolution(d)
    channels = chosen.pop("out_channels")
    out = _on_meta(torch.ops.aten.convolution, chosen["input"], chosen["weight"], None, chosen["stride"],
                   chosen["padding"], chosen["dilation"], chosen["transposed"], chosen["output_padding"], chosen["groups"])
    chosen["grad_output"] = d.tensor("grad_output", tuple(out.shape))
    chosen["bias_sizes"] = [channels] if d.boolean() else None
    return chosen


@strategy("col2im")
def col2im(d: Drawer) -> dict:
    w = _window(d, 2, dilation=True)
    output_size = [s + d.integer(0, 1) for s in w["sizes"]]
    blocks = math.prod((o + 2 * p - dl * (k - 1) - 1) // s + 1
                       for o, p, dl, k, s in zip(output_size, w["padding"], w["dilation"], w["kernel"], w["stride"]))
    channels = d.integer(1, 2) * math.prod(w["kernel"])
    shape = (channels, blocks) if d.boolean() else (d.integer(1, 2), channels, blocks)
    return {"self": d.tensor("self", shape), "output_size": output_size, "kernel_size": w["kernel"],
            "dilation": w["dilation"], "padding": w["padding"], "stride": w["stride"]}


@strategy("upsample_bilinear2d.vec", "upsample_nearest2d.vec", "upsample_nearest1d.vec")
def upsample(d: Drawer) -> dict:
    spatial = int(d.op.split("d.vec")[0][-1])  # upsample_nearest1d.vec -> 1
    x = d.tensor("input", (d.integer(1, 2), d.integer(1, 2)) + tuple(d.integer(1, 4) for _ in range(spatial)))
    if d.boolean():
        return {"input": x, "output_size": [d.integer(1, 4) for _ in range(spatial)], "scale_factors": None}
    # exactly one of output_size and scale_factors; a factor keeps at least one output element
    factors = [d.draw(cached.floats(max(0.5, 1.0 / size + 0.01), 2.5)) for size in x.shape[2:]]
    return {"input": x, "output_size": None, "scale_factors": factors}


# ---- normalization ----

@strategy("_native_batch_norm_legit", "_native_batch_norm_legit.no_stats", "_native_batch_norm_legit_no_training")
def batch_norm(d: Drawer) -> dict:
    # dim 1 of an input of any rank sizes every per-channel tensor: a relation symbolic shapes cannot state
    low, high = d.hints.ranks.get("input", (2, 4))
    x = d.tensor("input", d.shape(min_dims=max(low, 2), max_dims=max(high, 2), smallest=1))  # empty inputs are refused
    channels = (x.shape[1],)
    chosen = {"input": x, "weight": d.tensor("weight", channels) if d.boolean() else None,
              "bias": d.tensor("bias", channels) if d.boolean() else None}
    if d.op != "aten::_native_batch_norm_legit.no_stats":
        chosen.update(running_mean=d.tensor("running_mean", channels, views=False),
                      running_var=d.tensor("running_var", channels, views=False, domain=_POSITIVE))
    else:
        chosen["training"] = True  # training=False without running stats crashes the CPU kernel
    return chosen


@strategy("native_group_norm")
def native_group_norm(d: Drawer) -> dict:
    groups = d.integer(1, 2)
    batch, channels = d.integer(1, 2), groups * d.integer(1, 2)
    spatial = d.shape(max_dims=2, smallest=1)
    affine = d.boolean()
    return {"input": d.tensor("input", (batch, channels, *spatial)), "N": batch, "C": channels,
            "HxW": math.prod(spatial), "group": groups,
            "weight": d.tensor("weight", (channels,)) if affine else None,
            "bias": d.tensor("bias", (channels,)) if affine and d.boolean() else None}


@strategy("group_norm")
def group_norm(d: Drawer) -> dict:
    # the public op takes what native_group_norm takes, less the sizes it derives: channels a multiple of
    # num_groups, a relation of an int to a size the generic draws miss (the kernel refused about 19 in 20)
    native = native_group_norm(d)
    return {"input": native["input"], "num_groups": native["group"], "weight": native["weight"], "bias": native["bias"]}


@strategy("native_group_norm_backward")
def native_group_norm_backward(d: Drawer) -> dict:
    chosen = native_group_norm(d)
    shape = tuple(chosen["input"].shape)
    chosen.pop("bias")
    affine = chosen["weight"] is not None  # gradients of weight and bias need a weight
    # mean and rstd as the forward pass computes them: arbitrary statistics make the gradient a
    # difference of huge, unrelated terms, a cancellation no real graph contains
    _, mean, rstd = torch.ops.aten.native_group_norm.default(
        chosen["input"].contiguous(), None, None, chosen["N"], chosen["C"], chosen["HxW"], chosen["group"], 1e-5)
    chosen.update(grad_out=d.tensor("grad_out", shape), mean=mean, rstd=rstd,
                  output_mask=[d.boolean(), affine and d.boolean(), affine and d.boolean()])
    return chosen


def _layer_norm(d: Drawer) -> dict:
    x = d.tensor("input", d.shape(min_dims=1))
    normalized = list(x.shape[x.dim() - d.integer(1, x.dim()):])
    return {"input": x, "normalized_shape": normalized,
            "weight": d.tensor("weight", tuple(normalized)) if d.boolean() else None,
            "bias": d.tensor("bias", tuple(normalized)) if d.boolean() else None}


@strategy("native_layer_norm", "layer_norm")
def native_layer_norm(d: Drawer) -> dict:
    return _layer_norm(d)


@strategy("native_layer_norm_backward")
def native_layer_norm_backward(d: Drawer) -> dict:
    chosen = _layer_norm(d)
    x = chosen["input"]
    # mean and rstd as the forward pass computes them (see native_group_norm_backward)
    _, mean, rstd = torch.ops.aten.native_layer_norm.default(x, chosen["normalized_shape"], None, None, 1e-5)
    chosen.update(grad_out=d.tensor("grad_out", tuple(x.shape)), mean=mean, rstd=rstd,
                  output_mask=[d.boolean(), chosen["weight"] is not None and d.boolean(),
                               chosen["bias"] is not None and d.boolean()])
    return chosen


# ---- everything else ----

@strategy("arange.start_step")
def arange(d: Drawer) -> dict:
    count = d.integer(0, 8)
    if d.dtype_is_integer():
        start, step = d.integer(-5, 5), d.pick((1, 2, 3, -1, -2))
    else:
        start, step = d.pick((d.integer(-5, 5), d.draw(cached.floats(-5, 5)))), d.pick((1, 2, 0.5, 0.25, -1, -0.5))
    return {"start": start, "end": start + step * count, "step": step}


@strategy("topk")
def topk(d: Drawer) -> dict:
    x = d.tensor("self", d.shape())
    dim = d.dim(x.dim())
    return {"self": x, "dim": dim, "k": d.integer(0, _size_along(tuple(x.shape), dim))}


@strategy("clamp")
def clamp(d: Drawer) -> dict:
    bounds = d.pick(("min", "max", "both"))
    return {"min": d.scalar("min") if bounds != "max" else None, "max": d.scalar("max") if bounds != "min" else None}


@strategy("clamp.Tensor")
def clamp_tensor(d: Drawer) -> dict:
    bounds = d.pick(("min", "max", "both"))
    names = ["self"] + (["min"] if bounds != "max" else []) + (["max"] if bounds != "min" else [])
    drawn = shape_draws.broadcastable(d.draw, len(names), smallest=d.smallest_side())
    chosen = {"min": None, "max": None}
    chosen.update({name: d.tensor(name, shape) for name, shape in zip(names, drawn)})
    return chosen


def _fft_input(d: Drawer) -> tuple[torch.Tensor, list[int]]:
    x = d.tensor("self", d.shape(min_dims=1, smallest=1))
    return x, [dim % x.dim() for dim in d.dims(x.dim(), min_size=1)]  # the FFT kernels do not wrap negative dims


@strategy("_fft_r2c")
def fft_r2c(d: Drawer) -> dict:
    x, dims = _fft_input(d)
    return {"self": x, "dim": dims, "normalization": d.integer(0, 2)}


@strategy("_fft_c2r")
def fft_c2r(d: Drawer) -> dict:
    x, dims = _fft_input(d)
    half = x.shape[dims[-1]]  # the input holds last_dim_size // 2 + 1 frequencies
    sizes = [2 * (half - 1) + 1] if half == 1 else [2 * (half - 1), 2 * (half - 1) + 1]
    return {"self": x, "dim": dims, "normalization": d.integer(0, 2), "last_dim_size": d.pick(sizes)}

