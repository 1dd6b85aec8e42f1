"""The self-check's CPU checks: every path a machine without a GPU runs, on the bundled model.

Each check is the playground's own code path (the shared slot, the loader, the
lab's harness, the sampler), run for real; see `playground.tools.checks` for
what a check is. The GPU and MPS counterparts are in `checks_gpu`.
"""

from __future__ import annotations

import torch

from playground.core import threads
from playground.core.paths import BUNDLED_NAME
from playground.hw import bandwidth, devices, memory
from playground.lab import harness, scenarios
from playground.load import loader
from playground.run import engines, kvcache
from playground.run.slot import SLOT
from playground.tools.checks import Skip, check, expect

TOKENS = 32


def load(device: str, dtype: str = "float32", model: str = BUNDLED_NAME) -> loader.LoadReport:
    """Load through the shared slot, as the page does (checked, timed phases, the memory timeline)."""
    return SLOT.load(*loader.parse(model, device, dtype))


def every_tensor_on(model: torch.nn.Module, device: str) -> list[str]:
    """Names of the parameters and buffers NOT on `device` (empty: all there)."""
    want = torch.device(device)
    return [n for n, t in list(model.named_parameters()) + list(model.named_buffers())
            if t.device.type != want.type or (want.index is not None and t.device.index != want.index)]


def greedy_rates(device: str, dtype: str, n: int = TOKENS) -> dict:
    """Load, then generate() greedy `n` tokens twice (the first warms up): tokens and decode rate."""
    load(device, dtype)
    with SLOT.held() as lm:
        ids, stamps, _ = threads.run(engines.generate_ids, lm.model, lm.tokenizer, lm.device, engines.PROMPT, n)
        ids, stamps, _ = threads.run(engines.generate_ids, lm.model, lm.tokenizer, lm.device, engines.PROMPT, n)
    rate = (len(ids) - 1) / (stamps[-1] - stamps[0]) if len(ids) > 1 else None
    return dict(ids=ids, tokens_per_second=rate, new_tokens=len(ids))


@check("discovery", "cpu", "every device the picker lists is found or absent with its reason; the CPU is usable")
def discovery(device: str) -> dict:
    devs = devices.discover()
    cpu = next(d for d in devs if d.id == "cpu")
    expect(cpu.available, "the CPU is not listed as available")
    silent = [d.id for d in devs if not d.available and d.reason is None]
    expect(not silent, f"unavailable without a reason: {silent}")
    return dict(devices={d.id: ("available" if d.available else d.reason.text("en")) for d in devs},
                cpu_name=cpu.name, threads=torch.get_num_threads(), bf16_native=cpu.bf16, fp16_native=cpu.fp16)


@check("load_cpu", "cpu", "load in timed phases through the shared slot; every parameter and buffer ends on the CPU; "
       "weight bytes = sum of numel x element size")
def load_cpu(device: str) -> dict:
    r = load("cpu")
    with SLOT.held() as lm:
        off = every_tensor_on(lm.model, "cpu")
        weights = memory.weights_bytes(lm.model)
    expect(not off, f"not on cpu after the load: {off[:5]}")
    expect(weights == r.weights_bytes, f"report says {r.weights_bytes} weight bytes, the model holds {weights}")
    expect(r.migrate_code == "noop", f"model.to('cpu') should be a no-op here, was {r.migrate_code}")
    return dict(load_seconds=r.load_seconds, migrate_seconds=r.migrate_seconds, weights_bytes=r.weights_bytes,
                params=r.param_count)


@check("host_bandwidth", "cpu", "the host's memcpy, streaming-read and float32->bfloat16 cast rates are measured "
       "(the rates the decode bound and .to() are judged by)")
def host_bandwidth(device: str) -> dict:
    s = threads.run(bandwidth.survey, [])
    cpu = s["cpu"]
    for k in ("memcpy", "read", "cast"):
        expect(0.05 < cpu[k]["gbps"] < 5000, f"{k}: {cpu[k]['gbps']} GB/s is not a plausible rate")
    return dict(memcpy_gbps=cpu["memcpy"]["gbps"], read_gbps=cpu["read"]["gbps"], cast_gbps=cpu["cast"]["gbps"],
                last_level_cache_bytes=cpu["last_level_cache_bytes"])


@check("generate_cpu", "cpu", "generate() and the manual prefill/decode loop (with and without the KV cache) "
       "choose the same greedy tokens on the CPU")
def generate_cpu(device: str) -> dict:
    load("cpu")
    with SLOT.held() as lm:
        rep = engines.run(lm.model, lm.tokenizer, lm.device, TOKENS, False, lm.report.model)
    differ = [r.engine for r in rep.rows if not r.same_tokens_as_generate]
    expect(not differ, f"different tokens from generate(): {differ}")
    return {f"{r.engine} tokens/s": r.tokens_per_second for r in rep.rows} | {"new_tokens": rep.rows[0].new_tokens}


@check("kv_cache_cpu", "cpu", "the KV cache read from the real cache object grows by 2 x layers x KV heads x "
       "head dim x dtype bytes per token, within 2%")
