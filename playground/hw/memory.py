"""Memory readings: what a load, a `.to()` or a generation costs in RAM and VRAM.

`snapshot()` reads this process's RSS and the system's available RAM; `gpu_readings()` reads
each GPU's NVML used memory and torch's allocator counters (or says why there are none). A model's weights are counted in `census`.
What each view answers: docs/hardware.md.
"""

from __future__ import annotations

import ctypes
import gc
import os
import sys
from dataclasses import asdict, dataclass, field

import numpy
import psutil
import torch

from playground.core.i18n import Said, as_text, said


@dataclass
class GpuReading:
    index: int  # the cuda:N ordinal
    name: str
    nvml_used: int | None = None  # bytes, as the driver sees it (all processes; NVML v2: the driver's reserve apart)
    nvml_total: int | None = None
    nvml_reserved: int | None = None  # the driver's own reserve (NVML v2), None where only v1 answers
    allocated: int = 0  # torch.cuda.memory_allocated
    reserved: int = 0  # torch.cuda.memory_reserved
    max_allocated: int = 0  # torch.cuda.max_memory_allocated


@dataclass
class MemorySnapshot:
    rss: int  # bytes held by this process
    available: int  # bytes the system can still give
    gpus: list[GpuReading] = field(default_factory=list)
    vram_reason: Said | None = None  # why there are no GPU readings, when there are none

    def to_dict(self) -> dict:
        return as_text(asdict(self))


def rss_bytes() -> int:
    """Resident bytes of this process. On Linux one read of /proc/self/statm (~10 us);
    psutil's Process() costs ten times that, and a load takes ten snapshots."""
    try:
        with open("/proc/self/statm", "rb") as fh:
            return statm_rss(fh.read())
    except (OSError, ValueError, IndexError):
        return psutil.Process(os.getpid()).memory_info().rss


def available_bytes() -> int:
    """What the kernel says it can still give (MemAvailable), as psutil reads it."""
    try:
        with open("/proc/meminfo", "rb") as fh:
            return meminfo_available(fh.read())
    except (OSError, ValueError, IndexError):
        return psutil.virtual_memory().available


def total_bytes() -> int:
    """All the RAM this machine has (psutil): what no load here can ever be given more of."""
    return int(psutil.virtual_memory().total)


def statm_rss(buf: bytes) -> int:
    return int(buf.split()[1]) * _PAGE  # field 2: resident pages


def meminfo_available(buf: bytes) -> int:
    i = buf.index(b"MemAvailable:")
    return int(buf[i + 13: buf.index(b"\n", i)].split()[0]) * 1024  # reported in kB


def _status_kb(field: bytes) -> int | None:
    """A figure of /proc/self/status (reported in kB) in bytes, or None off Linux."""
    try:
        with open("/proc/self/status", "rb") as fh:
            buf = fh.read()
        i = buf.index(field)
        return int(buf[i + len(field): buf.index(b"\n", i)].split()[0]) * 1024
    except (OSError, ValueError, IndexError):
        return None


def rss_anonymous() -> int | None:
    """This process's resident anonymous memory (RssAnon in /proc/self/status: the heap, every allocation,
    thread stacks; not the pages of mapped files), or None off Linux."""
    return _status_kb(b"RssAnon:")


def peak_rss() -> int | None:
    """The kernel's high-water mark of this process's RSS (VmHWM in /proc/self/status), or None off Linux."""
    return _status_kb(b"VmHWM:")


def reset_peak_rss() -> bool:
    """Reset VmHWM to the RSS of now (Linux 4.0+: write 5 to /proc/self/clear_refs); False where it cannot."""
    try:
        with open("/proc/self/clear_refs", "w", encoding="ascii") as fh:
            fh.write("5")
        return True
    except OSError:
        return False


def trim_heap() -> None:
    """glibc's malloc_trim(0) alone (no gc): freed heap pages go back to the OS, so what is allocated next
    raises RSS instead of reusing pages already resident."""
    try:
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):
        pass


try:
    PAGE = os.sysconf("SC_PAGE_SIZE")
