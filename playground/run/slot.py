"""The one loaded-model slot, shared by every visitor, behind its lock.

`SLOT` holds one model at a time; the page, the API and the CLI go through its methods (`load`,
`generate`, `stop`, `lent`, `close`). Loading and generating take its lock (a plain `Lock`, since
Gradio resumes a generator on any thread), a failed load puts the previous model back, and every
update names the model that produced it. The other process-wide state is listed in
tests/test_globals.py. Why each rule: docs/serving.md.
"""

from __future__ import annotations

import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Iterator

from playground.core import threads
from playground.core.errors import UserError, shown
from playground.core.paths import by_role
from playground.core.inputs import GenerationParams
from playground.hw import ledger, memory
from playground.hw.devices import DeviceInfo, Dtype
from playground.hw.sampler import Sampler, marking_progress
from playground.load import loader
from playground.load.catalog import ModelSource
from playground.run import accounting, compiled, decode, generation
from playground.run.generation import ENGINES


def check_engine(engine: object) -> str:
    """'generate' (model.generate), 'manual' (the tutorials' prefill + decode loop with the KV
    cache) or 'manual-nocache' (the same loop, no cache)."""
    if engine not in ENGINES:
        raise UserError.of("err.engine", engine=shown(engine, 40), engines=", ".join(ENGINES))
    return engine


