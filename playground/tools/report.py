"""`python -m playground report`: load a model and generate once through the pool (its own session); every figure.

The functions the page and the API run (`POOL.load`, `POOL.generate`), checked
once at this edge; nothing here measures anything: it keeps the reports those
functions return (`run_report`), as one dict (`Report.to_dict`) or as the page's own
renderers say them (`format_report`, in English).
"""

from __future__ import annotations

import platform
import time
from dataclasses import dataclass
from importlib import metadata
from typing import Callable

from playground.core import inputs
from playground.core.errors import UserError
from playground.core.inputs import DEFAULT_PROMPT
from playground.hw import devices
from playground.hw.devices import DeviceInfo
from playground.load import catalog, placemap
from playground.load.loader import LoadReport
from playground.run import render
from playground.run.generation import GenerationStats
from playground.run.pool import POOL


SESSION = "cli"  # the command line's session in the pool: its load and its generation use one model


def versions() -> dict:
    """Versions of what produced the numbers (read from package metadata: no imports)."""
    out = {"python": platform.python_version()}
    for pkg in ("torch", "transformers", "accelerate"):
        try:
            out[pkg] = metadata.version(pkg)
        except metadata.PackageNotFoundError:
            out[pkg] = None
    return out


def device_name(info: DeviceInfo, where=None) -> str:
    """The CPU model string, or the GPU's name, for the device a model was put on; for `auto`, the names of the
    devices it became (`where`: the load's location), one per tier, the disk tier said as such."""
    if info.kind != "auto":
        return info.name
    found = {d.id: d.name for d in devices.discover() if d.available}
    tiers = [t.name for t in where.tiers] if where is not None else [d for d in found if d != "auto"]
    return " + ".join(found.get(t, t) if t != "cpu" else devices.cpu_name() for t in tiers)


@dataclass
class Report:
    """What `report` measured: the load report and the generation's final stats exactly as the slot
    returned them, the text, and what the run was (the device's name, what was chosen, the versions)."""

    load: LoadReport
    stats: GenerationStats
    text: str
    prompt: str
    max_new_tokens: int
    updates: int  # how many updates the stream yielded (at most one per 50 ms)
    wall: dict  # {"load", "generate"}: the calls' wall time, seconds
    device_name: str
    chosen: dict  # {"device", "dtype"}: why each was picked, when it was not given
    versions: dict
    placement: dict | None = None  # with --limits: the placement map read from the loaded model (load/placemap.py)

    def to_dict(self) -> dict:
        """Every figure as one dict: `load` is the LoadReport exactly as the API's load_model returns it
        and `generation` the final stats exactly as the API's generate streams them; the top-level
        figures are copied from them, under the same names."""
        load, gen = self.load.to_dict(), self.stats.to_dict()
        phases = {p["name"]: p for p in load["phases"]}
        return {
            "command": "report",
            "model": load["model"], "source": load["source"], "device": load["device"],
            "dtype": load["dtype"], "dtype_requested": load["dtype_requested"],
            "device_name": self.device_name,
            "chosen": self.chosen,
            "versions": self.versions,
            # the load report's own names
            "estimate_seconds": load.get("estimate_seconds"), "import_seconds": load.get("import_seconds"),
            "load_seconds": load["load_seconds"], "migrate_seconds": load["migrate_seconds"],
            "eval_seconds": load["eval_seconds"],
            "param_count": load["param_count"], "buffer_count": load["buffer_count"],
            "weights_bytes": load["weights_bytes"], "disk_bytes": load["disk_bytes"],
            # every byte after the load and after the generation, each part from its counter (`load.ledger`,
            # `generation.ledger` in full): here the estimates beside what was measured
            "memory": {"load": _estimated(load["ledger"]), "generation": _estimated(gen["ledger"])},
            "ram": {name: {k: p[k] for k in ("rss_before", "rss_after", "available_before", "available_after")}
                    for name, p in phases.items()},
            "vram": {"available": load["vram"]["available"], "reason": load["vram"]["reason"],
                     "phases": {name: {"before": p["vram_before"], "after": p["vram_after"]}
                                for name, p in phases.items()}},
            # the generation stats' own names
            "prompt": self.prompt,
            "prompt_tokens": gen["prompt_tokens"], "new_tokens": gen["new_tokens"],
            "max_new_tokens": self.max_new_tokens,
            "ttft_seconds": gen["ttft_seconds"], "decode_seconds": gen["decode_seconds"],
            "tokens_per_second": gen["tokens_per_second"], "total_seconds": gen["total_seconds"],
            "finish_reason": gen["finish_reason"], "greedy": gen["greedy"],
            "text": self.text,
            # what the consumer of the stream received: the token count carried by the
            # last update, and how many updates the stream yielded (at most one per 50 ms)
            "tokens_streamed": gen["new_tokens"], "stream_updates": self.updates,
            "wall_seconds": self.wall,
            "load": load,
            "generation": gen,
            "limits": self.placement["limits"] if self.placement else None,
            "placement": self.placement,
        }


