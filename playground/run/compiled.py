"""The fourth decode engine: a static KV cache and a decode step compiled by `torch.compile`.

`run(model, tokenizer, device, prompt, max_new_tokens)` decodes greedily with a `StaticCache`
(cache lengths in powers of two) and one decode step compiled with `fullgraph=True`, choosing
tokens as `generate()` does. The step skips Dynamo's guards on module attributes, so one model is
compiled at a time: compiling for another, or `forget()`, clears every compiled graph.
Where the time goes and what removes it, measured: docs/generation.md.
"""

from __future__ import annotations

import time
import weakref
from dataclasses import dataclass, field
from typing import Callable

import torch
from transformers import StaticCache
from transformers.pytorch_utils import Conv1D

from playground.core.i18n import translatable
from playground.hw import devices
from playground.load.estimate import context_length
from playground.run.generation import finish_reason
from playground.run.loop import eos_ids

MIN_CACHE = 64
Progress = Callable[[float, str], None]


@dataclass
class CompiledRun:
    token_ids: list[int]
    prompt_tokens: int
    cache_len: int  # the StaticCache's positions
    compile_seconds: float  # 0 when the step was already compiled in this process
    prefill_seconds: float  # the prompt's forward (eager) and the first token's choice
    token_times: list[float] = field(default_factory=list)  # each token's arrival, seconds since the start
    finish_reason: str = "length"
    compiled_before: float | None = None  # reused: what compiling it cost when it was made, earlier in this process

    @property
    def new_tokens(self) -> int:
        return len(self.token_ids)

    @property
    def decode_seconds(self) -> float:
        return self.token_times[-1] - self.token_times[0] if self.token_times else 0.0

    @property
    def tokens_per_second(self) -> float | None:
        n, s = self.new_tokens, self.decode_seconds
        return (n - 1) / s if n > 1 and s > 0 else None


def cache_len_for(prompt_tokens: int, new_tokens: int, context: int | None) -> int:
    """The static cache's length: prompt + new tokens rounded up to a power of two (at least
    MIN_CACHE), at most the model's context. Each length compiles once."""
    need = prompt_tokens + new_tokens
    n = MIN_CACHE
    while n < need:
        n *= 2
    return min(n, context) if context else n


def decode_layout(model: torch.nn.Module, device: str) -> dict[str, torch.Tensor]:
    """On a CPU, each `[in, out]` weight (Transformers' Conv1D, GPT-2's layers) as a copy in
    `[out, in]` memory order, same shape: the parameters the compiled step is called with."""
    if torch.device(device).type != "cpu":
        return {}
    return {f"{name}.weight": mod.weight.detach().t().contiguous().t()
            for name, mod in model.named_modules() if isinstance(mod, Conv1D)}


def decode_step(model, weights: dict, token: torch.Tensor, pos: torch.Tensor, cache) -> torch.Tensor:
    """One decode step: the token at position `pos` through the model (its keys and values written
    into the static cache there), then the greedy choice, as generate() makes it."""
    logits = torch.func.functional_call(
        model, weights, args=(),
        kwargs=dict(input_ids=token, position_ids=pos.unsqueeze(0), cache_position=pos, past_key_values=cache,
                    use_cache=True, logits_to_keep=1),
        strict=False).logits
    return logits[:, -1].to(torch.float32).argmax(-1, keepdim=True)


def _options(device: str) -> dict:
    opts: dict = {"guard_filter_fn": torch.compiler.skip_guard_on_all_nn_modules_unsafe}
    if torch.device(device).type == "cpu":
        big = 1 << 20  # any one-row matmul, whatever its width
        opts["post_grad_fusion_options"] = {"decompose_mm_pass": {"cpu_max_other_dimension_decomposition": big}}
        # The pass reads its CPU limit into a module constant when first imported (default 2048,
        # narrower than an MLP or an LM head): set it for this process too.
        # deferred (start-up): torch._inductor takes ~1.5 s to import, and only a compiled run needs it.
        from torch._inductor.fx_passes import decompose_mem_bound_mm

        decompose_mem_bound_mm.cpu_max_other_dimension_decomposition = big
    elif torch.device(device).type == "cuda":
        opts["triton.cudagraphs"] = True  # gpt-fast's mode="reduce-overhead": one graph launch per step
    return opts


