"""The device target: where the GPU side of a scenario runs, and whether that device is real.

A `Target` is a small value: the device (`cuda:0`, `cuda:1`, `mps`), whether it is simulated,
the stand-in when it is (`"fake"`: PyTorch's FakeTensorMode, whose tensors carry a device, a
dtype and a shape but no data; `"meta"`: the meta device, a real second device type with no
data) and how many devices of its kind the run has. A scenario is written once against it: a
`Run` on a target gives one `place()` and one `running()` context, the same code whether the
device is a GPU or a fake one. `targets()` is what the tests run over (the simulated target,
then every real device present); `page()` what the page uses; `for_scenario()` what one
scenario runs on from there (two devices where it needs two: simulated where fewer are present).

`Host.here()` is the only place in the lab that asks PyTorch which devices exist; a `Host`
built as data stands for another machine (the tests' one- and two-GPU profiles).
"""

from __future__ import annotations

import copy
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass, replace

import torch
from torch._subclasses import fake_tensor
from torch._subclasses.fake_tensor import FakeTensorMode

FAKE = "cuda:0"  # the fake device of a simulated run
KINDS = ("simulated", "cuda", "cuda2", "mps")  # the keys of a scenario's expected outcomes


@dataclass(frozen=True)
class Host:
    """The accelerators a machine has: how many CUDA devices, whether MPS works."""

    cuda: int = 0
    mps: bool = False

    @classmethod
    def here(cls) -> Host:
        mps = getattr(torch.backends, "mps", None)
        return cls(torch.cuda.device_count() if torch.cuda.is_available() else 0,
                   bool(mps is not None and mps.is_available()))


@dataclass(frozen=True)
class Target:
    device: str  # where the GPU side runs: "cuda:0", "cuda:1", "mps"; simulated: fake "cuda:0", or "meta"
    simulated: bool = False
    stand_in: str | None = None  # simulated: "fake" (FakeTensorMode) or "meta"; None when real
    devices: int = 1  # devices of its kind in the run: a real GPU's host count, 2 for a two-GPU simulation

    @property
    def kind(self) -> str:
        """The key of the expected outcome: simulated, cuda, cuda2 (a host with two GPUs or more), mps."""
        if self.simulated:
            return "simulated"
        kind = torch.device(self.device).type
        return "cuda2" if kind == "cuda" and self.devices >= 2 else kind

    @property
    def label(self) -> str:
        """Where a result says it ran: "cuda:0", "fake cuda:0", "meta"."""
        return f"fake {self.device}" if self.stand_in == "fake" else self.device

    @property
    def tensor_device(self) -> str:
        """What a tensor placed here reports as its device ("mps" -> "mps:0")."""
        d = torch.device(self.device)
        return str(d) if d.index is not None or d.type == "meta" else f"{d.type}:0"

    def __str__(self) -> str:  # a test's id
        return "simulated" if self.simulated else self.device


SIMULATED = Target(FAKE, simulated=True, stand_in="fake")


def targets(host: Host | None = None) -> list[Target]:
    """What the device tests run over: the simulated target, then every real device present."""
    host = host or Host.here()
    return [SIMULATED, *(Target(f"cuda:{i}", devices=host.cuda) for i in range(host.cuda)),
            *([Target("mps")] if host.mps else [])]


def page(host: Host | None = None) -> Target:
    """The target the page uses: the first real device when there is one, else the simulated one."""
    return (targets(host)[1:] or [SIMULATED])[0]


def for_scenario(sc, target: Target | None = None, host: Host | None = None) -> Target:
    """The target one scenario runs on from `target` (default: the page's).

    A scenario that needs no GPU runs on the host whatever the target (its outcome may still depend on
    the host: a CUDA checkpoint loads differently where CUDA is). One that needs `sc.devices` devices of
    a kind in `sc.real_on` runs on a real target that has them, and otherwise is simulated on its
    stand-in: fake tensors on fake cuda:0 (fake cuda:1 with cuda:0 beside it for two devices), or meta.
    """
    target = target or page(host)
    if not sc.needs_gpu:
        return target
    real_kind = "cuda" if target.kind == "cuda2" else target.kind
    if not target.simulated and real_kind in sc.real_on and target.devices >= sc.devices:
        return replace(target, device="cuda:1") if sc.devices == 2 and target.device == "cuda:0" else target
    if sc.stand_in == "meta":
        return Target("meta", simulated=True, stand_in="meta")
    return Target(f"cuda:{sc.devices - 1}", simulated=True, stand_in="fake", devices=sc.devices)


