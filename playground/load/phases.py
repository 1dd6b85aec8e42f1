"""A load's timed phases: each one's seconds on `time.perf_counter()` (the device synchronised on both sides
when asked) and the memory read before and after it (RSS, available RAM, each GPU)."""

from __future__ import annotations

import time
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from typing import Iterator

from playground.core.i18n import Said
from playground.hw import devices, memory


@dataclass
class PhaseReport:
    name: str  # "import", "estimate", "download" (Hub), "build" (synthetic), "tokenizer", "unload", "load", ...
    seconds: float
    rss_before: int
    rss_after: int
    available_before: int
    available_after: int
    vram_before: list[dict] = field(default_factory=list)
    vram_after: list[dict] = field(default_factory=list)
    note: Said | None = None
    bytes: int | None = None  # the download phase: bytes fetched (0 from the cache)


@contextmanager
def timed(name: str, into: list[PhaseReport] | None = None, note: Said | None = None,
          sync: str | None = None) -> Iterator[PhaseReport]:
    """Time the block as the phase `name`: memory read, the clock started; at its end the clock stopped,
    memory read. `sync`: a device whose queued work is waited for before each clock reading (a GPU runs
    asynchronously). Yields the report, complete (and added to `into`) once the block ends without raising."""
    before = memory.snapshot()
    report = phase(name, 0.0, before, before, note)
    if sync is not None:
        devices.sync(sync)
    t0 = time.perf_counter()
    yield report
    if sync is not None:
        devices.sync(sync)
    report.seconds = time.perf_counter() - t0
    after = memory.snapshot()
    report.rss_after, report.available_after = after.rss, after.available
    report.vram_after = [asdict(g) for g in after.gpus]
    if into is not None:
        into.append(report)


def phase(name: str, seconds: float, before: memory.MemorySnapshot, after: memory.MemorySnapshot,
          note: Said | None = None) -> PhaseReport:
    return PhaseReport(
        name=name, seconds=seconds, rss_before=before.rss, rss_after=after.rss,
        available_before=before.available, available_after=after.available,
        vram_before=[asdict(g) for g in before.gpus], vram_after=[asdict(g) for g in after.gpus], note=note,
    )
