"""What `python app.py` runs: checked at start-up, swept of dead servers' leftovers, shut down cleanly.

`main(build, launch)`: every setting checked first (a bad one is one line on stderr, exit 2); the
temporary folders of dead servers swept; served until SIGTERM or SIGINT; then runs stopped, the
models freed, this process's folders removed and `os._exit(0)` within `DEADLINE` seconds.
Why `os._exit`: docs/serving.md.
"""

from __future__ import annotations

import asyncio
import faulthandler
import logging
import os
import signal
import sys
import threading
import time
from typing import Callable

import torch
from gradio import http_server

from playground.core import leftovers, listen, settings
from playground.hw import busy, cpu_threads, memory
from playground.load import catalog, placement, synthetic
from playground.run.pool import POOL
from playground.web import exports

DRAIN = 2.5  # seconds the run holding the lane gets to end after its stop event is set
DEADLINE = 4.5  # whatever still runs then, the process exits anyway (temporary folders removed first)
SIGNALS = (signal.SIGTERM, signal.SIGINT)


def main(build: Callable, launch: dict) -> None:
    """Serve the Blocks `build()` makes with `launch` (playground.web.ui's build and launch_kwargs)."""
    checked = settings.read()  # checked already by app.py, before its imports (listen.check_or_exit)
    threads = cpu_threads.choose(checked.threads, cpu_threads.listening_on(checked.host, os.environ), busy.cores(),
                                 torch.get_num_threads())
    cpu_threads.apply(threads)  # before any torch work: every figure the page shows is taken with it
    if threads.why == "local":
        print(f"playground: torch uses {threads.threads} of {threads.cores} cores, one left to the browser on this "
              f"machine (the server listens only here); {cpu_threads.ENV}={threads.cores} uses them all", flush=True)
    swept = sweep()
    if swept:
        print(f"playground: removed {len(swept)} temporary folder(s) left by servers that are gone", flush=True)
    # A file-size limit (ulimit -f) kills a process that writes past it with SIGXFSZ, unless the signal is
    # ignored: then the write fails with EFBIG, and the build says so (playground.load.integrity).
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    # What cannot be survived is at least logged: SIGBUS when the file under a memory-mapped float32 model
    # is truncated (docs/reliability.md's known limit), SIGSEGV, SIGABRT: "Fatal Python error" and every thread's stack.
    faulthandler.enable()
    stopping = threading.Event()
    received: list[str] = []

    def on_signal(signum, _frame) -> None:
        if not stopping.is_set():
            received.append(signal.Signals(signum).name)
            POOL.close()  # first thing: the running generation stops at its next token
            stopping.set()

    for sig in SIGNALS:  # before the page is built: a signal during start-up shuts down as soon as it is up
        signal.signal(sig, on_signal)
    demo = build()
    try:
        demo.launch(prevent_thread_lock=True, **launch)
    except OSError as e:  # the port was taken between the check and the launch
        settings.exit_on(listen.refusal(checked, e))
    moved = port_moved(checked, getattr(demo, "server_port", None))
    if moved:
        print(moved, flush=True)
    catalog.import_model_classes()  # once the page answers, not before: ~1.1 s of the start-up
    memory.freeze_startup_objects()  # the libraries and the page live as long as the process: an unload's gc skips them
    while not stopping.wait(0.2):
        pass
    shutdown(demo, received[0] if received else "signal")


def port_moved(s: settings.Settings, port: int | None) -> str:
    """One line when the server listens on another port than the default: with PLAYGROUND_PORT unset, Gradio
    takes 7860 (GRADIO_SERVER_PORT) or, when that is taken, the next free one, and says only its URL; a visitor
    who opens the README's address would find the other server. '' when it listens where it was asked to."""
    first = http_server.INITIAL_PORT_VALUE  # Gradio's first choice: 7860, or GRADIO_SERVER_PORT
    if s.port or port is None or port == first:
        return ""
    host = s.host or "127.0.0.1"
    return (f"playground: port {first} is taken (another server?), so this one listens on port {port}: "
            f"open http://{host}:{port}/ . Set PLAYGROUND_PORT to choose the port (then a taken one stops the start "
            f"with a message instead).")


def sweep() -> list:
    """The temporary folders of servers that are gone: export folders, checkpoint builds, offload folders."""
    return exports.sweep() + leftovers.sweep(synthetic.root(), synthetic.TMP_PREFIX,
                                             unowned_after=synthetic.UNOWNED_AFTER) + placement.sweep()


def shutdown(demo, why: str) -> None:
    """Stop, drain, close, free, clean, exit 0: see the module docstring."""
    t0 = time.perf_counter()
    threading.Timer(DEADLINE, _exit_now, args=(t0, why, "deadline")).start()
    stopped = POOL.close()
    freed = POOL.drain(DRAIN)  # the stopped generation ends, its last update goes out, the models are freed
    server = getattr(demo, "server", None)
    if server is not None and hasattr(server, "config"):
        # uvicorn otherwise waits for every open connection (a page's event stream) until Gradio's 5 s join
        server.config.timeout_graceful_shutdown = 1
        logging.getLogger("uvicorn.error").addFilter(_cut_at_shutdown)
    demo.close(verbose=False)
    _exit_now(t0, why, f"{stopped} run(s) stopped, model {'freed' if freed else 'left to the exit'}")


def _cut_at_shutdown(record: logging.LogRecord) -> bool:
    """uvicorn logs each connection it cancels after the graceful timeout ("Exception in ASGI application",
    a CancelledError and its traceback): at shutdown that is the intended end of a client's open event stream
    (a load still building when SIGTERM came), not an error. Everything else is logged."""
    exc = record.exc_info[1] if record.exc_info else None
    return not isinstance(exc, asyncio.CancelledError)


_EXITING = threading.Lock()


def _exit_now(t0: float, why: str, how: str) -> None:
    if not _EXITING.acquire(blocking=False):
        return  # the other path is already exiting
    removed = exports.remove()
    leftovers.remove_mine(synthetic.root(), synthetic.TMP_PREFIX)  # a build the deadline cut short
    placement.remove_mine()  # offload folders (the model's, when the deadline left it loaded; a cliff's)
    print(f"playground: {why}: shut down in {time.perf_counter() - t0:.2f} s ({how}; temporary folders "
          f"{'removed' if removed else 'NOT removed'})", flush=True)
    sys.stderr.flush()
    os._exit(0)
