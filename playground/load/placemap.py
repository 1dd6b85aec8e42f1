"""The placement map: where each block's weights actually are, read from the loaded model's tensors and hooks.

`read(model, plan)` walks the blocks in order (`placement.blocks_of`) and, for each, reads its
tensors' devices (`p.device`) and, for a tensor on `meta`, the Accelerate hook that holds its
values (`AlignDevicesHook.weights_map`: a CPU state dict, the memory-mapped checkpoint, or a file in
the offload folder). Beside it: the tier `hf_device_map` intended and the tier the plan chose,
any difference flagged, and each boundary where activations hop devices. See docs/placement.md.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import NamedTuple

from accelerate.hooks import AlignDevicesHook
from accelerate.utils import named_module_tensors
from accelerate.utils.offload import OffloadedWeightsLoader

from playground.load import checkpoint
from playground.load.placement import PlacementPlan, blocks_of, offloaded, tier_name, tier_of

# Where the values of a tensor live: in the tensor (resident), or, for a tensor on meta, behind a hook.
RESIDENT, STATE_DICT, CHECKPOINT, FOLDER, NOWHERE = "resident", "cpu-state-dict", "checkpoint", "offload-folder", "none"


@dataclass
class BlockPlace:
    name: str
    bytes: int
    planned: str | None  # the plan's tier (None: no plan, the model was not loaded with limits)
    intended: str | None  # hf_device_map's (None: no device map, the model was placed by .to())
    actual: str  # read from the tensors: "cpu", "cuda:0", "disk", "meta" (no values anywhere), "mixed"
    store: str  # where the values are: RESIDENT, STATE_DICT, CHECKPOINT, FOLDER, NOWHERE, or "mixed"
    execution: str  # the device its forward pass runs on
    tied_to: str | None = None
    tensor_devices: list[str] = field(default_factory=list)  # the devices its tensors report (p.device)
    differs: bool = False  # planned, intended and actual do not all agree


@dataclass
class PlacementMap:
    model: str
    limits: str | None
    model_device: str  # what `model.device` says (the first parameter's device)
    main_device: str  # where the forward pass starts (inputs go there)
    blocks: list[BlockPlace]
    hooks: int  # modules carrying an Accelerate AlignDevicesHook
    offloading_hooks: int  # of those, the ones that bring weights in for each forward pass
    hops: list[dict] = field(default_factory=list)  # {"after": block, "src": device, "dst": device}

    @property
    def offloaded_bytes(self) -> int:
        return sum(b.bytes for b in self.blocks if offloaded(b.actual, self.main_device))

    @property
    def differences(self) -> int:
        return sum(b.differs for b in self.blocks)

    def by_tier(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for b in self.blocks:
            out[b.actual] = out.get(b.actual, 0) + b.bytes
        return out

    def to_dict(self) -> dict:
        d = asdict(self)
        d["offloaded_bytes"], d["differences"], d["by_tier"] = self.offloaded_bytes, self.differences, self.by_tier()
        return d


def _align_hooks(module) -> list[AlignDevicesHook]:
    hook = getattr(module, "_hf_hook", None)
    return [h for h in (getattr(hook, "hooks", None) or [hook]) if isinstance(h, AlignDevicesHook)]


class Home(NamedTuple):
    """Where an offloaded tensor's values live."""

    tier: str  # "cpu" (a state dict in RAM) or "disk" (a file)
    store: str  # STATE_DICT, CHECKPOINT, FOLDER (or NOWHERE)
    execution: str  # the device its hook brings it to
    file: str | None = None  # the file holding it (disk tier)
    key: str | None = None  # its name in that file


def offload_homes(model, folder: str | None = None) -> dict[str, Home]:
    """Every tensor an offloading hook brings in for each forward pass, by its full name."""
    out: dict[str, Home] = {}
    for mod_name, module in model.named_modules():
        for hook in _align_hooks(module):
            if not hook.offload or hook.weights_map is None:
                continue
            wm = hook.weights_map
            dataset, prefix = getattr(wm, "dataset", wm), getattr(wm, "prefix", "")
            execution = tier_name(hook.execution_device) if hook.execution_device is not None else "cpu"
            for name, _ in named_module_tensors(module, include_buffers=hook.offload_buffers,
                                                recurse=hook.place_submodules, remove_non_persistent=True):
                full = f"{mod_name}.{name}" if mod_name else name
                out[full] = _home(dataset, prefix + name, folder, execution)
    return out


