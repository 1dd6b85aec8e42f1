"""Anatomy of a migration: what a `.to(device)` or a dtype cast moves, and how fast.

`model.to(device, dtype)` walks every parameter and buffer. For each tensor whose
device or dtype differs it allocates the destination, reads every source byte and
writes every destination byte (converting the element type on the way for a
cast), then repoints the module at the new tensor. So its cost is bytes, and the
question worth asking is how close it came to what the machine can move.

Traffic is bytes read + bytes written (a float32 -> bfloat16 cast of N bytes reads N
and writes N/2), compared with the reference speeds of `playground.hw.bandwidth`.

Where the bytes are after a load matters too. Transformers 5 reads safetensors
through a memory map: when the checkpoint already has the requested dtype and the
target is the CPU, each parameter points straight into the mapped file (a private
copy-on-write mapping), so `from_pretrained` copies nothing and RSS barely moves;
the pages are read from the page cache (or disk) when the first forward pass
touches them. `file_backed_bytes` finds those tensors in /proc/self/maps.

Loading straight onto the device (`device_map={"": device}`) versus loading to
RAM then `.to(device)`: on a GPU the first streams each tensor from the
checkpoint to the GPU, so RAM never holds the whole model; the second holds all
of it in RAM, then copies. On a CPU-only machine both end in RAM and `.to("cpu")`
is a no-op, so the two should cost the same: a measured baseline, not a lesson
about GPUs.
"""

from __future__ import annotations

import os
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

import torch
from transformers import AutoModelForCausalLM

from playground.core.errors import UserError
from playground.core.i18n import Said, plain, said
from playground.hw import bandwidth, devices, memory, sampler
from playground.hw.devices import DeviceInfo, Dtype
from playground.load import catalog, estimate, synthetic
from playground.load.catalog import ModelSource

# -- one migration ---------------------------------------------------------------
@dataclass
class MigrationReport:
    call: str  # e.g. "model.to('cpu', torch.bfloat16)"
    tensors: int
    tensors_moved: int
    bytes_read: int  # source bytes of the tensors that changed
    bytes_written: int  # destination bytes of the tensors that changed
    seconds: float  # synced wall time of the call
    gbps: float | None  # (read + written) / seconds
    limit: dict | None  # the Bandwidth compared with
    percent_of_limit: float | None
    percent_of_fresh: float | None  # vs a copy into freshly allocated pages
    rss_before: int
    rss_after: int
    note: str = ""
    limits: list[dict] = field(default_factory=list)

    def to_dict(self) -> dict:
        return asdict(self)


def _tensors(model: torch.nn.Module) -> list[torch.Tensor]:
    seen: set[int] = set()
    out = []
    for t in list(model.parameters()) + list(model.buffers()):
        if id(t) not in seen:  # tied weights are one tensor under two names
            seen.add(id(t))
            out.append(t)
    return out


def plan(model: torch.nn.Module, device: str | None, dtype: torch.dtype | None) -> tuple[int, int, int, int]:
    """(tensors, tensors that will change, bytes read, bytes written) for model.to(device, dtype).

    Module.to casts only floating-point tensors to a new dtype; integer buffers
    (position ids, masks) keep theirs and move only if the device changes."""
    target = torch.device(device) if device else None
    n = moved = read = written = 0
    for t in _tensors(model):
        n += 1
        new_dtype = dtype if (dtype is not None and t.is_floating_point()) else t.dtype
        new_dev = target if target is not None else t.device
        same_dev = new_dev.type == t.device.type and (new_dev.index is None or new_dev.index == t.device.index)
        if same_dev and new_dtype == t.dtype:
            continue
        moved += 1
        read += t.numel() * t.element_size()
        written += t.numel() * torch.empty((), dtype=new_dtype).element_size()
    return n, moved, read, written


