"""ZeroGPU: a GPU lent to the Space for the length of one decorated call.

On a ZeroGPU Space no GPU is attached to the process most of the time. Hugging
Face's `spaces` package makes that workable by emulation: importing it patches
PyTorch so that `torch.cuda.is_available()` is True and `model.to("cuda")` only
registers the tensors (nothing is copied anywhere). When a function decorated
`@spaces.GPU` is called, a real GPU is attached, the registered tensors are moved
onto it, the function runs (in a worker process), and the GPU is released when it
returns. So:

- timings and VRAM readings taken OUTSIDE a decorated call are not real: the
  `.to("cuda")` the playground times there copies no bytes, and the memory
  figures come from the emulation. `timing_label()` says so, in one line, next
  to every such figure.
- timings taken INSIDE the decorated call are real GPU timings (the GPU is
  attached before the function starts, so the clock inside it does not include
  the wait for one).
- `duration=` is the longest the call may hold the GPU. A shorter request gets
  a better place in the queue, so `seconds_for_tokens` sizes it from the
  requested `max_new_tokens`; `spaces` calls a callable duration with the same
  arguments as the decorated function.
- the decorated function runs in another process: what it changes in Python
  state (a model it loads, a `threading.Event` it waits on) does not come back
  to the main process, and it must return no CUDA tensors (plain text and
  numbers only).

Detection: ZeroGPU is on when the environment variable `SPACES_ZERO_GPU` is set
to a true value (Spaces sets it on ZeroGPU hardware) AND the `spaces` package
imports. Anywhere else `gpu()` returns the function unchanged, `timing_label()`
is empty, and `spaces` is not needed at all.

How the app applies ZeroGPU's rules (the lead wires this in app.py and ui.py):

1. Import `spaces` before torch touches CUDA: app.py calls `zerogpu.status()`
   first (it imports `spaces` when ZeroGPU is on), then imports the UI.
2. Models go to `cuda` at module scope, in the main process: on ZeroGPU app.py
   loads the default model with `SLOT.load(BUNDLED_NAME, "cuda", ...)` before
   `launch()`, which is the documented pattern (load, `.to("cuda")`, then
   decorate only the function that computes). Loading is never decorated: a
   model loaded inside a decorated call would live only in the worker process.
3. Only the GPU work is decorated: `gpu(fn)` around a plain function that takes
   the prompt and generation settings (no `gr.Request`, which need not survive
   the trip to the worker) and yields text and plain stats.
4. Every load report and VRAM reading shown on ZeroGPU carries `timing_label()`.
"""

from __future__ import annotations

import inspect
import math
import os
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
        import spaces
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
    import spaces

    if duration is None:
        duration = tokens_duration(fn) if "max_new_tokens" in inspect.signature(fn).parameters else 60
    return spaces.GPU(duration=duration)(fn)


def timing_label() -> str:
    """'' normally; on ZeroGPU, the one line to show beside load timings and VRAM
    readings taken outside a decorated call."""
    return EMULATED_LABEL if active() else ""
