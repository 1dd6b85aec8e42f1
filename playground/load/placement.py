"""Placement before loading: the plan Accelerate's planner makes for per-device memory limits, from config.json alone.

`plan(cfg, dtype, placement)` builds the model on the meta device and asks the planner `from_pretrained`
itself runs for `device_map="auto"` (Transformers' port of Accelerate's `get_balanced_memory` and
`infer_auto_device_map`) where each block goes: a `PlacementPlan`, one `Block` per block in order.
`guard` refuses, before a weight is read, a limit below one block, a plan that needs the disk without
the disk tier, and a plan the RAM or a GPU cannot hold. The offload folder (`new_folder`) lives in the
process's temporary folder. See docs/placement.md.
"""

from __future__ import annotations

import atexit
import errno
import logging
import shutil
import tempfile
import warnings
from dataclasses import asdict, dataclass, field
from pathlib import Path

import torch

from playground.core import leftovers
from playground.core.errors import UserError
from playground.core.i18n import Said, as_text, said
from playground.core.inputs import Placement
from playground.core.paths import by_role
from playground.core.units import fmt_bytes, fmt_si
from playground.hw import devices
from playground.hw.devices import DeviceInfo, Dtype
from playground.load import checkpoint, estimate, quantize
from playground.load.catalog import ModelConfig

OFFLOAD_PREFIX = "playground-offload-"  # the offload folders' names: <prefix><pid>-<start>-<random>
FAST = ("cuda", "mps")  # the kinds whose presence makes "cpu" a tier that weights are copied in from


@dataclass(frozen=True)
class Block:
    """One unit of placement, in the order the model registers them (GPT-2: wte, wpe, h.0 ... h.N, ln_f, lm_head):
    a block Accelerate never splits, or a module with no children. `bytes` counts its tensors once (a tied weight
    is counted where it first appears: `tied_to` names it)."""

    name: str
    bytes: int
    tier: str  # "cuda:0", "mps", "cpu", "disk"
    tied_to: str | None = None


