"""The KV cache's size, from a config: the one formula the estimate, the fit, the ledger and Speed use.

Each token a model attends to leaves a key and a value vector per layer and per key/value head. So a layer
holds 2 x batch x kv_heads x head_dim x element size bytes per token it keeps: with grouped-query attention
(GQA) `kv_heads` is smaller than the attention heads; a sliding-window layer keeps at most its window - 1
tokens (Transformers' DynamicSlidingWindowLayer), and a layer that reuses another's cache keeps none.
`size(config, dtype, tokens)` sums the layers as Transformers' own DynamicCache fills them; `per_token` is
the growth per token while no window is full. Why and how it is checked: docs/estimate.md.
"""

from __future__ import annotations

import torch
from transformers.cache_utils import get_layer_types_and_kwargs


_SLIDING_KINDS = ("sliding_attention", "chunked_attention", "hybrid_sliding", "reference_sliding_attention")


def shape(config) -> dict:
    """Layers, key/value heads and head size that set the KV cache's size."""
    cfg = config.get_text_config() if hasattr(config, "get_text_config") else config
    heads = cfg.num_attention_heads
    kv_heads = getattr(cfg, "num_key_value_heads", None) or heads
    head_dim = getattr(cfg, "head_dim", None) or cfg.hidden_size // heads
    return dict(layers=int(cfg.num_hidden_layers), kv_heads=int(kv_heads), head_dim=int(head_dim),
                attention_heads=int(heads))


def kept(config) -> list[int | None]:
    """Per layer: the tokens it keeps at most (its sliding window - 1), None for all, 0 for none."""
    cfg = config.get_text_config(decoder=True) if hasattr(config, "get_text_config") else config
    try:
        types, kwargs = get_layer_types_and_kwargs(cfg)
    except (AttributeError, TypeError):  # a config without per-layer structure: every layer keeps every token
        return [None] * shape(config)["layers"]
    if isinstance(kwargs, dict):  # Transformers 5.17: one dict shared by every layer (5.23: one per layer); only
        # the layers of a sliding kind read its sliding_window
        kwargs = [kwargs if kind in _SLIDING_KINDS else {} for kind in types]
    out: list[int | None] = []
    for kind, kw in zip(types, kwargs):
        if kind == "dummy":
            out.append(0)
        elif kw.get("sliding_window"):
            out.append(max(int(kw["sliding_window"]) - 1, 0))  # DynamicSlidingWindowLayer keeps window - 1
        else:
            out.append(None)
    return out


def _per_layer_token(config, dtype: torch.dtype, batch: int = 1) -> int:
    s = shape(config)
    return 2 * batch * s["kv_heads"] * s["head_dim"] * torch.empty((), dtype=dtype).element_size()


def size(config, dtype: torch.dtype, tokens: int, batch: int = 1, keeps: list[int | None] | None = None) -> int:
    """The KV cache's bytes once `tokens` tokens are in it: per layer 2 (key and value) x batch x kv_heads x
    head_dim x element size x the tokens that layer keeps (`keeps`: `kept(config)`, when read already: reading
    it walks Transformers' per-layer config, ~1 ms)."""
    per = _per_layer_token(config, dtype, batch)
    keeps = kept(config) if keeps is None else keeps
    return sum(per * (tokens if keep is None else min(tokens, keep)) for keep in keeps)


def per_token(config, dtype: torch.dtype, keeps: list[int | None] | None = None) -> int:
    """What one more token adds while no sliding window is full: 2 x kv_heads x head_dim x element size for each
    layer that keeps tokens (a layer reusing another's cache adds nothing)."""
    keeps = kept(config) if keeps is None else keeps
    return _per_layer_token(config, dtype) * sum(1 for keep in keeps if keep != 0)


def sliding(config, keeps: list[int | None] | None = None) -> dict | None:
    """{"layers": how many slide, "of": layers, "window": the largest window} when any layer slides."""
    keeps = kept(config) if keeps is None else keeps
    slides = [k for k in keeps if k]
    return dict(layers=len(slides), of=len(keeps), window=max(slides) + 1) if slides else None
