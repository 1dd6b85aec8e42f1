"""ZeroGPU: a GPU lent to a Space only for the length of one `@spaces.GPU` call.

`status()` says whether this process is on ZeroGPU (`SPACES_ZERO_GPU` set and the
`spaces` package importing); `gpu(fn)` decorates the GPU work there and returns
`fn` unchanged anywhere else (`in_gpu_call()` says whether such a call is running here, where
CUDA is real); `timing_label()` is the line shown beside figures
taken outside a decorated call, which are emulated, not real. The rules and why
they are followed this way: docs/zerogpu.md.
"""

from __future__ import annotations

import functools
import inspect
import math
import os
import threading
from dataclasses import asdict, dataclass
from typing import Callable

ENV_FLAG = "SPACES_ZERO_GPU"
TRUTHY = {"1", "true", "yes", "on"}

# Sizing `duration`: seconds held before the first token (attach the GPU, move
# the registered weights onto it, prefill), plus the tokens at a pessimistic
# decode rate for `generate()` on a small model (its per-token Python overhead,
# not the GPU, bounds it). Clamped to what a visitor's quota can grant.
BASE_SECONDS = 15
TOKENS_PER_SECOND = 20.0
MIN_SECONDS = 20
MAX_SECONDS = 120

EMULATED_LABEL = (
    "emulated on ZeroGPU: a GPU is attached only inside @spaces.GPU calls, so this "
    ".to('cuda') time and these VRAM readings, taken outside one, are not real GPU figures"
)


@dataclass
class ZeroGpuStatus:
    active: bool
    reason: str

    def to_dict(self) -> dict:
        return asdict(self)


def status() -> ZeroGpuStatus:
    """Is this process on ZeroGPU, and why (not)? Imports `spaces` when the flag is set,
    which is also what installs its PyTorch patches: call it before CUDA is touched."""
    flag = os.environ.get(ENV_FLAG, "")
    if flag.strip().lower() not in TRUTHY:
        return ZeroGpuStatus(False, f"{ENV_FLAG} is not set to a true value: not a ZeroGPU Space")
    try:
        import spaces  # deferred (optional): `spaces` exists on a Space, and importing it patches torch
    except ImportError as e:
        return ZeroGpuStatus(False, f"{ENV_FLAG}={flag} but the `spaces` package does not import ({e})")
    if not callable(getattr(spaces, "GPU", None)):
        # e.g. a folder named spaces/ with no __init__.py (this repository has one)
        # imports as an empty namespace package when the real one is not installed.
        where = getattr(spaces, "__file__", None) or list(getattr(spaces, "__path__", []))
        return ZeroGpuStatus(False, f"{ENV_FLAG}={flag} but the `spaces` that imports ({where}) "
                                    "has no GPU decorator: the `spaces` package is not installed")
    return ZeroGpuStatus(True, f"{ENV_FLAG}={flag} and `spaces` imports: GPU work runs inside @spaces.GPU")


def active() -> bool:
    return status().active


def seconds_for_tokens(max_new_tokens: int) -> int:
    """How long to ask ZeroGPU for, to generate `max_new_tokens` tokens."""
    n = max(int(max_new_tokens), 0)
    return int(min(MAX_SECONDS, max(MIN_SECONDS, BASE_SECONDS + math.ceil(n / TOKENS_PER_SECOND))))


def tokens_duration(fn: Callable, param: str = "max_new_tokens") -> Callable[..., int]:
    """A duration callable for `spaces.GPU`: it receives the same arguments as `fn`
    and reads the requested token count from the one named `param`."""
    sig = inspect.signature(fn)
    if param not in sig.parameters:
        raise TypeError(f"{getattr(fn, '__name__', fn)!r} has no parameter {param!r} to size the GPU time from")

    def duration(*args, **kwargs) -> int:
        try:
            n = int(float(sig.bind_partial(*args, **kwargs).arguments[param]))
        except (KeyError, TypeError, ValueError, OverflowError):
            # Missing or not a number: the call will be refused by the input
            # checks anyway; ask for the longest so it is never cut short.
            return MAX_SECONDS
        return seconds_for_tokens(n)

    return duration


_CALLS = {"running": 0}  # decorated calls running in this process: ZeroGPU runs each in a worker where CUDA is real
_CALLS_LOCK = threading.Lock()


def in_gpu_call() -> bool:
    """Is a `gpu(...)`-decorated call running in this process? On ZeroGPU it runs in the worker that holds the
    GPU, where CUDA is real (the main process only emulates it): the device can be synchronised there."""
    return _CALLS["running"] > 0


def _count(step: int) -> None:
    with _CALLS_LOCK:
        _CALLS["running"] += step


def _marked(fn: Callable) -> Callable:
    """`fn`, counted as a GPU call while it runs (a generator: while it is iterated), its signature kept."""
    if inspect.isgeneratorfunction(fn):
        @functools.wraps(fn)
        def stream(*args, **kwargs):
            _count(1)
            try:
                yield from fn(*args, **kwargs)
            finally:
                _count(-1)
        return stream

    @functools.wraps(fn)
    def call(*args, **kwargs):
        _count(1)
        try:
            return fn(*args, **kwargs)
        finally:
            _count(-1)
    return call


def gpu(fn: Callable | None = None, duration: int | Callable[..., int] | None = None):
    """Wrap `fn` in `spaces.GPU(duration=...)` on ZeroGPU; return it unchanged elsewhere.

    `duration` is seconds, or a callable taking `fn`'s arguments; by default it
    is sized from `fn`'s `max_new_tokens` argument (60 s if it has none).
    Usable as `gpu(fn)`, `@gpu` or `@gpu(duration=30)`.
    """
    if fn is None:
        return lambda f: gpu(f, duration=duration)
    if not active():
        return fn
    import spaces  # deferred (optional): imported only on ZeroGPU, where status() found it importable

    if duration is None:
        duration = tokens_duration(fn) if "max_new_tokens" in inspect.signature(fn).parameters else 60
    return spaces.GPU(duration=duration)(_marked(fn))


def timing_label() -> str:
    """'' normally; on ZeroGPU, the one line to show beside load timings and VRAM
    readings taken outside a decorated call."""
    return EMULATED_LABEL if active() else ""