def _home(dataset, key: str, folder: str | None, execution: str) -> Home:
    """One offloaded value's home: a CPU state dict is the "cpu" tier; a file is the "disk" tier."""
    if isinstance(dataset, OffloadedWeightsLoader):
        if key in dataset.state_dict:
            return Home("cpu", STATE_DICT, execution)
        info = dataset.index.get(key)
        if info is None:
            return Home("meta", NOWHERE, execution)
        file = info.get("safetensors_file")
        if file is None:  # Accelerate's own .dat files, in the offload folder
            return Home("disk", FOLDER, execution, str(Path(dataset.save_folder or folder or ".") / f"{key}.dat"))
        inside = folder is not None and Path(file).resolve().is_relative_to(Path(folder).resolve())
        return Home("disk", FOLDER if inside else CHECKPOINT, execution, file, info.get("weight_name", key))
    return Home("cpu", STATE_DICT, execution) if key in dataset else Home("meta", NOWHERE, execution)


def offloaded_ranges(model, folder: str | None = None) -> list[tuple[str, int, int]]:
    """(file, offset, length) of every offloaded weight on the disk tier: the bytes a cold pass reads."""
    out, headers = set(), {}
    for home in offload_homes(model, folder).values():
        if home.tier != "disk" or home.file is None:
            continue
        if home.key is None:  # a .dat file holds one tensor, whole
            out.add((home.file, 0, Path(home.file).stat().st_size))
            continue
        if home.file not in headers:
            headers[home.file] = checkpoint.tensor_ranges(home.file)
        start, end = headers[home.file][home.key]
        out.add((home.file, start, end - start))
    return sorted(out)


def read(model, plan: PlacementPlan | None = None, name: str = "", limits: str | None = None,
         folder: str | None = None) -> PlacementMap:
    """The placement of the loaded `model`, block by block, from its tensors and hooks (and beside it the plan's and
    hf_device_map's tiers, when there are any)."""
    homes = offload_homes(model, folder)
    intended_map = getattr(model, "hf_device_map", None) or None
    planned_map = {b.name: b.tier for b in plan.blocks} if plan is not None else None
    blocks = []
    for block_name, size, tied in blocks_of(model):
        module = model.get_submodule(block_name)
        tiers, stores, executions, devs = set(), set(), set(), []
        for tname, x in list(module.named_parameters()) + list(module.named_buffers()):
            full = f"{block_name}.{tname}"
            devs.append(str(x.device))
            if x.device.type == "meta":
                tier, store, execution = homes.get(full, Home("meta", NOWHERE, "meta"))[:3]
            else:
                tier, store, execution = str(x.device), RESIDENT, str(x.device)
            tiers.add(tier), stores.add(store), executions.add(execution)
        actual = tiers.pop() if len(tiers) == 1 else "mixed"
        store = stores.pop() if len(stores) == 1 else "mixed"
        execution = executions.pop() if len(executions) == 1 else "mixed"
        planned = planned_map.get(block_name) if planned_map is not None else None
        intended = tier_of(intended_map, block_name) if intended_map else None
        differs = any(x is not None and x != actual for x in (planned, intended)) or actual in ("meta", "mixed")
        blocks.append(BlockPlace(block_name, size, planned, intended, actual, store, execution, tied,
                                 sorted(set(devs)), differs))
    hops, last = [], None
    for b in blocks:
        if last is not None and b.execution != last.execution and "mixed" not in (b.execution, last.execution):
            hops.append({"after": last.name, "src": last.execution, "dst": b.execution})
        last = b
    hooked = [h for _, m in model.named_modules() for h in _align_hooks(m)]
    first = next(model.parameters(), None)
    main = blocks[0].execution if blocks else "cpu"
    return PlacementMap(model=name, limits=limits, model_device=str(first.device) if first is not None else "cpu",
                        main_device=main, blocks=blocks, hooks=len(hooked),
                        offloading_hooks=sum(h.offload for h in hooked), hops=hops)
