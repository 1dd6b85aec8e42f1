"""Timing a silent cost on a busy machine: interleaved rounds until the spread is known.

Other processes share these cores, so a single timing, or the fastest of three, can say
float16 is 14x slower in one run and 0.6x in the next. Here every round times each
candidate once, in a rotating order, with the device synchronised around each call, so a
burst of load from elsewhere lands on all of them; each candidate's time is divided by the
baseline's *of the same round*. Rounds continue (at least `min_rounds`) until the median
ratio is known to within `tolerance` (the approximate 95% confidence interval of a median,
from the order statistics of the rounds' ratios) or the time budget is spent. The result keeps
the median, that interval and the middle half of the ratios, and the sentence said beside them
is chosen from the interval: slower, faster, or no clear difference, never against the numbers.
"""

from __future__ import annotations

import math
import statistics
import time
from dataclasses import dataclass
from typing import Callable

from playground.core.i18n import Said, said
from playground.hw import devices

CLEAR = 1.10  # an interval wholly above 1.10x (or below 1/1.10) is a clear difference


@dataclass
class Ratio:
    """One candidate against the baseline, over `rounds` paired rounds."""

    name: str
    base: str
    rounds: int
    median: float  # median of the per-round ratios (candidate time / baseline time)
    low: float  # ~95% confidence interval of that median
    high: float
    q1: float  # middle half of the ratios
    q3: float
    median_ms: float  # the candidate's median time per call
    base_ms: float

    def verdict(self) -> Said:
        fields = dict(name=self.name, base=self.base, median=round(self.median, 2), low=round(self.low, 2),
                      high=round(self.high, 2), rounds=self.rounds)
        # decided on the interval as shown (two decimals), so that the sentence never contradicts the
        # figures beside it: "0.75-0.91x" is not wholly below 1/1.10 = 0.909, even if 0.9089 was
        if fields["low"] > CLEAR:
            return said("timing.slower", **fields)
        if fields["high"] < 1 / CLEAR:
            return said("timing.faster", **fields, times=round(1 / self.median, 2))
        return said("timing.same", **fields)


def median_interval(values: list[float]) -> tuple[float, float]:
    """The approximate 95% confidence interval of the median of `values` (order statistics)."""
    xs = sorted(values)
    n = len(xs)
    half = 0.98 * math.sqrt(n)
    lo, hi = max(0, math.floor(n / 2 - half)), min(n - 1, math.ceil(n / 2 + half) - 1)
    return xs[lo], xs[hi]


def quartiles(values: list[float]) -> tuple[float, float]:
    q = statistics.quantiles(values, n=4, method="inclusive")
    return q[0], q[2]


def interleaved(calls: dict[str, Callable[[], object]], base: str, device="cpu", *, min_rounds: int = 7,
                max_rounds: int = 60, budget_s: float = 6.0, tolerance: float = 0.10) -> dict[str, Ratio]:
    """Time each call once per round, rotating the order, until every ratio's interval is within
    ±tolerance of its median (or the budget is spent); one warm-up call each first."""
    names = list(calls)
    for fn in calls.values():
        fn()
    times: dict[str, list[float]] = {n: [] for n in names}
    start = time.perf_counter()
    for r in range(max_rounds):
        for name in names[r % len(names):] + names[:r % len(names)]:
            devices.sync(device)
            t0 = time.perf_counter()
            calls[name]()
            devices.sync(device)
            times[name].append(time.perf_counter() - t0)
        if r + 1 < min_rounds:
            continue
        ratios = {n: [a / b for a, b in zip(times[n], times[base])] for n in names if n != base}
        settled = all((hi - lo) <= 2 * tolerance * statistics.median(rs)
                      for rs in ratios.values() for lo, hi in [median_interval(rs)])
        if settled or time.perf_counter() - start > budget_s:
            break
    out = {}
    for name in names:
        if name == base:
            continue
        rs = [a / b for a, b in zip(times[name], times[base])]
        lo, hi = median_interval(rs)
        q1, q3 = quartiles(rs)
        out[name] = Ratio(name, base, len(rs), statistics.median(rs), lo, hi, q1, q3,
                          statistics.median(times[name]) * 1000, statistics.median(times[base]) * 1000)
    return out
