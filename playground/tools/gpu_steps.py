"""The prepared GPU run's steps, each run in a process of its own by `playground.tools.gpurun`.

Every step takes the device it measures (`cuda:0`, or `cpu` where no GPU is present: its CPU part) and
returns a dict of plain figures. It measures nothing itself: it calls the functions the page, the API
and the CLI call (the loader, the pool's report, the bandwidth survey, the ledger, the lab's harness),
and keeps what they return. A step with no CPU part is never started without a GPU (`STEPS`).
"""

from __future__ import annotations

import time
from dataclasses import asdict

import torch
from torch.profiler import ProfilerActivity, profile
from transformers import AutoModelForCausalLM, AutoTokenizer

from playground.core import threads
from playground.core.paths import BUNDLED_DIR, BUNDLED_NAME
from playground.hw import bandwidth, devices, ledger, memory, pcie
from playground.load import catalog, loader, migration, straight, synthetic
from playground.run import compare
from playground.tools import bench, bench_sides, report, selfcheck

ONE_B = "synthetic/llama-1b"  # Llama 3.2 1B's shape, random weights: ~1.0B parameters with the bundled vocabulary
NEW_TOKENS = 64  # the decode step's tokens, greedy


def _gpu(device: str) -> bool:
    return device.startswith("cuda")


def _link_gbps(device: str) -> tuple[float | None, dict | None]:
    """The theoretical rate of the PCIe link NVML reports for `device`, and the link as NVML reads it."""
    found, _ = pcie.links()
    link = next((lk for lk in found if f"cuda:{lk.ordinal}" == device), None)
    return (link.theoretical_gbps if link else None), (link.to_dict() if link else None)


def run_selfcheck(device: str) -> dict:
    """The device tests (`python -m playground selfcheck`), every verdict with its figures; the JSON is also
    written beside the run's (`selfcheck.json`) by the caller."""
    return selfcheck.run(None)


def load_vs_to(device: str) -> dict:
    """from_pretrained on the CPU, then `.to('cuda:0')`, timed apart by the loader, for the bundled model (float32:
    still mapped from its checkpoint when the move starts) and a ~1B-parameter synthetic one in bfloat16, each
    beside what the measured rates predict (`migration.gap`). The process's first CUDA call is timed apart."""
    survey, models = None, []
    for name, dtype in ((BUNDLED_NAME, "float32"), (ONE_B, "bfloat16")):
        if survey is not None:
            memory.reset_peak(device)
        lm = loader.load(loader.prepare(*loader.parse(name, device, dtype)))
        if survey is None:  # after the first load, whose first CUDA call made (and timed) the context
            survey = bandwidth.survey([devices.parse_device(device)])
        r = lm.report.to_dict()
        models.append(dict(
            model=name, dtype=dtype, weights_bytes=r["weights_bytes"], param_count=r["param_count"],
            phases={p["name"]: p["seconds"] for p in r["phases"]}, load_seconds=r["load_seconds"],
            migrate_seconds=r["migrate_seconds"], migrate_fields=r["migrate_fields"],
            gap=migration.gap(lm.report, lm.model, survey, _link_gbps(device)[0]).to_dict(),
            peak_vram=memory.peak_allocated(device)))
        del lm
        memory.release_memory()
    info = devices.parse_device(device)
    return {"gpu": info.name, "capability": info.capability,
            "cuda_context": ledger.cuda_context(0),  # measured at the first load's first CUDA call
            "survey": survey, "models": models}


def h2d(device: str) -> dict:
    """Host-to-device copies from pageable and from pinned memory (and back), against the PCIe link NVML reports."""
    gbps, link = _link_gbps(device)
    rates = {k: bw.to_dict() for k, bw in (("h2d_pageable", bandwidth.h2d(device, False)),
                                          ("h2d_pinned", bandwidth.h2d(device, True)),
                                          ("d2h_pageable", bandwidth.d2h(device, False)),
                                          ("d2h_pinned", bandwidth.d2h(device, True)))}
    # a copy across the link counts the bytes crossing it once (bandwidth.h2d, d2h): the link's own unit
    share = {k: v["gbps"] / gbps if gbps else None for k, v in rates.items()}
    return dict(rates=rates, link=link, link_gbps=gbps, share_of_link=share)


