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


QUIET_SPREAD = 1.2  # the probe's slow readings (90th percentile) within 1.2x of its fast ones (10th): a quiet machine


def alternate(sides: dict[str, Callable[[], T]], runs: int, warmup: int = 1, settle: float = 0.0,
              log: Callable[[str, int, T], None] | None = None,
              speeds: list[float] | None = None) -> dict[str, list[T]]:
    """Each side's timed results, in the order they ran (see the module docstring). `log(side, round, result)`
    hears each timed run as it ends; `speeds`, when given, gets a `speed_probe()` reading before each timed run."""
    names = list(sides)
    for _ in range(warmup):
        for name in names:
            time.sleep(settle)
            sides[name]()
    timed: dict[str, list[T]] = {name: [] for name in names}
    for i in range(runs):
        for name in (names if i % 2 == 0 else names[::-1]):
            time.sleep(settle)
            if speeds is not None:
                speeds.append(speed_probe())
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


def speed_probe(n: int = 200_000) -> float:
    """Seconds a fixed pure-Python loop takes now (~7 ms here at full speed). The same work each time: what moves
    it is the machine, not the code: a host that lends this VM's cores elsewhere or changes their clock slows every
    figure measured with it (this 2-core machine was seen switching between ~7 and ~13 ms for it, idle, for seconds
    to minutes at a time)."""
    t0 = time.perf_counter()
    x = 0
    for i in range(n):
        x += i
    return time.perf_counter() - t0


def steadiness(speeds: list[float]) -> dict | None:
    """How much the probe moved: fastest, median and slowest reading, `spread` (the 90th percentile over the 10th,
    which one interrupted reading does not move) and `quiet` (spread within QUIET_SPREAD). None with fewer than 5."""
    if len(speeds) < 5:
        return None
    deciles = statistics.quantiles(speeds, n=10, method="inclusive")
    spread = deciles[-1] / deciles[0]
    return dict(readings=len(speeds), fastest=min(speeds), median=statistics.median(speeds), slowest=max(speeds),
                spread=spread, quiet=spread <= QUIET_SPREAD)


def speed_line(speed: dict | None) -> str:
    """The probe's readings in one line, for every bench's table ('' when too few to say)."""
    if not speed:
        return ""
    ms = lambda x: f"{1000 * x:.1f} ms"  # noqa: E731
    return (f"machine speed: a fixed Python loop took {ms(speed['fastest'])} to {ms(speed['slowest'])} (median "
            f"{ms(speed['median'])}) before the {speed['readings']} timed runs; slow over fast (90th/10th percentile) "
            f"{speed['spread']:.2f}x: " + ("quiet" if speed["quiet"] else "NOT QUIET")
            + f" (a quiet machine stays within {QUIET_SPREAD}x)")
