"""The device playground: `python app.py`, then open http://127.0.0.1:7860."""

from playground import zerogpu

ZERO = zerogpu.status()  # on ZeroGPU this imports `spaces` first, before torch touches CUDA

from playground.ui import build, launch_kwargs  # noqa: E402

if ZERO.active:
    # ZeroGPU's rule: models go to cuda at module scope. Here .to("cuda") only registers
    # the weights; they are moved onto a real GPU when a @spaces.GPU call starts.
    from playground.models import BUNDLED_NAME
    from playground.slot import SLOT

    SLOT.load(BUNDLED_NAME, "cuda", "float32")

if __name__ == "__main__":
    build().launch(**launch_kwargs())
