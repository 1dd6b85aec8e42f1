"""Copy bandwidth: what this machine's memory and its GPU link can move, measured.

The reference speeds a migration or a decode step is compared with. Conventions:
- traffic = bytes read + bytes written: a same-dtype copy of N bytes moves 2N.
- the host limit is a large memcpy (`dst.copy_(src)` of 256 MiB, destination
  already touched, best of a few).
- for a GPU: host-to-device copies from pinned (page-locked) and pageable memory.
  `model.to("cuda")` copies from pageable memory, which CUDA stages through a
  pinned bounce buffer: pageable is the fair comparison, pinned the ceiling.
- every clock read follows `devices.sync`: CUDA and MPS copies are asynchronous.

What bounds what (`survey` says it beside the figures):
- decode reads every weight once per token and writes almost nothing, so its
  bound is the *read* rate: a reduction (`sum()`) over a buffer much larger than
  the CPU's caches, filled first (pages never written map the kernel's shared
  zero page, which sits in the cache and flatters the figure). A memcpy also
  writes every byte, so per byte read it runs at about half that.
- a `.to(dtype)` on the CPU reads, converts and writes: its own rate, per GB read.
- `.to("cuda")` crosses the PCIe link from pageable memory (`pcie.links()` gives
  the link's theoretical rate from NVML).
"""

from __future__ import annotations

import re
import time
from dataclasses import asdict, dataclass
from functools import lru_cache
from pathlib import Path

import torch

from playground.hw import devices

LIMIT_BYTES = 256 * 2**20


@dataclass
class Bandwidth:  # one measured rate
    name: str  # "host memcpy", "host read", "H2D pinned", "H2D pageable", ...
    bytes: int  # size of the copy
    seconds: float  # best of `repeats`
    gbps: float  # traffic (read + written) / seconds, in GB/s (10^9)
    repeats: int
    note: str = ""
    kind: str = ""  # "memcpy", "read", "cast", "h2d_pinned", ...: what the views name it by

    def to_dict(self) -> dict:
        return asdict(self)


def _best(fn, repeats: int, device: str | None) -> float:
    best = float("inf")
    for _ in range(repeats):
        devices.sync(device)
        t0 = time.perf_counter()
        fn()
        devices.sync(device)
        best = min(best, time.perf_counter() - t0)
    return best


@lru_cache(maxsize=4)
def host_memcpy(nbytes: int = LIMIT_BYTES, repeats: int = 5) -> Bandwidth:
    """This machine's RAM-to-RAM limit as PyTorch sees it: dst.copy_(src), both pages already touched."""
    src = torch.ones(nbytes, dtype=torch.uint8)  # ones, not empty: every page faulted in before timing
    dst = torch.zeros(nbytes, dtype=torch.uint8)
    dst.copy_(src)  # warm-up
    s = _best(lambda: dst.copy_(src), repeats, None)
    del src, dst
    return Bandwidth("host memcpy", nbytes, s, 2 * nbytes / s / 1e9, repeats,
                     f"copy_ of {nbytes / 2**20:.0f} MiB into memory already touched, "
                     f"{torch.get_num_threads()} threads: read + written bytes per second", kind="memcpy")


def h2d(device: str, pinned: bool, nbytes: int = LIMIT_BYTES, repeats: int = 5) -> Bandwidth:
    """Host-to-device copy speed to a GPU, from pinned or pageable host memory (written by the
    CUDA docs; untested on the CPU-only machines the playground is developed on)."""
    src = torch.ones(nbytes, dtype=torch.uint8, pin_memory=pinned)
    dst = torch.empty(nbytes, dtype=torch.uint8, device=device)
    dst.copy_(src, non_blocking=pinned)
    s = _best(lambda: dst.copy_(src, non_blocking=pinned), repeats, device)
    del src, dst
    # A host-to-device copy crosses the bus once: bytes / s is the link's rate.
    return Bandwidth(f"H2D {'pinned' if pinned else 'pageable'}", nbytes, s, nbytes / s / 1e9, repeats,
                     "bytes crossing the PCIe/NVLink link per second" +
                     ("" if pinned else "; pageable memory is staged through a pinned buffer by CUDA"),
                     kind="h2d_pinned" if pinned else "h2d_pageable")


# -- the rates decode and .to() are judged by (survey) ----------------------------------
READ_BYTES = 512 * 2**20


def last_level_cache_bytes() -> int | None:
    """The largest CPU cache (Linux sysfs), or None: a read buffer must be much larger than it."""
    best = None
    for index in Path("/sys/devices/system/cpu/cpu0/cache").glob("index*"):
        try:
            size = (index / "size").read_text().strip().upper()
        except OSError:
            continue
        m = re.fullmatch(r"(\d+)([KMG]?)", size)
        if m:
            n = int(m.group(1)) * {"": 1, "K": 2**10, "M": 2**20, "G": 2**30}[m.group(2)]
            best = max(best or 0, n)
    return best


