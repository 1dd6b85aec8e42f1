"""Memory readings: what a load, a `.to()` or a generation costs in RAM and VRAM.

`snapshot()` reads this process's RSS and the system's available RAM; `gpu_readings()` reads
each GPU's NVML used memory and torch's allocator counters (or says why there are none);
`weights_bytes` is the theoretical size, sum(numel x element_size) over parameters and buffers.
What each view answers: docs/hardware.md.
"""

from __future__ import annotations

import ctypes
import gc
import os
import sys
from dataclasses import asdict, dataclass, field

import psutil
import torch

from playground.core.i18n import Said, plain, said


@dataclass
class GpuReading:
    index: int  # the cuda:N ordinal
    name: str
    nvml_used: int | None = None  # bytes, as the driver sees it (all processes)
    nvml_total: int | None = None
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
        return plain(asdict(self))


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
    _PAGE = os.sysconf("SC_PAGE_SIZE")
except (ValueError, AttributeError, OSError):
    _PAGE = 4096


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
                handle = nvml_handle(nvml, i)
                info = nvml.nvmlDeviceGetMemoryInfo(handle)
                r.nvml_used, r.nvml_total = int(info.used), int(info.total)
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


def memory_consistent(nvml_delta: int, reserved_delta: int, allocated_delta: int, slack: int = 64 * 2**20) -> bool:
    """Do NVML's device-wide used memory and PyTorch's caching allocator tell one story? After an
    allocation the driver's growth covers the allocator's reservation (which covers the live tensors)
    and exceeds it by at most `slack` (other processes, the driver's own bookkeeping, 2 MiB pages).
    The device tests judge a real GPU's readings by it; its unit tests feed it recorded ones."""
    return allocated_delta <= reserved_delta and reserved_delta - slack <= nvml_delta <= reserved_delta + slack


def weights_bytes(model: torch.nn.Module) -> int:
    """sum(numel x element_size) over parameters and buffers, shared tensors once.

    Tied weights (GPT-2's LM head is the token embedding) are one tensor reachable
    under two names; `parameters()` already yields it once.
    """
    seen: set[int] = set()
    total = 0
    for t in list(model.parameters()) + list(model.buffers()):
        if id(t) in seen:
            continue
        seen.add(id(t))
        total += t.numel() * t.element_size()
    return total


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
