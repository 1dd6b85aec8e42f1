"""What the soak counts: a book of expected texts (cross-talk), a tally, the server's resources, statistics,
and the verdict on the figures."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field

import psutil


def percentile(values: list[float], q: float) -> float | None:
    """The q-th percentile (0-100), linear between the closest ranks; None when there are no values."""
    if not values:
        return None
    xs = sorted(values)
    pos = (len(xs) - 1) * q / 100
    lo = int(pos)
    hi = min(lo + 1, len(xs) - 1)
    return xs[lo] + (xs[hi] - xs[lo]) * (pos - lo)


def slope(points: list[tuple[float, float]]) -> float | None:
    """Least-squares slope of y over x (None with fewer than 3 points)."""
    if len(points) < 3:
        return None
    n = len(points)
    mx = sum(x for x, _ in points) / n
    my = sum(y for _, y in points) / n
    sxx = sum((x - mx) ** 2 for x, _ in points)
    if sxx == 0:
        return None
    return sum((x - mx) * (y - my) for x, y in points) / sxx


@dataclass
class Book:
    """References for cross-talk: text per (model, dtype, prompt), prompt tokens per prompt."""

    texts: dict[tuple, str] = field(default_factory=dict)
    prompt_tokens: dict[str, int] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def check(self, model: str, dtype: str, prompt: str, text: str, n_prompt: int) -> str:
        """'' when consistent with everything seen before; otherwise what is wrong."""
        with self.lock:
            seen = self.prompt_tokens.setdefault(prompt, n_prompt)
            if seen != n_prompt:
                owner = [p for p, n in self.prompt_tokens.items() if n == n_prompt and p != prompt]
                return (f"prompt tokens {n_prompt}, this prompt has {seen}"
                        + (" (another client's prompt has that count)" if owner else ""))
            key = (model, dtype, prompt)
            ref = self.texts.setdefault(key, text)
            if ref != text:
                return f"text differs from the reference for {model}/{dtype}: {text[:60]!r} vs {ref[:60]!r}"
            return ""

    def summary(self) -> dict:
        with self.lock:
            per_model: dict[str, set] = {}
            for (model, dtype, _prompt), text in self.texts.items():
                per_model.setdefault(f"{model}/{dtype}", set()).add(text)
            counts = sorted(self.prompt_tokens.values())
            return {
                "keys": len(self.texts),
                "prompt_tokens_distinct": len(set(counts)) == len(counts),
                # distinct greedy texts among the clients' prompts, per model/dtype (random-weight
                # models may answer every prompt alike; the prompt-token check covers them)
                "distinct_texts": {k: len(v) for k, v in sorted(per_model.items())},
            }


# ---------------------------------------------------------------- the run

class Monitor(threading.Thread):
    """Samples the server's RSS, threads and open file descriptors every `every` seconds."""

    def __init__(self, pid: int | None, every: float = 0.5) -> None:
        super().__init__(name="soak-monitor", daemon=True)
        self.pid, self.every = pid, every
        self.samples: list[tuple[float, int, int, int]] = []  # (t, rss, threads, fds)
        self.halt = threading.Event()

    def read(self) -> tuple[float, int, int, int] | None:
        if self.pid is None:
            return None
        try:
            p = psutil.Process(self.pid)
            with p.oneshot():
                return time.monotonic(), p.memory_info().rss, p.num_threads(), p.num_fds()
        except (psutil.Error, OSError):
            return None

    def run(self) -> None:
        while not self.halt.is_set():
            s = self.read()
            if s:
                self.samples.append(s)
            self.halt.wait(self.every)


@dataclass
class Tally:
    requests: int = 0
    loads: int = 0
    generations: int = 0
    side_requests: int = 0
    abandoned: int = 0  # generations the leaving client walked away from
    failures: int = 0
    busy: int = 0
    crosstalk: int = 0
    swapped: int = 0  # generations that ran on a model the client did not load (the pool allows none)
    evicted: int = 0  # notices received: the client's model was unloaded for another's (the pool's rule)
    tokens: int = 0
    first_token: list[float] = field(default_factory=list)
    load_seconds: list[float] = field(default_factory=list)
    samples: list[str] = field(default_factory=list)  # the first failures and cross-talks, for the reader
    lock: threading.Lock = field(default_factory=threading.Lock)

    def add(self, **counts) -> None:
        with self.lock:
            for k, v in counts.items():
                setattr(self, k, getattr(self, k) + v)

    def note(self, kind: str, what: str) -> None:
        with self.lock:
            if len(self.samples) < 12:
                self.samples.append(f"{kind}: {what[:300]}")


def verdict(r: dict) -> bool:
    """No failure, no cross-talk, no generation on a model its client did not load, every eviction told to
    its visitor (or dropped with one who left), every visitor's hold released when it left, no exception in
    the server's log, and it answered afterwards."""
    accounted = r.get("evictions") == (r.get("evictions_told") or 0) + (r.get("evictions_dropped") or 0) + (
        r.get("evictions_pending") or 0)
    return bool(r["failures"] == 0 and r["crosstalk"] == 0 and r["warmup_failures"] == 0 and r["alive_after"]
                and not r["server_exceptions"] and r.get("swapped") == 0 and accounted
                and r.get("evicted_seen") == r.get("evictions_told") and None not in r.get("floor_seconds", [None]))