def fake_copy(model, mode, device: str = FAKE, left_behind: str | None = None):
    """A copy of `model` whose parameters and buffers are fake tensors on `device` (no data copied).

    The module named `left_behind` keeps its tensors on the (fake) CPU. Fake
    parameters do not require grad: autograd would need a real CUDA runtime.
    """
    memo: dict[int, object] = {}
    for mod_name, mod in model.named_modules():
        behind = left_behind is not None and (mod_name == left_behind or mod_name.startswith(left_behind + "."))
        where = "cpu" if behind else device
        for tensors, is_param in ((mod._parameters, True), (mod._buffers, False)):
            for x in tensors.values():
                if x is None or id(x) in memo:
                    continue
                fake = mode.from_tensor(x.detach())
                with mode:
                    fake = fake.to(where)
                memo[id(x)] = torch.nn.Parameter(fake, requires_grad=False) if is_param else fake
    return copy.deepcopy(model, memo)


@contextmanager
def no_driver_for_absent_gpus(host: Host | None = None):
    """Fake CUDA devices this host does not have stay off the driver while the lab's fake tensors are made and run.

    Where CUDA is available, FakeTensor makes one real tensor on each fake CUDA device it meets
    (`fake_tensor.init_gpu_context`, so that a later backward finds a context), so a fake `cuda:1` on a one-GPU
    host raised "invalid device ordinal" (torch 2.13 skips that call only through a bug, fixed upstream). The
    lab's fake runs take no backward (no_grad, parameters without grad): for an ordinal at or above this host's
    count the call is skipped; the devices present are initialised as FakeTensor does it."""
    original = getattr(fake_tensor, "init_gpu_context", None)
    present = (host or Host.here()).cuda
    if original is None:
        yield
        return

    def only_present(device: torch.device) -> None:
        if device.type == "cuda" and (device.index or 0) >= present:
            return  # a simulated GPU: nothing real to initialise
        original(device)

    fake_tensor.init_gpu_context = only_present
    try:
        yield
    finally:
        fake_tensor.init_gpu_context = original


class Run:
    """One scenario's run on a target: one FakeTensorMode when the target is fake, one way to place
    tensors and modules on it, one context to run the failing line in (fake GPUs this host lacks never
    reach the driver: `no_driver_for_absent_gpus`)."""

    def __init__(self, target: Target):
        self.target = target
        self.mode = FakeTensorMode(allow_non_fake_inputs=True) if target.stand_in == "fake" else None

    def place(self, x, device: str | None = None, left_behind: str | None = None):
        """A private copy of module or tensor `x` on the target (or on `device`, another device of its kind).

        A module: fake parameters when the target is fake, else `copy.deepcopy(x).to(device)`; its submodule
        `left_behind` stays on the CPU. A tensor: `x.to(device)`, or a fake tensor on the fake device.
        """
        device = device or self.target.device
        if isinstance(x, torch.nn.Module):
            if self.mode is not None:
                with no_driver_for_absent_gpus():
                    return fake_copy(x, self.mode, device, left_behind)
            moved = copy.deepcopy(x).to(device)
            if left_behind is not None:
                moved.get_submodule(left_behind).to("cpu")
            return moved
        if self.mode is not None:
            with self.mode, no_driver_for_absent_gpus():
                return self.mode.from_tensor(x).to(device)
        return x.to(device)

    @contextmanager
    def running(self):
        """Where the failing line runs: inside the fake mode when the target is fake; no autograd either way."""
        fake = self.mode is not None
        with self.mode if fake else nullcontext(), no_driver_for_absent_gpus() if fake else nullcontext(), \
                torch.no_grad():
            yield
