"""Where does every tensor live? One row per module, read straight from the model.

`inspect(model)` lists each module's own parameters and buffers: device(s), dtype(s), element
count and bytes (numel x element_size, so right for real, meta and fake tensors, none of them
touched; a quantized weight, a tensor subclass such as torchao's Int8Tensor, by the tensors inside it, with its
class and their layout), totals with tied tensors counted once, and the modules whose placement or dtype is
mixed. A model Accelerate dispatched (`hf_device_map`) is judged against its own plan: a module where
the plan put it is not a mistake, and a `meta` tensor whose values a hook keeps in a CPU state dict or on
the disk is said to be offloaded there, by design. What is read and why it can be trusted: docs/lab.md.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import asdict, dataclass, field

import torch
from torch._subclasses.fake_tensor import FakeTensor

from playground.core.errors import UserError
from playground.hw import census
from playground.load import placemap, placement


@dataclass
class ModuleRow:
    name: str  # "" is the root module
    kind: str  # the module's class name
    devices: list[str]
    dtypes: list[str]
    params: int  # elements in the module's own parameters
    buffers: int  # elements in its own buffers
    bytes: int  # numel x element_size, tied tensors counted at their first name only
    tensors: list[str] = field(default_factory=list)  # the tensors' local names
    shared: list[str] = field(default_factory=list)  # "lm_head.weight = transformer.wte.weight"
    flags: list[dict] = field(default_factory=list)  # {"kind": "device"|"dtype"|"mixed"|"planned", ...fields}
    fake: bool = False
    offloaded: str | None = None  # a dispatched model's module whose values a hook keeps elsewhere: "disk", "cpu"
    layouts: list[str] = field(default_factory=list)  # its quantized tensors: "weight: Int8Tensor (qdata int8 [..] ...)"


@dataclass
class InspectReport:
    model: str
    rows: list[ModuleRow]
    summary: list[dict]  # one entry per (device, dtype): tensors, elements, bytes
    majority_device: str
    majority_dtype: str
    flagged: list[str]  # names of flagged modules
    counts: dict  # parameters, named_parameters, buffers, state_dict
    tied: list[list[str]]  # groups of names that are one tensor
    hf_device_map: dict | None = None
    fake: bool = False
    total_bytes: int = 0
    offloaded: list[str] = field(default_factory=list)  # modules offloaded by the plan (not flagged: by design)
    quantized: list[dict] = field(default_factory=list)  # per tensor subclass: how many, their bytes, a layout

    def to_dict(self) -> dict:
        return asdict(self)


def _is_fake(x: torch.Tensor) -> bool:
    return isinstance(x, FakeTensor)


def _dtype(x: torch.Tensor) -> str:
    return str(x.dtype).removeprefix("torch.")


def layout(x: torch.Tensor) -> str | None:
    """A tensor subclass's class and the tensors inside it ("Int8Tensor: qdata int8 [512, 512] · scale float32
    [512, 1] · zero_point int8 [512, 1]"); None for a plain tensor. The subclass itself reports the dtype and shape
    of the float weight it stands for: its bytes are the inner tensors'."""
    if census.leaves(x) == [x]:
        return None
    names = [n for n in x.__tensor_flatten__()[0] if isinstance(getattr(x, n, None), torch.Tensor)]
    inner = " · ".join(f"{n} {_dtype(getattr(x, n))} {list(getattr(x, n).shape)}" for n in names)
    return f"{type(x).__name__}: {inner}"


