"""A load's timed phases: each one's seconds on `time.perf_counter()` (the device synchronised on both sides
when asked) and the memory read before and after it (RSS, available RAM, each GPU).

`Recorder.phase(name, at, line)` begins a phase in one call: its progress line (what the page shows while it
runs), its mark on the memory timeline, its clock and its memory readings; the report lists the phases in the
order they ran. A new phase is one `with recorder.phase(...)` in the loader and its words (progress line, name)
in the word tables."""

from __future__ import annotations

import time
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from typing import Callable, Iterator

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


Progress = Callable[[float, str], None]

# Every phase a load can record, in the order they can run (a Hub model's download, a GPU's CUDA context, a
# synthetic model's build, an unload and an int8 or int4 load's quantization run only when they must). The word
# tables name each (`phase.name.<name>`, `report.<name>`), and the timeline colours each (web/views_timeline.py).
LOAD_PHASES = ("download", "import", "context", "estimate", "build", "tokenizer", "unload", "load", "migrate",
               "quantize", "eval")


class Recorder:
    """A load's phases, in the order they ran (`phases`), each begun by `phase`. `progress(fraction, line)` is
    told each line (the page's progress bar, the CLI's log); `timeline` (a `hw.sampler.Sampler`, or None) gets
    a mark at each phase's start, so the memory timeline and the report name the same phases."""

    def __init__(self, progress: Progress | None = None, timeline=None) -> None:
        self.progress: Progress = progress or (lambda frac, line: None)
        self.timeline = timeline
        self.phases: list[PhaseReport] = []

    @contextmanager
    def phase(self, name: str, at: float, line: str, note: Said | None = None,
              sync: str | None = None) -> Iterator[PhaseReport]:
        """The block is the phase `name` (one of LOAD_PHASES): `line` said at fraction `at`, the timeline marked,
        then timed."""
        self.begin(name, at, line)
        with timed(name, self.phases, note, sync) as report:
            yield report

    def begin(self, name: str, at: float, line: str) -> None:
        """Say `line` and mark `name` on the timeline, for a phase whose report is made by hand (`add`)."""
        if name not in LOAD_PHASES:
            raise ValueError(f"{name!r} is not one of the load's phases {LOAD_PHASES}: name it there first")
        self.progress(at, line)
        if self.timeline is not None:
            self.timeline.mark(name)

    def say(self, at: float, line: str) -> None:
        """A line within the phase running now (a download's bytes, a build's steps): no new phase."""
        self.progress(at, line)

    def add(self, report: PhaseReport) -> PhaseReport:
        self.phases.append(report)
        return report

    def done(self, line: str) -> None:
        """The last phase ends: `line` said at 1.0, and what follows (the report, the ledger) is in no phase."""
        self.progress(1.0, line)
        if self.timeline is not None:
            self.timeline.end_phase()


def recorder(progress: "Progress | Recorder | None") -> Recorder:
    """`progress` as a Recorder: itself, or a new one that tells it each line."""
    return progress if isinstance(progress, Recorder) else Recorder(progress)
