"""Where torch work runs: in a fresh thread that ends with the job.

PyTorch's CPU kernels split their work with OpenMP. GNU libgomp, the runtime in
PyTorch's Linux wheels, gives every thread that starts a parallel region a pool of
worker threads of its own, and keeps that pool until the thread exits. While the
process holds more libgomp threads than there are CPUs, idle workers stop
spinning almost at once (libgomp's "throttled" spin count: 100 spins instead of
about 300,000) and go to sleep, so every parallel region pays a futex wake-up.
A decode step of a small model is a few hundred tiny kernels, so it pays that
hundreds of times per token.

Measured on this project's 2-core machine (torch 2.13.0 CPU wheel), a 1x256 by
256x256 bfloat16 matmul: 20 us on a thread holding the process's only pool, 100 us
while another (idle) thread holds one, 20 us again once that thread has exited.
The bundled model's `generate()` ran at 413 tokens/s on the main thread and 240 on a
new thread while the main thread's pool existed.

A web server runs its handlers on long-lived worker threads, so every one that ever
loaded a model would keep a pool, and every later generation would run throttled.
The playground therefore runs each piece of torch work (a load, a generation, a
break-it run, a comparison's run) in a fresh thread that exits when the work does,
taking its pool with it, and the thread that waits does no torch work of its own:
at any moment one pool exists, as in a plain script. A thread costs ~0.1 ms to start.
"""

from __future__ import annotations

import contextvars
import queue
import threading
from typing import Callable, Iterator, TypeVar

T = TypeVar("T")

_END = object()


def run(fn: Callable[..., T], *args, name: str = "torch-work", **kwargs) -> T:
    """fn(*args, **kwargs) in a fresh thread; its result, or its exception raised here.

    The caller's context variables go along (Gradio finds a request's progress bar
    through them), and torch's thread-local modes do not: `fn` sets its own
    (`inference_mode`, `no_grad`) where it needs them.
    """
    ctx = contextvars.copy_context()
    out: list = []

    def work() -> None:
        try:
            out.append((True, ctx.run(fn, *args, **kwargs)))
        except BaseException as e:  # re-raised in the caller, never lost in the thread
            out.append((False, e))

    thread = threading.Thread(target=work, name=name, daemon=True)
    thread.start()
    thread.join()
    ok, value = out[0]
    if not ok:
        raise value
    return value


def iterate(make: Callable[[], Iterator[T]], stop: threading.Event, name: str = "torch-work") -> Iterator[T]:
    """Yield what the iterator `make()` yields, running it in a fresh thread.

    The producer does not wait for the consumer (updates queue up). If the consumer
    stops early (a closed tab, an error), `stop` is set so the producer's loop can
    end, and the thread is joined before this generator returns; a producer that ran
    to its end leaves `stop` alone.
    """
    ctx = contextvars.copy_context()
    q: queue.SimpleQueue = queue.SimpleQueue()

    def drain() -> None:
        try:
            for item in make():
                q.put((True, item))
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