def migrate(model: torch.nn.Module, device: str | None = None, tdtype: torch.dtype | None = None) -> MigrationReport:
    """Run model.to(device, dtype), timed with syncs on both sides, and compare with the machine's limit."""
    src_dev = str(devices.torch_device_of(model))
    n, moved, read, written = plan(model, device, tdtype)
    args = ", ".join(a for a in (repr(device) if device else "", str(tdtype) if tdtype else "") if a)
    call = f"model.to({args})"
    rss0 = memory.rss_bytes()
    devices.sync(src_dev)
    if device:
        devices.sync(device)
    t0 = time.perf_counter()
    model.to(**{k: v for k, v in (("device", device), ("dtype", tdtype)) if v is not None})
    if device:
        devices.sync(device)
    devices.sync(src_dev)
    seconds = time.perf_counter() - t0
    rss1 = memory.rss_bytes()
    target_kind = torch.device(device).type if device else torch.device(src_dev).type
    refs = bandwidth.limits(device or src_dev)
    if moved == 0:
        return MigrationReport(call, n, 0, 0, 0, seconds, None, None, None, None, rss0, rss1,
                               f"no-op: every tensor already had this device and dtype, so Tensor.to returned it "
                               f"itself; {seconds * 1e3:.2f} ms is the walk over {n} tensors",
                               [b.to_dict() for b in refs])
    gbps = (read + written) / seconds / 1e9 if seconds > 0 else None
    if target_kind == "cuda" and torch.device(src_dev).type == "cpu":
        ref = next(b for b in refs if b.name == "H2D pageable")
        # Over the link only the source bytes travel; compare like with like.
        gbps = read / seconds / 1e9 if seconds > 0 else None
    else:
        ref = refs[0]
    pct = 100.0 * gbps / ref.gbps if gbps and ref.gbps else None
    fresh = next((b for b in refs if b.name.startswith("host clone")), None)
    pct_fresh = 100.0 * gbps / fresh.gbps if gbps and fresh and fresh.gbps and ref is refs[0] else None
    note = (f"this .to() ran at {pct:.0f}% of what this machine's memory can move ({ref.name}, "
            f"{ref.gbps:.1f} GB/s)") if pct is not None else ""
    if pct_fresh is not None:
        note += (f". For scale, a copy into freshly allocated pages runs at {fresh.gbps:.1f} GB/s here (the kernel "
                 "maps and zeroes each new page first); a .to() pays that too unless the allocator reuses memory "
                 "freed earlier")
    if tdtype is not None and read != written:
        note += ". A dtype cast also converts every element on the way"
    return MigrationReport(call, n, moved, read, written, seconds, gbps, ref.to_dict(), pct, pct_fresh, rss0, rss1, note,
                           [b.to_dict() for b in refs])


# -- where the bytes live ---------------------------------------------------------
def _file_mappings(suffix: str = "") -> list[tuple[int, int, str]] | None:
    """(start, end, path) of every file-backed mapping of this process (Linux) whose path
    ends with `suffix`, or None."""
    try:
        with open("/proc/self/maps", encoding="utf-8") as fh:
            lines = fh.read().splitlines()
    except OSError:
        return None
    out = []
    for line in lines:
        if suffix and not line.endswith(suffix):
            continue  # a process maps hundreds of files (every .so); skip them unparsed
        parts = line.split(maxsplit=5)
        if len(parts) == 6 and parts[4] != "0" and parts[5].startswith("/"):
            lo, hi = parts[0].split("-")
            out.append((int(lo, 16), int(hi, 16), parts[5]))
    return out


def file_backed_bytes(model: torch.nn.Module) -> int | None:
    """Bytes of the model's CPU tensors whose storage lies inside a memory-mapped file
    (a zero-copy safetensors load), or None where /proc/self/maps is not available."""
    # A storage PyTorch allocated itself is resizable; one wrapping memory it does not own
    # (a mapped file, a numpy array) is not. Only those can be mapped: with none (a cast
    # to another dtype copies every tensor) the maps need not be read at all.
    candidates = [t for t in _tensors(model) if t.device.type == "cpu" and not t.untyped_storage().resizable()]
    if not candidates:
        return 0 if os.path.exists("/proc/self/maps") else None
    maps = _file_mappings(".safetensors")  # only the checkpoints matter
    if maps is None:
        return None
    ranges = [(lo, hi) for lo, hi, _ in maps]
    total = 0
    for t in candidates:
        ptr = t.data_ptr()
        if any(lo <= ptr < hi for lo, hi in ranges):
            total += t.numel() * t.element_size()
    return total


