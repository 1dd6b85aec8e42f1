"""`python -m playground report`: load a model and generate once through the shared slot; every figure.

The functions the page and the API run (`SLOT.load`, `SLOT.generate`), checked
once at this edge; nothing here measures anything: it gathers the reports those
functions return into one dict (`run_report`) or a readable summary (`format_report`).
"""

from __future__ import annotations

import platform
import time
from importlib import metadata
from typing import Callable

from playground.core import inputs
from playground.core.inputs import DEFAULT_PROMPT
from playground.core.units import fmt_bytes
from playground.hw import devices
from playground.hw.devices import DeviceInfo
from playground.load import catalog
from playground.run.slot import SLOT


def versions() -> dict:
    """Versions of what produced the numbers (read from package metadata: no imports)."""
    out = {"python": platform.python_version()}
    for pkg in ("torch", "transformers", "accelerate"):
        try:
            out[pkg] = metadata.version(pkg)
        except metadata.PackageNotFoundError:
            out[pkg] = None
    return out


def device_name(info: DeviceInfo) -> str:
    """The CPU model string, or the GPU's name, for the device a model was put on."""
    if info.kind == "auto":
        gpus = [d.name for d in devices.discover() if d.kind == "cuda" and d.available]
        return " + ".join(gpus + [devices.cpu_name()])
    return info.name


def run_report(model: str, device: str | None, dtype: str | None, prompt: str = DEFAULT_PROMPT,
               max_new_tokens: object = 64, temperature: object = 0, top_p: object = 1, seed: object = 0,
               progress: Callable[[float, str], None] | None = None) -> dict:
    """Load and generate through the shared slot; return every figure as one dict.

    `load` is the LoadReport exactly as the API's load_model returns it and
    `generation` the final GenerationStats exactly as the API's generate streams
    it; the top-level figures are copied from them, under the same names. A device
    or dtype left out (None) is the best available device and its recommended dtype
    (`chosen` says which were picked, and why).
    """
    # Every check first, once (the edge), so that a typo costs nothing and never waits for a load.
    chosen = {}
    dt = devices.parse_dtype(dtype) if dtype is not None else None
    dev = devices.parse_device(device) if device is not None else devices.best()  # one discovery either way
    if device is None:
        chosen["device"] = f"{dev.id}: the best available (a GPU, then MPS, then the CPU)"
    if dt is None:
        dt = devices.recommended_dtype(dev)
        chosen["dtype"] = (f"{devices.dtype_name(dt)}: recommended on {dev.id} "
                           "(16 bits where the hardware computes them natively, else float32)")
    src = catalog.resolve(model)
    params = inputs.generation_params(max_new_tokens, temperature, top_p, seed)
    prompt = inputs.check_prompt(prompt)

    t0 = time.perf_counter()
    load = SLOT.load(src, dev, dt, progress=progress).to_dict()
    load_wall = time.perf_counter() - t0

    text, stats, updates = "", None, 0
    t1 = time.perf_counter()
    for text, stats in SLOT.generate(prompt, params, session="cli"):
        updates += 1
    generate_wall = time.perf_counter() - t1
    gen = stats.to_dict()

    phases = {p["name"]: p for p in load["phases"]}
    return {
        "command": "report",
        "model": load["model"], "source": load["source"], "device": load["device"],
        "dtype": load["dtype"], "dtype_requested": load["dtype_requested"],
        "device_name": device_name(dev),
        "chosen": chosen,
        "versions": versions(),
        # the load report's own names
        "estimate_seconds": load.get("estimate_seconds"), "import_seconds": load.get("import_seconds"),
        "load_seconds": load["load_seconds"], "migrate_seconds": load["migrate_seconds"],
        "eval_seconds": load["eval_seconds"],
        "param_count": load["param_count"], "buffer_count": load["buffer_count"],
        "weights_bytes": load["weights_bytes"], "disk_bytes": load["disk_bytes"],
        "ram": {name: {k: p[k] for k in ("rss_before", "rss_after", "available_before", "available_after")}
                for name, p in phases.items()},
        "vram": {"available": load["vram"]["available"], "reason": load["vram"]["reason"],
                 "phases": {name: {"before": p["vram_before"], "after": p["vram_after"]} for name, p in phases.items()}},
        # the generation stats' own names
        "prompt": prompt,
        "prompt_tokens": gen["prompt_tokens"], "new_tokens": gen["new_tokens"],
        "max_new_tokens": params.max_new_tokens,
        "ttft_seconds": gen["ttft_seconds"], "decode_seconds": gen["decode_seconds"],
        "tokens_per_second": gen["tokens_per_second"], "total_seconds": gen["total_seconds"],
        "finish_reason": gen["finish_reason"], "greedy": gen["greedy"],
        "text": text,
        # what the consumer of the stream received: the token count carried by the
        # last update, and how many updates the stream yielded (at most one per 50 ms)
        "tokens_streamed": gen["new_tokens"], "stream_updates": updates,
        "wall_seconds": {"load": load_wall, "generate": generate_wall},
        "load": load,
        "generation": gen,
    }


