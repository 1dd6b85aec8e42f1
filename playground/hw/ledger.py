"""Memory, accounted: each device's bytes in named parts, each read by the counter that measures it.

A `Part` is one share of a device's memory (the weights, the KV cache, the runtime, ...) with the counter
that read it (`COUNTERS`, by key) and, where there is one, the estimate beside it and the error.
`assemble(...)` reads every part of a moment (after a load, after a generation) on every device the
model uses; what no part explains is the `unaccounted` part, computed per device, and a counter that
cannot be read leaves its part's bytes None with the reason. A new part is added by name (`extra=`):
its words are `ledger.part.<name>`. What each counter measures and where it cannot: docs/memory.md.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field

import psutil
import torch

from playground.core.i18n import Said, bilingual, said
from playground.hw import memory
from playground.hw.census import Census, census, resident_files

# Each part by its name (its words: ledger.part.<name>). Another part is added here, by name, with its words.
PARTS = ("runtime", "libraries", "cuda_context", "weights", "weights_mapped", "weights_copied", "kv_cache", "activations",
         "others_mapped", "others_copied", "pinned_cache", "allocator_cache", "cublas_workspace", "unaccounted",
         "other_processes", "driver_reserved", "free")
# Each counter by its key (its words: ledger.counter.<key>): what reads the bytes.
COUNTERS = (
    "rss", "rss_anon_idle", "smaps_files", "smaps", "storages", "cache_object", "vmhwm", "meminfo_free", "meminfo_others",
    "cuda_context", "cuda_allocator", "cuda_max_allocated", "mem_get_info", "nvml_process", "nvml_others",
    "cublas_workspace", "nvml_reserved", "cuda_host_allocator",
    "mps_allocator", "mps_recommended", "live_tensors", "pool_storages",
)
# scope: "process" parts sum, with `unaccounted`, to what the process holds on the device; "peak" rises above
# them and falls back (drawn on top); "within" is part of another part (`within` names it; not drawn);
# "total" is the sum of the parts `within` it (a table row, not drawn); "device" is held by others or free.
SCOPES = ("process", "peak", "within", "total", "device")


@dataclass
class Part:
    part: str  # "runtime", "weights", "weights_mapped", "kv_cache", "activations", "unaccounted", ...
    device: str  # "cpu" (RAM), "cuda:0", "mps"
    bytes: int | None  # None: the counter could not be read here (`note` says why)
    counter: str  # one of COUNTERS
    scope: str = "process"
    estimate_bytes: int | None = None
    error_pct: float | None = None  # (measured - estimate) / estimate, in %
    error_bytes: int | None = None
    within: str | None = None  # the part this one is a share of (scope "within"), or that sums it ("total")
    note: Said | None = None

    def to_dict(self) -> dict:
        """The API's dict: the note said in English and Chinese (`note_en`, `note_zh`)."""
        return bilingual(self.__dict__.copy(), "note")


def part(name: str, device: str, nbytes: int | None, counter: str, scope: str = "process",
         estimate: int | None = None, within: str | None = None, note: Said | None = None) -> Part:
    """A part, its error against `estimate` (when both are known) worked out."""
    p = Part(name, device, None if nbytes is None else int(nbytes), counter, scope, estimate, within=within, note=note)
    if nbytes is not None and estimate:
        p.error_bytes = int(nbytes) - int(estimate)
        p.error_pct = round(100.0 * p.error_bytes / estimate, 3)
    return p


def as_dicts(parts: list[Part]) -> list[dict]:
    return [p.to_dict() for p in parts]


def add_others(parts: list[Part], copied: int) -> list[Part]:
    """The other models this process holds (the pool's, for other visitors): their copied weights (tensor bytes,
    `copied`) as a part of their own, taken from `unaccounted`, which held them. Their mapped pages are
    `others_mapped` already (smaps)."""
    if not copied:
        return parts
    out = []
    for p in parts:
        if p.part == "unaccounted" and p.device == "cpu" and p.bytes is not None:
            out.append(part("others_copied", "cpu", copied, "pool_storages"))
            p = part("unaccounted", "cpu", p.bytes - copied, "rss",
                     note=said("ledger.note.negative") if p.bytes < copied else None)
        out.append(p)
    return out


