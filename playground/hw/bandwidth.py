"""Copy bandwidth: what this machine's memory and its GPU link can move, measured.

The reference speeds a migration or a decode step is compared with. Conventions:
- traffic = bytes read + bytes written: a same-dtype copy of N bytes moves 2N.
- the host limit is a large memcpy (`dst.copy_(src)` of 256 MiB, destination
  already touched, best of a few); a copy into fresh memory (`clone()`) is
  measured too, because the kernel must map and zero every new page first and
  every allocating `.to()` pays that.
- for a GPU: host-to-device copies from pinned (page-locked) and pageable memory.
  `model.to("cuda")` copies from pageable memory, which CUDA stages through a
  pinned bounce buffer: pageable is the fair comparison, pinned the ceiling.
- every clock read follows `devices.sync`: CUDA and MPS copies are asynchronous.
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass
from functools import lru_cache

import torch

from playground.hw import devices

LIMIT_BYTES = 256 * 2**20


@dataclass
class Bandwidth:
    name: str  # "host memcpy", "host clone (fresh pages)", "H2D pinned", "H2D pageable"
    bytes: int  # size of the copy
    seconds: float  # best of `repeats`
    gbps: float  # traffic (read + written) / seconds, in GB/s (10^9)
    repeats: int
    note: str = ""

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
                     f"{torch.get_num_threads()} threads: read + written bytes per second")


@lru_cache(maxsize=4)
def host_clone(nbytes: int = LIMIT_BYTES, repeats: int = 3) -> Bandwidth:
    """A copy into freshly allocated memory, as every allocating .to() does (page faults included)."""
    src = torch.ones(nbytes, dtype=torch.uint8)

    def clone():
        src.clone()  # allocated, faulted in, written, then freed

    s = _best(clone, repeats, None)
    del src
    return Bandwidth("host clone (fresh pages)", nbytes, s, 2 * nbytes / s / 1e9, repeats,
                     "clone() into new memory: the kernel zeroes and maps every page first")


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
                     ("" if pinned else "; pageable memory is staged through a pinned buffer by CUDA"))


def device_memcpy(device: str, nbytes: int = LIMIT_BYTES, repeats: int = 5) -> Bandwidth:
    """A copy inside one GPU's memory (read + written bytes per second): the ceiling for decode
    on that GPU. Written by the CUDA docs; untested on the CPU-only development machines."""
    src = torch.ones(nbytes, dtype=torch.uint8, device=device)
    dst = torch.zeros(nbytes, dtype=torch.uint8, device=device)
    dst.copy_(src)
    s = _best(lambda: dst.copy_(src), repeats, device)
    del src, dst
    return Bandwidth(f"{device} memcpy", nbytes, s, 2 * nbytes / s / 1e9, repeats,
                     "device-to-device copy_: read + written bytes per second in the GPU's memory")


def limits(device: str = "cpu") -> list[Bandwidth]:
    """The reference speeds for a migration to `device` (measured, cached per process for the host)."""
    out = [host_memcpy(), host_clone()]
    kind = torch.device(device).type if device != "auto" else "cpu"
    if kind == "cuda" and torch.cuda.is_available():
        out += [h2d(device, pinned=True), h2d(device, pinned=False)]
    return out


_DEVICE_BW: dict[str, Bandwidth] = {}


def memory_bandwidth(device: str = "cpu") -> Bandwidth:
    """The figure decode tokens/s is compared with: a memcpy in the memory the weights live in
    (RAM for cpu, the GPU's own memory for cuda:N), measured once per process."""
    kind = torch.device(device).type if device != "auto" else "cpu"
    if kind == "cuda":
        if device not in _DEVICE_BW:
            _DEVICE_BW[device] = device_memcpy(device)
        return _DEVICE_BW[device]
    return host_memcpy()  # mps shares RAM; auto on a CPU-only box is the CPU