def straight_vs_move(device: str) -> dict:
    """`from_pretrained(..., device_map=device)` against loading then `.to(device)`: time, peak RSS, peak VRAM. On a
    GPU the 1B synthetic model in bfloat16; on the CPU (its CPU part) the bundled model, the dtype's question."""
    name = ONE_B if _gpu(device) else BUNDLED_NAME
    folder = synthetic.ensure(name) if name == ONE_B else BUNDLED_DIR
    return straight.compare(str(folder), name, devices.parse_device(device), torch.bfloat16).to_dict()


def ledger_decode(device: str) -> dict:
    """The memory ledger idle (the CUDA context and cuBLAS's workspaces made, no model) and loaded (after the load,
    after a generation), and the decode rate against the memory-read bound: tokens/s x weight bytes / read rate.
    On a GPU the 1B synthetic model in bfloat16; on the CPU the bundled model in float32."""
    name, dtype = (ONE_B, "bfloat16") if _gpu(device) else (BUNDLED_NAME, "float32")
    idle = {"ram": ledger.as_dicts(ledger.ram_parts(memory.rss_bytes(), []))}
    loaded = {}
    if _gpu(device):
        context = ledger.cuda_context(0)
        counters = ledger.read_gpu(0)
        idle.update(cuda_context=context, counters=asdict(counters), nvml_version=_nvml_version(),
                    gpu=ledger.as_dicts(ledger.gpu_parts(counters, [])))
    rep = report.run_report(name, device, dtype, max_new_tokens=NEW_TOKENS, temperature=0).to_dict()
    if _gpu(device):  # the counters under the ledger's parts, the model still held by the pool
        loaded["counters"] = asdict(ledger.read_gpu(0))
    read = bandwidth.read_bandwidth(device, fresh=True).to_dict()
    bound = read["gbps"] * 1e9 / rep["weights_bytes"]
    tps = rep["tokens_per_second"]
    return dict(model=name, dtype=dtype, idle=idle, loaded=loaded, after_load=rep["load"]["ledger"],
                after_generation=rep["generation"]["ledger"], new_tokens=rep["new_tokens"], prompt_tokens=rep["prompt_tokens"],
                ttft_seconds=rep["ttft_seconds"], decode_seconds=rep["decode_seconds"], tokens_per_second=tps,
                weights_bytes=rep["weights_bytes"], read=read, bound_tokens_per_second=bound,
                percent_of_bound=100 * tps / bound if tps else None)


def decode_parity(device: str) -> dict:
    """The bench's parity case on the GPU: the 1B synthetic model in bfloat16, bare Transformers (`from_pretrained`,
    `.to`, `generate()`) against the playground's own path (the pool's load and generation, everything on), one
    warm-up a side then alternating runs of NEW_TOKENS greedy tokens (`bench.run_case`): whether a slow decode on
    this GPU is Transformers' own or the playground's."""
    case = bench.run_case(ONE_B, device, "bfloat16", runs=3, warmup=1, n=NEW_TOKENS, with_control=False)
    out = {k: case[k] for k in ("model", "device", "dtype", "runs", "warmup", "max_new_tokens", "same_token_count",
                                "medians", "ratios", "info", "runs_detail")}
    # both sides above ran with cuDNN's attention off (hw/devices.py); bare generate() again with it on, here on
    # this step's one thread (its per-thread graph cache warm after the first run, which is dropped)
    path = str(synthetic.ensure(ONE_B))
    with devices.cudnn_attention(True):
        runs = [bench_sides.bare_run(path, device, "bfloat16", bench.PROMPT, NEW_TOKENS) for _ in range(3)][1:]
    out["bare_with_cudnn_attention"] = [{k: r[k] for k in ("ttft_seconds", "new_tokens", "decode_seconds",
                                                          "tokens_per_second")} for r in runs]
    return out