def weights(model: torch.nn.Module, estimate: int | None, resident: int | None,
            counted: Census | None = None) -> list[Part]:
    """The weights on every device they occupy. In RAM, split into what lies in the checkpoint's memory
    mapping (`resident`: its resident pages, from smaps; pages not read yet are on disk, not in RAM) and
    what was copied into memory PyTorch allocated (a cast, a synthetic build); `estimate` is set beside
    the total when every weight is on one device."""
    c = counted if counted is not None else census(model)
    out: list[Part] = []
    one = len(c.by_device) == 1
    for dev, total in c.by_device.items():
        est = estimate if one else None
        if dev != "cpu":
            out.append(part("weights", dev, total, "storages", estimate=est))
            continue
        mapped = c.mapped or 0
        resident = 0 if mapped == 0 else resident
        note = (said("ledger.note.mapped", mapped=_mib(mapped), resident=_mib(resident))
                if mapped and resident is not None and resident < mapped else None)
        out += [part("weights", dev, total, "storages", scope="total", estimate=est),
                part("weights_mapped", dev, resident, "smaps", within="weights", note=note),
                part("weights_copied", dev, total - mapped, "storages", within="weights")]
    return out


def _mib(n: int | None) -> str:
    return "?" if n is None else f"{n / 2**20:.1f} MiB"


# -- a peak: the rise above where memory stood, over a block of work --------------------
class Peak:
    """The most a device's memory rose above where it stood at `start()`, read by `read()`: the kernel's
    high-water mark of RSS on the CPU (VmHWM, reset at the start, the heap trimmed first so that freed
    pages are not reused unseen), the allocator's `max_memory_allocated` on CUDA. MPS keeps no peak."""

    def __init__(self, device: str) -> None:
        self.kind = torch.device(device).type if device != "auto" else "cpu"
        self.device = device
        self.base: int | None = None
        self.counter = {"cpu": "vmhwm", "cuda": "cuda_max_allocated"}.get(self.kind, "vmhwm")
        self.reason: Said | None = None

    def start(self) -> "Peak":
        if self.kind == "cpu":
            memory.trim_heap()
            if memory.reset_peak_rss():
                self.base = memory.rss_bytes()
            else:
                self.reason = said("ledger.note.no_hwm")
        elif self.kind == "cuda":
            torch.cuda.synchronize(self.device)
            torch.cuda.reset_peak_memory_stats(self.device)
            self.base = torch.cuda.memory_allocated(self.device)
        else:
            self.reason = said("ledger.note.no_peak", device=self.device)
        return self

    def read(self) -> int | None:
        """Bytes of the highest reading since `start()` above the reading at `start()` (None: no counter)."""
        if self.base is None:
            return None
        if self.kind == "cuda":
            torch.cuda.synchronize(self.device)
            return max(torch.cuda.max_memory_allocated(self.device) - self.base, 0)
        hwm = memory.peak_rss()
        return None if hwm is None else max(hwm - self.base, 0)


# -- the CUDA context, measured once per process around the first CUDA call on each GPU ----------
_CONTEXT: dict[int, dict] = {}


def cuda_context_pending(index: int) -> bool:
    """Has the CUDA context on cuda:`index` not been created yet (so that `cuda_context` can measure it)?"""
    has = getattr(torch._C, "_cuda_hasPrimaryContext", None)
    return index not in _CONTEXT and has is not None and torch.cuda.is_available() and not has(index)


def cuda_context(index: int) -> dict:
    """Create the CUDA context on cuda:`index` (its first CUDA call: one tiny allocation) and measure it:
    seconds, host RAM (RSS growth: the driver and kernel images) and device memory (NVML's device-wide used
    growth, less the allocator's first reservation). Once per GPU and process; a context that existed
    before it could be measured is recorded as such (`measured` False)."""
    if index in _CONTEXT:
        return _CONTEXT[index]
    if not cuda_context_pending(index):
        _CONTEXT[index] = dict(measured=False, seconds=None, host_bytes=None, device_bytes=None, cublas_bytes=None)
        return _CONTEXT[index]
    used_before = _nvml_used(index)
    rss0 = memory.rss_bytes()
    t0 = time.perf_counter()
    torch.zeros(1, device=f"cuda:{index}")
    torch.cuda.synchronize(index)
    seconds = time.perf_counter() - t0
    host = memory.rss_bytes() - rss0
    used_after = _nvml_used(index)
    device = (used_after - used_before - torch.cuda.memory_reserved(index)
              if used_before is not None and used_after is not None else None)
    _CONTEXT[index] = dict(measured=True, seconds=seconds, host_bytes=max(host, 0), device_bytes=device,
                           cublas_bytes=memory.cublas_workspace(index))
    return _CONTEXT[index]



