"""How busy the machine was when a measurement ended: the 1-minute load average beside the cores.

A load average above the cores this process may run on means other work was waiting for a core: a
rate measured then shared the CPU with it (another visitor's run takes turns in the lane and cannot;
a browser, a test suite or a build on the same machine can). The page says so beside the figure.
"""

from __future__ import annotations

import os


def cores() -> int:
    """The cores this process may run on (its affinity: a container's limit, not the host's count)."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # macOS, Windows: no affinity call
        return os.cpu_count() or 1


def load_average() -> float | None:
    """The 1-minute load average (None where the OS keeps none: Windows)."""
    try:
        return os.getloadavg()[0]
    except (AttributeError, OSError):
        return None


def busy(load: float | None, n_cores: int | None) -> bool:
    """More runnable work than cores: a measurement taken now shared the CPU."""
    return load is not None and bool(n_cores) and load > n_cores
