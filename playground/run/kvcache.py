"""The KV cache, measured: its real bytes held in the cache object, against the estimate.

Every generated token appends one key and one value vector per layer and per
key/value head, so the cache should grow by 2 x layers x kv_heads x head_dim x
bytes per element per token, a sliding-window layer stopping at its window
(`load/kv.py`). `measure_kv` reads the real cache object `generate()` returns and
the RSS it holds, and compares.

`kv_growth` watches it grow: one prefill, then one token at a time, reading the
cache object's bytes at several lengths, and timing each step with the cache
against a forward over the whole sequence without it. Without a cache, the step
that makes token n recomputes keys and values for all n - 1 tokens before it, so
its cost grows with n and a whole generation costs O(n^2); with the cache each step
computes one token's keys and values and only reads the rest.
"""

from __future__ import annotations

import statistics
import time
from dataclasses import asdict, dataclass, field

import torch

from playground.hw import devices, memory
from playground.load import kv
from playground.run import generation, loop


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
    common = generation.greedy_kwargs(model)
    with torch.inference_mode():
        model.generate(**enc, max_new_tokens=4, min_new_tokens=4, **common)  # warm-up
    memory.release_memory()
    rss0 = memory.rss_bytes()
    vram0 = memory.allocated(device)  # None off a CUDA device
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
    vram1 = memory.allocated(device)
    tensor_bytes, tokens = cache_bytes(cache)
    del cache
    memory.release_memory()
    rss2 = memory.rss_bytes()
    dtype = next(model.parameters()).dtype
    per_token = kv.per_token(model.config, dtype)
    est = kv.size(model.config, dtype, tokens)
    return KvMeasurement(
        new_tokens=new_tokens, tokens_in_cache=tokens, kv_bytes_per_token=per_token, estimate_bytes=est,
        cache_tensor_bytes=tensor_bytes, rss_growth_held=rss1 - rss0, rss_released=rss1 - rss2,
        vram_growth_held=(vram1 - vram0) if vram0 is not None else None,
        tensor_error=tensor_bytes / est - 1, rss_error=(rss1 - rss0) / est - 1,
        released_error=(rss1 - rss2) / est - 1, seconds=seconds,
    )


# -- watching it grow ------------------------------------------------------------------
@dataclass
class KvPoint:
    tokens: int  # tokens the cache holds
    cache_bytes: int  # measured: bytes in the cache object's key and value tensors
    estimate_bytes: int  # estimate_bytes_per_token x tokens
    error: float  # cache_bytes / estimate_bytes - 1


@dataclass
class StepTime:
    tokens: int  # the sequence's length when the step runs (tokens already there)
    with_cache_ms: float  # one new token through the model, the cache holding the rest (median of nearby steps)
    without_cache_ms: float  # one forward over the whole sequence, as a cache-less loop does (median of 3)


@dataclass
class KvGrowth:
    model: str
    device: str
    dtype: str
    layers: int
    kv_heads: int
    head_dim: int
    dtype_bytes: int
    estimate_bytes_per_token: int  # 2 x layers x kv_heads x head_dim x dtype_bytes
    measured_bytes_per_token: float  # least-squares slope of the measured points
    max_error: float  # the largest |cache_bytes / estimate - 1| over the points
    cache_class: str  # the cache object's type, e.g. DynamicCache
    prompt_tokens: int
    points: list[KvPoint] = field(default_factory=list)
    steps: list[StepTime] = field(default_factory=list)
    seconds: float = 0.0

    def to_dict(self) -> dict:
        return asdict(self)


def growth_lengths(start: int, end: int, n: int) -> list[int]:
    """n lengths from start to end inclusive, evenly spaced, distinct."""
    if end <= start:
        return [start]
    return sorted({round(start + (end - start) * i / (n - 1)) for i in range(n)})


def _slope(xs: list[int], ys: list[int]) -> float:
    mx, my = statistics.fmean(xs), statistics.fmean(ys)
    den = sum((x - mx) ** 2 for x in xs)
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / den if den else 0.0


