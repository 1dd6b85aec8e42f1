"""The KV cache, measured: its real bytes held in the cache object, against the estimate.

Every generated token appends one key and one value vector per layer and per
key/value head, so the cache should grow by 2 x layers x kv_heads x head_dim x
bytes per element per token (`estimate.kv_bytes_per_token`). `measure_kv` reads
the real cache object `generate()` returns and the RSS it holds, and compares.
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass

import torch

from playground.hw import devices, memory
from playground.load import estimate


def cache_bytes(cache) -> tuple[int, int]:
    """(bytes in the cache's key and value tensors, tokens it holds) for a DynamicCache
    (Transformers 5: one layer object per layer with .keys and .values) or legacy tuples."""
    layers = getattr(cache, "layers", None)
    pairs = [(layer.keys, layer.values) for layer in layers] if layers is not None else list(cache)
    total = 0
    tokens = 0
    for k, v in pairs:
        if k is None:
            continue
        total += k.numel() * k.element_size() + v.numel() * v.element_size()
        tokens = max(tokens, int(k.shape[-2]))  # [batch, kv_heads, tokens, head_dim]
    return total, tokens


@dataclass
class KvMeasurement:
    new_tokens: int
    tokens_in_cache: int  # prompt + new - 1: the last token chosen is never fed back
    kv_bytes_per_token: int  # the estimate's
    estimate_bytes: int  # kv_bytes_per_token x tokens_in_cache
    cache_tensor_bytes: int  # what the returned cache's tensors hold
    rss_growth_held: int  # RSS after generating (cache held) minus before
    rss_released: int  # RSS given back when the cache is dropped
    vram_growth_held: int | None
    tensor_error: float  # cache_tensor_bytes / estimate_bytes - 1
    rss_error: float  # rss_growth_held / estimate_bytes - 1
    released_error: float
    seconds: float

    def to_dict(self) -> dict:
        return asdict(self)


def measure_kv(model, tokenizer, device: str, prompt: str, new_tokens: int) -> KvMeasurement:
    """Generate `new_tokens` greedy tokens, keep the cache, and compare its size with the estimate
    three ways: the cache's tensor bytes, RSS growth while it is held, RSS given back when dropped.

    Before each RSS reading the heap is trimmed (`migration.release_memory`: glibc otherwise keeps
    freed pages, e.g. the cache's earlier, shorter copies), and a warm-up generation first faults in
    the weights (memory-mapped from the checkpoint) so their pages do not count as cache."""
    enc = tokenizer(prompt, return_tensors="pt").to(device)
    common = dict(do_sample=False, pad_token_id=model.generation_config.pad_token_id,
                  temperature=None, top_p=None, top_k=None)
    on_gpu = torch.device(device).type == "cuda"
    with torch.inference_mode():
        model.generate(**enc, max_new_tokens=4, min_new_tokens=4, **common)  # warm-up
    memory.release_memory()
    rss0 = memory.rss_bytes()
    vram0 = torch.cuda.memory_allocated(torch.device(device)) if on_gpu else None
    t0 = time.perf_counter()
    with torch.inference_mode():
        out = model.generate(**enc, max_new_tokens=new_tokens, min_new_tokens=new_tokens,
                             return_dict_in_generate=True, **common)
    devices.sync(device)
    seconds = time.perf_counter() - t0
    cache = out.past_key_values
    out = None
    memory.release_memory()
    rss1 = memory.rss_bytes()
    vram1 = torch.cuda.memory_allocated(torch.device(device)) if on_gpu else None
    tensor_bytes, tokens = cache_bytes(cache)
    del cache
    memory.release_memory()
    rss2 = memory.rss_bytes()
    dtype = next(model.parameters()).dtype
    per_token = estimate.kv_bytes_per_token(model.config, dtype)
    est = per_token * tokens
    return KvMeasurement(
        new_tokens=new_tokens, tokens_in_cache=tokens, kv_bytes_per_token=per_token, estimate_bytes=est,
        cache_tensor_bytes=tensor_bytes, rss_growth_held=rss1 - rss0, rss_released=rss1 - rss2,
        vram_growth_held=(vram1 - vram0) if on_gpu else None,
        tensor_error=tensor_bytes / est - 1, rss_error=(rss1 - rss0) / est - 1,
        released_error=(rss1 - rss2) / est - 1, seconds=seconds,
    )