def inspect(model: torch.nn.Module, folder: str | None = None) -> InspectReport:
    """Read the placement of every parameter and buffer of `model` (nothing is moved or copied). `folder`: a
    dispatched model's offload folder, where the hooks may keep the values of what went to the disk."""
    if not isinstance(model, torch.nn.Module):
        raise UserError.of("err.inspect_model")
    plan = getattr(model, "hf_device_map", None)
    plan = plan if isinstance(plan, dict) and plan else None
    homes = placemap.offload_homes(model, folder) if plan is not None else {}
    tiers: dict[str, set[str]] = defaultdict(set)  # per module: where its tensors' values are (meta: the hook's home)
    first_name: dict[int, str] = {}
    rows: list[ModuleRow] = []
    by_place: dict[tuple[str, str], list[int]] = defaultdict(lambda: [0, 0, 0])  # tensors, elements, bytes
    device_bytes: Counter = Counter()
    dtype_bytes: Counter = Counter()
    quantized: dict[str, dict] = {}
    any_fake = False
    for mod_name, mod in model.named_modules():
        own = [(n, p, True) for n, p in mod.named_parameters(recurse=False)]
        own += [(n, b, False) for n, b in mod.named_buffers(recurse=False)]
        if not own:
            continue
        row = ModuleRow(name=mod_name, kind=type(mod).__name__, devices=[], dtypes=[], params=0, buffers=0, bytes=0)
        for local, x, is_param in own:
            full = f"{mod_name}.{local}" if mod_name else local
            row.tensors.append(local)
            dev, dt, packed = str(x.device), _dtype(x), layout(x)
            if packed is not None:  # a quantized weight: named by its class, kept out of the dtype majority
                dt = type(x).__name__
                row.layouts.append(f"{local}: {packed}")
            if dev not in row.devices:
                row.devices.append(dev)
            if dt not in row.dtypes:
                row.dtypes.append(dt)
            home = homes.get(full) if x.device.type == "meta" else None
            tiers[mod_name].add(home.tier if home is not None else dev)
            if is_param:
                row.params += x.numel()
            else:
                row.buffers += x.numel()
            fake = _is_fake(x)
            row.fake |= fake
            any_fake |= fake
            if id(x) in first_name:  # the same tensor under a second name: count its bytes once
                row.shared.append(f"{full} = {first_name[id(x)]}")
                continue
            first_name[id(x)] = full
            nbytes = census.nbytes(x)
            row.bytes += nbytes
            if packed is not None:
                q = quantized.setdefault(dt, dict(tensor=dt, count=0, bytes=0, float_bytes=0, layout=packed))
                q["count"] += 1
                q["bytes"] += nbytes
                q["float_bytes"] += x.nbytes  # what the subclass says it is: numel x its dtype's size
            place = by_place[(dev, dt)]
            place[0] += 1
            place[1] += x.numel()
            place[2] += nbytes
            device_bytes[dev] += nbytes
            if x.is_floating_point() and packed is None:
                dtype_bytes[dt] += nbytes
        rows.append(row)

    majority_device = device_bytes.most_common(1)[0][0] if device_bytes else ""
    majority_dtype = dtype_bytes.most_common(1)[0][0] if dtype_bytes else ""
    flagged, offloaded = [], []
    for row in rows:
        if plan is not None:  # Accelerate's plan says where each module belongs: judged against it, not the majority
            want = placement.tier_of(plan, row.name)
            found = tiers[row.name]
            if want is not None and found == {want}:
                if "meta" in row.devices:  # on meta, its values kept by a hook in RAM or on the disk: by design
                    row.offloaded = want
                    offloaded.append(row.name)
            else:
                row.flags.append({"kind": "planned", "device": ", ".join(sorted(found)), "planned": want or "?"})
        elif len(row.devices) > 1:
            row.flags.append({"kind": "mixed", "devices": ", ".join(row.devices)})
        elif row.devices and row.devices[0] != majority_device:
            row.flags.append({"kind": "device", "device": row.devices[0], "majority": majority_device})
        floats = [d for d in row.dtypes if d in dtype_bytes]  # a dtype differing from the rest is a mistake either way
        if floats and majority_dtype and all(d != majority_dtype for d in floats):
            row.flags.append({"kind": "dtype", "dtype": ", ".join(floats), "majority": majority_dtype})
        if row.flags:
            flagged.append(row.name)

    summary = [
        {"device": dev, "dtype": dt, "tensors": v[0], "elements": v[1], "bytes": v[2]}
        for (dev, dt), v in sorted(by_place.items(), key=lambda kv: -kv[1][2])
    ]
    groups: dict[int, list[str]] = defaultdict(list)
    for name, p in model.named_parameters(remove_duplicate=False):
        groups[id(p)].append(name)
    tied = [names for names in groups.values() if len(names) > 1]
    counts = {
        "parameters()": sum(1 for _ in model.parameters()),
        "named_parameters()": sum(1 for _ in model.named_parameters()),
        "buffers()": sum(1 for _ in model.buffers()),
        "state_dict()": len(model.state_dict()),
    }
    dmap = getattr(model, "hf_device_map", None)
    return InspectReport(
        model=type(model).__name__, rows=rows, summary=summary,
        majority_device=majority_device, majority_dtype=majority_dtype, flagged=flagged,
        counts=counts, tied=tied,
        hf_device_map={str(k): str(v) for k, v in dmap.items()} if isinstance(dmap, dict) else None,
        fake=any_fake, total_bytes=sum(device_bytes.values()), offloaded=offloaded, quantized=list(quantized.values()),
    )