def host_read(nbytes: int = READ_BYTES, repeats: int = 5) -> Bandwidth:
    """Streaming read: `buf.sum()` over float32 data already written, bytes read per second."""
    buf = torch.ones(nbytes // 4, dtype=torch.float32)  # written, so every page is real memory
    buf.sum()  # warm-up: the first pass also pays the OpenMP pool's start
    s = _best(buf.sum, repeats, None)
    return Bandwidth("host read", nbytes, s, nbytes / s / 1e9, repeats,
                     f"sum() over {nbytes / 2**20:.0f} MiB of float32 written first, {torch.get_num_threads()} "
                     "threads: bytes read per second (what a decode step does to the weights)", kind="read")


def host_cast(nbytes: int = LIMIT_BYTES, repeats: int = 3, dtype: torch.dtype = torch.bfloat16) -> Bandwidth:
    """What `.to(dtype)` costs on the CPU: float32 in, `dtype` out, into new memory as `.to()` allocates it.
    The rate is float32 bytes converted per second."""
    src = torch.ones(nbytes // 4, dtype=torch.float32)
    src.to(dtype)  # warm-up
    s = _best(lambda: src.to(dtype), repeats, None)
    name = str(dtype).removeprefix("torch.")
    return Bandwidth(f"host cast float32 -> {name}", nbytes, s, nbytes / s / 1e9, repeats,
                     f".to(torch.{name}) of {nbytes / 2**20:.0f} MiB of float32 into new memory: float32 bytes "
                     "converted per second", kind="cast")


def d2h(device: str, pinned: bool, nbytes: int = LIMIT_BYTES, repeats: int = 5) -> Bandwidth:
    """Device-to-host copy speed from a GPU into pinned or pageable RAM (written by the CUDA docs;
    untested on the CPU-only machines the playground is developed on)."""
    src = torch.ones(nbytes, dtype=torch.uint8, device=device)
    dst = torch.empty(nbytes, dtype=torch.uint8, pin_memory=pinned)
    dst.copy_(src, non_blocking=pinned)
    s = _best(lambda: dst.copy_(src, non_blocking=pinned), repeats, device)
    return Bandwidth(f"D2H {'pinned' if pinned else 'pageable'}", nbytes, s, nbytes / s / 1e9, repeats,
                     "bytes crossing the link per second, device to host",
                     kind="d2h_pinned" if pinned else "d2h_pageable")


def device_read(device: str, nbytes: int = READ_BYTES, repeats: int = 5) -> Bandwidth:
    """Streaming read in a GPU's own memory (a reduction), bytes read per second: the decode bound there."""
    buf = torch.ones(nbytes // 4, dtype=torch.float32, device=device)
    buf.sum()
    s = _best(buf.sum, repeats, device)
    return Bandwidth(f"{device} read", nbytes, s, nbytes / s / 1e9, repeats,
                     "sum() over float32 in the device's memory: bytes read per second", kind="read")


_READ: dict[str, Bandwidth] = {}


def read_bandwidth(device: str = "cpu", fresh: bool = False) -> Bandwidth:
    """The decode bound's rate for weights on `device`: the read rate of the memory they live in
    (RAM for cpu and auto on a CPU-only host, the GPU's memory for cuda:N and mps), measured once per
    process unless `fresh`."""
    kind = torch.device(device).type if device != "auto" else ("cuda" if torch.cuda.is_available() else "cpu")
    key = device if kind != "cpu" else "cpu"
    if fresh or key not in _READ:
        _READ[key] = host_read() if kind == "cpu" else device_read("cuda:0" if device == "auto" else device)
    return _READ[key]


def survey(devs: list[devices.DeviceInfo]) -> dict:
    """Every rate a `.to()` or a decode step is judged by, measured now: the host's memcpy, read and
    cast rates; for each available GPU in `devs` (one discovery, by the caller), pinned and pageable
    copies both ways and its read rate. With no GPU, `gpu.reasons` says why (one per kind)."""
    read = read_bandwidth("cpu", fresh=True)
    cpu = dict(memcpy=host_memcpy.__wrapped__().to_dict(), read=read.to_dict(), cast=host_cast().to_dict(),
               threads=torch.get_num_threads(), last_level_cache_bytes=last_level_cache_bytes())
    gpus = []
    for d in devs:
        if d.available and d.kind == "cuda":
            gpus.append(dict(device=d.id, h2d_pinned=h2d(d.id, True).to_dict(), h2d_pageable=h2d(d.id, False).to_dict(),
                             d2h_pinned=d2h(d.id, True).to_dict(), d2h_pageable=d2h(d.id, False).to_dict(),
                             read=read_bandwidth(d.id, fresh=True).to_dict()))
        elif d.available and d.kind == "mps":  # one memory for CPU and GPU: no link to cross, no pinned memory
            gpus.append(dict(device=d.id, read=read_bandwidth(d.id, fresh=True).to_dict()))
    reasons = {d.kind: d.reason for d in devs if d.kind in ("cuda", "mps") and not d.available and d.reason}
    return dict(cpu=cpu, gpu=dict(devices=gpus, reasons=reasons))
