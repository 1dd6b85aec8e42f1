"""The cost of offloading, measured: the loaded model against its all-in-RAM self, and the cliff as blocks leave RAM.

`cost(...)` runs the loaded offloaded model warm (its offloaded weights served from the page cache) and cold
(evicted before every forward pass), and a private all-in-RAM copy of the same checkpoint, on one prompt and
the same greedy tokens; `cliff(...)` does the same with 0, 1, ... k blocks on the disk. Each figure is a
decode step's (`run.offload.OffloadRun`), beside the disk-read bound (the disk's cold read rate, measured on
the offloaded bytes themselves, over the bytes read per token) and where the rest of the time went. Every
copy is freed before the next is loaded: a mapping of the checkpoint keeps its pages in the page cache.
See docs/placement.md.
"""

from __future__ import annotations

import os
import time
from dataclasses import asdict, dataclass, field
from typing import Callable

import torch

from playground.core.i18n import Said, as_text, said, translatable
from playground.core.inputs import DEFAULT_PROMPT
from playground.hw import disk, memory
from playground.load import location, placemap, placement
from playground.run.offload import OffloadRun, first_difference, measure

TOKENS = 16  # greedy tokens per run: every run counts the same (EOS held back until then)
Progress = Callable[[float, str], None]


def _quiet(frac: float, desc: str) -> None:
    """A progress callback that reports nothing."""


@dataclass
class Breakdown:
    """Where a decode step's time went, in ms per token. Two parts, measured in the same run and disjoint, so they
    add up to the whole: the time inside Accelerate's hooks, and the rest of the step (the forward pass's own
    work: the arithmetic, and for weights mapped from the file the page faults that read them in, from the disk
    when cold). Beside them, two references from elsewhere, never parts: the all-in-RAM copy's step (the
    arithmetic with nothing offloaded) and the disk's time for the bytes read per token at its measured rate."""

    total_ms: float
    hooks_ms: float  # inside Accelerate's hooks (bringing the weights in, putting them back)
    forward_ms: float  # the rest of the step: total - hooks
    ram_ms: float | None  # reference: the all-in-RAM copy's time per token (another run)
    disk_ms: float | None  # reference: bytes read from the disk per token at the disk's measured rate (cold runs)

    @classmethod
    def of(cls, run: OffloadRun, ram: OffloadRun | None, gbps: float | None) -> Breakdown | None:
        if not run.tokens_per_second or run.step_ms_per_token <= 0:
            return None
        # the step's time and the hooks' both read from the meter's snapshots over the same decode passes: the
        # hooks run inside that window, so their time is a part of it (min() only guards the clock's rounding)
        total = run.step_ms_per_token
        hooks = min(run.hook_ms_per_token, total)
        ram_ms = 1e3 / ram.tokens_per_second if ram is not None and ram.tokens_per_second else None
        disk_ms = (1e3 * run.disk_bytes_per_token / (gbps * 1e9)
                   if run.cold and gbps and run.disk_bytes_per_token is not None else None)
        return cls(total, hooks, total - hooks, ram_ms, disk_ms)


def disk_bound(run: OffloadRun | None, gbps: float | None) -> float | None:
    """Tokens/s if reading the disk were all a decode step did: the disk's rate over the bytes read per token."""
    if run is None or not gbps or not run.disk_bytes_per_token:
        return None
    return gbps * 1e9 / run.disk_bytes_per_token


# ---------------------------------------------------------------- the loaded model's cost

@dataclass
class CostReport:
    model: str
    dtype: str
    limits: str | None
    prompt: str
    new_tokens: int
    offloaded_bytes: int  # on the disk tier (and the CPU tier under a GPU), read from the tensors and hooks
    offloaded_blocks: int
    warm: OffloadRun
    cold: OffloadRun | None
    ram: OffloadRun | None  # the all-in-RAM copy's run (None: it does not fit, `notes` says so)
    rate: dict | None  # the disk's cold read rate on the offloaded bytes (hw.disk.DiskRate)
    same_tokens_warm: bool | None
    same_tokens_cold: bool | None
    first_difference_warm: int | None
    first_difference_cold: int | None
    slowdown_warm: float | None  # all-in-RAM tokens/s over this run's
    slowdown_cold: float | None
    disk_bound_tokens_per_second: float | None
    percent_of_disk_bound: float | None
    breakdown_warm: Breakdown | None
    breakdown_cold: Breakdown | None
    notes: list[Said] = field(default_factory=list)
    load_average: float = 0.0  # the machine's 1-minute load average when it finished (a shared machine's timings vary)

    def to_dict(self) -> dict:
        return as_text(asdict(self))


