"""Example model factories for ``opspec coverage opspec.examples.models:NAME``.

Sizes are small so exporting each takes well under a second; seeds are fixed so
weights (and therefore any value-dependent behaviour) never change.
"""
from __future__ import annotations

import torch
from torch import nn

SEED = 0


class MLP(nn.Module):
    """Two hidden layers: linear -> relu -> linear -> relu -> linear -> log_softmax."""

    def __init__(self, sizes: tuple[int, ...] = (16, 32, 32, 10)):
        super().__init__()
        self.layers = nn.ModuleList(nn.Linear(a, b) for a, b in zip(sizes, sizes[1:]))

    def forward(self, x):
        for layer in self.layers[:-1]:
            x = torch.relu(layer(x))
        return torch.log_softmax(self.layers[-1](x), dim=-1)


class SmallCNN(nn.Module):
    """conv-bn-relu-maxpool twice, global average pool, linear classifier."""

    def __init__(self, classes: int = 10):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(3, 8, 3, padding=1),
            nn.BatchNorm2d(8),
            nn.ReLU(),
            nn.MaxPool2d(2),
            nn.Conv2d(8, 16, 3, padding=1),
            nn.BatchNorm2d(16),
            nn.ReLU(),
            nn.MaxPool2d(2),
        )
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.head = nn.Linear(16, classes)

    def forward(self, x):
        x = self.pool(self.features(x))
        return self.head(torch.flatten(x, 1))


class TransformerBlock(nn.Module):
    """Pre-norm block: multi-head self-attention and a GELU MLP, each with a residual."""

    def __init__(self, dim: int = 32, heads: int = 4, hidden: int = 64):
        super().__init__()
        self.heads = heads
        self.norm1 = nn.LayerNorm(dim)
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)
        self.norm2 = nn.LayerNorm(dim)
        self.mlp = nn.Sequential(nn.Linear(dim, hidden), nn.GELU(), nn.Linear(hidden, dim))

    def forward(self, x):
        batch, seq, dim = x.shape
        q, k, v = self.qkv(self.norm1(x)).chunk(3, dim=-1)
        q, k, v = (t.reshape(batch, seq, self.heads, dim // self.heads).transpose(1, 2) for t in (q, k, v))
        attn = nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.proj(attn.transpose(1, 2).reshape(batch, seq, dim))
        return x + self.mlp(self.norm2(x))


class Quantizer(nn.Module):
    """Buckets a linear projection into fixed bins with ``searchsorted``, which is outside the core set."""

    def __init__(self, dim: int = 8):
        super().__init__()
        self.proj = nn.Linear(dim, dim)
        self.register_buffer("boundaries", torch.linspace(-1.0, 1.0, 7))

    def forward(self, x):
        return torch.searchsorted(self.boundaries, self.proj(x))


def _build(cls, *shape: int, **kwargs):
    torch.manual_seed(SEED)
    module = cls(**kwargs).eval()
    return module, (torch.randn(*shape),)


def mlp():
    return _build(MLP, 4, 16)


def small_cnn():
    return _build(SmallCNN, 2, 3, 16, 16)


def transformer_block():
    return _build(TransformerBlock, 2, 8, 32)


def uses_outside_op():
    return _build(Quantizer, 4, 8)


class MaskedPooling(nn.Module):
    """Masked mean over a sequence, with a keyword mask and a non-tensor scale as real encoders take them.

    ``mask.to(x.dtype)`` is the conversion export records as ``_assert_tensor_metadata``
    when the mask already has that dtype: a bookkeeping op, not a computation.
    """

    def __init__(self, dim: int = 8):
        super().__init__()
        self.proj = nn.Linear(dim, dim)

    def forward(self, x, *, mask, scale: float = 1.0):
        weights = mask.to(x.dtype).unsqueeze(-1)
        pooled = (self.proj(x) * weights).sum(1) / weights.sum(1).clamp(min=1.0)
        return pooled * scale


def masked_pooling():
    """(module, args, kwargs): a keyword tensor input and a non-tensor one."""
    torch.manual_seed(SEED)
    mask = torch.ones(2, 5)
    mask[1, 3:] = 0
    return MaskedPooling().eval(), (torch.randn(2, 5, 8),), {"mask": mask, "scale": 0.5}


class Binned(nn.Module):
    """A linear layer whose outputs are put into fixed bins and summed along the way: ``bucketize`` and
    ``cumsum``, ops Inductor hands back to their ATen kernels on CPU, beside an ``addmm`` it lowers."""

    def __init__(self, dim: int = 8, bins: int = 5):
        super().__init__()
        self.proj = nn.Linear(dim, dim)
        self.register_buffer("edges", torch.linspace(-1.0, 1.0, bins))

    def forward(self, x):
        y = self.proj(x)
        return torch.cumsum(y, dim=-1), torch.bucketize(y, self.edges)


def binned():
    return _build(Binned, 4, 8)