class ModelSlot:
    def __init__(self) -> None:
        self._lock = threading.Lock()  # not re-entrant, and not owned by a thread: see the module docstring
        self._loaded: loader.LoadedModel | None = None
        self._source: ModelSource | None = None  # the model as the visitor named it, for the code to copy
        self._spec: tuple[ModelSource, DeviceInfo, Dtype] | None = None  # what to load to get it back
        # The memory timelines of the last load and the last generation (sampled at 15 Hz).
        self._load_timeline: Sampler | None = None
        self._gen_timeline: Sampler | None = None
        # One stop event per visitor session, so Stop ends only the caller's own run.
        self._stops: dict[str, threading.Event] = {}
        self._closing = threading.Event()  # set once, at shutdown: nothing new starts
        self._away: dict | None = None  # while Compare borrows the slot: the model it will load back

    # -- reading, without waiting --------------------------------------------
    def status(self) -> dict:
        # No lock: one read of one attribute. The page's banner asks every few seconds, and
        # must not wait for (or block a worker thread behind) another visitor's generation.
        lm = self._loaded
        if lm is None:
            return {"loaded": False, "away": self._away} if self._away else {"loaded": False}
        r = lm.report
        return {"loaded": True, "model": r.model, "device": r.device, "dtype": r.dtype, "label": r.label}

    def current(self) -> tuple[loader.LoadReport, ModelSource] | None:
        """The loaded model's report and source, or None (a snapshot: no lock)."""
        lm, src = self._loaded, self._source
        return (lm.report, src) if lm is not None and src is not None else None

    def spec(self) -> tuple[ModelSource, DeviceInfo, Dtype] | None:
        """What is loaded now, as the typed values that would load it again (None when nothing is)."""
        return self._spec if self._loaded is not None else None

    def room(self, prompt: str, chat_template: bool = True) -> tuple[int | None, int | None]:
        """(prompt tokens, context length) for the loaded model: what `prompt` leaves for new tokens.
        No lock (a snapshot, like `status`): the page asks as the visitor types, even mid-generation."""
        lm = self._loaded
        if lm is None:
            return None, None
        return generation.room(lm.tokenizer, lm.model, prompt, chat_template)

    def busy(self) -> bool:
        """Is a load, a generation, a lab run or a comparison holding the slot right now?"""
        return self._lock.locked()

    def sessions(self) -> int:
        """Runs that can be stopped right now (generations and comparisons)."""
        return len(self._stops)

    # -- holding it ---------------------------------------------------------
    @contextmanager
    def held(self) -> Iterator[loader.LoadedModel | None]:
        """Hold the slot while reading the loaded model (a lab run copies it, Inspect walks it):
        a load must not swap it meanwhile. Yields None when nothing is loaded."""
        with self._lock:
            yield self._loaded

    @contextmanager
    def lent(self, progress: loader.Progress | None = None) -> Iterator["Return"]:
        """Hold the slot empty while Compare loads its own models, then load back what was loaded (same
        model, device and dtype), timed as a step of its own: `Return.report`, `Return.seconds`. Meanwhile
        the banner says which model is away and that it comes back (`status()["away"]`)."""
        self._refuse_if_closing()
        with self._lock:
            back = Return(self.spec())
            if back.spec is not None:
                r = self._loaded.report
                self._away = {"model": r.model, "device": r.device, "dtype": r.dtype}
            self._unload()
            try:
                yield back
            finally:
                try:
                    if back.spec is not None:
                        t0 = time.perf_counter()
                        back.report = self._load(*back.spec, progress=progress)
                        back.seconds = time.perf_counter() - t0
                except UserError as e:  # e.g. memory taken meanwhile by another process, or a shutdown
                    back.error = e
                finally:
                    self._away = None

    def unload(self) -> None:
        """Drop the model and give its memory back (waits for a running generation)."""
        with self._lock:
            self._unload()

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
        """After `close()`: wait up to `timeout` seconds for the run holding the slot to end, then free
        the model. False when something still held the slot (the model is then left to the exit)."""
        if not self._lock.acquire(timeout=max(timeout, 0.0)):
            return False
        try:
            self._unload()
        finally:
            self._lock.release()
        return True

    def _refuse_if_closing(self) -> None:
        if self._closing.is_set():
            raise UserError.of("err.closing")

    def _unload(self) -> None:
        # the caller holds the lock
        if self._loaded is None:
            return
        self._loaded = None
        self._source = self._spec = None
        compiled.forget()  # the compiled decode step's static caches belong to the old model
        # gc, then glibc's malloc_trim: freed weights otherwise stay in the heap (a 16-bit copy
        # made by a cast, ~190 MB for gpt2-small, is not returned), so RSS would keep the old
        # model's bytes and the memory guard would see less available than there is.
        memory.release_memory()

    # -- loading ------------------------------------------------------------
    def load(self, src: ModelSource, dev: DeviceInfo, dtype: Dtype,
             progress: loader.Progress | None = None) -> loader.LoadReport:
        # Check everything before unloading: an unreachable Hub id or a model that does not fit
        # never unloads the model another visitor is using. The checks run under the lock all the
        # same: the memory check builds the model on the meta device, which switches process-wide
        # state (torch's default dtype while from_config builds in 16 bits; Accelerate's
        # init_empty_weights patches nn.Module.register_parameter), so a generation running
        # meanwhile would make its tensors in the wrong dtype, and a load its parameters on meta.
        self._refuse_if_closing()
        with self._lock:
            return self._load(src, dev, dtype, progress)

    def _load(self, src: ModelSource, dev: DeviceInfo, dtype: Dtype,
              progress: loader.Progress | None = None) -> loader.LoadReport:
        # the caller holds the lock
        self._refuse_if_closing()
        sampler = Sampler(hz=15)
        with sampler:
            marked = marking_progress(sampler, progress)  # progress messages mark the timeline's phases

            def mark(frac: float, desc: str) -> None:
                self._refuse_if_closing()  # a shutdown ends a build or a load at its next step
                marked(frac, desc)

            def work() -> tuple[loader.LoadedModel, tuple | None, UserError | None]:
                # The model held now is freed before the new one loads: the guard counts its RAM as
                # available. (No local name may keep a reference to it past the unload, or it is not freed.)
                plan = loader.prepare(src, dev, dtype, mark, reclaimable=_reclaimable(self._loaded))
                previous = self._spec if self._loaded is not None else None
                # Free the old model first: two models side by side could exceed the RAM
                # of a small machine, and would distort the new load's memory figures.
                loader.unload(plan, self._unload, mark, previous=self._loaded and self._loaded.report.model)
                try:
                    return loader.load(plan, mark), (src, dev, dtype), None
                except Exception as e:  # from_pretrained's errors, and any other (an OOM in .to(device))
                    if previous is None or self._closing.is_set():
                        raise
                    return _load_back(previous, e)

            # in a thread that ends with the load: see playground.core.threads
            self._loaded, spec, failed = threads.run(work, name="load")
            self._source, self._spec = spec[0], spec
            self._load_timeline, self._gen_timeline = sampler, None
            if failed is not None:
                raise failed
            return self._loaded.report

    # -- generating ---------------------------------------------------------
    def generate(self, prompt: str, params: GenerationParams, session: str = "",
                 engine: str = "generate") -> Iterator[tuple[str, generation.GenerationStats]]:
        """Stream (text, stats) from the loaded model, with `engine` (see `check_engine`)."""
        self._refuse_if_closing()
        if self._loaded is None:
            raise UserError.of("err.not_loaded")
        with self.session(session) as stop, self._lock:
            if self._closing.is_set():
                stop.set()  # a shutdown began while this run waited for the slot: it ends at once
            lm = self._loaded
            if lm is None:
                raise UserError.of("err.unloaded")
            made_by = dict(model=lm.report.model, device=lm.report.device, dtype=lm.report.dtype)
            meter = accounting.Meter(lm)  # the generation's ledger, read once the last token is out
            updates = decode.stream_engine(engine, lm.model, lm.tokenizer, lm.device, prompt, params, stop=stop,
                                           meter=meter)
            sampler = Sampler(hz=15)
            self._gen_timeline = sampler  # readable while it runs: the last update draws it
            with sampler:
                sampler.mark("prefill")
                decoding = False
                for text, stats in updates:
                    if not decoding and stats.new_tokens > 0:
                        sampler.mark("decode")  # the first token ends the prefill
                        decoding = True
                    for k, v in made_by.items():
                        setattr(stats, k, v)
                    if stats.finish_reason != "running":
                        stats.ledger = ledger.as_dicts(meter.parts(stats.prompt_tokens, stats.new_tokens))
                        meter.release()
                    yield text, stats

    @contextmanager
    def session(self, session: str) -> Iterator[threading.Event]:
        """The stop event of one visitor's run, registered while it runs: `stop(session)` sets it."""
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

    def timeline(self) -> tuple[list[dict], list[dict]]:
        """(rows, peaks) of the last load followed by the last generation, on one time axis
        (the idle time between the two is cut to half a second)."""
        rows, peaks, offset = [], [], 0.0
        for s in (self._load_timeline, self._gen_timeline):
            if s is None:
                continue
            r = s.rows()
            if not r:
                continue
            start = min(x["t"] for x in r)
            rows += [dict(x, t=x["t"] - start + offset) for x in r]
            peaks += [p.to_dict() for p in s.peaks()]
            offset = max(x["t"] for x in rows) + 0.5
        return rows, peaks


