"""Where a loaded model lives: one description, made once when it loads, read by every panel that says it.

`locate(model, asked, ...)` reads it from the model itself: each tensor's device, and for a tensor on the `meta`
device (Accelerate offloaded it) the hook that holds its values, a CPU state dict (the "cpu" tier) or a file
(the "disk" tier). The result, a `ModelLocation`, gives per tier the bytes and blocks there and whether the tier
is offloaded (its weights are brought to the device the forward pass runs on, block by block, for every
forward pass); where inputs must go; and what the device asked for became (`auto` resolved). The banner, the
ledger, Speed, Inspect, the offload cost, the cliff and the CLI read this one description instead of each
deriving it again. Why a model can live in several places at once: docs/placement.md.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import torch

from playground.core.units import fmt_bytes
from playground.hw import census
from playground.load import placemap, placement

TIER_ORDER = ("cuda", "mps", "cpu", "disk")  # Accelerate fills GPUs first, then the CPU, then the disk


@dataclass(frozen=True)
class Tier:
    name: str  # "cuda:0", "mps", "cpu" (RAM), "disk"
    bytes: int  # the weights whose values live there, each tensor once
    blocks: int  # the blocks (Accelerate's units: placement.blocks_of) wholly there
    offloaded: bool  # brought to the device the forward pass runs on, for every forward pass (Accelerate's hooks)


@dataclass(frozen=True)
class ModelLocation:
    asked: str  # the device the visitor chose: "cpu", "cuda:0", "mps", "auto"
    runs_on: str  # where the forward pass starts and the inputs must go (the embedding's execution device)
    tiers: tuple[Tier, ...]  # in Accelerate's order: GPUs, MPS, the CPU, the disk
    hooks: int = 0  # modules carrying an Accelerate AlignDevicesHook (0: placed by .to() alone)
    limits: str | None = None  # the memory limits it was loaded with ("cpu=200MB,disk"), if any
    blocks: int = 0  # the model's blocks, wherever they are

    @property
    def offloaded_bytes(self) -> int:
        return sum(t.bytes for t in self.tiers if t.offloaded)

    @property
    def offloaded_blocks(self) -> int:
        return sum(t.blocks for t in self.tiers if t.offloaded)

    @property
    def offloaded(self) -> bool:
        """Some weights are brought in for every forward pass: a decode step pays for copying them."""
        return self.offloaded_bytes > 0

    @property
    def weights_bytes(self) -> int:
        return sum(t.bytes for t in self.tiers)

    def bytes_on(self, tier: str) -> int:
        return sum(t.bytes for t in self.tiers if t.name == tier)

    @property
    def ram_bytes(self) -> int:
        """Weights held in this process's RAM (tensors on the CPU, or Accelerate's CPU state dict): what unloading
        the model gives back. A GPU's weights and the disk tier's are not in RAM."""
        return self.bytes_on("cpu")

    @property
    def became(self) -> str:
        """What the device asked for became, in a few words: "cpu", "cuda:0", "cpu 135.2 MiB + disk 216.3 MiB"."""
        if len(self.tiers) == 1:
            return self.tiers[0].name
        return " + ".join(f"{t.name} {fmt_bytes(t.bytes)}" for t in self.tiers)

    def to_dict(self) -> dict:
        d = asdict(self)
        d.update(offloaded_bytes=self.offloaded_bytes, offloaded_blocks=self.offloaded_blocks,
                 offloaded=self.offloaded, ram_bytes=self.ram_bytes, became=self.became)
        return d


def _order(name: str) -> tuple[int, int]:
    kind, _, index = name.partition(":")
    return (TIER_ORDER.index(kind) if kind in TIER_ORDER else len(TIER_ORDER), int(index or 0))


def locate(model: torch.nn.Module, asked: str, plan: placement.PlacementPlan | None = None,
           offload_folder: str | None = None, counted: census.Census | None = None) -> ModelLocation:
    """Where `model` lives now (see the module docstring). `counted`: its tensors counted already (the loader's
    census), so that a model placed by `.to()` alone is described without walking them again."""
    limits = plan.limits if plan is not None else None
    c = counted if counted is not None else census.census(model)
    if not getattr(model, "hf_device_map", None) and not c.hooked:
        # placed by from_pretrained and .to(): every weight's values are in its tensor, on its device
        names = placement.block_names(model)
        runs_on = placement.input_device(model)
        tiers = tuple(Tier(dev, n, len(names) if len(c.by_device) == 1 else 0, False)
                      for dev, n in sorted(c.by_device.items(), key=lambda kv: _order(kv[0])))
        return ModelLocation(asked, runs_on, tiers, 0, limits, len(names))
    found = placemap.read(model, plan, folder=offload_folder)
    by: dict[str, list[int]] = {}
    for b in found.blocks:
        bytes_blocks = by.setdefault(b.actual, [0, 0])
        bytes_blocks[0] += b.bytes
        bytes_blocks[1] += 1
    tiers = tuple(Tier(name, n, k, placement.offloaded(name, found.main_device))
                  for name, (n, k) in sorted(by.items(), key=lambda kv: _order(kv[0])))
    return ModelLocation(asked, found.main_device, tiers, found.hooks, limits, len(found.blocks))

