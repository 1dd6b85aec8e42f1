"""Decode engines side by side on the loaded model, each against the memory-bandwidth bound.

`run(...)` times `generate()`, the manual loop with and without the KV cache, and (opt-in,
`add_compiled`) the compiled static-cache engine on one prompt and greedy budget; each row gives
tokens/s, its overhead per token over the bound (read rate / weight bytes) and whether it chose
generate()'s tokens. Each engine runs in a fresh thread (`playground.core.threads`).
See docs/generation.md.
"""

from __future__ import annotations

import itertools
import time
from dataclasses import asdict, dataclass, field
from typing import Callable

import torch
from torch.profiler import ProfilerActivity, profile

from playground.core import threads
from playground.core.errors import UserError
from playground.core.i18n import Said, as_text, said, translatable
from playground.core.inputs import GenerationParams
from playground.core.units import fmt_bytes
from playground.hw import bandwidth, census, devices
from playground.run import compiled, decode, generation, loop, offload
from playground.run.generation import generate_ids

PROMPT = "ROMEO:\nBut, soft! what light through yonder window breaks?\n"
Progress = Callable[[float, str], None]


@dataclass
class EngineRow:
    engine: str
    new_tokens: int
    tokens_per_second: float | None  # (new_tokens - 1) / decode_seconds
    decode_seconds: float | None
    ttft_seconds: float | None  # the prefill and the first token's choice
    same_tokens_as_generate: bool
    first_difference: int | None  # index of the first token that differs from generate()'s
    compile_seconds: float | None  # None where nothing compiles; 0 when compiled earlier in this process
    bandwidth_bound_tokens_per_second: float
    percent_of_bound: float | None
    overhead_ms_per_token: float | None  # the time per token above what reading the weights takes
    finish_reason: str
    token_ids: list[int] = field(default_factory=list)
    # where the cache-less loop parts from generate(): why, measured (`parting`); None where it does not
    parting: dict | None = None
    compiled_before: float | None = None  # compile_seconds 0: what the reused compilation cost when it was made

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass
class EnginesReport:
    model: str
    device: str
    dtype: str
    prompt_tokens: int
    max_new_tokens: int
    weights_bytes: int  # read once per token
    read: dict  # the Bandwidth the bound uses
    bound_tokens_per_second: float
    last_level_cache_bytes: int | None
    weights_in_cache: bool  # the weights fit in the CPU's last-level cache
    profile: dict  # generate() under torch.profiler: the matrix multiplications' share of the time
    limit: Said  # what limits generate() on this model, from that profile
    rows: list[EngineRow]
    prompt: str = PROMPT
    location: dict | None = None  # where the model lives (load/location.py): "became", offloaded bytes and blocks
    hooks: dict | None = None  # an offloaded model's hooks, measured per token (run/offload.py's OffloadRun)

    def to_dict(self) -> dict:
        return as_text(asdict(self))


def make_row(engine: str, ids: list[int], stamps: list[float], reference: list[int] | None, bound: float,
         compile_seconds: float | None = None, finish: str = "length") -> EngineRow:
    n = len(ids)
    decode_s = stamps[-1] - stamps[0] if n > 1 else None
    tps = (n - 1) / decode_s if decode_s else None
    ref = ids if reference is None else reference
    diff = next((i for i, (a, b) in enumerate(zip(ids, ref)) if a != b), None)
    if diff is None and len(ids) != len(ref):
        diff = min(len(ids), len(ref))
    return EngineRow(
        engine=engine, new_tokens=n, tokens_per_second=tps, decode_seconds=decode_s,
        ttft_seconds=stamps[0] if stamps else None, same_tokens_as_generate=diff is None, first_difference=diff,
        compile_seconds=compile_seconds, bandwidth_bound_tokens_per_second=bound,
        percent_of_bound=100 * tps / bound if tps else None,
        overhead_ms_per_token=1e3 / tps - 1e3 / bound if tps else None, finish_reason=finish, token_ids=ids,
    )