def _nvml_version() -> int | None:
    nvml, _ = memory.nvml_module()
    if nvml is None:
        return None
    try:
        return memory.nvml_memory(nvml, memory.nvml_handle(nvml, 0)).version
    except Exception:  # an NVML error: the version is unknown, the step goes on
        return None


def placement(device: str) -> dict:
    """Accelerate's placement of the bundled model under small limits, over GPU, CPU and disk (on the CPU, its CPU
    part: CPU and disk), read back from the loaded tensors, and a short generation through it."""
    limits = ("cuda:0=12MB," if _gpu(device) else "") + "cpu=12MB,disk"
    rep = report.run_report(BUNDLED_NAME, None, "float32", max_new_tokens=8, temperature=0, limits=limits).to_dict()
    return dict(limits=limits, placement=rep["placement"], tokens_per_second=rep["tokens_per_second"],
                new_tokens=rep["new_tokens"], load_seconds=rep["load_seconds"], ledger=rep["load"]["ledger"])


# the attention paths half_precision times: Transformers' attn_implementation, whether cuDNN's SDPA is allowed, and
# whether each timed run is on a thread of its own (cuDNN's graphs are cached per thread: a fresh one starts empty)
ATTENTION = (("sdpa", True, False), ("sdpa", True, True), ("sdpa", False, False), ("eager", False, False))


def half_precision(device: str) -> dict:
    """Why float16 and bfloat16 decoded at a tenth of float32's rate on the H200 (2026-11-27: 25.7 and 24.2 against
    269 tok/s, the bundled model): bare Transformers' greedy `generate()` of the bundled model per dtype and per
    attention path (SDPA with cuDNN's backend on: on the warm-up's thread, then each run on a fresh thread; SDPA with
    it off, as the playground runs; Transformers' eager attention), a warm-up then 2 timed runs each, the device
    synchronised around each; then one profile per dtype of a generation (SDPA without cuDNN): the top operations by
    device time and by host time. On the CPU (its CPU part) float32, 8 tokens, SDPA and eager."""
    gpu = _gpu(device)
    n = NEW_TOKENS if gpu else 8
    names = ("float32", "float16", "bfloat16") if gpu else ("float32",)
    tok = AutoTokenizer.from_pretrained(BUNDLED_DIR)
    ids = tok(bench.PROMPT, return_tensors="pt").to(device)
    rows, profiles = [], {}
    for name in names:
        model = AutoModelForCausalLM.from_pretrained(BUNDLED_DIR, dtype=bench_sides.TORCH_DTYPES[name],
                                                     use_safetensors=True).to(device)
        model.eval()

        def generate(k: int):
            return model.generate(**ids, max_new_tokens=k, min_new_tokens=k, do_sample=False,
                                  pad_token_id=tok.eos_token_id)

        for attn, cudnn, fresh in ATTENTION:
            if not gpu and (cudnn or fresh):
                continue
            row = dict(dtype=name, attention=attn, cudnn_sdp=cudnn if gpu else None, fresh_thread=fresh, runs=[])

            def timed():
                with torch.inference_mode():  # thread-local, as the graph cache is
                    devices.sync(device)
                    t0 = time.perf_counter()
                    generate(1)
                    devices.sync(device)
                    t1 = time.perf_counter()
                    out = generate(n)
                    devices.sync(device)
                    t2 = time.perf_counter()
                new = int(out.shape[-1] - ids["input_ids"].shape[-1])
                decode = (t2 - t1) - (t1 - t0)  # generate(n) - generate(1): n-1 decode steps
                row["runs"].append(dict(ttft_seconds=t1 - t0, new_tokens=new, decode_seconds=decode,
                                        tokens_per_second=(new - 1) / decode if decode > 0 else None))

            try:
                model.set_attn_implementation(attn)
                with devices.cudnn_attention(cudnn):
                    with torch.inference_mode():
                        generate(n)  # the warm-up, on this thread: kernels loaded, autotuned, graphs built
                    for _ in range(2):
                        if fresh:  # a thread of its own, whose graph cache starts empty
                            threads.run(timed)
                        else:
                            timed()
            except Exception as e:  # one path's failure is a finding, not the step's end
                row["error"] = f"{type(e).__name__}: {e}"[:500]
            rows.append(row)
        model.set_attn_implementation("sdpa")
        profiles[name] = _profile(device, lambda: generate(16), 12)
        del model
        memory.release_memory()
    return dict(model=BUNDLED_NAME, prompt_tokens=int(ids["input_ids"].shape[-1]), new_tokens=n, rows=rows,
                profiles=profiles, versions={"torch": torch.__version__,
                                             "cudnn": torch.backends.cudnn.version() if gpu else None})


