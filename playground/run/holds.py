"""What the pool keeps: a model's key and entry, a session's hold, and the note of an eviction.

A `Key` is what makes two loads the same model (shared by the sessions that ask for it); an `Entry` is
a loaded model in the pool; a `Hold` is one session's claim on its model (and its timelines); a `Gone`
says that a session's model was unloaded for another's, until the session is told. `load_back` puts a
session's own model back when the load that replaced it failed after freeing it.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from playground.core.errors import UserError
from playground.core.inputs import Placement
from playground.core.paths import by_role
from playground.hw.sampler import Sampler
from playground.load import loader
from playground.load.catalog import ModelSource

CUT = 0.5  # seconds the timeline draws for the idle time between a load and the generation after it


@dataclass(frozen=True)
class Key:
    """What makes two loads the same model, shared by every session that asks for it."""

    source: ModelSource
    device: str  # "cpu", "cuda:0", "mps", "auto"
    dtype: str  # as asked for ("auto" included)
    placement: Placement | None = None  # per-device memory limits and a disk tier (frozen, hashable); None: as named


@dataclass
class Entry:
    key: Key
    spec: tuple  # (source, device, dtype, placement): what loads it again
    loaded: loader.LoadedModel | None  # None once unloaded (a list that still names the entry frees nothing)
    timeline: Sampler  # its load's memory timeline
    last_used: float  # time.monotonic() at the end of its last run
    ram: int  # the RAM its weights take (0 on a GPU): what unloading it gives back


@dataclass
class Gone:
    """A session's model unloaded to make room for another's: said on the session's next action."""

    model: str
    device: str
    dtype: str
    seconds: float  # what loading it took, every phase: about what loading it again takes
    at: float  # time.time() of the unload
    told: bool = False

    def error(self) -> UserError:
        return UserError.of("pool.evicted", model=self.model, device=self.device, dtype=self.dtype,
                            at=time.strftime("%H:%M:%S", time.localtime(self.at)), seconds=f"{self.seconds:.1f}")


@dataclass
class Hold:
    """One session's claim: the key of its model, and what the page draws for it."""

    key: Key | None = None
    seen: float = 0.0  # time.monotonic() of its last action
    load_timeline: Sampler | None = None
    gen_timeline: Sampler | None = None
    gone: Gone | None = None  # its model was unloaded for another session's: told on its next action

    def timeline(self) -> tuple[list[dict], list[dict]]:
        """(rows, peaks) of its model's load, then its last generation, on one time axis: the idle time
        between the two is cut to `CUT` seconds, and a row of the series "idle cut" says where and how long
        it really was (`idle`, seconds)."""
        rows, peaks, offset, ended = [], [], 0.0, None
        for s in (self.load_timeline, self.gen_timeline):
            r = s.rows() if s is not None else []
            if not r:
                continue
            start = min(x["t"] for x in r)
            if ended is not None:
                rows.append(dict(t=offset - CUT / 2, phase="", series="idle cut", bytes=0,
                                 idle=max(0.0, s.started + start - ended)))
            rows += [dict(x, t=x["t"] - start + offset) for x in r]
            peaks += [p.to_dict() for p in s.peaks()]
            offset = max(x["t"] for x in rows) + CUT
            ended = s.started + max(x["t"] for x in r)
        return rows, peaks


def ram_of(lm: loader.LoadedModel) -> int:
    """RAM the model's weights take (what unloading it gives back), read from where it lives (its location):
    its tensors in RAM, or Accelerate's CPU state dict; not a GPU's memory, not the disk tier. MPS shares the
    RAM with the CPU: its weights count too."""
    where = lm.report.location
    return where.ram_bytes + where.bytes_on("mps")


def load_back(previous: tuple, failed: Exception) -> tuple:
    """A load failed after the session's own model was freed: load that one back, and say both. (The
    loaded model, what it was loaded from, and the error to raise once it is in the pool.)"""
    src, dev, dtype, placement = previous
    if isinstance(failed, UserError):
        why = failed.said
    else:  # not a refusal the loader worded: the exception as it is, its paths named by role
        why = f"{type(failed).__name__}: {by_role(str(failed).splitlines()[0] if str(failed) else '')[:300]}"
        why += "" if why.endswith((".", "!", "?")) else "."
    try:
        back = loader.load(loader.prepare(src, dev, dtype, placement=placement))
    except UserError as again:
        raise UserError.of("err.restore_failed", error=why, previous=src.name, again=again.said) from None
    r = back.report
    return back, previous, UserError.of("err.restored", error=why, previous=r.model, device=r.device, dtype=r.dtype)
