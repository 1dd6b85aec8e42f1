"""The one loaded-model slot, shared by every visitor, behind its lock.

A process holds one model at a time: a shared Space has a few GB of RAM, and two
models loaded side by side would make every figure on the page wrong. Loading
and generating both take the slot's lock, so a load waits for a running
generation to finish (it never swaps the model under it), and a generation never
sees a half-loaded model. The UI, the API and the CLI all go through here.

The lock is a plain `threading.Lock`, not an `RLock`: a generation holds it across
its yields, and Gradio resumes a generator on whichever worker thread of its pool is
free, so the thread that releases it is often not the one that took it. An RLock
belongs to the thread that acquired it: released from another thread it raises
RuntimeError and stays held for good (every later load then waits forever), and while
"held" its owner thread could re-enter and swap the model under another visitor's
generation. A Lock has no owner; nothing in the slot re-enters it.

Every update a generation yields names the model, device and dtype that produced it:
a visitor's load may be replaced by another visitor's before their generate runs.

This is the only global mutable state in the playground.
"""

from __future__ import annotations

import threading
from contextlib import contextmanager
from typing import Iterator


from playground import generation, inputs, migration, models, threads
from playground.inputs import UserError
from playground.sampler import Sampler, marking_progress

ENGINES = ("generate", "manual", "manual-nocache")


class ModelSlot:
    def __init__(self) -> None:
        self.lock = threading.Lock()  # not re-entrant, and not owned by a thread: see the module docstring
        self.loaded: models.LoadedModel | None = None
        self.requested: str | None = None  # the model as the visitor named it, for the code snippet
        # The memory timelines of the last load and the last generation (sampled at 15 Hz).
        self.load_timeline: Sampler | None = None
        self.gen_timeline: Sampler | None = None
        # One stop event per visitor session, so Stop ends only the caller's own run.
        self.stops: dict[str, threading.Event] = {}

    def status(self) -> dict:
        # No lock: one read of one attribute. The page's banner asks every few seconds, and
        # must not wait for (or block a worker thread behind) another visitor's generation.
        lm = self.loaded
        if lm is None:
            return {"loaded": False}
        r = lm.report
        return {"loaded": True, "model": r.model, "device": r.device, "dtype": r.dtype, "label": r.label}

    def unload(self) -> None:
        """Drop the model and give its memory back (waits for a running generation)."""
        with self.lock:
            self._unload()

    @contextmanager
    def emptied(self) -> Iterator[None]:
        """Hold the slot with no model in it, e.g. while Compare loads its own models one by one."""
        with self.lock:
            self._unload()
            yield

    def _unload(self) -> None:
        # the caller holds the lock
        if self.loaded is None:
            return
        self.loaded = None
        self.requested = None
        # gc, then glibc's malloc_trim: freed weights otherwise stay in the heap (a 16-bit copy
        # made by a cast, ~190 MB for gpt2-small, is not returned), so RSS would keep the old
        # model's bytes and the memory guard would see less available than there is.
        migration.release_memory()

    def load(self, model: str, device: str, dtype: str, progress: models.Progress | None = None) -> models.LoadReport:
        # Validate everything before unloading: a typo, an unreachable Hub id or an absent
        # device never unloads the model another visitor is using. The checks run under the
        # lock all the same: the memory check builds the model on the meta device, which
        # switches process-wide state (torch's default dtype while from_config builds in 16
        # bits; Accelerate's init_empty_weights patches nn.Module.register_parameter), so a
        # generation running meanwhile would make its tensors in the wrong dtype, and a load
        # its parameters on meta.
        with self.lock:
            sampler = Sampler(hz=15)
            with sampler:
                progress = marking_progress(sampler, progress)  # progress messages mark the timeline's phases
                # The model held now is freed before the new one loads: the guard counts its RAM as available.
                # (No local name may keep a reference to it past the unload below, or it is not freed.)

                def work() -> models.LoadedModel:
                    src, dev, dt = models.prepare(model, device, dtype, progress, reclaimable=_reclaimable(self.loaded))
                    # Free the old model first: two models side by side could exceed the RAM
                    # of a small machine, and would distort the new load's memory figures.
                    self._unload()
                    return models.load_prepared(src, dev, dt, progress)

                # in a thread that ends with the load: see playground.threads
                self.loaded = threads.run(work, name="load")
                self.requested = model.strip()
                self.load_timeline, self.gen_timeline = sampler, None
                return self.loaded.report

    def generate(self, prompt: str, max_new_tokens: object, temperature: object, top_p: object, seed: object,
                 session: str = "", engine: str = "generate") -> Iterator[tuple[str, generation.GenerationStats]]:
        """Stream (text, stats). engine: 'generate' (model.generate), 'manual' (the tutorials'
        prefill + decode loop with the KV cache), 'manual-nocache' (the same loop, no cache)."""
        if engine not in ENGINES:
            raise UserError(f"Unknown engine {str(engine)[:40]!r}; use one of {', '.join(ENGINES)}.")
        params = generation.GenerationParams(
            max_new_tokens=inputs.check_max_new_tokens(max_new_tokens),
            temperature=inputs.check_temperature(temperature),
            top_p=inputs.check_top_p(top_p),
            seed=inputs.check_seed(seed),
        )
        prompt = inputs.check_prompt(prompt)
        if self.loaded is None:
            raise UserError.of("err.not_loaded")
        stop = threading.Event()
        self.stops[session] = stop
        try:
            with self.lock:
                lm = self.loaded
                if lm is None:
                    raise UserError.of("err.unloaded")
                made_by = dict(model=lm.report.model, device=lm.report.device, dtype=lm.report.dtype)
                if engine == "generate":
                    updates = generation.stream(lm.model, lm.tokenizer, lm.device, prompt, params, stop=stop)
                else:
                    from playground import decode

                    updates = decode.stream(lm.model, lm.tokenizer, lm.device, prompt, params, stop=stop,
                                            use_cache=engine == "manual")
                sampler = Sampler(hz=15)
                self.gen_timeline = sampler  # readable while it runs: the last update draws it
                with sampler:
                    sampler.mark("prefill")
                    decoding = False
                    for text, stats in updates:
                        if not decoding and stats.new_tokens > 0:
                            sampler.mark("decode")  # the first token ends the prefill
                            decoding = True
                        for k, v in made_by.items():
                            setattr(stats, k, v)
                        yield text, stats
        finally:
            if self.stops.get(session) is stop:
                del self.stops[session]

    def timeline(self) -> tuple[list[dict], list[dict]]:
        """(rows, peaks) of the last load followed by the last generation, on one time axis
        (the idle time between the two is cut to half a second)."""
        rows, peaks, offset = [], [], 0.0
        for s in (self.load_timeline, self.gen_timeline):
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

    def stop(self, session: str = "") -> bool:
        ev = self.stops.get(session)
        if ev is None:
            return False
        ev.set()
        return True


def _reclaimable(lm: models.LoadedModel | None) -> int:
    """RAM the loaded model gives back when unloaded (its weights, when they are in RAM)."""
    return lm.report.weights_bytes if lm is not None and lm.report.device in ("cpu", "mps") else 0


SLOT = ModelSlot()
