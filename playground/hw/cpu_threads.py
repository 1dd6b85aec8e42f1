"""How many threads torch's CPU kernels get in this server, and why: a setting every CPU figure depends on.

`choose(setting, host, cores, default)` decides once at start-up; `apply(choice)` sets it
(`torch.set_num_threads`) and keeps it as `CURRENT` for the devices panel and every generation's stats.

Why a server reachable only from this machine leaves a core free: torch starts one OpenMP thread per
core, and libgomp's threads spin at every barrier of a parallel region. `python app.py` on a laptop
listens on 127.0.0.1, so its visitor's browser runs on the same cores; whenever the browser works, one
spinning thread loses its core and the whole team waits for it at the next barrier. Measured here
(2 cores, the bundled model, served): one thread decoded faster than two (486-548 against 443-485
tokens/s), and with it the page's rate came within 4% of the API's (docs/measurements.md, "The page's own cost").
A server that listens for other machines (a Space, a container) keeps torch's default.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass

import torch

ENV = "PLAYGROUND_THREADS"
WHY = ("set", "local", "default")  # Choice.why: the devices panel says each (dev.threads_<why>)


@dataclass(frozen=True)
class Choice:
    threads: int  # what torch.set_num_threads is given
    cores: int  # the cores this process may run on (hw.busy.cores)
    why: str  # "set": PLAYGROUND_THREADS; "local": one core left to this machine's browser; "default": torch's own


def is_loopback(host: str) -> bool:
    """An address only this machine can reach: localhost, 127.0.0.0/8, ::1 (a name other than localhost: no)."""
    name = host.strip().lower().strip("[]")
    if name == "localhost":
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def listening_on(settings_host: str, env: dict) -> str:
    """The address the server binds: PLAYGROUND_HOST, else Gradio's GRADIO_SERVER_NAME, else Gradio's 127.0.0.1."""
    return settings_host or env.get("GRADIO_SERVER_NAME", "").strip() or "127.0.0.1"


def choose(setting: int, host: str, cores: int, default: int) -> Choice:
    """PLAYGROUND_THREADS when set (at most the cores); one core fewer than torch's default when only this
    machine can reach the server and torch's default takes every core; torch's default otherwise."""
    if setting:
        return Choice(min(setting, cores), cores, "set")
    if is_loopback(host) and cores >= 2 and default >= cores:
        return Choice(cores - 1, cores, "local")
    return Choice(default, cores, "default")


CURRENT: Choice | None = None  # what apply() set; None: torch's default, untouched (tests, the bench, scripts)


def apply(choice: Choice) -> None:
    global CURRENT
    torch.set_num_threads(choice.threads)  # read by every thread torch work starts in from now on
    CURRENT = choice


def current(cores: int) -> Choice:
    """What torch uses now, and why."""
    if CURRENT is not None and CURRENT.threads == torch.get_num_threads():
        return CURRENT
    return Choice(torch.get_num_threads(), cores, "default")
