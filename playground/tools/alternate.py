"""The benches' one way of comparing sides on a shared machine: warm up each, alternate, settle, take medians.

A side is a function that runs once and returns what it measured. `alternate(sides, runs)` runs each side
`warmup` times untimed (a fresh model's first passes pay one-off costs), then `runs` rounds with the order
reversed every other round, so that a slow drift of the machine (another process, the CPU's clock) lands on
every side alike, and with `settle` seconds of quiet before each run (the page's plots, drawn after its rate is
taken, would otherwise land on the run after it). `medians`, `paired` and `resolution` summarise: the median of each
side, the median of the run-by-run ratios of two sides (steadier than the ratio of two medians: a burst of load
from elsewhere hits both runs of a pair), and how finely run-by-run differences resolve their median. Used by
`python -m playground bench parity`, `engines` and `page`.
"""

from __future__ import annotations

import statistics
import time
from typing import Callable, TypeVar

T = TypeVar("T")


def alternate(sides: dict[str, Callable[[], T]], runs: int, warmup: int = 1, settle: float = 0.0,
              log: Callable[[str, int, T], None] | None = None) -> dict[str, list[T]]:
    """Each side's timed results, in the order they ran (see the module docstring). `log(side, round, result)`
    hears each timed run as it ends."""
    names = list(sides)
    for _ in range(warmup):
        for name in names:
            time.sleep(settle)
            sides[name]()
    timed: dict[str, list[T]] = {name: [] for name in names}
    for i in range(runs):
        for name in (names if i % 2 == 0 else names[::-1]):
            time.sleep(settle)
            result = sides[name]()
            timed[name].append(result)
            if log is not None:
                log(name, i, result)
    return timed


def medians(results: list[dict], keys: tuple[str, ...]) -> dict[str, float | None]:
    """The median of each key over the runs that measured it (None where none did)."""
    out = {}
    for key in keys:
        values = [r[key] for r in results if r.get(key) is not None]
        out[key] = statistics.median(values) if values else None
    return out


def resolution(differences: list[float]) -> float | None:
    """How finely these run-by-run differences resolve their median: the standard error of a median estimated
    from their spread (1.4826 x the median absolute deviation, a standard deviation that one wild run does not
    move, x 1.2533 / sqrt(n)). None with fewer than 3."""
    if len(differences) < 3:
        return None
    mid = statistics.median(differences)
    mad = statistics.median(abs(d - mid) for d in differences)
    return 1.4826 * mad * 1.2533 / len(differences) ** 0.5


def paired(a: list[float | None], b: list[float | None]) -> float | None:
    """The median of a[i] / b[i] over the rounds where both measured something."""
    ratios = [x / y for x, y in zip(a, b) if x and y]
    return statistics.median(ratios) if ratios else None
