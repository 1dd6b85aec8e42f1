"""generate() taken apart: the manual engine, the decode loop with and without the KV cache.

`stream(...)` runs the loop of `playground.run.loop` (one prefill, then one forward per token; with
`use_cache=False` the whole sequence every step) and yields (text, stats) as `generation.stream` does;
`run(...)` runs it to the end. It matches `generate()` token for token on greedy decoding, and each
token is timed after `.item()`. See docs/generation.md.
"""

from __future__ import annotations

import statistics
import threading
import time
from dataclasses import dataclass, field, replace
from typing import Iterator

import torch

from playground.core import threads
from playground.core.errors import UserError, shown
from playground.core.inputs import GenerationParams
from playground.hw import devices
from playground.run import generation, loop
from playground.run.generation import GenerationStats

@dataclass
class DecodeStats(GenerationStats):
    use_cache: bool = True
    prefill_seconds: float | None = None  # the forward over the prompt (+ choosing the first token)
    token_seconds: list[float] = field(default_factory=list)  # each decode step: tokens 2..n


def step_seconds(timestamps: list[float]) -> list[float]:
    """Per-token decode times from per-token timestamps (e.g. `TokenStreamer`'s): the gaps
    between consecutive tokens; n timestamps give n - 1 decode steps."""
    return [b - a for a, b in zip(timestamps, timestamps[1:])]


def profile(token_seconds: list[float]) -> dict:
    """Summary of per-token decode times, with its count."""
    if not token_seconds:
        return dict(count=0)
    s = sorted(token_seconds)
    return dict(count=len(s), mean=statistics.fmean(s), median=statistics.median(s), min=s[0], max=s[-1],
                p90=s[min(len(s) - 1, int(0.9 * len(s)))], first=token_seconds[0], last=token_seconds[-1])


def stream(
    model,
    tokenizer,
    device: str,
    prompt: str,
    params: GenerationParams,
    stop: threading.Event | None = None,
    use_cache: bool = True,
    min_interval: float = 0.05,
    meter=None,
) -> Iterator[tuple[str, DecodeStats]]:
    """Yield (text so far, stats so far) from a hand-written decode loop; the last one is final.

    The loop runs in a fresh thread (see `playground.core.threads`: a thread that waits must
    not own an OpenMP pool of its own, or every kernel runs throttled)."""
    stop = stop or threading.Event()
    return threads.iterate(lambda: _loop(model, tokenizer, device, prompt, params, stop, use_cache, min_interval,
                                         meter), stop, name="decode-loop")


def check_engine(engine: object) -> str:
    """'generate' (model.generate), 'manual' (the tutorials' prefill + decode loop with the KV
    cache) or 'manual-nocache' (the same loop, no cache): the edge's check."""
    if engine not in generation.ENGINES:
        raise UserError.of("err.engine", engine=shown(engine, 40), engines=", ".join(generation.ENGINES))
    return engine


def stream_engine(engine: str, model, tokenizer, device: str, prompt: str, params: GenerationParams,
                  stop: threading.Event | None = None, meter=None) -> Iterator[tuple[str, GenerationStats]]:
    """The updates of the engine named `engine` (one of `generation.ENGINES`): generate() through the token
    streamer, or this loop with the KV cache ("manual") or without it ("manual-nocache"). `meter`: the
    generation's ledger (playground.run.accounting), fed by either."""
    if engine == "generate":
        return generation.stream(model, tokenizer, device, prompt, params, stop=stop, meter=meter)
    return stream(model, tokenizer, device, prompt, params, stop=stop, use_cache=engine == "manual", meter=meter)


def _loop(model, tokenizer, device: str, prompt: str, params: GenerationParams, stop: threading.Event,
          use_cache: bool, min_interval: float, meter=None) -> Iterator[tuple[str, DecodeStats]]:
    inputs = generation.encode(tokenizer, prompt, device, model, params.max_new_tokens, params.chat_template, meter)
    ids = inputs["input_ids"]
    eos = loop.eos_ids(model)
    warpers = loop.warpers_for(params.temperature, params.top_p)
    stats = DecodeStats(engine="manual" if use_cache else "manual-nocache", greedy=params.greedy, use_cache=use_cache,
                        prompt_tokens=int(ids.shape[-1]), max_new_tokens=params.max_new_tokens,
                        chat_template_applied=generation.applies_template(tokenizer, params.chat_template))
    # the cache generate() would make, made here so that the meter reads it once the run is over
    cache = meter.new_cache(model) if meter is not None and use_cache else None
    torch.manual_seed(params.seed)
    new: list[int] = []
    times: list[float] = []
    last_yield = 0.0
    if meter is not None:
        meter.before_prefill()  # before the clock starts
    devices.sync(device)
    t_start = time.perf_counter()
    for tok, now in loop.generate_tokens(model, ids, inputs.get("attention_mask"), params.max_new_tokens, eos,
                                         warpers, use_cache, cache):
        if not new:
            stats.prefill_seconds = now - t_start  # the prompt's forward and the first token's choice
            if meter is not None:
                meter.first_token()
        new.append(tok)
        times.append(now)
        done = tok in eos or len(new) >= params.max_new_tokens or stop.is_set()
        if done or now - last_yield >= min_interval:
            last_yield = now
            generation.fill(stats, times, t_start, now)
            stats.token_ids, stats.token_seconds = list(new), step_seconds(times)
            if done:
                break
            # a copy, as generation.stream yields: a consumer that keeps updates must not see them change
            yield tokenizer.decode(new, skip_special_tokens=True), replace(stats)
    stats.finish_reason = generation.finish_reason(new, eos, params.max_new_tokens, stop.is_set())
    if meter is not None:
        meter.cacheless = not use_cache
    yield tokenizer.decode(new, skip_special_tokens=True), stats


def run(model, tokenizer, device: str, prompt: str, params: GenerationParams, use_cache: bool = True,
        stop: threading.Event | None = None) -> tuple[str, DecodeStats]:
    """Run the manual loop to the end; (text, final stats)."""
    text, stats = "", None
    for text, stats in stream(model, tokenizer, device, prompt, params, stop=stop, use_cache=use_cache, min_interval=1e9):
        pass
    return text, stats