def parting(model, tokenizer, device: str, prompt: str, ref: list[int], other: list[int], at: int) -> dict:
    """Why the cache-less loop's greedy tokens part from generate()'s at index `at` (the same before it):
    the logits for that position computed both ways, on generate()'s tokens so far. `margin`: how far
    generate()'s choice led the loop's in generate()'s own logits (a cached step, as generate() and the manual
    loop compute it); `gap`: the largest difference between those logits and a full recompute's (no cache).
    A margin within the gap is a near-tie that rounding decides: in bfloat16 a logit near 10 is kept to
    steps of 1/16, and the two paths round differently."""
    ids = tokenizer(prompt, return_tensors="pt").input_ids.to(device)
    logits, cache = loop.prefill(model, ids, None)  # the prefill, then one cached step per token of generate()'s
    seq = ids
    for tok in ref[:at]:
        seq = torch.cat([seq, torch.tensor([[tok]], dtype=ids.dtype, device=ids.device)], dim=-1)
        logits, cache = loop.decode_one_token(model, seq, None, cache)
    cached = logits[0, -1].float()
    full = loop.decode_one_token(model, seq, None, None)[0][0, -1].float()  # no cache: the whole sequence
    return dict(index=at, chosen=ref[at], other=other[at], margin=float(cached[ref[at]] - cached[other[at]]),
                gap=float((cached - full).abs().max()), other_leads_in_full=bool(full[other[at]] >= full[ref[at]]))


MATMULS = {"aten::addmm", "aten::mm", "aten::bmm", "aten::linear", "mkl::_mkl_linear", "aten::_mkldnn_linear"}


def matmul_profile(model, tokenizer, device: str, prompt: str, n: int = 16) -> dict:
    """Where generate()'s time goes: `n` greedy tokens under torch.profiler, the time of the matrix
    multiplications (the operators that read the weights) against the whole run, and the rate they read
    at (weight bytes x forward passes / their time). On a GPU their device time is counted."""
    on_gpu = torch.device(device).type == "cuda"
    enc = tokenizer(prompt, return_tensors="pt").to(device)
    kw = dict(max_new_tokens=n, min_new_tokens=n, **generation.greedy_kwargs(model))
    acts = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if on_gpu else [])
    with torch.inference_mode():
        model.generate(**enc, **kw)  # warm-up
        with profile(activities=acts) as prof:
            devices.sync(device)
            t0 = time.perf_counter()
            model.generate(**enc, **kw)
            devices.sync(device)
            wall = time.perf_counter() - t0

    def spent(e) -> float:
        us = getattr(e, "self_device_time_total", None) if on_gpu else e.self_cpu_time_total
        return (us or 0) / 1e6

    events = prof.key_averages()
    mm = sum(spent(e) for e in events if e.key in MATMULS)
    others = sorted(((spent(e), e.key) for e in events if e.key not in MATMULS), reverse=True)[:3]
    weights = census.weights_bytes(model)
    return dict(tokens=n, wall_seconds=wall, matmul_seconds=mm, matmul_share=mm / wall if wall else 0.0,
                matmul_gbps=weights * n / mm / 1e9 if mm else None,  # n forward passes: the prefill and n - 1 steps
                largest_others=[dict(op=k, seconds=v) for v, k in others])


def limit_of(row: EngineRow, prof: dict, read_gbps: float, location=None, hooks=None) -> Said:
    """What limits this engine, from a profile of it: bringing offloaded weights in (the model's location says some
    are offloaded; `hooks`, their per-token figures measured), reading the weights (the matrix multiplications
    take most of the time) or per-token overhead (everything else does)."""
    if not row.tokens_per_second:
        return said("eng.limit.unknown")
    fields = dict(engine=said(f"engine.{row.engine}"), share=f"{100 * prof['matmul_share']:.0f}", tokens=prof["tokens"],
                  rate=f"{prof['matmul_gbps'] or 0:.1f}", read=f"{read_gbps:.1f}",
                  others=" · ".join(f"`{o['op']}` {o['seconds'] * 1e3:.0f} ms" for o in prof["largest_others"]))
    if location is not None and location.offloaded and hooks is not None and hooks.tokens_per_second:
        return said("eng.limit.offloaded", **fields, offloaded=fmt_bytes(location.offloaded_bytes),
                    blocks=location.offloaded_blocks, of=location.blocks, became=location.became,
                    moved=fmt_bytes(hooks.moved_bytes_per_token), hook_ms=f"{hooks.hook_ms_per_token:.1f}",
                    step_ms=f"{hooks.step_ms_per_token:.1f}")
    return said("eng.limit.bandwidth" if prof["matmul_share"] >= 0.5 else "eng.limit.overhead", **fields)