def _estimated(parts: list[dict]) -> dict:
    """The parts with an estimate: part -> measured bytes, the estimate, the error in % and in bytes."""
    return {p["part"]: {k: p[k] for k in ("bytes", "estimate_bytes", "error_pct", "error_bytes")}
            for p in parts if p.get("estimate_bytes") is not None}


def run_report(model: str, device: str | None, dtype: str | None, prompt: str = DEFAULT_PROMPT,
               max_new_tokens: object = 64, temperature: object = 0, top_p: object = 1, seed: object = 0,
               progress: Callable[[float, str], None] | None = None, limits: object = None) -> Report:
    """Load and generate through the shared slot. A device or dtype left out (None) is the best available
    device and its recommended dtype (`chosen` says which were picked, and why). With `limits` ("cpu=200MB,disk")
    the model is placed by Accelerate under them (device "auto") and the report carries its placement map."""
    # Every check first, once (the edge), so that a typo costs nothing and never waits for a load.
    chosen = {}
    placement = inputs.check_limits(limits) if limits is not None else None
    if placement is not None and device not in (None, "auto"):
        raise UserError.of("place.err.limits_device", device=str(device)[:40])
    dt = devices.parse_dtype(dtype) if dtype is not None else None
    if placement is not None:
        device = "auto"
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
    load = POOL.load(src, dev, dt, progress=progress, session=SESSION, placement=placement)
    load_wall = time.perf_counter() - t0
    placed = None
    if placement is not None:
        with POOL.held(SESSION) as lm:
            placed = placemap.read(lm.model, lm.placed, load.model, str(placement), lm.offload_folder).to_dict()

    text, stats, updates = "", None, 0
    t1 = time.perf_counter()
    for text, stats in POOL.generate(prompt, params, session=SESSION):
        updates += 1
    generate_wall = time.perf_counter() - t1
    return Report(load, stats, text, prompt, params.max_new_tokens, updates,
                  {"load": load_wall, "generate": generate_wall}, device_name(dev, load.location), chosen, versions(),
                  placed)


def format_report(r: Report) -> str:
    """The readable summary: what ran where, then the page's load report and generation stats, rendered
    by the page's own renderers in English."""
    v = r.versions
    return "\n".join([
        f"{r.load.model} on {_where(r.load)} ({r.device_name}) in {r.load.dtype}",
        *(f"{k} not given, so {why}" for k, why in r.chosen.items()),
        f"python {v['python']} · torch {v['torch']} · transformers {v['transformers']} · accelerate {v['accelerate']}",
        "",
        render.report_markdown(r.load, "en"),
        *([""] + placement_lines(r.placement) if r.placement else []),
        "",
        render.ledger_markdown(r.load.to_dict()["ledger"], "en", "after_load"),
        "",
        f"prompt ({r.stats.prompt_tokens} tokens): {r.prompt}",
        "-" * 60,
        r.text,
        "-" * 60,
        render.stats_markdown(r.stats, "en") + render.per_token_markdown(r.stats.to_dict(), "en"),
        "",
        render.ledger_markdown(r.stats.ledger, "en", "after_generation"),
    ])


def _where(load: LoadReport) -> str:
    """The device asked for, and what it became when that is something else (`auto`: "auto -> cpu")."""
    became = load.location.became if load.location is not None else load.device
    return load.device if became == load.device else f"{load.device} -> {became}"


def placement_lines(p: dict) -> list[str]:
    """The placement map in plain text: where each block's weights are, read from the loaded tensors."""
    out = [f"placement under {p['limits']}: {', '.join(f'{k} {v:,} B' for k, v in p['by_tier'].items())}; "
           f"{p['offloaded_bytes']:,} B offloaded; model.device says {p['model_device']}"]
    for b in p["blocks"]:
        flag = "  <- differs" if b["differs"] else ""
        out.append(f"  {b['name']:<24} {b['bytes']:>12,} B  plan {b['planned'] or '-':<7} intended "
                   f"{b['intended'] or '-':<7} actual {b['actual']:<7} ({b['store']}){flag}")
    return out
