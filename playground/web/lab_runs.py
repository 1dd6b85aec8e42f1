"""A lab run from the page and the API: on the visitor's own model, timed, with the time left said while it runs.

`run_lab(sc, session)` runs one mistake and its fix (the API's and the lesson's call). `ticking(sc, session)`
runs the same in a thread and yields a `Tick` (seconds so far, and what the last runs of this mistake on this
model took here, None before the first) every `every` seconds, then the `BreakResult`: the page says the
time left while a slow mistake (float16 on a CPU: 15-20 s here) runs, from measurements, never a guess.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Callable, Iterator

from playground.core import threads
from playground.lab import harness
from playground.lab.durations import DURATIONS
from playground.lab.result import BreakResult
from playground.run.pool import POOL
from playground.web.page import waiting

EVERY = 1.0  # seconds between two ticks: the line counts whole seconds


@dataclass(frozen=True)
class Tick:
    elapsed: float  # seconds since the click, waiting for the lane included
    expected: float | None  # the median of this mistake's last runs here on this model; None: none yet


def key_of(sc: harness.Scenario, report=None) -> tuple:
    """The scenario and the model it runs on: a load report's (name, device, dtype), or the bundled model."""
    return (sc.id, "bundled") if report is None else (sc.id, report.model, report.device, report.dtype)


def run_lab(sc: harness.Scenario, session: str) -> BreakResult:
    """The scenario on the session's own model (held in use: nothing unloads it mid-copy), or on the lab's
    bundled model before the session loads one; the result says how many visitors were waiting."""
    with POOL.held(session) as lm:
        if lm is None:
            result = harness.run(sc)
        else:
            result = harness.run(sc, model=lm.model, tokenizer=lm.tokenizer)
    DURATIONS.note(key_of(sc, lm.report if lm is not None else None), result.seconds)
    result.waiting = waiting(session)
    return result


def ticking(sc: harness.Scenario, session: str, every: float | None = None,
            clock: Callable[[], float] = time.monotonic) -> Iterator[Tick | BreakResult]:
    """`run_lab` in a thread: a Tick at once and every `every` seconds while it runs, then its result (its
    error raised here). The thread does no torch work of its own: harness.run starts the scenario's thread."""
    every = EVERY if every is None else every
    current = POOL.current(session)  # a snapshot, not waiting for the lane: the run reads its model again
    expected = DURATIONS.expected(key_of(sc, current[0] if current else None))
    t0 = clock()
    run = threads.start(run_lab, sc, session, name="lab-run")  # Gradio's request context goes along: `waiting`
    while True:
        yield Tick(clock() - t0, expected)
        run.join(timeout=every)
        if not run.alive:
            break
    yield run.result()