@dataclass
class _Compiled:
    """The compiled step for one model: one StaticCache (and compiled graph) per cache length."""

    model: weakref.ref
    device: str
    step: Callable
    caches: dict[int, object] = field(default_factory=dict)
    compile_seconds: dict[int, float] = field(default_factory=dict)  # what each length's compilation cost


_CURRENT: list[_Compiled] = []  # at most one: the model compiled for now (see the module docstring)


def compiled_for(model, device: str) -> _Compiled:
    """The compiled step for `model`, made now if it is not the one compiled last (and then every
    earlier compiled graph is dropped). Compiling itself happens on the first call."""
    if _CURRENT and _CURRENT[0].model() is model and _CURRENT[0].device == device:
        return _CURRENT[0]
    _CURRENT.clear()
    torch.compiler.reset()
    entry = _Compiled(weakref.ref(model), device, torch.compile(decode_step, fullgraph=True, options=_options(device)))
    _CURRENT.append(entry)
    return entry


def forget(model=None) -> None:
    """Drop the compiled step and its static caches, when compiled for `model` (any model when None):
    the pool calls this when it unloads one (a cache holds max_cache_len tokens of keys and values
    per layer)."""
    if _CURRENT and (model is None or _CURRENT[0].model() is model):
        _CURRENT.clear()
        torch.compiler.reset()


def _prefill(model, ids: torch.Tensor, cache) -> torch.Tensor:
    pos = torch.arange(ids.shape[-1], device=ids.device)
    logits = model(input_ids=ids, position_ids=pos.unsqueeze(0), cache_position=pos, past_key_values=cache,
                   use_cache=True, logits_to_keep=1).logits
    return logits[:, -1].to(torch.float32).argmax(-1, keepdim=True)


def _compile(entry: _Compiled, model, weights: dict, cache, ids: torch.Tensor, device: str) -> float:
    """Trace and compile the step (two calls: the first compiles, the second must not), on the
    real cache, which the run resets afterwards. Seconds spent."""
    devices.sync(device)
    t0 = time.perf_counter()
    tok = _prefill(model, ids, cache)
    pos = torch.tensor([ids.shape[-1]], device=ids.device)
    for _ in range(2):
        tok = entry.step(model, weights, tok, pos, cache)
        pos = pos + 1
    int(tok[0, 0])
    devices.sync(device)
    return time.perf_counter() - t0


def run(model, tokenizer, device: str, prompt: str, max_new_tokens: int,
        progress: Progress | None = None) -> CompiledRun:
    """Greedy decoding with the compiled step: compile (timed apart, only the first time for this
    model and cache length), then an eager prefill into the static cache, then one compiled step per
    token. Stops at any of the model's end ids (`loop.eos_ids`), as generate() does."""
    ids = tokenizer(prompt, return_tensors="pt")["input_ids"].to(device)
    n_prompt = int(ids.shape[-1])
    length = cache_len_for(n_prompt, max_new_tokens, context_length(model.config))
    eos = eos_ids(model)
    entry = compiled_for(model, device)
    weights = decode_layout(model, device)
    compile_seconds = 0.0
    # no_grad, not inference_mode: the static cache's tensors are updated in place on every call,
    # and a tensor made under inference_mode may not be changed outside it (reset() does that).
    with torch.no_grad():
        cache = entry.caches.get(length)
        if cache is None:
            if progress:
                progress(0.0, translatable("eng.progress.compiling", length=length))
            cache = StaticCache(config=model.config, max_cache_len=length)
            compile_seconds = _compile(entry, model, weights, cache, ids, device)
            entry.caches[length] = cache
            entry.compile_seconds[length] = compile_seconds
        cache.reset()  # zeroes the keys and values in place; the compiled graph keeps its buffers
        devices.sync(device)
        t_start = time.perf_counter()
        tok = _prefill(model, ids, cache)
        out = [int(tok[0, 0])]  # .item() waits for the device: the clock read after it is honest
        times = [time.perf_counter() - t_start]
        prefill = times[0]
        pos = torch.tensor([n_prompt], device=ids.device)
        while out[-1] not in eos and len(out) < max_new_tokens:
            tok = entry.step(model, weights, tok, pos, cache)
            out.append(int(tok[0, 0]))
            times.append(time.perf_counter() - t_start)
            pos = pos + 1
    del weights
    return CompiledRun(out, n_prompt, length, compile_seconds, prefill, times,
                       finish_reason(out, eos, max_new_tokens, False),
                       None if compile_seconds else entry.compile_seconds.get(length))
