"""How often the page is told while a run streams: at most one update every `PAGE_EVERY` seconds (four a second).

`Pace.due()` says whether the next update may go now; the caller always sends the last one (the final text and
figures), and an update held back is only ever the one just before another that goes: nothing waits on the
clock. A generation's pace counts from the click (`quiet_start`): its first update waits a quarter second too.
Why, measured with `python -m playground.tools.bench_page` (the browser on the cores the model decodes on): an
update per token held the page to 21-72 tokens/s where the API gave 216-238; four a second brought it within
4-10%; the first update sent with the first token was drawn in the first milliseconds of the decode it timed
(96 tokens take 0.2 s here), and held to a quarter second from the click the gap was under 4% either way in
six runs (docs/serving.md, "The page's own pace"; docs/measurements.md, "The page's own cost").
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