def cost(lm, name: str, n: int = TOKENS, prompt: str = DEFAULT_PROMPT, progress: Progress = _quiet) -> CostReport:
    """The loaded offloaded model `lm` (a loader.LoadedModel), warm and cold, against an all-in-RAM copy."""
    model, tok, device, where = lm.model, lm.tokenizer, lm.device, lm.report.location
    ranges = placemap.offloaded_ranges(model, lm.offload_folder)
    files = {f for f, _, _ in ranges}
    dtype = next(model.parameters()).dtype
    notes: list[Said] = []
    progress(0.05, translatable("place.progress.ram"))
    ram = _ram_run(model.name_or_path, dtype, where.weights_bytes, tok, device, prompt, n, notes)
    progress(0.4, translatable("place.progress.warm"))
    measure(model, tok, device, prompt, 2)  # warm-up: a fresh model's first passes fault its RAM weights in
    warm = measure(model, tok, device, prompt, n)
    cold = rate = None
    if files and disk.can_evict():
        progress(0.6, translatable("place.progress.cold"))
        cold = measure(model, tok, device, prompt, n, cold=True, files=files)
        progress(0.9, translatable("place.progress.rate"))
        rate = disk.read_rate(ranges)
    elif files:
        notes.append(said("place.note.no_evict"))
    gbps = rate.gbps if rate else None
    ref = ram.token_ids if ram else None
    diff_w = first_difference(warm.token_ids, ref) if ref is not None else None
    diff_c = first_difference(cold.token_ids, ref) if ref is not None and cold else None
    bound = disk_bound(cold, gbps)
    return CostReport(
        model=name, dtype=str(dtype).replace("torch.", ""), limits=str(lm.placed.limits) if lm.placed else None,
        prompt=prompt, new_tokens=n, offloaded_bytes=where.offloaded_bytes, offloaded_blocks=where.offloaded_blocks,
        warm=warm, cold=cold, ram=ram, rate=rate.to_dict() if rate else None,
        same_tokens_warm=None if ref is None else diff_w is None, same_tokens_cold=None if ref is None or not cold else diff_c is None,
        first_difference_warm=diff_w, first_difference_cold=diff_c,
        slowdown_warm=_ratio(ram, warm), slowdown_cold=_ratio(ram, cold),
        disk_bound_tokens_per_second=bound,
        percent_of_disk_bound=100 * cold.tokens_per_second / bound if bound and cold.tokens_per_second else None,
        breakdown_warm=Breakdown.of(warm, ram, gbps), breakdown_cold=Breakdown.of(cold, ram, gbps) if cold else None,
        notes=notes, load_average=os.getloadavg()[0])


def _ratio(ram: OffloadRun | None, run: OffloadRun | None) -> float | None:
    if ram is None or run is None or not ram.tokens_per_second or not run.tokens_per_second:
        return None
    return ram.tokens_per_second / run.tokens_per_second


def _ram_run(folder: str, dtype: torch.dtype, total: int, tok, device: str, prompt: str, n: int,
             notes: list[Said]) -> OffloadRun | None:
    """The same checkpoint (`total` bytes of weights) all in RAM (loaded, run, freed), or None when it would not fit."""
    if total * 1.2 > memory.available_bytes():
        notes.append(said("place.note.no_ram", need=total))
        return None
    copy = placement.load_copy(folder, dtype)
    try:
        measure(copy, tok, "cpu", prompt, 2)
        return measure(copy, tok, "cpu", prompt, n)
    finally:
        del copy
        memory.release_memory()  # its mapping of the checkpoint would keep the offloaded pages cached


# ---------------------------------------------------------------- the cliff

@dataclass
class CliffRow:
    blocks_offloaded: int
    offloaded_bytes: int
    new_tokens: int
    tokens_per_second: float | None  # warm: the offloaded weights served from the page cache
    moved_bytes_per_token: float
    disk_bytes_per_token: float | None  # cold: evicted before every forward pass
    same_tokens: bool  # warm and cold runs chose the all-in-RAM run's tokens, token for token
    first_difference: int | None
    cold_new_tokens: int | None
    cold_tokens_per_second: float | None
    warm_disk_bytes_per_token: float | None
    disk_bound_tokens_per_second: float | None
    percent_of_disk_bound: float | None
    load_seconds: float
    breakdown_warm: Breakdown | None = None
    breakdown_cold: Breakdown | None = None