# -- device_map vs load-then-move --------------------------------------------------
@dataclass
class PlacementRun:
    method: str  # "device_map" or "load then .to()"
    call: str
    seconds: float  # from_pretrained (+ .to) wall time, synced
    load_seconds: float
    move_seconds: float
    rss_start: int
    rss_peak: int  # sampled at 20 Hz, plus boundary readings
    rss_end: int
    vram_peak: int | None
    weights_bytes: int
    file_backed_bytes: int | None  # weights still pointing into the mapped checkpoint

    def to_dict(self) -> dict:
        return asdict(self)


def _read_through(ref: str) -> None:
    """Read the checkpoint once so both runs find it in the page cache (the first would pay the disk)."""
    for f in sorted(Path(ref).glob("*.safetensors")) if Path(ref).is_dir() else []:
        with open(f, "rb") as fh:
            while fh.read(16 * 2**20):
                pass


def compare_placement(src: ModelSource, dev: DeviceInfo, dtype: Dtype) -> dict:
    """Load the model twice: straight onto `dev` with device_map={"": device}, then to RAM and
    .to(device). Time and peak memory of each, and what the difference means here."""
    if dev.id == "auto":
        raise UserError("Pick a device (cpu, cuda:N, mps): 'auto' is a placement plan, not a place to compare.")
    if src.kind == "synthetic":
        synthetic.ensure(src.name)
    estimate.guard(catalog.read_config(src), dev, dtype)
    kwargs = dict(dtype=dtype, use_safetensors=True, trust_remote_code=False, local_files_only=True)
    _read_through(src.ref)
    runs = []
    for method in ("device_map", "load then .to()"):
        memory.release_memory()
        if torch.cuda.is_available():
            torch.cuda.reset_peak_memory_stats()
        with sampler.Sampler(hz=20) as s:
            s.mark(method)
            devices.sync(dev.id)
            t0 = time.perf_counter()
            if method == "device_map":
                m = AutoModelForCausalLM.from_pretrained(src.ref, device_map={"": dev.id}, **kwargs)
                devices.sync(dev.id)
                t1 = t2 = time.perf_counter()
                call = f"from_pretrained(..., device_map={{'': '{dev.id}'}})"
            else:
                m = AutoModelForCausalLM.from_pretrained(src.ref, **kwargs)
                t1 = time.perf_counter()
                m.to(dev.id)
                devices.sync(dev.id)
                t2 = time.perf_counter()
                call = f"from_pretrained(...) then .to('{dev.id}')"
        peak = s.peaks()[0]
        vram = max((g["allocated"] for g in peak.gpu_peaks), default=None) if peak.gpu_peaks else None
        if torch.cuda.is_available() and dev.kind == "cuda":
            vram = torch.cuda.max_memory_allocated(torch.device(dev.id))
        runs.append(PlacementRun(method, call, t2 - t0, t1 - t0, t2 - t1, peak.rss_start, peak.rss_peak,
                                 peak.rss_end, vram, memory.weights_bytes(m), file_backed_bytes(m)))
        del m
    memory.release_memory()
    a, b = runs
    if dev.kind == "cpu":
        meaning = ("On a CPU both paths end with the weights in RAM and .to('cpu') is a no-op, so time and peak RSS "
                   "match within noise; on a GPU the two differ (device_map never holds the whole model in RAM).")
        mapped = [r.file_backed_bytes for r in runs]
        if all(x is not None and x >= 0.5 * r.weights_bytes for x, r in zip(mapped, runs)):
            meaning += (" Here both loads left the weights memory-mapped from the checkpoint (zero-copy: the "
                        "checkpoint already has this dtype), so RSS grew by much less than the weights: the pages "
                        "are read when the first forward pass touches them.")
    else:
        meaning = ("device_map streams each tensor from the checkpoint to the device, so RAM never holds the whole "
                   "model; load-then-move first holds it all in RAM (peak RSS ~ the weights), then copies it over.")
    return dict(model=src.name, device=dev.id, dtype=devices.dtype_name(dtype), runs=[r.to_dict() for r in runs],
                seconds_ratio=b.seconds / a.seconds if a.seconds else None,
                peak_rss_growth=[r.rss_peak - r.rss_start for r in runs], meaning=meaning)


