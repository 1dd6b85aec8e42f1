"""Where torch work runs: in a fresh thread that ends with the job.

`run(fn, *args)` calls fn in a new thread and returns its result or raises its exception (`start` the same,
without waiting);
`relay(work, stop)` yields what `work(put)` hands to `put` from a new thread (a producer that calls back,
as generate()'s streamer does), and `iterate(make, stop)` what the iterator `make()` yields; both set `stop`
if the consumer leaves early. The waiting thread does no torch work, so one OpenMP pool exists at a
time, as in a plain script (why: libgomp's per-thread pools, measured in docs/serving.md).
"""

from __future__ import annotations

import contextvars
import queue
import threading
from typing import Callable, Iterator, TypeVar

T = TypeVar("T")

_END = object()


class Started:
    """fn(*args, **kwargs) running in a fresh thread (see `start`): `join(timeout)` waits, `alive`, `result()`
    returns its value or raises its exception here, in the caller."""

    def __init__(self, fn: Callable[..., T], args: tuple, kwargs: dict, name: str) -> None:
        ctx = contextvars.copy_context()
        self._out: list = []

        def work() -> None:
            try:
                self._out.append((True, ctx.run(fn, *args, **kwargs)))
            except BaseException as e:  # re-raised in the caller, never lost in the thread
                self._out.append((False, e))

        self._thread = threading.Thread(target=work, name=name, daemon=True)
        self._thread.start()

    def join(self, timeout: float | None = None) -> None:
        self._thread.join(timeout)

    @property
    def alive(self) -> bool:
        return self._thread.is_alive()

    def result(self):
        self._thread.join()
        ok, value = self._out[0]
        if not ok:
            raise value
        return value


def start(fn: Callable[..., T], *args, name: str = "torch-work", **kwargs) -> Started:
    """fn(*args, **kwargs) started in a fresh thread, the caller's context variables with it (as `run`); the
    caller may do other things (say how long it has waited) before asking for its `result()`."""
    return Started(fn, args, kwargs, name)


def run(fn: Callable[..., T], *args, name: str = "torch-work", **kwargs) -> T:
    """fn(*args, **kwargs) in a fresh thread; its result, or its exception raised here.

    The caller's context variables go along (Gradio finds a request's progress bar
    through them), and torch's thread-local modes do not: `fn` sets its own
    (`inference_mode`, `no_grad`) where it needs them.
    """
    return start(fn, *args, name=name, **kwargs).result()


def relay(work: Callable[[Callable[[T], None]], object], stop: threading.Event,
          name: str = "torch-work") -> Iterator[T]:
    """Yield each item that `work(put)` hands to `put`, running `work` in a fresh thread.

    The producer does not wait for the consumer (items queue up). If the consumer
    stops early (a closed tab, an error), `stop` is set so the producer's loop can
    end, and the thread is joined before this generator returns; a producer that ran
    to its end leaves `stop` alone. An exception in `work` is raised here, after the
    items it put before it.
    """
    ctx = contextvars.copy_context()
    q: queue.SimpleQueue = queue.SimpleQueue()

    def drain() -> None:
        try:
            work(lambda item: q.put((True, item)))
        except BaseException as e:
            q.put((False, e))
        finally:
            q.put((True, _END))

    thread = threading.Thread(target=lambda: ctx.run(drain), name=name, daemon=True)
    thread.start()
    finished = False
    try:
        while True:
            ok, item = q.get()
            if item is _END:
                finished = True
                return
            if not ok:
                finished = True
                raise item
            yield item
    finally:
        if not finished:
            stop.set()
        thread.join()


def iterate(make: Callable[[], Iterator[T]], stop: threading.Event, name: str = "torch-work") -> Iterator[T]:
    """Yield what the iterator `make()` yields, running it in a fresh thread (`relay`'s contract)."""

    def work(put: Callable[[T], None]) -> None:
        for item in make():
            put(item)

    return relay(work, stop, name)