def _profile(device: str, work, top: int) -> dict:
    """One run of `work` under torch.profiler (after the caller's warm-up): its `top` operations by device time
    (on a GPU) and by host time, each with its calls and microseconds."""
    gpu = _gpu(device)
    acts = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if gpu else [])
    with torch.inference_mode(), profile(activities=acts) as prof:
        work()
        devices.sync(device)
    events = prof.key_averages()

    def rows(key):
        chosen = sorted(events, key=key, reverse=True)[:top]
        return [dict(op=e.key[:120], calls=e.count, self_device_us=round(_device_us(e), 1),
                     self_host_us=round(e.self_cpu_time_total, 1)) for e in chosen]

    return dict(by_device=rows(_device_us) if gpu else [], by_host=rows(lambda e: e.self_cpu_time_total),
                device_us=round(sum(_device_us(e) for e in events), 1),
                host_us=round(sum(e.self_cpu_time_total for e in events), 1))


def _device_us(e) -> float:
    return float(getattr(e, "self_device_time_total", None) or getattr(e, "self_cuda_time_total", 0) or 0)


def dtypes(device: str) -> dict:
    """The dtype lab on the device: Compare's rows (`compare.run`, the page's own path: a warm-up, then timed runs,
    and how much the tokens and logits change against the first float32 row) for the bundled model in float32,
    float16, bfloat16, int8 and int4, and the 1B model in bfloat16 and int8 (torchao's weight-only
    quantization on the GPU). On the CPU (its CPU part) the bundled model in float32 and int8, 8 tokens, one run."""
    gpu = _gpu(device)
    plans = [(BUNDLED_NAME, ("float32", "float16", "bfloat16", "int8", "int4") if gpu else ("float32", "int8"))]
    if gpu:
        plans.append((ONE_B, ("bfloat16", "int8")))
    out = []
    for name, names in plans:
        try:
            if name == ONE_B:
                synthetic.ensure(ONE_B)
            rows = compare.run(catalog.resolve(name), compare.parse_pairs([f"{device}/{d}" for d in names]),
                               NEW_TOKENS if gpu else 8, runs=2 if gpu else 1)
            out.append(dict(model=name, rows=[_row(r) for r in rows]))
        except Exception as e:  # one model's failure is a finding, not the step's end
            out.append(dict(model=name, error=f"{type(e).__name__}: {e}"[:800]))
    return dict(models=out)


ROW_FIELDS = ("pair", "status", "weights_bytes", "ttft_s", "decode_tokens", "decode_tokens_per_s",
              "run_decode_tokens_per_s", "prefill_tokens_per_s", "peak_vram", "bound_tokens_per_s",
              "percent_of_bound", "new_tokens")


def _row(r) -> dict:
    d = r.to_dict()
    kept = {k: d.get(k) for k in ROW_FIELDS}
    kept.update({k: v for k, v in d.items() if k.startswith(("agree", "logit", "profile", "top_op", "quant"))})
    if d.get("error"):
        kept["error"] = str(d["error"])[:500]
    return kept
