"""The self-check's GPU checks (CUDA, and Apple's MPS where an equivalent exists).

Written by the PyTorch and NVML documentation; this project's machines have no GPU,
so here every one of them skips with its reason, and their pure rules
(`checks.greedy_agreement`, `checks.memory_consistent`, `pcie.match_by_bus_id`,
`pcie.link_gbps`) are what the tests exercise, on recorded readings. On a GPU,
`python -m playground selfcheck` is the first thing to run: it is the first time
these paths meet a GPU.

Every clock read on a GPU follows `torch.cuda.synchronize()` / `torch.mps.synchronize()`
(`devices.sync`): kernels and copies are queued, not done, when a call returns.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys

import torch

from playground.core import threads
from playground.hw import bandwidth, devices, memory, pcie
from playground.lab import scenarios
from playground.run import engines
from playground.run.slot import SLOT
from playground.tools.checks import Skip, check, dtype_tolerance, expect, greedy_agreement, memory_consistent
from playground.tools.checks_cpu import TOKENS, every_tensor_on, greedy_rates, lab_run, load

MiB = 2**20


def need_cuda(device: str) -> int:
    """The CUDA ordinal to check, or Skip with the reason there is none."""
    reason = devices.no_cuda_reason()
    if reason is not None:
        raise Skip(reason.text("en"))
    n = torch.device(device).index or 0
    if n >= torch.cuda.device_count():
        raise Skip(f"{device} is not visible: {torch.cuda.device_count()} CUDA device(s) here")
    return n


def need_mps() -> None:
    mps = next(d for d in devices.discover() if d.kind == "mps")
    if not mps.available:
        raise Skip(mps.reason.text("en") if mps.reason else "MPS is not available")


def need_nvml():
    nvml, reason = memory.nvml_module()
    if nvml is None:
        raise Skip(reason.text("en") if reason else "NVML is not available")
    return nvml


def reading(n: int) -> memory.GpuReading:
    return next(g for g in memory.gpu_readings()[0] if g.index == n)


# ---------------------------------------------------------------- CUDA

@check("cuda_bus_id", "cuda", "each cuda:N is matched to NVML by PCI bus id (not by index, which CUDA_VISIBLE_DEVICES "
       "and CUDA_DEVICE_ORDER can change); the matched device's name and memory agree")
def cuda_bus_id(device: str) -> dict:
    need_cuda(device)
    nvml = need_nvml()
    cuda = pcie.cuda_bus_ids()
    expect(bool(cuda), "torch reports no PCI bus id for any GPU")
    found, _ = pcie.nvml_bus_ids()
    matched = pcie.match_by_bus_id(cuda, found)
    missing = [f"cuda:{n}" for n, i in matched.items() if i is None]
    expect(not missing, f"no NVML device at the bus id of {missing}")
    out = {}
    for n, i in matched.items():
        info = nvml.nvmlDeviceGetMemoryInfo(nvml.nvmlDeviceGetHandleByIndex(i))
        total = torch.cuda.get_device_properties(n).total_memory
        expect(abs(int(info.total) - total) <= 0.05 * total, f"cuda:{n}: NVML total {info.total} vs torch {total}")
        out[f"cuda:{n}"] = dict(nvml_index=i, bus_id=pcie.bus_id_text(cuda[n]), name=torch.cuda.get_device_name(n))
    return dict(matches=out, cuda_visible_devices=os.environ.get("CUDA_VISIBLE_DEVICES"))


FIRST_CALL = ("import time, torch; t = time.perf_counter(); torch.zeros(1, device={dev!r}); torch.cuda.synchronize(); "
              "print(time.perf_counter() - t)")


@check("cuda_migrate", "cuda", "load on the CPU, then model.to('cuda:N') timed with synchronisation on both sides; "
       "every parameter and buffer verified on the device; a fresh process's first CUDA call timed apart")
def cuda_migrate(device: str) -> dict:
    n = need_cuda(device)
    dev = f"cuda:{n}"
    first = subprocess.run([sys.executable, "-c", FIRST_CALL.format(dev=dev)], capture_output=True, text=True,
                           timeout=300)
    r = load(dev)
    with SLOT.held() as lm:
        off = every_tensor_on(lm.model, dev)
    expect(not off, f"not on {dev} after .to(): {off[:5]}")
    expect(r.migrate_code == "copied", f"expected a copy to {dev}, got {r.migrate_code}")
    return dict(migrate_seconds=r.migrate_seconds, weights_bytes=r.weights_bytes,
                migrate_gbps=r.weights_bytes / r.migrate_seconds / 1e9 if r.migrate_seconds else None,
                first_cuda_call_seconds=float(first.stdout.strip().splitlines()[-1]) if first.returncode == 0 else None)


@check("cuda_memory_consistency", "cuda", "NVML's used memory and torch's memory_allocated / memory_reserved tell one "
       "story: a 256 MiB tensor grows all three by it, and freeing it (empty_cache) gives it back")
def cuda_memory_consistency(device: str) -> dict:
    n = need_cuda(device)
    need_nvml()
    dev = torch.device(f"cuda:{n}")
    torch.zeros(1, device=dev)  # the CUDA context exists before the baseline
    torch.cuda.synchronize(dev)
    torch.cuda.empty_cache()
    a = reading(n)
    x = torch.ones(256 * MiB, dtype=torch.uint8, device=dev)
    torch.cuda.synchronize(dev)
    b = reading(n)
    del x
    torch.cuda.synchronize(dev)
    torch.cuda.empty_cache()
    c = reading(n)
    grow = dict(nvml=b.nvml_used - a.nvml_used, reserved=b.reserved - a.reserved, allocated=b.allocated - a.allocated)
    expect(grow["allocated"] == 256 * MiB, f"memory_allocated grew by {grow['allocated']}, not 256 MiB")
    expect(memory_consistent(grow["nvml"], grow["reserved"], grow["allocated"]), f"inconsistent growth: {grow}")
    expect(memory_consistent(b.nvml_used - c.nvml_used, b.reserved - c.reserved, b.allocated - c.allocated),
           "freeing did not give the memory back in both views")
    return dict(growth=grow, nvml_used_after_free=c.nvml_used, reserved_after_free=c.reserved)


@check("cuda_sampler_vram", "cuda", "the memory timeline's VRAM lines (torch allocated, NVML used) rise through a load "
       "to the GPU by about the weights' bytes")
def cuda_sampler_vram(device: str) -> dict:
    n = need_cuda(device)
    SLOT.unload()
    r = load(f"cuda:{n}")
    rows, _ = SLOT.timeline()
    alloc = [x["bytes"] for x in rows if x["series"] == f"cuda:{n} torch allocated"]
    nvml = [x["bytes"] for x in rows if x["series"] == f"cuda:{n} NVML used"]
    expect(len(alloc) >= 3, f"only {len(alloc)} VRAM samples")
    rise = max(alloc) - min(alloc)
    expect(rise >= 0.9 * r.weights_bytes, f"allocated rose by {rise}, the weights are {r.weights_bytes}")
    return dict(samples=len(alloc), allocated_rise=rise, weights_bytes=r.weights_bytes,
                nvml_rise=(max(nvml) - min(nvml)) if nvml else None)


@check("cuda_bandwidth", "cuda", "pinned and pageable copies host-to-device and device-to-host, against the PCIe "
       "link's theoretical rate from NVML (generation x width)")
def cuda_bandwidth(device: str) -> dict:
    n = need_cuda(device)
    info = next(d for d in devices.discover() if d.id == f"cuda:{n}")
    s = threads.run(bandwidth.survey, [info])
    g = s["gpu"]["devices"][0]
    links, reason = pcie.links()
    link = next((x for x in links if x.ordinal == n), None)
    rate = link.theoretical_gbps if link else None
    if rate:  # faster than its own link: the link reading, or the bus-id match, is wrong
        expect(g["h2d_pinned"]["gbps"] <= 1.15 * rate, f"pinned H2D {g['h2d_pinned']['gbps']:.1f} GB/s beats the "
               f"link's {rate:.1f} GB/s")
    figures = {k: g[k]["gbps"] for k in ("h2d_pinned", "h2d_pageable", "d2h_pinned", "d2h_pageable", "read")}
    return figures | dict(link_theoretical_gbps=rate, link=link.to_dict() if link else (reason.text("en") if reason else None),
                          pinned_share_of_link=g["h2d_pinned"]["gbps"] / rate if rate else None)


def _matches_cpu(device: str) -> dict:
    """Greedy tokens on `device` against the CPU's, float32, compared token by token; the logits of
    the CPU's sequence computed on both (teacher forcing) give the numeric difference that decides
    whether a differing token is a near-tie."""
    def run(dev: str) -> tuple[list[int], torch.Tensor]:
        load(dev, "float32")
        with SLOT.held() as lm:
            ids, _, n_prompt = threads.run(engines.generate_ids, lm.model, lm.tokenizer, lm.device, engines.PROMPT, TOKENS)
            return ids, n_prompt

    def logits_of(seq: list[int]) -> torch.Tensor:
        with SLOT.held() as lm, torch.inference_mode():
            x = torch.tensor([seq], device=lm.device)
            return threads.run(lambda: lm.model(input_ids=x).logits[0].float().cpu())

    saved = torch.backends.cuda.matmul.allow_tf32
    torch.backends.cuda.matmul.allow_tf32 = False  # TF32 would round float32 matmuls to 10-bit mantissas
    try:
        ref, n_prompt = run("cpu")
        with SLOT.held() as lm:
            prompt = lm.tokenizer(engines.PROMPT)["input_ids"]
        seq = list(prompt) + ref
        ref_logits = logits_of(seq)
        ids, _ = run(device)
        dev_logits = logits_of(seq)
    finally:
        torch.backends.cuda.matmul.allow_tf32 = saved
    diff = float((ref_logits - dev_logits).abs().max())
    rows = ref_logits[n_prompt - 1:n_prompt - 1 + len(ref)]  # the logits that chose each new token
    verdict = greedy_agreement(ref, ids, rows, diff)
    tol = dtype_tolerance(torch.float32)
    expect(diff <= tol, f"float32 logits differ by {diff:.2e} between cpu and {device} (tolerance {tol:.0e})")
    expect(verdict["agree"], f"tokens differ at {verdict['first_difference']} with a margin of {verdict['margin']}, "
           f"more than twice the logit difference {diff:.2e}")
    return dict(max_logit_difference=diff, tolerance=tol, **verdict, tokens=len(ids))


@check("cuda_generate_matches_cpu", "cuda", "greedy tokens on the GPU equal the CPU's token by token (float32, TF32 "
       "off); a difference is accepted only at a near-tie smaller than twice the measured logit difference")
def cuda_generate_matches_cpu(device: str) -> dict:
    return _matches_cpu(f"cuda:{need_cuda(device)}")


@check("break_it_cuda", "cuda", "every GPU break-it mistake runs for real on the GPU and raises PyTorch's own error "
       "(matching the scenario's real_gpu_message form where it has one); its fix runs")
def break_it_cuda(device: str) -> dict:
    need_cuda(device)
    d = lab_run(lambda sc: sc.needs_gpu)
    expect(not any(v["simulated"] for v in d["scenarios"].values()), "a GPU scenario was simulated on a GPU host")
    for sid, v in d["scenarios"].items():
        form = getattr(scenarios.SCENARIOS[sid], "real_gpu_message", None)
        if form and v.get("message") is not None:
            expect(re.search(form, v["message"]) is not None, f"{sid}: the message does not match {form!r}")
    return d


@check("dtype_speed_cuda", "cuda", "float16 and bfloat16 decode rates on the GPU against float32 (bfloat16 skipped "
       "where the GPU has no bfloat16 support)")
def dtype_speed_cuda(device: str) -> dict:
    n = need_cuda(device)
    dev = f"cuda:{n}"
    bf16 = next(d for d in devices.discover() if d.id == dev).bf16
    kinds = ["float32", "float16"] + (["bfloat16"] if bf16 else [])
    rates = {dt: greedy_rates(dev, dt)["tokens_per_second"] for dt in kinds}
    expect(all(rates.values()), f"a dtype produced no decode rate: {rates}")
    return {f"{dt}_tokens_per_second": r for dt, r in rates.items()} | {
        f"{dt}_vs_float32": r / rates["float32"] for dt, r in rates.items() if dt != "float32"} | {"bf16_supported": bf16}


@check("unload_cycles_vram", "cuda", "5 load/unload cycles return the VRAM: torch's memory_allocated back to where it "
       "started, NVML's used within 64 MiB of after the first cycle")
def unload_cycles_vram(device: str) -> dict:
    n = need_cuda(device)
    SLOT.unload()
    start = reading(n).allocated
    after = []
    for _ in range(5):
        load(f"cuda:{n}")
        SLOT.unload()
        g = reading(n)
        after.append(dict(allocated=g.allocated, reserved=g.reserved, nvml_used=g.nvml_used))
    expect(after[-1]["allocated"] <= start, f"memory_allocated {after[-1]['allocated']} > {start} at the start")
    if after[0]["nvml_used"] is not None:
        expect(after[-1]["nvml_used"] - after[0]["nvml_used"] <= 64 * MiB, f"NVML used grew: {after}")
    return dict(allocated_at_start=start, after_each_unload=after)


# ---------------------------------------------------------------- MPS (Apple silicon)

@check("mps_migrate", "mps", "load on the CPU, then model.to('mps') timed with torch.mps.synchronize; every "
       "parameter and buffer verified on the device")
def mps_migrate(device: str) -> dict:
    need_mps()
    r = load("mps")
    with SLOT.held() as lm:
        off = every_tensor_on(lm.model, "mps")
    expect(not off, f"not on mps after .to(): {off[:5]}")
    return dict(migrate_seconds=r.migrate_seconds, weights_bytes=r.weights_bytes)


@check("mps_generate_matches_cpu", "mps", "greedy tokens on MPS equal the CPU's token by token (float32); a "
       "difference is accepted only at a near-tie smaller than twice the measured logit difference")
def mps_generate_matches_cpu(device: str) -> dict:
    need_mps()
    return _matches_cpu("mps")


@check("unload_cycles_mps", "mps", "5 load/unload cycles return the GPU memory: torch.mps.current_allocated_memory "
       "back to where it started")
def unload_cycles_mps(device: str) -> dict:
    need_mps()
    SLOT.unload()
    torch.mps.empty_cache()
    start = torch.mps.current_allocated_memory()
    after = []
    for _ in range(5):
        load("mps")
        SLOT.unload()
        torch.mps.empty_cache()
        after.append(torch.mps.current_allocated_memory())
    expect(after[-1] <= start + MiB, f"current_allocated_memory {after[-1]} > {start} at the start")
    return dict(allocated_at_start=start, after_each_unload=after)