except (ValueError, AttributeError, OSError):
    PAGE = 4096
_PAGE = PAGE


def rss_files() -> int | None:
    """This process's resident pages of mapped files (RssFile in /proc/self/status: libraries' code and data,
    memory-mapped checkpoints), in bytes, or None off Linux."""
    return _status_kb(b"RssFile:")


def present_pages(lo: int, hi: int) -> int | None:
    """How many pages of this process's address range [lo, hi) its page table maps now (resident: counted in
    RSS), from /proc/self/pagemap (one 64-bit entry per page, bit 63 "present"; readable without privileges,
    which only hide the frame numbers); None where it cannot be read."""
    first, count = lo // PAGE, (hi - lo + PAGE - 1) // PAGE
    try:
        fd = os.open("/proc/self/pagemap", os.O_RDONLY)
    except OSError:
        return None
    entries = numpy.empty(count, dtype="<i8")  # read in place: bit 63 is an int64's sign bit
    into, got = memoryview(entries).cast("B"), 0
    try:
        while got < 8 * count:
            n = os.preadv(fd, [into[got:]], 8 * first + got)
            if n <= 0:
                return None
            got += n
    except OSError:
        return None
    finally:
        os.close(fd)
    return int(numpy.count_nonzero(entries < 0))


def snapshot() -> MemorySnapshot:
    """Read RAM and every GPU now. Cheap enough to call before and after each phase."""
    gpus, reason = gpu_readings()
    return MemorySnapshot(rss=rss_bytes(), available=available_bytes(), gpus=gpus, vram_reason=reason)


def gpu_readings() -> tuple[list[GpuReading], Said | None]:
    """Per-GPU readings, or ([], why there are none)."""
    if not torch.cuda.is_available():
        if torch.version.cuda is None:
            return [], said("vram.no_cuda_build")
        return [], said("vram.no_device")
    nvml, nvml_reason = _nvml()
    out = []
    for i in range(torch.cuda.device_count()):
        r = GpuReading(
            index=i, name=torch.cuda.get_device_name(i),
            allocated=torch.cuda.memory_allocated(i), reserved=torch.cuda.memory_reserved(i),
            max_allocated=torch.cuda.max_memory_allocated(i),
        )
        if nvml is not None:
            try:
                info = nvml_memory(nvml, nvml_handle(nvml, i))
                r.nvml_used, r.nvml_total, r.nvml_reserved = info.used, info.total, info.reserved
            except Exception:  # an NVML error must not break a load report
                pass
        out.append(r)
    return out, (None if nvml is not None else nvml_reason)


_NVML_STATE: dict = {}


def _nvml():
    """Initialise NVML once; (module, None) or (None, why not)."""
    if "mod" in _NVML_STATE:
        return _NVML_STATE["mod"], _NVML_STATE["reason"]
    try:
        import pynvml  # deferred (optional): without nvidia-ml-py the page says so instead of failing to start

        pynvml.nvmlInit()
        _NVML_STATE.update(mod=pynvml, reason=None)
    except ImportError:
        _NVML_STATE.update(mod=None, reason=said("vram.no_nvml_package"))
    except Exception as e:  # NVMLError_LibraryNotFound, DriverNotLoaded, ...
        _NVML_STATE.update(mod=None, reason=said("vram.no_driver", error=str(e)[:200]))
    return _NVML_STATE["mod"], _NVML_STATE["reason"]


@dataclass
class NvmlMemory:
    """A GPU's memory as NVML reports it (bytes)."""

    total: int
    used: int  # v2: what processes (and the CUDA contexts) use; v1: that and the driver's reserve together
    free: int
    reserved: int | None  # the driver's own reserve (v2); None where only v1 answers
    version: int  # 2, or 1 where the driver or nvidia-ml-py has no version 2


