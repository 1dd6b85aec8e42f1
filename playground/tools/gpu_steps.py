"""The prepared GPU run's steps, each run in a process of its own by `playground.tools.gpurun`.

Every step takes the device it measures (`cuda:0`, or `cpu` where no GPU is present: its CPU part) and
returns a dict of plain figures. It measures nothing itself: it calls the functions the page, the API
and the CLI call (the loader, the pool's report, the bandwidth survey, the ledger, the lab's harness),
and keeps what they return. A step with no CPU part is never started without a GPU (`STEPS`).
"""

from __future__ import annotations

from dataclasses import asdict

import torch

from playground.core.paths import BUNDLED_DIR, BUNDLED_NAME
from playground.hw import bandwidth, devices, ledger, memory, pcie
from playground.load import loader, migration, straight, synthetic
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
    # the H200's bfloat16 decode ran at a tenth of float32's: bare generate() again with cuDNN's attention off
    path = str(synthetic.ensure(ONE_B))
    with devices.without_cudnn_attention():
        runs = [bench_sides.bare_run(path, device, "bfloat16", bench.PROMPT, NEW_TOKENS) for _ in range(3)][1:]
    out["bare_without_cudnn_attention"] = [{k: r[k] for k in ("ttft_seconds", "new_tokens", "decode_seconds",
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