@dataclass
class CliffReport:
    model: str
    dtype: str
    prompt: str
    new_tokens: int
    blocks: int  # unsplittable blocks the model has
    rows: list[CliffRow]
    rate: dict | None  # the disk's cold read rate, on the last point's offloaded bytes
    seconds: float
    cold: bool  # cold runs were possible here (posix_fadvise)
    load_average: float = 0.0  # the machine's 1-minute load average when it finished

    def to_dict(self) -> dict:
        return as_text(asdict(self))


def cliff(folder: str, name: str, dtype: torch.dtype, tokenizer, max_blocks: int, n: int = TOKENS,
          prompt: str = DEFAULT_PROMPT, progress: Progress = _quiet) -> CliffReport:
    """0, 1, ... max_blocks blocks of the checkpoint in `folder` on the disk (the last ones: Accelerate offloads
    from the end), each point a fresh copy loaded with that device map, run warm and cold; freed before the next."""
    t0 = time.perf_counter()
    progress(0.0, translatable("place.progress.cliff", k=0))
    started = time.perf_counter()
    model = placement.load_copy(folder, dtype)  # the all-in-RAM point: no device map, no hooks
    loaded = time.perf_counter() - started
    k_max = min(max_blocks, placement.unsplittable(model))
    maps = {k: placement.device_map_off(model, k) for k in range(1, k_max + 1)}
    measure(model, tokenizer, "cpu", prompt, 2)  # warm-up: a fresh copy faults its weights in
    runs = [(0, 0, loaded, measure(model, tokenizer, "cpu", prompt, n), None)]
    del model
    memory.release_memory()  # its mapping of the checkpoint would keep every page of it cached
    rate = None
    for k in range(1, k_max + 1):
        progress(k / (k_max + 1), translatable("place.progress.cliff", k=k))
        offload = placement.new_folder(0)
        try:
            started = time.perf_counter()
            model = placement.load_copy(folder, dtype, maps[k], str(offload))
            loaded = time.perf_counter() - started
            ranges = placemap.offloaded_ranges(model, str(offload))
            files = {f for f, _, _ in ranges}
            off = location.locate(model, "auto", offload_folder=str(offload)).bytes_on("disk")
            measure(model, tokenizer, "cpu", prompt, 2)
            warm = measure(model, tokenizer, "cpu", prompt, n)
            cold = measure(model, tokenizer, "cpu", prompt, n, cold=True, files=files) if disk.can_evict() else None
            if k == k_max and disk.can_evict():
                rate = disk.read_rate(ranges)
            runs.append((k, off, loaded, warm, cold))
        finally:
            model = None
            memory.release_memory()
            placement.remove_folder(offload)
    gbps = rate.gbps if rate else None
    ram = runs[0][3]
    rows = [_row(k, off, loaded, warm, cold, ram, gbps) for k, off, loaded, warm, cold in runs]
    return CliffReport(model=name, dtype=str(dtype).replace("torch.", ""), prompt=prompt, new_tokens=n,
                       blocks=k_max, rows=rows, rate=rate.to_dict() if rate else None,
                       seconds=time.perf_counter() - t0, cold=disk.can_evict(), load_average=os.getloadavg()[0])


def _row(k: int, off: int, loaded: float, warm: OffloadRun, cold: OffloadRun | None, ram: OffloadRun,
         gbps: float | None) -> CliffRow:
    diffs = [first_difference(r.token_ids, ram.token_ids) for r in (warm, cold) if r is not None]
    diff = next((d for d in diffs if d is not None), None)
    bound = disk_bound(cold, gbps)
    return CliffRow(
        blocks_offloaded=k, offloaded_bytes=off, new_tokens=warm.new_tokens, tokens_per_second=warm.tokens_per_second,
        moved_bytes_per_token=warm.moved_bytes_per_token,
        disk_bytes_per_token=cold.disk_bytes_per_token if cold else None, same_tokens=diff is None, first_difference=diff,
        cold_new_tokens=cold.new_tokens if cold else None, cold_tokens_per_second=cold.tokens_per_second if cold else None,
        warm_disk_bytes_per_token=warm.disk_bytes_per_token, disk_bound_tokens_per_second=bound,
        percent_of_disk_bound=100 * cold.tokens_per_second / bound if bound and cold and cold.tokens_per_second else None,
        load_seconds=loaded, breakdown_warm=Breakdown.of(warm, ram, gbps),
        breakdown_cold=Breakdown.of(cold, ram, gbps) if cold else None)