def nvml_memory(nvml, handle) -> NvmlMemory:
    """`nvmlDeviceGetMemoryInfo` version 2 (`nvmlMemory_v2`), which reports the driver's reserved memory apart
    from `used`, falling back to version 1 where it is absent. Version 1's `used` counts that reserve (hundreds
    of MB to about 1 GB on an idle A100 or H100) as if a process held it."""
    v2 = getattr(nvml, "nvmlMemory_v2", None)
    if v2 is not None:
        try:
            info = nvml.nvmlDeviceGetMemoryInfo(handle, version=v2)
            return NvmlMemory(int(info.total), int(info.used), int(info.free), int(info.reserved), 2)
        except Exception:  # NVMLError_FunctionNotFound or NotSupported: a driver older than version 2
            pass
    info = nvml.nvmlDeviceGetMemoryInfo(handle)
    return NvmlMemory(int(info.total), int(info.used), int(info.free), None, 1)


def nvml_handle(nvml, ordinal: int):
    """NVML numbers GPUs by PCI order; CUDA by speed unless CUDA_DEVICE_ORDER=PCI_BUS_ID,
    and CUDA_VISIBLE_DEVICES can hide or reorder them. Match on the PCI bus id."""
    props = torch.cuda.get_device_properties(ordinal)
    bus = getattr(props, "pci_bus_id", None)
    domain = getattr(props, "pci_domain_id", 0)
    dev = getattr(props, "pci_device_id", 0)
    if bus is not None:
        try:
            return nvml.nvmlDeviceGetHandleByPciBusId(f"{domain:08x}:{bus:02x}:{dev:02x}.0")
        except Exception:
            pass
    return nvml.nvmlDeviceGetHandleByIndex(ordinal)


def nvml_module():
    """NVML, initialised once: (the pynvml module, None) or (None, why it cannot be used)."""
    return _nvml()


def cublas_workspace(index: int) -> int:
    """The bytes cuBLAS's workspaces take on cuda:`index`, read as the allocator's growth across a first matrix
    multiplication (a plain one and one with a bias, which cuBLASLt serves) with their results freed. torch
    allocates them through its caching allocator at the first matmul and keeps them (32 MiB on Hopper):
    `memory_allocated` never returns below them, and `empty_cache()` does not free them."""
    dev = f"cuda:{index}"
    a = torch.ones(64, 64, device=dev)
    bias = torch.ones(64, device=dev)
    torch.cuda.synchronize(index)
    before = torch.cuda.memory_allocated(index)
    torch.nn.functional.linear(a @ a, a, bias)  # results dropped at once
    torch.cuda.synchronize(index)
    return max(torch.cuda.memory_allocated(index) - before, 0)


def memory_consistent(nvml_delta: int, reserved_delta: int, allocated_delta: int, slack: int = 64 * 2**20) -> bool:
    """Do NVML's device-wide used memory and PyTorch's caching allocator tell one story? After an
    allocation the driver's growth covers the allocator's reservation (which covers the live tensors)
    and exceeds it by at most `slack` (other processes, the driver's own bookkeeping, 2 MiB pages).
    The device tests judge a real GPU's readings by it; its unit tests feed it recorded ones."""
    return allocated_delta <= reserved_delta and reserved_delta - slack <= nvml_delta <= reserved_delta + slack


# -- one device's allocator, by the device's name (every torch.cuda and torch.mps call of the package is in hw/) --
def _cuda(device) -> torch.device | None:
    d = torch.device(str(device)) if str(device) not in ("auto", "disk") else None
    return d if d is not None and d.type == "cuda" and torch.cuda.is_available() else None


def allocated(device) -> int | None:
    """Bytes PyTorch's caching allocator has handed out on `device` (a CUDA device), None on any other."""
    d = _cuda(device)
    return int(torch.cuda.memory_allocated(d)) if d is not None else None


def reset_peak(device) -> None:
    """Start `device`'s peak count afresh (its queued work finished first): `peak_allocated` then reads the most
    allocated since. The named device's own counter: resetting the current device's would leave a `cuda:1`'s
    peak holding earlier work. Nothing to do on a device without an allocator peak (the CPU, MPS)."""
    d = _cuda(device)
    if d is not None:
        torch.cuda.synchronize(d)
        torch.cuda.reset_peak_memory_stats(d)


