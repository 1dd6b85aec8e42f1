"""The pool of loaded models: each (model, device, dtype, placement) loaded once, shared by whoever asks for it.

`POOL` holds the models; each session (a page's `session_hash`, a `gradio_client.Client`, the CLI)
holds the key of its own, and the page, the API and the CLI pass their session to its methods
(`load`, `generate`, `held`, `stop`, `release`). The models' RAM stays within the memory guard's
figure: a load that does not fit unloads the caller's own model, then the least recently used ones
(none is in use: only the run holding the lane unloads), and their sessions are told on their next
action. Every run takes the one lane, so no measurement shares the machine with another. A model
no session holds is unloaded. Why each rule: docs/serving.md.
"""

from __future__ import annotations

import threading
import time
from contextlib import contextmanager
from dataclasses import asdict, replace
from typing import Iterator

import torch

from playground.core import threads
from playground.core.errors import UserError
from playground.core.inputs import GenerationParams, Placement
from playground.hw import busy, ledger, memory
from playground.hw.devices import DeviceInfo, Dtype, dtype_name
from playground.hw.sampler import Sampler
from playground.load import estimate, loader, placement as placing
from playground.load.catalog import ModelSource
from playground.load.phases import Recorder
from playground.run import accounting, compiled, decode, generation
from playground.run.holds import Entry, Gone, Hold, Key, load_back, ram_of

IDLE_SECONDS = 3600.0  # a hold untouched this long goes (a session that ended without a goodbye: no heartbeat)