def kv_growth(model, tokenizer, device: str, prompt: str, new_tokens: int, name: str = "", points: int = 8) -> KvGrowth:
    """Prefill `prompt`, then decode `new_tokens` greedy tokens one at a time with a DynamicCache, with the
    decode loop the manual engine runs (`playground.run.loop`): the cache's bytes at `points` lengths, and each
    step's time; then, at the same lengths, the time of one cache-less step (the whole sequence through the
    model again). (The caller checks that prompt + new_tokens fits the model's context.)"""
    t_start = time.perf_counter()
    dtype = next(model.parameters()).dtype
    shape = kv.shape(model.config)
    per_token = kv.per_token(model.config, dtype)
    ids = tokenizer(prompt, return_tensors="pt")["input_ids"].to(device)
    prompt_tokens = int(ids.shape[-1])
    wanted = set(growth_lengths(prompt_tokens, prompt_tokens + new_tokens - 1, points))
    found: list[KvPoint] = []
    arrived: list[float] = []  # each token's arrival: the gap to the next one is the decode step after it
    # Warm-up, untimed: the first decode steps after a prefill pay one-time costs (kernels chosen,
    # buffers allocated) that measured 5-10x a later step here and would read as the cache's cost.
    for _ in loop.generate_tokens(model, ids, None, 4):
        pass
    logits, cache = loop.prefill(model, ids, None)  # the cache now holds the prompt
    chosen: list[int] = []
    # the manual engine's own loop: token k arrives with prompt + k tokens in the cache (the newest is
    # fed in by the step after it); between two steps only a few list appends, and the cache's bytes
    # read at the wanted lengths (in the next step's time: the fastest nearby step is kept, below)
    for tok, now in loop.decode_n_tokens(model, logits, ids, None, cache, new_tokens):
        tokens = prompt_tokens + len(arrived)
        arrived.append(now)
        chosen.append(tok)
        if tokens in wanted:
            # the cache's own bytes against the formula at this length: a sliding-window layer keeps at most its
            # window, so the tokens are the sequence's, counted here, not the cache's longest layer
            held, _ = cache_bytes(cache)
            expected = kv.size(model.config, dtype, tokens)
            found.append(KvPoint(tokens, held, expected, held / expected - 1))
    cache_class = type(cache).__name__
    del cache, logits
    seq = torch.cat([ids, torch.tensor([chosen], dtype=ids.dtype, device=ids.device)], dim=-1)
    # tokens in the cache when a step ran -> its time (token k's arrival to token k + 1's)
    step_ms = {prompt_tokens + k: (b - a) * 1e3 for k, (a, b) in enumerate(zip(arrived, arrived[1:]))}
    steps = []
    for p in found:
        near = [ms for n, ms in step_ms.items() if abs(n - p.tokens) <= 2]
        if not near:
            continue
        full = []
        for _ in range(3):  # without a cache: the whole sequence again, the newest token included
            devices.sync(device)
            t0 = time.perf_counter()
            logits, _ = loop.decode_one_token(model, seq[:, :p.tokens + 1], None, None)
            loop.choose(logits, seq).item()  # as a cache-less step chooses, and waits for the device
            full.append((time.perf_counter() - t0) * 1e3)
        # The fastest of the nearby steps: on a busy server (2 cores shared with the web server's
        # threads) a step only ever gains time from the others, and a 2 ms step can read 10 ms.
        steps.append(StepTime(p.tokens, min(near), min(full)))
    xs, ys = [p.tokens for p in found], [p.cache_bytes for p in found]
    return KvGrowth(
        model=name, device=device, dtype=str(dtype).removeprefix("torch."), layers=shape["layers"],
        kv_heads=shape["kv_heads"], head_dim=shape["head_dim"], dtype_bytes=torch.empty((), dtype=dtype).element_size(),
        estimate_bytes_per_token=per_token, measured_bytes_per_token=_slope(xs, ys) if len(xs) > 1 else float(ys[0]),
        max_error=max(abs(p.error) for p in found), cache_class=cache_class, prompt_tokens=prompt_tokens,
        points=found, steps=steps, seconds=time.perf_counter() - t_start,
    )
