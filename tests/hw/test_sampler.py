"""The memory sampler: it samples at its rate, sees allocations, marks phases, and costs < 1% of a core."""

from __future__ import annotations

import json
import time

import pytest
import torch

from playground.core.i18n import TABLE, W
from playground.hw import memory
from playground.hw.sampler import Sampler
from playground.load import loader
from playground.load.phases import Recorder

MiB = 2**20


@pytest.mark.slow
def test_sees_an_allocation_in_the_phase_it_happened():
    memory.release_memory()  # freed pages an earlier test left in the heap would be reused, not faulted in
    with Sampler(hz=20) as s:
        s.mark("quiet")
        time.sleep(0.3)
        s.mark("alloc")
        x = torch.ones(200 * MiB, dtype=torch.uint8)  # ones: every page really touched
        time.sleep(0.3)
        del x
        s.mark("freed")
        time.sleep(0.2)
    peaks = {p.name: p for p in s.peaks()}
    assert list(peaks) == ["quiet", "alloc", "freed"]
    assert peaks["alloc"].rss_peak - peaks["quiet"].rss_peak > 150 * MiB
    assert peaks["quiet"].rss_peak - peaks["quiet"].rss_start < 50 * MiB
    for p in peaks.values():  # a peak is never below the phase's own boundary readings
        assert p.rss_peak >= max(p.rss_start, p.rss_end)
        assert p.samples >= 2
    # ~20 Hz over ~0.8 s, plus one reading per mark and at start/stop
    assert 10 <= len(s.samples) <= 30, len(s.samples)


def test_boundary_reading_belongs_to_both_phases():
    memory.release_memory()  # freed pages an earlier test left in the heap would be reused, not faulted in
    with Sampler(hz=10) as s:
        s.mark("a")
        x = torch.ones(100 * MiB, dtype=torch.uint8)
        s.mark("b")  # this reading sees x: a's last and b's first
        del x
    a, b = s.peaks()
    assert a.rss_end == b.rss_start
    assert a.rss_peak >= a.rss_start + 80 * MiB


def test_a_boundary_learnt_late_starts_the_phase_at_its_own_time():
    """A generation's first token reaches the pool's loop at the page's pace, tens of ms after it came: the
    decode phase starts at the token's time, and the readings taken in between are the decode's."""
    with Sampler(hz=20) as s:
        t0 = time.perf_counter()
        s.mark("prefill")
        time.sleep(0.02)
        first_token = time.perf_counter()
        time.sleep(0.3)  # the loop sees the token late
        s.mark("decode", at=first_token)
        time.sleep(0.1)
    prefill, decode = s.peaks()
    assert prefill.seconds < 0.06, prefill.seconds  # was the whole 0.32 s before `at`
    assert decode.seconds > 0.35
    late = [x for x in s.samples if x.t > first_token - t0 + 0.01 and x.t < first_token - t0 + 0.29]
    assert late and all(x.phase == "decode" for x in late)


@pytest.mark.slow  # samples for 2 s to measure its own cost
def test_overhead_stays_under_one_percent_of_a_core():
    # While the main thread works (as a load or a generation would), the sampler's own
    # thread CPU time over ~2 s of wall time must stay under 1% of one core.
    a = torch.randn(256, 256)
    with Sampler(hz=20) as s:
        t_end = time.perf_counter() + 2.0
        while time.perf_counter() < t_end:
            a = torch.tanh(a @ a)
    assert 30 <= len(s.samples) <= 50, len(s.samples)  # it did sample at ~20 Hz
    assert s.thread_cpu_seconds > 0  # and measured its own work
    assert s.overhead_percent < 1.0, f"sampler used {s.overhead_percent:.2f}% of a core"
    print(f"\nsampler: {len(s.samples)} samples in {s.wall_seconds:.2f} s, "
          f"{s.thread_cpu_seconds * 1e3:.1f} ms CPU = {s.overhead_percent:.2f}% of one core")


def test_phase_block_rows_and_dict():
    with Sampler(hz=15) as s:
        with s.phase("decode"):
            time.sleep(0.15)
        time.sleep(0.1)
    assert [sp.name for sp in s.spans] == ["decode"]
    assert s.spans[0].end is not None and 0.1 < s.spans[0].end - s.spans[0].start < 1.0
    rows = s.rows()
    series = {r["series"] for r in rows}
    assert {"process RSS", "system available"} <= series
    assert all(r["bytes"] > 0 for r in rows)
    assert [r["t"] for r in rows] == sorted(r["t"] for r in rows)
    d = json.loads(json.dumps(s.to_dict()))  # plain data, ready for a plot or the API
    assert d["peaks"][0]["name"] == "decode" and d["samples"] and d["overhead_percent"] >= 0


def test_stop_twice_and_bad_rate():
    s = Sampler(hz=10).start()
    s.stop()
    n = len(s.samples)
    s.stop()
    assert len(s.samples) == n
    with pytest.raises(ValueError):
        Sampler(hz=0)