@dataclass
class Return:
    """What `ModelSlot.lent` loads back afterwards, and how that went."""

    spec: tuple[ModelSource, DeviceInfo, Dtype] | None  # None: nothing was loaded, nothing comes back
    report: loader.LoadReport | None = None
    seconds: float | None = None  # the whole load back, checks included
    error: UserError | None = None


def _load_back(previous: tuple, failed: Exception) -> tuple:
    """A load failed after the model before it was freed: load that one back, and say both. (The
    loaded model, what it was loaded from, and the error to raise once it is in the slot.)"""
    prev_src, prev_dev, prev_dtype = previous
    if isinstance(failed, UserError):
        why = failed.said
    else:  # not a refusal the loader worded: the exception as it is, its paths named by role
        why = f"{type(failed).__name__}: {by_role(str(failed).splitlines()[0] if str(failed) else '')[:300]}"
        why += "" if why.endswith((".", "!", "?")) else "."
    try:
        back = loader.load(loader.prepare(prev_src, prev_dev, prev_dtype))
    except UserError as again:
        raise UserError.of("err.restore_failed", error=why, previous=prev_src.name,
                           again=again.said) from None
    r = back.report
    return back, previous, UserError.of("err.restored", error=why, previous=r.model,
                                        device=r.device, dtype=r.dtype)


def _reclaimable(lm: loader.LoadedModel | None) -> int:
    """RAM the loaded model gives back when unloaded (its weights, when they are in RAM)."""
    return lm.report.weights_bytes if lm is not None and lm.report.device in ("cpu", "mps") else 0


SLOT = ModelSlot()
