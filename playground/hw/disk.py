"""The disk under offloaded weights: the page cache, the bytes this process reads from storage, a cold read rate.

`evict(paths)` asks the kernel to drop files from the page cache (`posix_fadvise(..., DONTNEED)`: no
root needed; a page some process still maps is kept). `io()` reads this process's counters: bytes
fetched from the storage layer (`read_bytes`: a page-cache hit does not count) and page faults (a
major fault waited for the disk). `read_rate(ranges)` evicts byte ranges, reads them back with plain
`pread` and times it: the rate this disk serves those very bytes cold. See docs/placement.md.
"""

from __future__ import annotations

import os
import resource
import time
from dataclasses import asdict, dataclass

import psutil

CHUNK = 8 * 2**20  # pread size for the read-rate measurement


def can_evict() -> bool:
    """Is there a page cache to drop files from with posix_fadvise (Linux and most Unixes; not macOS)?"""
    return hasattr(os, "posix_fadvise")


def evict(paths: list[str] | set[str]) -> float:
    """Drop the files from the page cache; the seconds it took (mapped pages stay: the kernel keeps them)."""
    t0 = time.perf_counter()
    for path in paths:
        fd = os.open(path, os.O_RDONLY)
        try:
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        finally:
            os.close(fd)
    return time.perf_counter() - t0


@dataclass(frozen=True)
class IoCounters:
    read_bytes: int | None  # fetched from storage by this process (None where the OS does not say)
    minor_faults: int  # page faults served from memory (the page cache included)
    major_faults: int  # page faults that waited for the disk

    def __sub__(self, other: IoCounters) -> IoCounters:
        rb = None if self.read_bytes is None or other.read_bytes is None else self.read_bytes - other.read_bytes
        return IoCounters(rb, self.minor_faults - other.minor_faults, self.major_faults - other.major_faults)


def io() -> IoCounters:
    """This process's counters now (every thread's: psutil reads /proc/self/io; getrusage the whole process)."""
    try:
        rb = psutil.Process().io_counters().read_bytes
    except (AttributeError, psutil.Error, OSError):
        rb = None
    ru = resource.getrusage(resource.RUSAGE_SELF)
    return IoCounters(rb, ru.ru_minflt, ru.ru_majflt)


@dataclass
class DiskRate:
    requested_bytes: int  # the bytes asked for
    read_bytes: int | None  # what the storage layer delivered for them (readahead may add a little)
    seconds: float
    gbps: float | None  # read_bytes / seconds; None when nothing came from the disk

    @property
    def cached_bytes(self) -> int | None:
        """Requested bytes the page cache kept through the eviction (a mapping holds them)."""
        return None if self.read_bytes is None else max(0, self.requested_bytes - self.read_bytes)

    def to_dict(self) -> dict:
        return dict(asdict(self), cached_bytes=self.cached_bytes)


def read_rate(ranges: list[tuple[str, int, int]]) -> DiskRate:
    """Evict the files, then read each (path, offset, length) range with pread: the disk's rate for these bytes."""
    evict({p for p, _, _ in ranges})
    requested = sum(n for _, _, n in ranges)
    before = io()
    t0 = time.perf_counter()
    for path, offset, length in ranges:
        fd = os.open(path, os.O_RDONLY)
        try:
            done = 0
            while done < length:
                got = os.pread(fd, min(CHUNK, length - done), offset + done)
                if not got:
                    break
                done += len(got)
        finally:
            os.close(fd)
    seconds = time.perf_counter() - t0
    read = (io() - before).read_bytes
    gbps = read / seconds / 1e9 if read and seconds > 0 else None
    return DiskRate(requested, read, seconds, gbps)