def kv_cache_cpu(device: str) -> dict:
    load("cpu")
    with SLOT.held() as lm:
        g = threads.run(kvcache.kv_growth, lm.model, lm.tokenizer, lm.device, engines.PROMPT, 64, lm.report.model)
    expect(g.max_error <= 0.02, f"cache bytes differ from the estimate by {g.max_error:.2%}")
    return dict(estimate_bytes_per_token=g.estimate_bytes_per_token, measured_bytes_per_token=g.measured_bytes_per_token,
                max_error=g.max_error, points=len(g.points))


def lab_run(which) -> dict:
    """Run each chosen break-it scenario on the loaded model; each must raise (or, if silent,
    measure) and its fix must run."""
    load("cpu")
    out, bad = {}, []
    for sc in scenarios.SCENARIOS.values():
        if not which(sc):
            continue
        with SLOT.held() as lm:
            r = harness.run(sc, model=lm.model, tokenizer=lm.tokenizer)
        out[sc.id] = dict(raised=r.raised, error_type=r.error_type, simulated=r.simulated, fix_ok=r.fix_ok,
                          message=(r.error_message or "")[:300] or None)
        if (not r.raised and not sc.silent) or not r.fix_ok or r.cannot_run:
            bad.append(sc.id)
    if not out:
        raise Skip("no scenario of this kind")
    expect(not bad, f"did not raise live, or the fix failed: {bad}")
    return dict(scenarios=out)


@check("break_it_cpu", "cpu", "every break-it mistake that needs no GPU raises the library's own error live "
       "(silent ones measure their cost), and its fix runs")
def break_it_cpu(device: str) -> dict:
    return lab_run(lambda sc: not sc.needs_gpu)


@check("break_it_simulated", "cpu", "without a GPU, every GPU mistake is reproduced on PyTorch's FakeTensorMode "
       "(a fake cuda:0), raising PyTorch's own device check, labelled simulated")
def break_it_simulated(device: str) -> dict:
    if torch.cuda.is_available():
        raise Skip("a GPU is here: the lab runs these for real (see break_it_cuda)")
    d = lab_run(lambda sc: sc.needs_gpu)
    expect(all(v["simulated"] for v in d["scenarios"].values()), "a GPU scenario was not marked simulated")
    return d


@check("dtype_speed_cpu", "cpu", "float32, bfloat16 and float16 all generate on the CPU; their decode rates measured "
       "(float16 without native support is converted to float32 internally)")
def dtype_speed_cpu(device: str) -> dict:
    rates = {dt: greedy_rates("cpu", dt) for dt in ("float32", "bfloat16", "float16")}
    for dt, r in rates.items():
        expect(r["new_tokens"] > 1 and r["tokens_per_second"], f"{dt} produced no decode rate")
    f32 = rates["float32"]["tokens_per_second"]
    return {f"{dt}_tokens_per_second": r["tokens_per_second"] for dt, r in rates.items()} | {
        f"{dt}_vs_float32": r["tokens_per_second"] / f32 for dt, r in rates.items() if dt != "float32"} | {
        "bf16_native": devices.cpu_native_bf16(), "fp16_native": devices.cpu_native_fp16()}


@check("unload_cycles_ram", "cpu", "5 load/unload cycles give the RAM back: RSS after the last unload within "
       "max(5%, 50 MB) of after the first")
def unload_cycles_ram(device: str) -> dict:
    after = []
    for _ in range(5):
        load("cpu", "bfloat16")  # a cast: the weights are copied into RAM, not mapped from the file
        SLOT.unload()
        after.append(memory.rss_bytes())
    growth = after[-1] - after[0]
    bound = max(0.05 * after[0], 50e6)
    expect(growth <= bound, f"RSS grew by {growth / 1e6:.1f} MB over 5 cycles (bound {bound / 1e6:.0f} MB)")
    return dict(rss_after_unload=after, growth_bytes=growth)


@check("sampler_timeline", "cpu", "the memory sampler records RSS through a load's phases (load, migrate, eval), "
       "each phase with its peak")
def sampler_timeline(device: str) -> dict:
    load("cpu", "bfloat16")
    rows, peaks = SLOT.timeline()
    names = [p["name"] for p in peaks]
    rss = [r for r in rows if r["series"] == "process RSS"]
    for phase in ("load", "migrate", "eval"):
        expect(phase in names, f"no {phase} phase on the timeline: {names}")
    expect(len(rss) >= 3, f"only {len(rss)} RSS samples")
    return dict(samples=len(rss), phases=names, peak_rss=max(p["rss_peak"] for p in peaks))


@check("device_map_auto", "auto", "device_map='auto' places every layer (Accelerate's plan): on a CPU-only host all on "
       "the CPU, on a GPU host on the GPUs first")
def device_map_auto(device: str) -> dict:
    r = load("auto")
    with SLOT.held() as lm:
        places = sorted({str(t.device) for t in lm.model.parameters()})
    if not torch.cuda.is_available():
        expect(places == ["cpu"], f"auto on a CPU-only host placed weights on {places}")
    else:
        expect(any(p.startswith("cuda") for p in places), f"auto with a GPU placed nothing on it: {places}")
    return dict(placement=r.placement, devices=places, hf_device_map=r.hf_device_map)