def _nvml_used(index: int) -> int | None:
    nvml, _ = memory.nvml_module()
    if nvml is None:
        return None
    try:
        return memory.nvml_memory(nvml, memory.nvml_handle(nvml, index)).used
    except Exception:  # an NVML error must not break a load
        return None


# -- each device's counters, read now -------------------------------------------------
@dataclass
class GpuCounters:
    """One GPU's counters at one moment (`read_gpu`); `gpu_parts` turns them into parts, so that a test can
    feed recorded readings (a container's NVML, an allocator holding a large cache)."""

    index: int
    free: int  # cudaMemGetInfo
    total: int
    allocated: int  # torch.cuda.memory_allocated
    reserved: int  # torch.cuda.memory_reserved
    nvml_used: int | None = None  # the device, every process (NVML v2: the driver's reserve apart)
    nvml_reserved: int | None = None  # the driver's reserve (NVML v2); None where only v1 answers
    process_used: int | None = None  # NVML's per-process figure for this process's pid, when listed
    pids: list[int] = field(default_factory=list)  # the pids NVML listed
    context: int | None = None  # the context's device bytes, measured at the first call (`cuda_context`)
    cublas: int | None = None  # cuBLAS's workspaces, measured with the context (`cublas_workspace`)


def read_gpu(index: int) -> GpuCounters:
    free, total = torch.cuda.mem_get_info(index)
    c = GpuCounters(index, int(free), int(total), torch.cuda.memory_allocated(index), torch.cuda.memory_reserved(index),
                    context=_CONTEXT.get(index, {}).get("device_bytes"), cublas=_CONTEXT.get(index, {}).get("cublas_bytes"))
    nvml, _ = memory.nvml_module()
    if nvml is not None:
        try:
            handle = memory.nvml_handle(nvml, index)
            info = memory.nvml_memory(nvml, handle)
            c.nvml_used, c.nvml_reserved = info.used, info.reserved
            procs = nvml.nvmlDeviceGetComputeRunningProcesses(handle)
            c.pids = [int(p.pid) for p in procs]
            mine = [p for p in procs if int(p.pid) == os.getpid()]
            c.process_used = int(mine[0].usedGpuMemory) if mine and mine[0].usedGpuMemory is not None else None
        except Exception:  # an NVML error leaves the parts it would read unknown, and says so
            pass
    return c


def gpu_parts(c: GpuCounters, held: list[Part]) -> list[Part]:
    """A GPU's parts beyond the tensors already counted in `held` (weights, KV cache on this GPU): the
    CUDA context, the allocator's cache (reserved but not allocated), cuBLAS's workspaces (allocated, in no
    tensor), what no part explains (this process's NVML figure less the parts), other processes (NVML's device
    figure less this process's), the driver's reserve (NVML v2) and free.

    NVML's per-process figure counts only where it can be this process's: at least what its allocator
    reserved. Inside a container it may be 0, or another process's under a host PID equal to this one's."""
    dev = f"cuda:{c.index}"
    listed = c.process_used is not None and c.process_used >= max(c.reserved, 1)
    if c.nvml_used is None:
        why = said("ledger.note.no_nvml")
    elif c.process_used is not None and not listed:
        why = said("ledger.note.nvml_not_this", pid=os.getpid(), used=_mib(c.process_used), reserved=_mib(c.reserved))
    else:
        why = said("ledger.note.nvml_pids", pid=os.getpid(), n=len(c.pids))
    v1 = said("ledger.note.nvml_v1") if c.nvml_used is not None and c.nvml_reserved is None else None
    out = [part("cuda_context", dev, c.context, "cuda_context",
                note=None if c.context is not None else said("ledger.note.context_unmeasured")),
           part("allocator_cache", dev, c.reserved - c.allocated, "cuda_allocator"),
           part("cublas_workspace", dev, c.cublas, "cublas_workspace",
                note=None if c.cublas is not None else said("ledger.note.context_unmeasured"))]
    mine = [p.bytes or 0 for p in held + out if p.device == dev and p.scope == "process"]
    if listed:
        out.append(part("unaccounted", dev, c.process_used - sum(mine), "nvml_process"))
        others = c.nvml_used - c.process_used if c.nvml_used is not None else None
        out.append(part("other_processes", dev, others, "nvml_others", scope="device", note=v1))
    else:
        out.append(part("unaccounted", dev, None, "nvml_process", note=why))
        out.append(part("other_processes", dev, None, "nvml_others", scope="device", note=why))
    if c.nvml_used is not None:
        out.append(part("driver_reserved", dev, c.nvml_reserved, "nvml_reserved", scope="device", note=v1))
    out.append(part("free", dev, c.free, "mem_get_info", scope="device"))
    return out