class ModelPool:
    def __init__(self, idle_seconds: float = IDLE_SECONDS) -> None:
        self._lane = threading.Lock()  # one run at a time; a plain Lock (docs/serving.md says why)
        self._table = threading.Lock()  # the dicts below, for readers that never wait for the lane
        self._entries: dict[Key, Entry] = {}
        self._holds: dict[str, Hold] = {}
        self._stops: dict[str, threading.Event] = {}  # one stop event per running run, by session
        self._closing = threading.Event()  # set once, at shutdown: nothing new starts
        self._sweep = False  # a hold went while the lane was busy: unload what nobody holds when it frees
        self.idle_seconds = idle_seconds
        # holds whose model was unloaded for another's, and how each ended: told on the session's next
        # action, dropped with its session before that; the rest are pending
        self.counts = {"evictions": 0, "told": 0, "dropped": 0}

    # -- reading, without waiting --------------------------------------------
    def status(self, session: str = "") -> dict:
        """The banner's facts: this session's model (or why it has none), and how many models the process
        holds for how many visitors. Never waits for the lane: the banner asks every few seconds."""
        with self._table:
            hold = self._touch(session)
            entry = self._entries.get(hold.key) if hold and hold.key else None
            # visitors: sessions holding a loaded model ("" is the server's own: the CLI, ZeroGPU's start-up load)
            out = {"loaded": entry is not None and entry.loaded is not None, "models": len(self._entries),
                   "visitors": len({s for s, h in self._holds.items() if s and h.key in self._entries}),
                   "bytes": sum(e.ram for e in self._entries.values()), **self.counts,
                   "pending": sum(1 for h in self._holds.values() if h.gone and not h.gone.told)}
            if out["loaded"]:
                r = entry.loaded.report
                out.update(model=r.model, device=r.device, dtype=r.dtype, label=r.label, became=r.location.became,
                           ram=entry.ram, offloaded=r.location.offloaded_bytes)
            elif hold and hold.gone:
                out["gone"] = asdict(hold.gone)
        return out

    def others(self, session: str | None = None) -> list[dict]:
        """The models loaded for other sessions than this one's: model, device, dtype, bytes (RAM), visitors.
        Their part of the process's memory (what a memory ledger shows as other visitors')."""
        with self._table:
            hold = self._holds.get(session)
            mine = hold.key if hold else None
            return [dict(model=e.loaded.report.model, device=e.key.device, dtype=e.loaded.report.dtype, bytes=e.ram,
                         copied=max(e.ram - (e.loaded.report.file_backed_bytes or 0), 0), visitors=len(self._holders(k)))
                    for k, e in self._entries.items() if k != mine and e.loaded is not None]

    def current(self, session: str = "") -> tuple[loader.LoadReport, ModelSource] | None:
        """This session's model: its report and source (None when it has none)."""
        entry = self._mine(session)
        lm = entry.loaded if entry is not None else None
        return (lm.report, entry.key.source) if lm is not None else None

    def prompt_and_context(self, session: str, prompt: str,
                           chat_template: bool = True) -> tuple[int | None, int | None]:
        """(prompt tokens, context length) of this session's model: what `prompt` leaves for new tokens."""
        entry = self._mine(session)
        lm = entry.loaded if entry is not None else None
        return generation.prompt_and_context(lm.tokenizer, lm.model, prompt, chat_template) if lm else (None, None)

    def busy(self) -> bool:
        """Is a run (a load, a generation, a lab run, a comparison) holding the lane right now?"""
        return self._lane.locked()

    def running(self) -> int:
        """Runs that can be stopped right now (generations and comparisons)."""
        return len(self._stops)

    def timeline(self, session: str = "") -> tuple[list[dict], list[dict]]:
        """(rows, peaks) of this session's model's load, then its last generation (`Hold.timeline`)."""
        hold = self._holds.get(session)
        return hold.timeline() if hold else ([], [])

    # -- the lane ---------------------------------------------------------------
    @contextmanager
    def exclusive(self) -> Iterator[None]:
        """Hold the lane for a run that uses none of the pool's models (Compare's own loads)."""
        self._refuse_if_closing()
        self._lane.acquire()
        try:
            yield
        finally:
            self._leave_lane()

    @contextmanager
    def held(self, session: str = "") -> Iterator[loader.LoadedModel | None]:
        """Hold the lane with this session's model in use (a lab run copies it, Inspect walks it, the Speed
        tab measures it, a generation streams from it). Only a run holding the lane unloads a model, so a
        model in use is never unloaded. Yields None when the session never loaded one; raises, saying so,
        when its model was unloaded for another session's: nothing runs on another model in its place."""
        with self.exclusive():
            entry = self._own(session)
            try:
                yield entry.loaded if entry is not None else None
            finally:
                if entry is not None:
                    entry.last_used = time.monotonic()

    def _leave_lane(self) -> None:
        # A hold released while the lane was busy left `_sweep` set: whoever frees the lane unloads what no
        # session holds. Checked again after the release, so a flag set meanwhile is never left behind.
        while True:
            try:
                if self._sweep:
                    self._sweep = False
                    self._unload_unheld()
            finally:
                self._lane.release()
            if not self._sweep or not self._lane.acquire(blocking=False):
                return

    # -- loading ------------------------------------------------------------
    def load(self, src: ModelSource, dev: DeviceInfo, dtype: Dtype, progress: loader.Progress | None = None,
             session: str = "", placement: Placement | None = None) -> loader.LoadReport:
        """This session's model becomes (src, dev, dtype, placement). Held by another session already: it is
        shared, not loaded again (the report measured when it was loaded, `shared` saying by how many). Else
        it is loaded now, the session's own model freed first (and loaded back if the load fails after)."""
        key = Key(src, dev.id, dtype_name(dtype), placement)
        with self.exclusive():
            self._expire_idle()
            entry = self._entries.get(key)
            others = self._holders(key) - {session}
            if entry is not None and others:
                self._hold(session, key, entry.timeline)
                report = replace(entry.loaded.report, shared=len(others))
            else:
                report = self._load_new(key, (src, dev, dtype, placement), progress, session)
            gone = self._holds[session].gone
            self._holds[session].gone = None
            if gone is not None and not gone.told:  # its model before this one went for another's: said here
                self.counts["told"] += 1
                report = replace(report, evicted_before=dict(model=gone.model, device=gone.device, dtype=gone.dtype))
            return report

    def _load_new(self, key: Key, spec: tuple, progress, session: str) -> loader.LoadReport:
        # the caller holds the lane
        hold = self._holds.get(session)
        own = self._entries.get(hold.key) if hold and hold.key and self._holders(hold.key) == {session} else None
        # What may be unloaded to make room: the session's own model first (a single visitor's load frees
        # it before loading, as a script's would), then the others, least recently used first. None is in
        # use: a model is used only by the run holding the lane, and this load holds it.
        others = sorted((e for e in self._entries.values() if e is not own), key=lambda e: e.last_used)
        candidates = ([own] if own else []) + others
        sampler = Sampler(hz=15)
        with sampler:
            def say(frac: float, line: str) -> None:
                self._refuse_if_closing()  # a shutdown ends a build or a load at its next step
                if progress is not None:
                    progress(frac, line)

            rec = Recorder(say, timeline=sampler)  # each phase: its line, its mark on the timeline, its clock

            def work() -> tuple[loader.LoadedModel, tuple, UserError | None]:
                # `own` and the candidates are entries: unloading one drops its model from it, so the names
                # here keep nothing alive
                plan, evicted = self._fit(spec, rec, candidates, first=1 if own else 0)
                # the models freed to make room: the load's "unload" phase, timed, its memory read around it
                names = ", ".join(e.loaded.report.model for e in evicted) or None
                loader.unload(plan, lambda: [self._unload(e, by=session) for e in evicted], previous=names)
                plan.others_copied = sum(o["copied"] for o in self.others(None))  # every model held, the new one aside
                try:
                    return loader.load(plan), spec, None
                except Exception as e:  # from_pretrained's errors, and any other (an OOM in .to(device))
                    if own is None or self._closing.is_set():
                        raise
                    return load_back(own.spec, e)

            try:
                lm, loaded_spec, failed = threads.run(work, name="load")  # a thread that ends with it (core.threads)
            except BaseException:
                if own is not None and own.key not in self._entries:
                    self._holds[session].key = None  # freed, and nothing came back: the error says so
                raise
        new_key = Key(loaded_spec[0], loaded_spec[1].id, dtype_name(loaded_spec[2]), loaded_spec[3])
        copied = sum(o["copied"] for o in self.others(None))  # the other models, copied weights (the new one not in yet)
        report = replace(lm.report, loaded_at=time.time(), ledger=ledger.add_others(lm.report.ledger, copied))
        lm.report = report
        entry = Entry(new_key, loaded_spec, lm, sampler, time.monotonic(), ram_of(lm))
        with self._table:
            self._entries[new_key] = entry
        self._hold(session, new_key, sampler)
        if failed is not None:
            raise failed
        return report

    def _fit(self, spec: tuple, rec: Recorder, candidates: list[Entry], first: int) -> tuple[loader.Plan, list[Entry]]:
        """The checks (loader.prepare) with the fewest candidates unloaded that let the memory guard pass:
        the budget covers the models loaded, the ones to unload count as available."""
        src, dev, dtype, placement = spec
        resident = sum(e.ram for e in self._entries.values())
        for n in range(first, len(candidates) + 1):
            rec.phases.clear()  # a check refused with fewer unloaded is made again: its phases are the new try's
            try:
                plan = loader.prepare(src, dev, dtype, rec, reclaimable=sum(e.ram for e in candidates[:n]),
                                      placement=placement, resident=resident)
                return plan, candidates[:n]
            except estimate.DoesNotFit:  # raised by the guard, before anything was allocated
                if n >= len(candidates):
                    raise
        raise AssertionError("unreachable")

    def _hold(self, session: str, key: Key, timeline: Sampler) -> None:
        # the caller holds the lane: the session's model becomes `key`; the one it held, if nobody else
        # does, is unloaded
        with self._table:
            hold = self._holds.setdefault(session, Hold())
            before, hold.key = hold.key, key
            hold.load_timeline, hold.gen_timeline, hold.seen = timeline, None, time.monotonic()
        if before is not None and before != key and not self._holders(before) and before in self._entries:
            self._unload(self._entries[before])

    # -- generating ---------------------------------------------------------
    def generate(self, prompt: str, params: GenerationParams, session: str = "",
                 engine: str = "generate") -> Iterator[tuple[str, generation.GenerationStats]]:
        """Stream (text, stats) from this session's model, with `engine` (decode.check_engine's)."""
        self._refuse_if_closing()
        if session not in self._holds:
            raise UserError.of("err.not_loaded")
        with self.session(session) as stop, self.held(session) as lm:
            if self._closing.is_set():
                stop.set()  # a shutdown began while this run waited for the lane: it ends at once
            if lm is None:
                raise UserError.of("err.not_loaded")
            made_by = dict(model=lm.report.model, device=lm.report.device, dtype=lm.report.dtype)
            meter = accounting.Meter(lm, others=self.others(session))  # the generation's ledger, read at its end
            updates = decode.stream_engine(engine, lm.model, lm.tokenizer, lm.device, prompt, params, stop=stop,
                                           meter=meter)
            sampler = Sampler(hz=15)
            hold = self._holds.get(session)  # (gone if the session ended meanwhile: its run is being stopped)
            if hold is not None:
                hold.gen_timeline = sampler  # readable while it runs: the last update draws it
            with sampler:
                t_prefill = time.perf_counter()
                sampler.mark("prefill")
                decoding = False
                for text, stats in updates:
                    if not decoding and stats.new_tokens > 0:
                        # the first token ends the prefill: at its own time, not when this loop sees it (the
                        # engine's updates come at the page's pace, tens of ms after the token)
                        sampler.mark("decode", at=t_prefill + (stats.ttft_seconds or 0.0))
                        decoding = True
                    for k, v in made_by.items():
                        setattr(stats, k, v)
                    if stats.finish_reason != "running":
                        stats.load_average, stats.cores = busy.load_average(), busy.cores()
                        stats.threads = torch.get_num_threads()
                        stats.ledger = ledger.as_dicts(meter.parts(stats.prompt_tokens, stats.new_tokens))
                        meter.release()
                    yield text, stats

    @contextmanager
    def session(self, session: str) -> Iterator[threading.Event]:
        """The stop event of one session's run, registered while it runs: `stop(session)` sets it."""
        stop = threading.Event()
        self._stops[session] = stop
        try:
            yield stop
        finally:
            if self._stops.get(session) is stop:
                del self._stops[session]

    def stop(self, session: str = "") -> bool:
        ev = self._stops.get(session)
        if ev is None:
            return False
        ev.set()
        return True

    # -- letting go -------------------------------------------------------------
    def release(self, session: str) -> bool:
        """The session ended (its tab or its client closed): its hold goes, and a model no session holds is
        unloaded, now if the lane is free, else when the run holding it ends. Never waits."""
        with self._table:
            hold = self._holds.pop(session, None)
            if hold is None:
                return False
            if hold.gone is not None and not hold.gone.told:
                self.counts["dropped"] += 1
            self._sweep = True
        if self._lane.acquire(blocking=False):
            self._leave_lane()
        return True

    def unload(self, session: str = "") -> None:
        """Release this session's hold and wait until a model no session holds is unloaded (tools, tests)."""
        self.release(session)
        with self.exclusive():
            self._unload_unheld()

    def clear(self) -> None:
        """Every hold released and every model unloaded, after the run holding the lane (tools, tests)."""
        with self._lane:
            with self._table:
                self._holds.clear()
            self._unload_unheld()

    def _unload_unheld(self) -> None:
        # the caller holds the lane
        held = {h.key for h in list(self._holds.values())}
        for e in [e for k, e in self._entries.items() if k not in held]:
            self._unload(e)

    def _expire_idle(self) -> None:
        now = time.monotonic()
        for s in [s for s, h in list(self._holds.items()) if s and now - h.seen > self.idle_seconds]:
            self.release(s)  # the lane is ours: the sweep runs when it is released

    def _unload(self, entry: Entry, by: str | None = None, tell: bool = True) -> None:
        # The caller holds the lane. Sessions other than `by` that held it are told on their next action.
        r = entry.loaded.report
        with self._table:
            self._entries.pop(entry.key, None)
            for s, h in self._holds.items():
                if tell and h.key == entry.key and s != by:
                    h.key, h.gone = None, Gone(r.model, r.device, r.dtype, sum(p.seconds for p in r.phases), time.time())
                    self.counts["evictions"] += 1
        compiled.forget(entry.loaded.model)  # its compiled decode step's static caches belong to it
        folder, entry.loaded = entry.loaded.offload_folder, None
        placing.remove_folder(folder)  # what Accelerate offloaded to the disk for it
        # gc, then glibc's malloc_trim: freed weights otherwise stay in the heap (a 16-bit copy made by a
        # cast, ~190 MB for gpt2-small, is not returned), so RSS would keep the model's bytes and the
        # memory guard would see less available than there is.
        memory.release_memory()

    # -- shutting down --------------------------------------------------------
    def close(self) -> int:
        """Stop every running generation and comparison (through their stop events) and refuse new
        loads and runs; a build in progress ends at its next progress step. Does not wait, so a
        signal handler may call it. Returns how many runs were told to stop."""
        self._closing.set()
        for ev in list(self._stops.values()):
            ev.set()
        return len(self._stops)

    def drain(self, timeout: float) -> bool:
        """After `close()`: wait up to `timeout` seconds for the run holding the lane to end, then free
        every model. False when something still held it (the models are then left to the exit)."""
        if not self._lane.acquire(timeout=max(timeout, 0.0)):
            return False
        try:
            for e in list(self._entries.values()):
                self._unload(e, tell=False)
        finally:
            self._lane.release()
        return True

    # -- helpers --------------------------------------------------------------
    def _refuse_if_closing(self) -> None:
        if self._closing.is_set():
            raise UserError.of("err.closing")

    def _holders(self, key: Key) -> set[str]:
        # list(): one step under the GIL, so a release from another thread cannot change the dict mid-walk
        return {s for s, h in list(self._holds.items()) if h.key == key}

    def _touch(self, session: str) -> Hold | None:
        hold = self._holds.get(session)
        if hold is not None:
            hold.seen = time.monotonic()
        return hold

    def _mine(self, session: str) -> Entry | None:
        """This session's model's entry, read without the lane (a snapshot: no run waits for it)."""
        hold = self._holds.get(session)
        return self._entries.get(hold.key) if hold and hold.key else None

    def _own(self, session: str) -> Entry | None:
        """The caller holds the lane: this session's model, None when it never loaded one, and the session told
        (a UserError) when its model was unloaded for another's: nothing runs on another model in its place."""
        with self._table:
            hold = self._touch(session)
            if hold is not None and hold.gone is not None:
                if not hold.gone.told:
                    hold.gone.told = True
                    self.counts["told"] += 1
                raise hold.gone.error()
            return self._entries.get(hold.key) if hold is not None and hold.key is not None else None


POOL = ModelPool()
