"""How long each mistake took to run here: what the page's estimate of the time left stands on.

`DURATIONS.note(key, seconds)` after a run, `DURATIONS.expected(key)` before the next: the median of the
last `keep` runs with the same key (a scenario on one model, device and dtype) in this process, None
before the first. A measurement, never a guess: a first run has nothing to go by and says so.
"""

from __future__ import annotations

import statistics
import threading
from collections import deque


class Durations:
    def __init__(self, keep: int = 3) -> None:
        self.keep = keep
        self._runs: dict[tuple, deque[float]] = {}
        self._lock = threading.Lock()

    def note(self, key: tuple, seconds: float) -> None:
        with self._lock:
            self._runs.setdefault(key, deque(maxlen=self.keep)).append(seconds)

    def expected(self, key: tuple) -> float | None:
        with self._lock:
            runs = self._runs.get(key)
            return statistics.median(runs) if runs else None

    def clear(self) -> None:
        with self._lock:
            self._runs.clear()


DURATIONS = Durations()