def run(model, tokenizer, device: str, max_new_tokens: int, with_compiled: bool, name: str = "",
        prompt: str = PROMPT, progress: Progress | None = None, stop=None, location=None) -> EnginesReport:
    """Every engine on `model`, greedy, `max_new_tokens` each; the compiled one only if asked. `location`: where
    the model lives (load/location.py); an offloaded one has its hooks measured too, and the limit says so.
    Refuses (UserError) a budget that does not fit the model's context after the prompt."""
    say = progress or (lambda f, d: None)
    generation.encode(tokenizer, prompt, "cpu", model, max_new_tokens)  # the context check, before any work
    weights = census.weights_bytes(model)
    read = bandwidth.read_bandwidth(device)
    bound = read.gbps * 1e9 / weights
    llc = bandwidth.last_level_cache_bytes()
    in_cache = torch.device(device).type == "cpu" and llc is not None and weights <= llc
    say(0.05, translatable("eng.progress.generate"))
    ref, stamps, n_prompt = generate_ids(model, tokenizer, device, prompt, max_new_tokens)  # in a thread of its own
    finish = generation.finish_reason(ref, loop.eos_ids(model), max_new_tokens, False)
    rows = [make_row("generate", ref, stamps, None, bound, finish=finish)]
    say(0.15, translatable("eng.progress.profiled"))
    prof = threads.run(matmul_profile, model, tokenizer, device, prompt, name="engine")
    # the raw prompt, as generate_ids gives it: every row decodes the same tokens
    params = GenerationParams(max_new_tokens=max_new_tokens, temperature=0.0, top_p=1.0, seed=0, chat_template=False)
    for i, use_cache in enumerate((True, False)):
        if stop is not None and stop.is_set():
            break
        say(0.2 + 0.2 * i, translatable("eng.progress.manual" if i == 0 else "eng.progress.nocache"))
        _, st = decode.run(model, tokenizer, device, prompt, params, use_cache=use_cache)
        stamps = list(itertools.accumulate(st.token_seconds, initial=st.ttft_seconds))
        rows.append(make_row(st.engine, st.token_ids, stamps, ref, bound, finish=st.finish_reason))
        if not use_cache and rows[-1].first_difference is not None and rows[-1].first_difference < len(ref):
            rows[-1].parting = threads.run(parting, model, tokenizer, device, prompt, ref, st.token_ids,
                                           rows[-1].first_difference, name="engine")
    hooks = None
    if location is not None and location.offloaded:
        # the hooks' copies, counted and timed per token on the same prompt
        hooks = threads.run(offload.measure, model, tokenizer, device, prompt, min(max_new_tokens, 16), name="engine")
    report = EnginesReport(
        model=name, device=device, dtype=str(next(model.parameters()).dtype).removeprefix("torch."),
        prompt_tokens=n_prompt, max_new_tokens=max_new_tokens, weights_bytes=weights, read=read.to_dict(),
        bound_tokens_per_second=bound, last_level_cache_bytes=llc, weights_in_cache=in_cache,
        profile=prof, limit=limit_of(rows[0], prof, read.gbps, location, hooks), rows=rows, prompt=prompt,
        location=location.to_dict() if location is not None else None, hooks=asdict(hooks) if hooks else None,
    )
    if with_compiled and not (stop is not None and stop.is_set()):
        add_compiled(report, model, tokenizer, progress)
    return report


def add_compiled(report: EnginesReport, model, tokenizer, progress: Progress | None = None) -> EnginesReport:
    """Run the compiled static-cache engine on the same prompt and budget, and add its row. Where it
    cannot run (a model split over devices; no C++ compiler for Inductor), a UserError says why."""
    placed = set((getattr(model, "hf_device_map", None) or {}).values())
    if len(placed) > 1:
        raise UserError.of("err.compiled_split", devices=", ".join(sorted(map(str, placed))))
    if progress:
        progress(0.6, translatable("eng.progress.compiled"))
    try:
        r = threads.run(compiled.run, model, tokenizer, report.device, report.prompt, report.max_new_tokens,
                        progress, name="engine")
    except Exception as e:  # torch.compile's own failure (a missing compiler, an unsupported model), quoted
        compiled.forget()
        raise UserError.of("err.compile_failed", error=f"{type(e).__name__}: {' '.join(str(e).split())[:300]}") from e
    report.rows.append(make_row(generation.COMPILED, r.token_ids, r.token_times, report.rows[0].token_ids,
                            report.bound_tokens_per_second, r.compile_seconds, r.finish_reason))
    report.rows[-1].compiled_before = r.compiled_before
    return report
