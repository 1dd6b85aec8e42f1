"""The device playground: `python app.py`, then open http://127.0.0.1:7860."""

from playground.core import listen, settings

# every PLAYGROUND_* variable, then the address to listen on, before anything heavy: a bad one is one line, exit 2
listen.check_or_exit(settings.check_or_exit())

from playground.hw import openmp  # noqa: E402

openmp.bind_before_torch()  # the first torch import: each OpenMP worker on a core of its own (hw/openmp.py)

from playground.hw import zerogpu  # noqa: E402

ZERO = zerogpu.status()  # on ZeroGPU this imports `spaces` first, before torch touches CUDA

from playground.hw import memory  # noqa: E402

memory.limit_malloc_arenas()  # before the server's threads start: RSS stays flat over days of requests

from playground.load import synthetic  # noqa: E402

synthetic.check_or_exit()  # PLAYGROUND_SYNTHETIC_MAX names a model: said before the page's libraries load (~5 s)

from playground.web.ui import build, launch_kwargs  # noqa: E402

if ZERO.active:
    # ZeroGPU's rule: models go to cuda at module scope. Here .to("cuda") only registers
    # the weights; they are moved onto a real GPU when a @spaces.GPU call starts. The server
    # holds it (session ""): a visitor who loads it shares it at once.
    from playground.load import loader
    from playground.run.pool import POOL

    POOL.load(*loader.parse("shakespeare-gpt2", "cuda", "float32"))

if __name__ == "__main__":
    from playground.web import serve

    # Start-up checks, a sweep of dead servers' temporary folders, then serve until SIGTERM or
    # Ctrl-C, and shut down cleanly: runs stopped, model freed, folders removed, exit 0.
    serve.main(build, launch_kwargs())