@dataclass
class PlacementPlan:
    model: str
    dtype: str
    limits: str  # the Placement as written ("cpu=120MB,disk")
    max_memory: dict[str, int]  # what each tier was offered, in Accelerate's order ("cuda:0", "mps", "cpu")
    offered_by: dict[str, str]  # per tier: "limit" (the visitor's) or "free" (what it has free here)
    blocks: list[Block]
    device_map: dict[str, str]  # the planner's answer, as it gave it (values as strings)
    main_device: str  # where the forward pass runs: the first GPU in the plan, else the CPU
    largest_block: str
    largest_block_bytes: int
    absent: list[str] = field(default_factory=list)  # devices planned for that this machine does not have
    warnings: list[str] = field(default_factory=list)  # what the planner warned, live

    @property
    def by_tier(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for b in self.blocks:
            out[b.tier] = out.get(b.tier, 0) + b.bytes
        return out

    @property
    def offloaded_bytes(self) -> int:
        """Bytes whose weights are not kept on the device they run on: the disk tier, and the CPU tier when
        a GPU runs the model (Accelerate's hooks copy them in for each forward pass)."""
        return sum(b.bytes for b in self.blocks if offloaded(b.tier, self.main_device))

    def max_memory_arg(self) -> dict:
        """`max_memory` as from_pretrained takes it: GPUs by index, then "mps", "cpu" (bytes)."""
        return _accelerate_keys(self.max_memory)

    def to_dict(self) -> dict:
        d = as_text(asdict(self))
        d["by_tier"], d["offloaded_bytes"] = self.by_tier, self.offloaded_bytes
        return d


def offloaded(tier: str, main_device: str) -> bool:
    return tier == "disk" or (tier == "cpu" and main_device != "cpu")


def tier_name(value: object) -> str:
    """A device map's value as a tier: 0 -> "cuda:0", torch.device("cpu") -> "cpu", "disk" stays."""
    if isinstance(value, int):
        return f"cuda:{value}"
    return str(value)


def tier_of(device_map: dict, name: str) -> str | None:
    """Where `device_map` puts module `name`: the entry for it or its nearest parent ("" is the whole model)."""
    best, found = -1, None
    for key, value in device_map.items():
        if key == "" or name == key or name.startswith(key + "."):
            if len(key) > best:
                best, found = len(key), tier_name(value)
    return found


def _planner():
    """Transformers' port of Accelerate's planner, imported on first use: the module pulls in torch.distributed's
    tensor package and sympy (2.4 s of a server's start here), which no page needs until a placement is asked for."""
    from transformers.integrations import accelerate as planner  # deferred (start-up): torch.distributed, sympy

    return planner


def _visit_blocks(model, found) -> None:
    """Call `found(name, module)` for each block, in order: a module Accelerate never splits (the model's
    `_no_split_modules`), a module with no children, or one holding parameters of its own; a module holding no
    tensor (dropout) is not a block."""
    no_split = set(getattr(model, "_no_split_modules", None) or ())

    def visit(prefix: str, module) -> None:
        for name, child in module.named_children():
            full = prefix + name
            if type(child).__name__ in no_split or not list(child.children()) or list(child.parameters(False)):
                if next(child.parameters(), None) is not None or next(child.buffers(), None) is not None:
                    found(full, child)
            else:
                visit(full + ".", child)

    visit("", model)


def block_names(model) -> list[str]:
    """The blocks' names, in order (`blocks_of` without their sizes: a walk of the modules alone)."""
    out: list[str] = []
    _visit_blocks(model, lambda name, _module: out.append(name))
    return out


def blocks_of(model) -> list[tuple[str, int, str | None]]:
    """(name, bytes, tied to) of each block, in order; modules holding no tensor (dropout) are left out.
    Sizes are those the planner uses (`compute_module_sizes`: a tied weight counted once)."""
    sizes, _ = _planner().compute_module_sizes(model)
    owner: dict[int, str] = {}
    out = []

    def found(full: str, child) -> None:
        tensors = list(child.parameters()) + list(child.buffers())
        tied = next((owner[id(x)] for x in tensors if id(x) in owner), None)
        for x in tensors:
            owner.setdefault(id(x), full)
        out.append((full, int(sizes.get(full, 0)), tied if sizes.get(full, 0) == 0 else None))

    _visit_blocks(model, found)
    return out


def _offered(placement: Placement, here: list[DeviceInfo], reclaimable: int) -> tuple[dict[str, int], dict[str, str]]:
    """Each tier's bytes: the visitor's limit, or what a device this machine has offers free (the RAM the
    memory guard counts, PLAYGROUND_MEMORY_BUDGET included; a GPU's free memory)."""
    offered, by = {}, {}
    present = [d.id for d in here if d.available and d.kind in ("cuda", "mps")] + ["cpu"]
    for device in sorted({*present, *dict(placement.limits)}, key=_order):
        limit = placement.limit(device)
        if limit is not None:
            offered[device], by[device] = limit, "limit"
        elif devices.kind_of(device) == "cuda":
            offered[device], by[device] = estimate.vram_free(devices.cuda_index(device)), "free"
        else:  # the CPU (and MPS, which shares its RAM)
            offered[device], by[device] = estimate.ram_budget()[0] + reclaimable, "free"
    return offered, by


def _order(device: str) -> tuple[int, int]:
    return ({"cuda": 0, "mps": 1, "cpu": 2}.get(devices.kind_of(device), 3), devices.cuda_index(device) or 0)


def resolved_dtype(cfg: ModelConfig, dtype: Dtype) -> torch.dtype:
    """The dtype the weights will have (from_pretrained's rules for "auto": the estimate's)."""
    stored = None
    if dtype == "auto" and cfg.folder is not None:
        try:
            stored = checkpoint.summary(cfg.folder)
        except (OSError, ValueError):
            stored = None
    name, _ = estimate.resolve_dtype(dtype, cfg.config, stored)
    if name in devices.QUANTIZED:  # what Accelerate's offload does to a quantized weight, tried just now
        error = quantize.offload_refusal()
        raise UserError.of("quant.err.placement" if error else "quant.err.placement_ran", dtype=name, error=error)
    if name not in devices.TORCH_DTYPES:
        raise UserError.of("err.auto_dtype", name=cfg.source.name, dtype=name)
    return devices.TORCH_DTYPES[name]


def plan(cfg: ModelConfig, dtype: Dtype, placement: Placement, here: list[DeviceInfo] | None = None,
         reclaimable: int = 0) -> PlacementPlan:
    """The placement from_pretrained(device_map="auto", max_memory=...) would choose, from config.json alone."""
    here = here if here is not None else devices.discover()
    tdtype = resolved_dtype(cfg, dtype)
    model = estimate.meta_model(cfg.config, tdtype)
    offered, by = _offered(placement, here, reclaimable)
    listed = blocks_of(model)
    from accelerate.utils.modeling import get_max_layer_size  # deferred (start-up): as the planner above

    planner = _planner()
    sizes, _ = planner.compute_module_sizes(model)
    no_split = set(getattr(model, "_no_split_modules", None) or ())
    largest, names = get_max_layer_size(list(model.named_children()), sizes, list(no_split))
    for device, limit in placement.limits:
        if limit < largest:  # Accelerate keeps room for the largest block where offloaded blocks run
            raise UserError.of("place.err.below_block", device=device, limit=fmt_si(limit), block=names[0],
                               size=fmt_si(largest, up=True))
    caught: list[str] = []
    with _capturing(caught):
        # the same two calls from_pretrained makes for device_map="auto" (transformers.integrations.accelerate)
        balanced = planner.get_balanced_memory(model, max_memory=_accelerate_keys(offered),
                                               no_split_module_classes=no_split)
        device_map = planner.infer_auto_device_map(model, max_memory=balanced, no_split_module_classes=no_split,
                                           no_placement_params=getattr(model, "_no_placement_params", None))
    blocks = [Block(name, size, tier_of(device_map, name) or "cpu", tied) for name, size, tied in listed]
    tiers = [b.tier for b in blocks]
    main = next((d for d in offered if d in tiers and devices.kind_of(d) in FAST), "cpu")
    live = {d.id for d in here if d.available}
    return PlacementPlan(
        model=cfg.source.name, dtype=str(tdtype).replace("torch.", ""), limits=str(placement), max_memory=offered,
        offered_by=by, blocks=blocks, device_map={k: tier_name(v) for k, v in device_map.items()}, main_device=main,
        largest_block=names[0] if names else "", largest_block_bytes=int(largest),
        absent=[d for d in offered if d != "cpu" and d not in live], warnings=caught)


def _accelerate_keys(offered: dict[str, int]) -> dict:
    return {devices.cuda_index(k) if devices.kind_of(k) == "cuda" else k: v for k, v in offered.items()}


class _capturing:
    """Collect what the planner warns (Accelerate and Transformers log it) while it runs."""

    def __init__(self, out: list[str]) -> None:
        self.out = out

    def __enter__(self):
        out = self.out

        class Handler(logging.Handler):
            def emit(self, record):
                if record.getMessage() not in out:
                    out.append(record.getMessage())

        self.handler = Handler(level=logging.WARNING)
        self.loggers = [logging.getLogger("accelerate"), logging.getLogger("transformers")]
        for lg in self.loggers:
            lg.addHandler(self.handler)
        self.warned = warnings.catch_warnings(record=True)
        self.caught = self.warned.__enter__()
        warnings.simplefilter("always")
        return self

    def __exit__(self, *exc):
        self.warned.__exit__(*exc)
        for lg in self.loggers:
            lg.removeHandler(self.handler)
        for w in self.caught:
            if str(w.message) not in self.out:
                self.out.append(str(w.message))
        return False


# ---------------------------------------------------------------- the guard (before the visitor's model is unloaded)

class RamShort(estimate.DoesNotFit):
    """More planned for the RAM than the budget leaves: the guard's kind of refusal, so that the pool may unload
    models nobody uses and try again (`playground.run.pool`), said with the placement's own figures."""

    def __init__(self, words: Said) -> None:
        UserError.__init__(self, words.text("en"), words.key, words.fields)
        self.est = None


def guard(cfg: ModelConfig, dtype: Dtype, placement: Placement, reclaimable: int = 0,
          resident: int = 0) -> PlacementPlan:
    """The plan, or a refusal before anything is read: a device this machine lacks, a limit below one block, blocks
    bound for the disk without the disk tier, or more planned for the RAM (or a GPU) than it has free (`resident`:
    RAM the models already loaded hold, `reclaimable`: the part of it given back first; see estimate.ram_budget)."""
    here = devices.discover()
    live = {d.id for d in here if d.available}
    for device, _ in placement.limits:
        if device not in live:
            raise UserError.of("place.err.absent", device=device, limits=str(placement))
    p = plan(cfg, dtype, placement, here, reclaimable)
    tiers = p.by_tier
    if tiers.get("disk") and not placement.disk:
        n = sum(b.tier == "disk" for b in p.blocks)
        raise UserError.of("place.err.needs_disk", n=n, bytes=fmt_bytes(tiers["disk"]), limits=str(placement))
    need = int(tiers.get("cpu", 0) * (1 + estimate.MARGIN))
    avail, where = estimate.ram_budget(resident)
    if need > avail + reclaimable:
        raise RamShort(said("place.err.ram", need=fmt_bytes(need), avail=fmt_bytes(avail + reclaimable), where=where))
    for device, placed in tiers.items():
        free = estimate.vram_free(devices.cuda_index(device)) if devices.kind_of(device) == "cuda" else None
        if free is not None and placed > free:
            raise UserError.of("place.err.vram", device=device, need=fmt_bytes(placed), free=fmt_bytes(free))
    return p


# ---------------------------------------------------------------- the offload folder

def offload_parent() -> Path:
    """Where offload folders are made: the process's temporary folder."""
    return Path(tempfile.gettempdir())


def new_folder(need: int) -> Path:
    """A fresh offload folder owned by this process, checked writable with room for `need` bytes (what Accelerate
    writes there when it cannot read an offloaded weight in place from a safetensors checkpoint); refused, naming
    the folder by its role, when it is not."""
    folder = None
    try:
        folder = leftovers.make(OFFLOAD_PREFIX, offload_parent())
        probe = folder / ".probe"
        probe.write_bytes(b"0")
        probe.unlink()
    except OSError as e:
        remove_folder(folder)
        raise UserError.of("place.err.folder_unwritable", why=by_role(e.strerror or type(e).__name__),
                           code=errno.errorcode.get(e.errno or 0, "?"), role=said("place.folder_role")) from None
    free = shutil.disk_usage(folder).free
    if free < need:
        remove_folder(folder)
        raise UserError.of("place.err.folder_full", need=fmt_bytes(need), free=fmt_bytes(free),
                           role=said("place.folder_role"))
    return folder


def private_copy(folder: str | Path) -> Path:
    """The checkpoint's files copied into a fresh folder of this process's (removed like an offload folder). A cold
    read needs a file no one else maps: the kernel keeps a mapped page in the page cache whatever is evicted, and a
    shared server's other visitors may hold this very checkpoint loaded (memory-mapped). Refused like an offload
    folder when there is no room for it."""
    files = [f for f in Path(folder).iterdir() if f.is_file()]
    target = new_folder(sum(f.stat().st_size for f in files))
    try:
        for f in files:
            shutil.copyfile(f, target / f.name)
    except OSError as e:
        remove_folder(target)
        raise UserError.of("place.err.folder_unwritable", why=by_role(e.strerror or type(e).__name__),
                           code=errno.errorcode.get(e.errno or 0, "?"), role=said("place.folder_role")) from None
    return target


def remove_folder(folder: str | Path | None) -> None:
    if folder:
        shutil.rmtree(folder, ignore_errors=True)


def sweep() -> list[Path]:
    """Offload folders of processes that are gone (a killed server's): removed at the next start."""
    return leftovers.sweep(offload_parent(), OFFLOAD_PREFIX)


def remove_mine() -> list[Path]:
    """This process's offload folders, at shutdown (and at any normal exit: a CLI's run leaves none)."""
    return leftovers.remove_mine(offload_parent(), OFFLOAD_PREFIX)


atexit.register(remove_mine)


def tiers_text(p: PlacementPlan) -> str:
    """The plan's bytes per tier, in order: "cpu 189.2 MiB, disk 162.2 MiB"."""
    return ", ".join(f"{k} {fmt_bytes(v)}" for k, v in p.by_tier.items())


def input_device(model) -> str:
    """Where a model's inputs go: its embedding's device, or, when the embedding is offloaded (its weight on
    `meta`), the device its Accelerate hook runs it on. (`model.device` reads the first parameter: "meta".)"""
    emb = model.get_input_embeddings()
    if emb.weight.device.type != "meta":
        return str(emb.weight.device)
    hook = getattr(emb, "_hf_hook", None)
    for h in getattr(hook, "hooks", None) or [hook]:
        if getattr(h, "execution_device", None) is not None:
            return tier_name(h.execution_device)
    return "meta"  # no hook brings its values in: a model on the meta device, with no data anywhere


# ---------------------------------------------------------------- copies for measuring (the cliff, the all-in-RAM run)

def device_map_off(model, k: int) -> dict[str, str]:
    """A device map for `model` (on meta, or loaded) with its last `k` unsplittable blocks on the disk and the
    rest on the CPU: the cliff's k-th point, as from_pretrained(device_map=...) takes it."""
    no_split = set(getattr(model, "_no_split_modules", None) or ())
    listed = [name for name, _, _ in blocks_of(model)]
    whole = [n for n in listed if type(model.get_submodule(n)).__name__ in no_split]
    off = set(whole[len(whole) - k:]) if k > 0 else set()
    return {n: "disk" if n in off else "cpu" for n in listed}


def unsplittable(model) -> int:
    """How many blocks Accelerate never splits (GPT-2's transformer.h.*): the most the cliff can offload."""
    no_split = set(getattr(model, "_no_split_modules", None) or ())
    return sum(type(model.get_submodule(n)).__name__ in no_split for n, _, _ in blocks_of(model))


def load_copy(folder: str, dtype: torch.dtype, device_map: dict | None = None, offload_folder: str | None = None):
    """A private copy of a checkpoint the slot already loaded (so every check passed), in eval mode: all in RAM
    (no device map), or placed by `device_map` with `offload_folder` for its disk tier."""
    from transformers import AutoModelForCausalLM  # deferred (start-up): catalog.import_model_classes
    kw = dict(dtype=dtype, use_safetensors=True, trust_remote_code=False, local_files_only=True)
    if device_map is not None:
        kw.update(device_map=device_map, offload_folder=offload_folder)
    return AutoModelForCausalLM.from_pretrained(folder, **kw).eval()