def ram_parts(rss: int, held: list[Part]) -> list[Part]:
    """RAM's parts beyond `held`: what no part explains (RSS less the process parts), the other processes
    (MemTotal - MemAvailable - RSS) and what the kernel can still give (MemAvailable)."""
    mine = sum(p.bytes or 0 for p in held if p.device == "cpu" and p.scope == "process")
    total, avail = _meminfo()
    out = [part("unaccounted", "cpu", rss - mine, "rss", note=said("ledger.note.negative") if rss < mine else None)]
    if total is not None:
        out += [part("other_processes", "cpu", max(total - avail - rss, 0), "meminfo_others", scope="device"),
                part("free", "cpu", avail, "meminfo_free", scope="device")]
    return out


def _meminfo() -> tuple[int | None, int]:
    try:
        with open("/proc/meminfo", "rb") as fh:
            buf = fh.read()
        i = buf.index(b"MemTotal:")
        return int(buf[i + 9: buf.index(b"\n", i)].split()[0]) * 1024, memory.meminfo_available(buf)
    except (OSError, ValueError):
        vm = psutil.virtual_memory()  # off Linux
        return int(vm.total), int(vm.available)


def mps_parts(held: list[Part]) -> list[Part]:
    """Apple's MPS: live tensors (current_allocated_memory) less the parts, the allocator's cache (what the
    driver holds beyond the live tensors) and what the recommended working set leaves."""
    current, driver = torch.mps.current_allocated_memory(), torch.mps.driver_allocated_memory()
    mine = sum(p.bytes or 0 for p in held if p.device == "mps" and p.scope == "process")
    return [part("allocator_cache", "mps", driver - current, "mps_allocator"),
            part("unaccounted", "mps", current - mine, "mps_allocator"),
            part("free", "mps", max(torch.mps.recommended_max_memory() - driver, 0), "mps_recommended",
                 scope="device")]


# -- one moment, every device ----------------------------------------------------------
def assemble(model: torch.nn.Module, *, runtime_anon: int | None, weights_estimate: int | None,
             folder: str | None, extra: list[Part] = (), rss: int | None = None,
             counted: Census | None = None) -> list[Part]:
    """Every part of this moment: the runtime (`runtime_anon`: the anonymous memory read with no model's
    weights held, just before from_pretrained; the CUDA context's host RAM is a share of it), the libraries'
    resident file pages (read now), the weights on each device, the `extra` parts (a KV cache, a prefill's
    peak, another part by name), then each device's own parts and what no part explains. `rss`: the
    process's RSS now (read here when not given)."""
    counted = counted if counted is not None else census(model)
    files = resident_files(folder, model, counted)
    held: list[Part] = [part("runtime", "cpu", runtime_anon, "rss_anon_idle",
                             note=None if runtime_anon is not None else said("ledger.note.no_idle")),
                        part("libraries", "cpu", files[1] if files else None, "smaps_files",
                             note=None if files else said("ledger.note.no_smaps"))]
    for index, c in sorted(_CONTEXT.items()):
        if c.get("host_bytes") is not None:
            held.append(part("cuda_context", "cpu", c["host_bytes"], "cuda_context", scope="within", within="runtime"))
    held += weights(model, weights_estimate, files[0] if files else None, counted)
    held += list(extra)
    if files and files[2]:
        held.append(part("others_mapped", "cpu", files[2], "smaps"))
    pinned = memory.pinned_host_bytes()
    if pinned:  # in the RSS, outside the anonymous heap and the mapped files: the H200's "unaccounted" 291 MB
        held.append(part("pinned_cache", "cpu", pinned, "cuda_host_allocator"))
    present = {p.device for p in held} | {"cpu"}
    out = list(held) + ram_parts(memory.rss_bytes() if rss is None else rss, held)
    for dev in sorted(d for d in present if d.startswith("cuda")):
        out += gpu_parts(read_gpu(torch.device(dev).index or 0), held)
    if "mps" in present:
        out += mps_parts(held)
    return out


def process_total(parts: list[Part], device: str = "cpu") -> int:
    """What the parts say the process holds on `device`: its process-scope parts and `unaccounted`."""
    return sum(p.bytes or 0 for p in parts if p.device == device and p.scope == "process")