def peak_allocated(device) -> int | None:
    """The most bytes allocated on `device` since `reset_peak(device)` (a CUDA device), None on any other."""
    d = _cuda(device)
    if d is None:
        return None
    torch.cuda.synchronize(d)
    return int(torch.cuda.max_memory_allocated(d))


def vram_free(index: int) -> int:
    """Free bytes on cuda:index as the driver reports them (cudaMemGetInfo)."""
    free, _total = torch.cuda.mem_get_info(index)
    return int(free)


def mps_free() -> int:
    """What MPS can still give: its recommended working set less what its driver holds already."""
    return max(torch.mps.recommended_max_memory() - torch.mps.driver_allocated_memory(), 0)


def limit_malloc_arenas(n: int = 2) -> bool:
    """Cap glibc's malloc arenas at `n` (mallopt M_ARENA_MAX), for a long-running server.

    glibc gives threads that allocate at the same time separate arenas, up to 8 per core,
    and memory freed in an arena stays mapped there. Every generation runs in a new thread
    (beside the memory sampler's, the tokenizer's and OpenMP's), so a server's RSS climbs by
    tens of MB over its first few dozen requests and keeps it. Measured here, in one process:
    120 cycles of load -> generate -> load grew RSS by 55 MB with the default (38 MB of it in
    the first 10 cycles); 60 cycles with two arenas grew it by 16 MB, flat after the first 10.
    Call it before threads start (app.py does). Returns whether the cap was set: glibc on
    Linux only, and a MALLOC_ARENA_MAX in the environment (read by glibc itself) wins."""
    if os.environ.get("MALLOC_ARENA_MAX") or not sys.platform.startswith("linux"):
        return False
    try:
        return bool(ctypes.CDLL("libc.so.6").mallopt(-8, n))  # -8 is M_ARENA_MAX in glibc's malloc.h
    except (OSError, AttributeError):
        return False


def freeze_startup_objects() -> int:
    """Move every object alive now (the imported libraries, the page) out of the garbage collector's sight.

    Freeing a model needs a full `gc.collect()` (a module tree holds reference cycles), and a full collection
    walks every tracked object: with Gradio, Transformers and the page imported that walk took 0.24 s here,
    paid by every unload. Objects that live as long as the process are never garbage; after `gc.freeze()`
    the collection walks only what was made since, and an unload's collection took 0.01 s. Call it once,
    when start-up is done. Returns how many objects were frozen."""
    gc.collect()
    gc.freeze()
    return gc.get_freeze_count()


def release_memory() -> None:
    """Give freed memory back, so RSS shows what is held and the next run starts from the same baseline."""
    gc.collect()
    trim_heap()  # glibc keeps freed heap pages mapped; malloc_trim hands them back to the OS
    if torch.cuda.is_available():
        torch.cuda.empty_cache()
        if torch.cuda.is_initialized():
            # pinned host blocks stay cached by PyTorch's host allocator after their tensors are freed (a
            # `pin_memory=True` copy's 256 MiB stayed in the server's RSS); this hands them back to the driver
            empty = getattr(torch._C, "_accelerator_emptyHostCache", None) or getattr(torch._C, "_host_emptyCache", None)
            if empty is not None:
                empty()


def pinned_host_bytes() -> int | None:
    """Page-locked (pinned) host memory held by PyTorch's caching host allocator, in use or cached
    (`torch.cuda.host_memory_stats()`'s "allocated_bytes.current"): a `pin_memory=True` tensor's block stays
    cached after the tensor is freed. Part of the process's RSS but neither anonymous heap nor a mapped file:
    the CUDA driver maps it. None without a CUDA context in this process (nothing pinned through CUDA)."""
    stats = getattr(torch.cuda, "host_memory_stats", None)
    if stats is None or not torch.cuda.is_available() or not torch.cuda.is_initialized():
        return None
    try:
        return int(stats().get("allocated_bytes.current", 0))
    except RuntimeError:  # a torch without the host allocator's statistics
        return None