def format_report(r: dict) -> str:
    """The readable summary: the page's load table and generation stats, as text."""
    def secs(s: float | None) -> str:
        if s is None:
            return "n/a"
        return f"{s * 1000:.1f} ms" if s < 1 else f"{s:.2f} s"

    what = {"estimate": "size check on the meta device", "build": "writing the synthetic checkpoint",
            "import": "the architecture's Python code",
            "load": "from_pretrained (disk -> RAM)" if r["device"] != "auto" else "from_pretrained(device_map='auto')",
            "migrate": f"model.to('{r['device']}')", "eval": "model.eval()"}
    v = r["versions"]
    lines = [
        f"{r['model']} on {r['device']} ({r['device_name']}) in {r['dtype']}",
        *(f"{k} not given, so {why}" for k, why in (r.get("chosen") or {}).items()),
        f"python {v['python']} · torch {v['torch']} · transformers {v['transformers']} · accelerate {v['accelerate']}",
        "",
        f"{'phase':<8} {'what ran':<36} {'time':>10}   RSS before -> after (delta)",
    ]
    for p in r["load"]["phases"]:
        lines.append(
            f"{p['name']:<8} {what.get(p['name'], ''):<36} {secs(p['seconds']):>10}   {fmt_bytes(p['rss_before'])} -> "
            f"{fmt_bytes(p['rss_after'])} ({fmt_bytes(p['rss_after'] - p['rss_before'])})"
        )
    lines += [
        "",
        f"parameters {r['param_count']:,} · weights {fmt_bytes(r['weights_bytes'])} in {r['dtype']} "
        f"(sum of numel x element size) · on disk {fmt_bytes(r['disk_bytes'])}",
        f"migration: {r['load']['migrate_note']}",
        "VRAM: " + (r["vram"]["reason"] if not r["vram"]["available"] else
                    "; ".join(f"after {n}: " + ", ".join(f"cuda:{g['index']} allocated {fmt_bytes(g['allocated'])}"
                                                        for g in ph["after"]) for n, ph in r["vram"]["phases"].items())),
    ]
    if r["load"].get("label"):
        lines.append(f"note: {r['load']['label']}")
    if r["load"].get("hint"):
        lines.append(f"hint: {r['load']['hint']}")
    rate = f"{r['tokens_per_second']:.1f} tokens/s" if r["tokens_per_second"] else "n/a"
    lines += [
        "",
        f"prompt ({r['prompt_tokens']} tokens): {r['prompt']}",
        "-" * 60,
        r["text"],
        "-" * 60,
        f"time to first token {secs(r['ttft_seconds'])} · {r['new_tokens']} new tokens · decode {rate} "
        f"({max(r['new_tokens'] - 1, 0)} tokens in {secs(r['decode_seconds'])}) · total {secs(r['total_seconds'])} "
        f"· finished: {r['finish_reason']} · {'greedy' if r['greedy'] else 'sampling'}",
    ]
    return "\n".join(lines)
