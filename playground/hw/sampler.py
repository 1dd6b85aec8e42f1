"""Memory timeline: a background sampler that watches memory move through the phases.

`Sampler` (a context manager) reads RSS, available RAM and each GPU's memory 10-20 times a second
while the work runs. The caller marks phases (`mark("load")`, `with s.phase("decode")`); every mark
and the stop also take a reading, so `peaks()` gives each phase's peak, at least its before/after
readings. The sampler's own cost is measured (`overhead_percent`). See docs/hardware.md.
"""

from __future__ import annotations

import os
import threading
import time
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from typing import Iterator

import psutil

from playground.core.i18n import as_text
from playground.hw import memory


@dataclass
class GpuSample:
    index: int
    nvml_used: int | None
    allocated: int
    reserved: int


@dataclass
class Sample:
    t: float  # seconds since the sampler started
    phase: str  # the phase marked when the sample was taken ("" before the first mark)
    rss: int
    available: int
    gpus: list[GpuSample] = field(default_factory=list)


@dataclass
class PhaseSpan:
    name: str
    start: float  # seconds since the sampler started
    end: float | None = None


@dataclass
class PhasePeak:
    name: str
    seconds: float
    samples: int
    rss_start: int
    rss_end: int
    rss_peak: int
    available_min: int
    gpu_peaks: list[dict] = field(default_factory=list)  # per GPU: nvml_used/allocated/reserved peaks

    def to_dict(self) -> dict:
        return asdict(self)


