"""Where torch's OpenMP threads run: each worker of a team on a core of its own (`OMP_PROC_BIND=true`), set once,
before torch is first imported. Each entry point (app.py, the CLI, `python -m playground.bench`) calls
`bind_before_torch()` first thing; `BOUND` says what it did and why.

Unbound, Linux starts a fresh thread's new OpenMP worker on the core its master runs on, and both spin at the first
barriers until the scheduler moves one: the playground runs torch work in fresh threads, so every generation's
first kernels paid it (the bundled model's first prefill 18-20 ms against 9). libgomp reads the variable when torch
loads it and binds the importing thread to the first core; the threads present get all their cores back right
after, and the variable leaves the environment again, so child processes run as a plain script does.
Measured and explained in docs/serving.md ("Torch work in a fresh thread").
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass

from playground.hw import zerogpu  # torch-free at import: only `status()` imports `spaces`

VARIABLES = ("OMP_PROC_BIND", "OMP_PLACES", "GOMP_CPU_AFFINITY")  # any set by the user: theirs is kept


@dataclass(frozen=True)
class Binding:
    bound: bool  # OMP_PROC_BIND=true was in effect when torch loaded libgomp
    why: str  # "bound", "user" (they set one of VARIABLES), "torch-first" (imported before the playground),
    #           "one-core", "zerogpu" (its `spaces` package must import torch itself), "not-linux"


BOUND: Binding | None = None  # what bind_before_torch() found and did; None: not called


def decide(platform: str, env: dict, torch_imported: bool, cores: int) -> Binding:
    """Whether to bind, from facts only: no torch import here."""
    if not platform.startswith("linux"):
        return Binding(False, "not-linux")  # libgomp is Linux's; macOS builds use LLVM's runtime without binding
    if any(env.get(v) for v in VARIABLES):
        return Binding(False, "user")
    if env.get(zerogpu.ENV_FLAG):
        return Binding(False, "zerogpu")
    if torch_imported:
        return Binding(False, "torch-first")
    if cores < 2:
        return Binding(False, "one-core")
    return Binding(True, "bound")


def bind_before_torch() -> Binding:
    """Import torch with OMP_PROC_BIND=true where `decide` says so, then give every thread its cores back."""
    global BOUND
    if BOUND is not None:
        return BOUND
    cores = os.sched_getaffinity(0) if hasattr(os, "sched_getaffinity") else set()
    choice = decide(sys.platform, dict(os.environ), "torch" in sys.modules, len(cores))
    if choice.bound:
        os.environ["OMP_PROC_BIND"] = "true"
        try:
            # deferred (environment): libgomp reads OMP_* once, when torch loads it, and binds this thread to
            # the first core
            import torch
        finally:
            del os.environ["OMP_PROC_BIND"]
        for tid in os.listdir("/proc/self/task"):  # this thread, and any the import started
            try:
                os.sched_setaffinity(int(tid), cores)
            except OSError:
                pass  # a thread that has just ended
    BOUND = choice
    return choice
