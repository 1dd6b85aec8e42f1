"""What a `.to()` copies: every parameter and buffer walked as `Module.to` walks them, counting new `data_ptr`s.

`walk_to(model, target)` calls `tensor.to(target)` on each of the model's tensors (tied weights once),
the call `Module.to` makes for each of them, and keeps none of the results: the model is not changed
(a model the pool shares stays as it is). A result with the same `data_ptr` on the same device is the
tensor itself: `Tensor.to` returned it, nothing was copied. Tensors on `meta` (offloaded) hold no
values and are counted apart. The walk is timed with the devices synchronised around it.
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass

import torch

from playground.hw import census, devices


@dataclass
class ToWalk:
    target: str  # "cpu", "cuda:0", "bfloat16", ...
    tensors: int  # parameters and buffers walked (tied weights once)
    copied: int  # results with a new data_ptr (or on another device): a copy was made
    same: int  # results that are the tensor itself: nothing copied
    meta: int  # tensors on the meta device: no values to copy (offloaded), not walked
    bytes_in: int  # the copied tensors' bytes before
    bytes_out: int  # the copies' bytes (a cast changes the element size)
    seconds: float

    def to_dict(self) -> dict:
        return asdict(self)


def walk_to(model: torch.nn.Module, target: str | torch.device | torch.dtype) -> ToWalk:
    """Each tensor's `.to(target)`, one at a time (only one copy is alive at once), under `no_grad`."""
    tensors = census.tensors(model)  # a tied weight is one tensor under two names: Module.to moves it once
    live = [t for t in tensors if t.device.type != "meta"]
    places = {str(t.device) for t in live}
    copied = same = bytes_in = bytes_out = 0
    for d in places:
        devices.sync(d)
    with torch.no_grad():
        t0 = time.perf_counter()
        for t in live:
            r = t.to(target)
            if r.data_ptr() == t.data_ptr() and r.device == t.device:
                same += 1
            else:
                copied += 1
                bytes_in += t.numel() * t.element_size()
                bytes_out += r.numel() * r.element_size()
            del r
        for d in places | ({str(target)} if isinstance(target, (str, torch.device)) else set()):
            devices.sync(d)
        seconds = time.perf_counter() - t0
    name = str(target).removeprefix("torch.")
    return ToWalk(name, len(live), copied, same, len(tensors) - len(live), bytes_in, bytes_out, seconds)