class Sampler:
    """Sample memory in a background thread; use as a context manager.

        with Sampler(hz=15) as s:
            s.mark("load"); ...
            s.mark("migrate"); ...
        s.peaks(), s.rows(), s.overhead_percent
    """

    def __init__(self, hz: float = 15.0, gpus: bool = True) -> None:
        if not 1 <= hz <= 100:
            raise ValueError("hz must be between 1 and 100")
        self.period = 1.0 / hz
        self.hz = hz
        self.with_gpus = gpus
        self.samples: list[Sample] = []
        self.spans: list[PhaseSpan] = []
        self.gpu_reason = None  # a Said: why there are no GPU readings
        self.thread_cpu_seconds = 0.0  # CPU time spent by the sampler thread itself
        self.wall_seconds = 0.0
        self._ram = _RamReader()
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._t0 = 0.0
        self._phase = ""

    @property
    def started(self) -> float:
        """The perf_counter reading every sample's `t` counts from (0 before `start`)."""
        return self._t0

    # -- lifecycle ---------------------------------------------------------
    def start(self) -> "Sampler":
        """Take the first reading and start the thread."""
        if self._thread is not None:
            raise RuntimeError("sampler already started")
        self._t0 = time.perf_counter()
        self._read()
        self._thread = threading.Thread(target=self._run, name="memory-sampler", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._thread is None or self._stop.is_set():
            return
        self._stop.set()
        self._thread.join()
        sample = self._sample()  # the final reading: the 'after' of the last phase
        with self._lock:
            self.samples.append(sample)
            if self.spans and self.spans[-1].end is None:
                self.spans[-1].end = sample.t
        self.wall_seconds = sample.t
        self._ram.close()

    def __enter__(self) -> "Sampler":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    # -- phases ------------------------------------------------------------
    def mark(self, phase: str, at: float | None = None) -> None:
        """Start `phase` now, ending the previous one. The reading taken here belongs to both:
        it is the previous phase's last and this phase's first. `at` (a `time.perf_counter()` reading
        already past) starts it then instead: a boundary learnt late, as a generation's first token is by
        a consumer that wakes at the page's pace; the readings taken since move to the new phase."""
        sample = self._sample()
        with self._lock:
            start = sample.t
            if at is not None:
                floor = self.spans[-1].start if self.spans else 0.0
                start = min(max(at - self._t0, floor), sample.t)
                for earlier in self.samples:
                    if earlier.t > start:
                        earlier.phase = phase
            if self.spans and self.spans[-1].end is None:
                self.spans[-1].end = start
            self.spans.append(PhaseSpan(phase, start))
            self._phase = sample.phase = phase
            self.samples.append(sample)

    def end_phase(self) -> None:
        """End the phase running now (its last reading taken here); what follows is in no phase."""
        sample = self._sample()
        with self._lock:
            self.samples.append(sample)
            if self.spans and self.spans[-1].end is None:
                self.spans[-1].end = sample.t
            self._phase = ""

    @contextmanager
    def phase(self, name: str) -> Iterator["Sampler"]:
        """Mark `name` for the duration of the block, then go back to no phase."""
        self.mark(name)
        try:
            yield self
        finally:
            self.end_phase()

    # -- the thread --------------------------------------------------------
    def _now(self) -> float:
        return time.perf_counter() - self._t0

    def _run(self) -> None:
        cpu0 = time.thread_time()
        # Event.wait sleeps without holding the GIL; a set event wakes it at once.
        while not self._stop.wait(self.period):
            self._read()
            self.thread_cpu_seconds = time.thread_time() - cpu0
        self.thread_cpu_seconds = time.thread_time() - cpu0

    def _sample(self) -> Sample:
        t = self._now()
        rss, avail = self._ram.read()
        gpus: list[GpuSample] = []
        if self.with_gpus:
            readings, reason = memory.gpu_readings()
            self.gpu_reason = reason
            gpus = [GpuSample(r.index, r.nvml_used, r.allocated, r.reserved) for r in readings]
        return Sample(t, self._phase, rss, avail, gpus)

    def _read(self) -> None:
        sample = self._sample()
        with self._lock:
            # marks may have come while the reading was taken or before this lock (the thread descheduled on a
            # busy machine): `_phase` was read after the clock, so it can name a later phase. The reading is the
            # phase its time falls in (CI drew a short 'migrate' twice, an 'eval'-labelled reading between them).
            sample.phase = self._phase_at(sample.t)
            self.samples.append(sample)

    def _phase_at(self, t: float) -> str:
        """The phase running at `t`: the last span started by then, if it had not ended; "" otherwise."""
        for span in reversed(self.spans):
            if span.start <= t:
                return span.name if span.end is None or t <= span.end else ""
        return ""

    # -- results -----------------------------------------------------------
    @property
    def overhead_percent(self) -> float:
        """The sampler thread's CPU time as a share of one core over the wall time sampled."""
        wall = self.wall_seconds or self._now()
        return 100.0 * self.thread_cpu_seconds / wall if wall > 0 else 0.0

    def peaks(self) -> list[PhasePeak]:
        """Each marked phase's start, end and peak readings."""
        with self._lock:
            spans = list(self.spans)
            samples = sorted(self.samples, key=lambda x: x.t)  # the thread and mark() both append
        out = []
        end_default = samples[-1].t if samples else 0.0
        for span in spans:
            end = span.end if span.end is not None else end_default
            inside = [s for s in samples if span.start <= s.t <= end]
            if not inside:
                continue
            gpu_peaks = []
            for idx in sorted({g.index for s in inside for g in s.gpus}):
                gs = [g for s in inside for g in s.gpus if g.index == idx]
                used = [g.nvml_used for g in gs if g.nvml_used is not None]
                gpu_peaks.append(dict(index=idx, nvml_used=max(used) if used else None,
                                      allocated=max(g.allocated for g in gs), reserved=max(g.reserved for g in gs)))
            out.append(PhasePeak(
                name=span.name, seconds=end - span.start, samples=len(inside),
                rss_start=inside[0].rss, rss_end=inside[-1].rss, rss_peak=max(s.rss for s in inside),
                available_min=min(s.available for s in inside), gpu_peaks=gpu_peaks,
            ))
        return out

    def rows(self) -> list[dict]:
        """Long-format rows for a line plot: one row per (sample, series)."""
        with self._lock:
            samples = sorted(self.samples, key=lambda x: x.t)  # the thread and mark() both append
        out = []
        for s in samples:
            out.append(dict(t=s.t, phase=s.phase, series="process RSS", bytes=s.rss))
            out.append(dict(t=s.t, phase=s.phase, series="system available", bytes=s.available))
            for g in s.gpus:
                if g.nvml_used is not None:
                    out.append(dict(t=s.t, phase=s.phase, series=f"cuda:{g.index} NVML used", bytes=g.nvml_used))
                out.append(dict(t=s.t, phase=s.phase, series=f"cuda:{g.index} torch allocated", bytes=g.allocated))
                out.append(dict(t=s.t, phase=s.phase, series=f"cuda:{g.index} torch reserved", bytes=g.reserved))
        return out

    def to_dict(self) -> dict:
        with self._lock:
            samples = [asdict(s) for s in sorted(self.samples, key=lambda x: x.t)]
            spans = [asdict(p) for p in self.spans]
        return dict(
            hz=self.hz, wall_seconds=self.wall_seconds or self._now(),
            thread_cpu_seconds=self.thread_cpu_seconds, overhead_percent=self.overhead_percent,
            gpu_reason=as_text(self.gpu_reason), samples=samples, phases=spans,
            peaks=[p.to_dict() for p in self.peaks()],
        )


class _RamReader:
    """(RSS, available) in bytes: /proc via pread on Linux, psutil elsewhere."""

    def __init__(self) -> None:
        self._proc: psutil.Process | None = None  # only where /proc cannot be read
        self._fds: tuple[int, int] | None = None
        try:
            self._fds = (os.open("/proc/self/statm", os.O_RDONLY), os.open("/proc/meminfo", os.O_RDONLY))
            self.read()
        except (OSError, ValueError, AttributeError):
            self.close()

    def read(self) -> tuple[int, int]:
        if self._fds is None:
            self._proc = self._proc or psutil.Process(os.getpid())
            return self._proc.memory_info().rss, psutil.virtual_memory().available
        statm, meminfo = self._fds  # held open: pread on them skips the open() per sample
        return memory.statm_rss(os.pread(statm, 256, 0)), memory.meminfo_available(os.pread(meminfo, 16384, 0))

    def close(self) -> None:
        if self._fds is not None:
            for fd in self._fds:
                try:
                    os.close(fd)
                except OSError:
                    pass
        self._fds = None
