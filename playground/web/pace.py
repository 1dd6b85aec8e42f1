"""How often the page is told while a run streams: at most one update every `PAGE_EVERY` seconds (four a second).

A generation yields an update per token, hundreds a second on a small model. The browser re-renders every
update it is sent, and with `python app.py` and its browser on one machine that rendering takes the cores
the model decodes on: the page measured 21-72 tokens/s where the API, same server, same minute, measured
216-238. Four updates a second is still a reader's pace, and measured with `python -m playground.tools.bench_page`
(bfloat16, 96 greedy tokens, 10 generations a side) it brought the page within 4% of the API, where ten a
second left it 16-23% below. `Pace.due()` says whether the next may go now; the
caller always sends the last one (the final text and figures), and an update held back is only ever the
one just before another that goes: nothing waits on the clock.

A generation's pace counts from the click (`quiet_start`): its first update waits a quarter second too. Sent
with the first token, the page drew it (the output box shown, the stats) in the first milliseconds of the
decode it measures: 96 tokens take 0.2 s here, and that one render cost the page's rate 4-10% against the
API's; held to a quarter second from the click, within 4% either way in six runs (bench_page, 2026-11-25). A model slower to its
first token than that still shows it at once.
"""

from __future__ import annotations

import time
from typing import Callable

PAGE_EVERY = 0.25  # seconds between two updates the page is sent, at least


class Pace:
    """`due()` is True at most once every `every` seconds: the first call always, or with `quiet_start` once
    `every` has passed since the pace was made. The clock is injectable."""

    def __init__(self, every: float = PAGE_EVERY, clock: Callable[[], float] | None = None,
                 quiet_start: bool = False) -> None:
        self.every, self.clock = every, clock or time.monotonic
        self._last: float | None = self.clock() if quiet_start else None

    def due(self) -> bool:
        now = self.clock()
        if self._last is not None and now - self._last < self.every:
            return False
        self._last = now
        return True


def paced(report: Callable[..., None], every: float = PAGE_EVERY,
          clock: Callable[[], float] | None = None) -> Callable[..., None]:
    """A progress callback that passes at most one call every `every` seconds on to `report`."""
    pace = Pace(every, clock)

    def call(*args, **kwargs) -> None:
        if pace.due():
            report(*args, **kwargs)

    return call
