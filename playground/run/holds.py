"""What the pool keeps: a model's key and entry, a session's hold, and the note of an eviction.

A `Key` is what makes two loads the same model (shared by the sessions that ask for it); an `Entry` is
a loaded model in the pool; a `Hold` is one session's claim on its model; a `Gone` says that a
session's model was unloaded for another's, until the session is told.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from playground.core.errors import UserError
from playground.hw.sampler import Sampler
from playground.load import loader
from playground.load.catalog import ModelSource


@dataclass(frozen=True)
class Key:
    """What makes two loads the same model, shared by every session that asks for it."""

    source: ModelSource
    device: str  # "cpu", "cuda:0", "mps", "auto"
    dtype: str  # as asked for ("auto" included)
    placement: object = None  # a hashable, frozen placement (per-device limits, a disk tier); None: as named


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


def ram_of(report: loader.LoadReport) -> int:
    """RAM the model's weights take (what unloading it gives back): none when they sit on a GPU."""
    return report.weights_bytes if report.device in ("cpu", "mps") else 0