def test_a_load_marks_on_the_timeline_the_phases_its_report_lists():
    """One call begins a phase (load.phases.Recorder.phase): its progress line, its mark on the timeline and its
    clock. The timeline's phases are the report's, in the same order, and every line reaches the callback."""
    seen = []
    with Sampler(hz=10) as s:
        rec = Recorder(lambda f, d: seen.append(d), timeline=s)
        lm = loader.load(loader.prepare(*loader.parse("shakespeare-gpt2", "cpu", "float32"), progress=rec))
    assert [sp.name for sp in s.spans] == [p.name for p in lm.report.phases]
    assert [sp.name for sp in s.spans] == ["import", "estimate", "tokenizer", "load", "migrate", "eval"]
    assert all(sp.end is not None for sp in s.spans)  # the last line ended the last phase: what follows is in none
    assert len(seen) == len(s.spans) + 1  # one line per phase, and "loaded"


def test_rewording_the_progress_lines_keeps_a_real_loads_phases(monkeypatch):
    """The phases come from the lines' keys: rewording every progress line, in both languages, drops none."""
    for key in [k for k in TABLE if k.startswith("progress.")]:
        monkeypatch.setitem(TABLE, key, W("(reworded) " + TABLE[key].en, "（改写）" + TABLE[key].zh))
    with Sampler(hz=10) as s:
        loader.load(loader.prepare(*loader.parse("shakespeare-gpt2", "cpu", "float32"), progress=Recorder(timeline=s)))
    assert [sp.name for sp in s.spans] == ["import", "estimate", "tokenizer", "load", "migrate", "eval"]


@pytest.mark.device
def test_timeline_of_a_real_load_agrees_with_the_load_report(figures):
    """The memory sampler records RSS through a load's phases (load, migrate, eval), each phase with its peak,
    and each peak at least what the load report read at the phase's edges."""
    with Sampler(hz=20) as s:
        lm = loader.load(loader.prepare(*loader.parse("shakespeare-gpt2", "cpu", "float32"),
                                        progress=Recorder(timeline=s)))
    rep = lm.report
    peaks = {p.name: p for p in s.peaks()}
    rss = [r for r in s.rows() if r["series"] == "process RSS"]
    figures.update(samples=len(rss), phases=list(peaks), peak_rss=max(p.rss_peak for p in peaks.values()))
    assert len(rss) >= 3
    assert ["load", "migrate", "eval"] == [n for n in peaks if n in ("load", "migrate", "eval")]
    by_report = {p.name: p for p in rep.phases}
    for name in ("load", "migrate"):
        # the sampler's boundary readings come microseconds after the report's snapshots
        assert peaks[name].rss_peak >= by_report[name].rss_after - MiB
        assert peaks[name].rss_peak >= by_report[name].rss_before - MiB


@pytest.mark.device(kinds=("cuda",))
def test_the_timelines_vram_lines_rise_through_a_load_by_the_weights(device, pool, figures):
    """The memory timeline's VRAM lines (torch allocated, NVML used) rise through a load to the GPU by about
    the weights' bytes."""
    r = pool.load(*loader.parse("shakespeare-gpt2", device, "float32"))
    rows, _ = pool.timeline()
    alloc = [x["bytes"] for x in rows if x["series"] == f"{device} torch allocated"]
    nvml = [x["bytes"] for x in rows if x["series"] == f"{device} NVML used"]
    rise = max(alloc, default=0) - min(alloc, default=0)
    figures.update(samples=len(alloc), allocated_rise=rise, weights_bytes=r.weights_bytes,
                   nvml_rise=(max(nvml) - min(nvml)) if nvml else None)
    assert len(alloc) >= 3
    assert rise >= 0.9 * r.weights_bytes


def test_a_reading_appended_after_a_late_mark_takes_the_phase_its_time_falls_in(monkeypatch):
    """A busy machine: the thread took a reading in prefill's time, was descheduled, and a mark with `at` moved the
    boundary back before the reading; the reading, appended after the relabelling, is the decode's all the same."""
    with Sampler(hz=1) as s:  # a reading a second: the readings in these few ms are the test's
        t0 = s.started
        s.mark("prefill")
        time.sleep(0.01)
        first_token = time.perf_counter()
        time.sleep(0.01)
        taken = s._sample()  # read while prefill was still the phase
        assert taken.phase == "prefill"
        s.mark("decode", at=first_token)
        monkeypatch.setattr(s, "_sample", lambda: taken)
        s._read()  # appended only now
        monkeypatch.undo()
    assert taken.t > first_token - t0 and taken.phase == "decode"


def test_a_reading_whose_phase_was_read_after_later_marks_takes_the_phase_its_time_falls_in(monkeypatch):
    """A busy machine: the thread read the clock in migrate, then the load ended migrate and marked eval before the
    thread read which phase was running. The reading is migrate's: the timeline draws migrate once, then eval."""
    with Sampler(hz=1) as s:  # a reading a second: the readings in these few ms are the test's
        s.mark("migrate")
        time.sleep(0.005)
        read, moved_on = s._ram.read, []

        def slow_read():  # while the thread takes its reading, the load moves on
            if not moved_on:
                moved_on.append(True)
                s.end_phase()
                s.mark("eval")
            return read()

        monkeypatch.setattr(s._ram, "read", slow_read)
        s._read()
        monkeypatch.undo()
        time.sleep(0.005)
        s.end_phase()
    phases = [r["phase"] for r in s.rows() if r["series"] == "process RSS"]  # in time order, as the timeline draws
    runs = [p for i, p in enumerate(phases) if p and (i == 0 or p != phases[i - 1])]
    assert runs == ["migrate", "eval"], phases