# -- the loaded model's .to(): measured, predicted, and the tutorials' arithmetic ---------
TUTORIAL_GBPS = 16.0  # the tutorials' "PCIe 3.0 x16: ~16 GB/s" (15.75 GB/s per direction, in theory)


@dataclass
class MigrateGap:
    """The loaded model's measured `.to(device)` beside what this machine's rates predict for it."""

    model: str
    device: str
    dtype: str
    weights_bytes: int
    tensors: int  # parameters + buffers, each one `.to()` call
    measured_seconds: float  # the load report's migrate phase, synchronised
    moved: bool  # whether anything was copied (False: already there, Tensor.to returned it)
    rate: dict | None  # the measured rate the prediction divides by (None: nothing to move)
    predicted_seconds: float  # weights bytes / that rate (0 when nothing moves)
    pinned_seconds: float | None  # the same from pinned memory: the link's ceiling (GPU only)
    link_seconds: float | None  # at the PCIe link's theoretical rate from NVML (GPU only)
    tutorial_seconds: float  # weights bytes / 16 GB/s, as the tutorials compute it
    cast_seconds: float | None  # what `.to(torch.bfloat16)` of these float32 weights would take here
    why: Said

    def to_dict(self) -> dict:
        return plain(asdict(self))


def gap(report, model: torch.nn.Module, survey: dict, link_gbps: float | None = None) -> MigrateGap:
    """Explain the loaded model's migrate time (`report`: its LoadReport; `model`: the model, whose
    tensors `.to()` walked) with the rates of `bandwidth.survey` (and the link's theoretical rate,
    when NVML gives one)."""
    b = report.weights_bytes
    kind = torch.device(report.device).type if report.device != "auto" else "auto"
    moved = report.migrate_code == "copied"
    tensors = len(_tensors(model))
    tutorial = b / (TUTORIAL_GBPS * 1e9)
    cast = survey["cpu"]["cast"]
    cast_s = b / (cast["gbps"] * 1e9) if report.dtype == "float32" and cast.get("gbps") else None
    gpu = next((g for g in survey["gpu"]["devices"] if g["device"] == report.device), None)
    rate = pinned = link = None
    predicted = 0.0
    fields = dict(device=report.device, measured=f"{report.migrate_seconds * 1e3:.2f}", tensors=tensors,
                  tutorial=f"{tutorial * 1e3:.1f}", size=f"{b / 1e6:.0f}")
    if kind == "auto":
        why = said("gap.auto", **fields)
    elif not moved:
        per = report.migrate_seconds / tensors * 1e6 if tensors else 0.0
        why = said("gap.noop", per=f"{per:.1f}", **fields)
    elif kind == "cuda" and gpu is not None:
        rate = gpu["h2d_pageable"]
        predicted = b / (rate["gbps"] * 1e9)
        pinned = b / (gpu["h2d_pinned"]["gbps"] * 1e9)
        link = b / (link_gbps * 1e9) if link_gbps else None
        extra = max(report.migrate_seconds - predicted, 0.0)
        why = said("gap.cuda", predicted=f"{predicted * 1e3:.1f}", rate=f"{rate['gbps']:.1f}",
                   extra=f"{extra * 1e3:.1f}", per=f"{extra / max(tensors, 1) * 1e6:.0f}", **fields)
    elif kind == "mps":  # one memory shared with the CPU: a copy within RAM
        rate = survey["cpu"]["memcpy"]
        predicted = 2 * b / (rate["gbps"] * 1e9)  # memcpy's rate counts bytes read + written
        why = said("gap.copy", predicted=f"{predicted * 1e3:.1f}", rate=f"{rate['gbps']:.1f}", **fields)
    else:
        why = said("gap.no_rates", **fields)
    return MigrateGap(report.model, report.device, report.dtype, b, tensors, report.migrate_seconds, moved, rate,
                      predicted, pinned, link, tutorial, cast_s, why)

