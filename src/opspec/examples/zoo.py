"""Real architectures from torchvision and transformers, built from their own definitions with random weights.

``opspec coverage torchvision:resnet18`` and ``opspec conform --model transformers:bert``
name these. Nothing is downloaded: torchvision models take ``weights=None``,
transformers models are built from small configs (two layers, width 32), so each
exports in seconds while keeping every op its architecture uses. The libraries
are optional; each factory imports its own. Inputs are small but shaped as the
models expect (keyword inputs such as attention masks where the model takes them).
"""
from __future__ import annotations

from typing import Callable

import torch

SEED = 0


def _seeded(build: Callable[[], tuple]) -> Callable[[], tuple]:
    def factory():
        torch.manual_seed(SEED)
        model, *inputs = build()
        return (model.eval(), *inputs)

    factory.__name__ = build.__name__
    factory.__doc__ = build.__doc__
    return factory


def _image(size: int = 64, batch: int = 1) -> torch.Tensor:
    return torch.randn(batch, 3, size, size)


# ---- torchvision ----

def _tv(name: str, size: int = 64, **kwargs):
    def build():
        import torchvision.models as tv

        return getattr(tv, name)(weights=None, **kwargs), (_image(size),)

    build.__name__ = name
    return _seeded(build)


def _segmentation(name: str):
    def build():
        from torchvision.models import segmentation

        return getattr(segmentation, name)(weights=None, weights_backbone=None, num_classes=5), (_image(64),)

    build.__name__ = name
    return _seeded(build)


@_seeded
def r3d_18():
    """A video model: 3-D convolutions over [N, C, T, H, W]."""
    from torchvision.models import video

    return video.r3d_18(weights=None), (torch.randn(1, 3, 4, 32, 32),)


@_seeded
def raft_small():
    """Optical flow between two frames; the number of refinement steps is a non-tensor keyword input."""
    from torchvision.models import optical_flow

    return optical_flow.raft_small(weights=None), (_image(128), _image(128)), {"num_flow_updates": 2}  # RAFT needs 128 px


# ---- transformers (small configs) ----

TEXT = dict(vocab_size=100, hidden_size=32, num_hidden_layers=2, num_attention_heads=2, intermediate_size=64,
            max_position_embeddings=64)


def _tokens(batch: int = 1, length: int = 8) -> dict:
    ids = torch.randint(0, 100, (batch, length))
    return {"input_ids": ids, "attention_mask": torch.ones(batch, length, dtype=torch.long)}


@_seeded
def bert():
    """BERT encoder with an attention mask as a keyword input."""
    import transformers as tf

    model = tf.BertModel(tf.BertConfig(**TEXT))
    return model, (), _tokens()


@_seeded
def gpt2():
    import transformers as tf

    config = tf.GPT2Config(vocab_size=100, n_embd=32, n_layer=2, n_head=2, n_positions=64, use_cache=False,
                           bos_token_id=0, eos_token_id=0)
    return tf.GPT2LMHeadModel(config), (), _tokens()


@_seeded
def llama():
    import transformers as tf

    config = tf.LlamaConfig(**TEXT, num_key_value_heads=1, use_cache=False)
    return tf.LlamaForCausalLM(config), (), _tokens()


@_seeded
def mistral():
    import transformers as tf

    config = tf.MistralConfig(**TEXT, num_key_value_heads=1, sliding_window=4, use_cache=False)
    return tf.MistralForCausalLM(config), (), _tokens()


@_seeded
def t5_encoder():
    import transformers as tf

    config = tf.T5Config(vocab_size=100, d_model=32, d_kv=16, d_ff=64, num_layers=2, num_heads=2, use_cache=False)
    return tf.T5EncoderModel(config), (), _tokens()


@_seeded
def clip():
    """Text and vision towers with the contrastive head: token ids, pixels and a mask."""
    import transformers as tf

    text = dict(vocab_size=100, hidden_size=32, num_hidden_layers=2, num_attention_heads=2, intermediate_size=64,
                max_position_embeddings=16)
    vision = dict(hidden_size=32, num_hidden_layers=2, num_attention_heads=2, intermediate_size=64, image_size=32,
                  patch_size=8)
    model = tf.CLIPModel(tf.CLIPConfig(text_config=text, vision_config=vision, projection_dim=16))
    return model, (), {**_tokens(2, 8), "pixel_values": torch.randn(2, 3, 32, 32)}


@_seeded
def wav2vec2():
    """Speech encoder on raw audio: convolutional feature extractor, then a transformer (weight-normed conv positions)."""
    import transformers as tf

    config = tf.Wav2Vec2Config(hidden_size=32, num_hidden_layers=2, num_attention_heads=2, intermediate_size=64,
                               conv_dim=(32, 32), conv_stride=(5, 2), conv_kernel=(10, 3),
                               num_conv_pos_embeddings=16, num_conv_pos_embedding_groups=2)
    return tf.Wav2Vec2Model(config), (torch.randn(1, 1600),)


ZOO: dict[str, Callable[[], tuple]] = {
    "torchvision:resnet18": _tv("resnet18"),
    "torchvision:mobilenet_v3_small": _tv("mobilenet_v3_small"),
    "torchvision:efficientnet_b0": _tv("efficientnet_b0"),
    "torchvision:vit_b_16": _tv("vit_b_16", image_size=64),
    "torchvision:convnext_tiny": _tv("convnext_tiny"),
    "torchvision:swin_t": _tv("swin_t"),
    "torchvision:deeplabv3_mobilenet_v3_large": _segmentation("deeplabv3_mobilenet_v3_large"),
    "torchvision:lraspp_mobilenet_v3_large": _segmentation("lraspp_mobilenet_v3_large"),
    "torchvision:r3d_18": r3d_18,
    "torchvision:raft_small": raft_small,
    "transformers:bert": bert,
    "transformers:gpt2": gpt2,
    "transformers:llama": llama,
    "transformers:mistral": mistral,
    "transformers:t5_encoder": t5_encoder,
    "transformers:clip": clip,
    "transformers:wav2vec2": wav2vec2,
}
