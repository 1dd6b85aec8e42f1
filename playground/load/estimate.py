"""Estimate before loading: how many bytes a model will take, and refuse what will not fit.

The weights' size is known before a single weight is read: the model is built on
PyTorch's `meta` device (shapes and dtypes, no storage) and Accelerate sums
numel x element size per module. The guard compares the weights plus
Accelerate's documented ~20% margin with the RAM available (or
PLAYGROUND_MEMORY_BUDGET) and, for a GPU, its free VRAM. Why it is built the way
it is (the untied LM head, `_keep_in_fp32_modules`, the process-wide state meta
building touches): docs/estimate.md.
"""

from __future__ import annotations

import copy
import functools
import json
import re
from dataclasses import asdict, dataclass, field

import torch
from accelerate import init_empty_weights
from accelerate.utils import calculate_maximum_sizes

from playground.core import settings
from playground.core.errors import UserError
from playground.core.i18n import Said, as_text, said
from playground.core.units import fmt_bytes
from playground.hw import devices, memory
from playground.hw.devices import DeviceInfo, Dtype
from playground.load import checkpoint, kv, quantize
from playground.load.catalog import ModelConfig

MARGIN = 0.20  # Accelerate's documented inference overhead: "up to about 20% more than the weights"


class DoesNotFit(UserError):
    """The guard's refusal: a UserError (shown to the visitor), distinguishable from bad input.
    Its sentence is put together from the estimate's facts (`refusal`), said in English or Chinese."""

    def __init__(self, est: "Estimate") -> None:
        words = refusal(est)
        super().__init__(words.text("en"), words.key, words.fields)
        self.est = est


# -- budgets -------------------------------------------------------------------
def ram_budget(resident: int = 0) -> tuple[int, Said]:
    """(bytes the guard may use, where the number comes from). `resident`: RAM the models already loaded
    for visitors hold (the pool's): PLAYGROUND_MEMORY_BUDGET covers them too, so they come off it; the
    system's available figure has them taken already."""
    avail = memory.available_bytes()
    s = settings.read()  # a malformed budget stops the server at start-up (settings.check_or_exit)
    budget = s.memory_budget_bytes
    if budget is not None and budget - resident < avail:
        if resident > 0:
            return max(budget - resident, 0), said("est.where.budget_held", env=settings.MEMORY_BUDGET_ENV,
                                                   value=s.memory_budget, held=fmt_bytes(resident),
                                                   system=fmt_bytes(avail))
        return budget, said("est.where.budget", env=settings.MEMORY_BUDGET_ENV, value=s.memory_budget,
                            system=fmt_bytes(avail))
    if resident > 0:
        return avail, said("est.where.system_held", held=fmt_bytes(resident))
    return avail, said("est.where.system")


def vram_free(index: int) -> int:
    """Free bytes on cuda:index as the driver reports them (cudaMemGetInfo)."""
    return memory.vram_free(index)


# -- building on meta ----------------------------------------------------------
def meta_model(config, dtype: torch.dtype):
    """The causal LM built on the meta device in `dtype`, LM head tied as from_pretrained ties it."""
    from transformers import AutoModelForCausalLM  # deferred (start-up): catalog.import_model_classes
    config = copy.deepcopy(config)  # from_config(dtype=...) writes the dtype into the config it gets
    with init_empty_weights():
        model = AutoModelForCausalLM.from_config(config, dtype=dtype, trust_remote_code=False)
    model.tie_weights()  # Transformers 5: untied under init_empty_weights until this call
    _apply_dtype_plan(model, dtype)
    return model


def _apply_dtype_plan(model, dtype: torch.dtype) -> None:
    """Modules a model keeps in float32 (`_keep_in_fp32_modules`) stay float32 when loaded in 16 bits."""
    plan = model._get_dtype_plan(dtype) if hasattr(model, "_get_dtype_plan") else {}
    if not plan:
        return
    pattern = re.compile("|".join(f"(?:{re.escape(k)})" for k in plan))
    for name, param in model.named_parameters():
        if pattern.search(name):
            param.data = param.data.to(torch.float32)  # on meta: changes the dtype, allocates nothing


@dataclass(frozen=True)
class MetaFacts:
    """What the meta-device build tells: sizes by Accelerate's accounting, and the tying."""

    architecture: str
    param_count: int
    total: int
    largest: int
    names: tuple[str, ...]
    tied: bool


def meta_facts(config, dtype: torch.dtype) -> MetaFacts:
    """Build on meta once per (config, dtype) and remember the answer: building even an empty
    model runs every module's __init__ (tens of ms for GPT-2 small), and the answer depends
    only on the config's text and the dtype."""
    return _meta_facts(config.to_json_string(use_diff=False), type(config).__name__, str(dtype))


@functools.lru_cache(maxsize=64)
def _meta_facts(config_json: str, config_class: str, dtype_name: str) -> MetaFacts:
    from transformers import AutoConfig  # deferred (start-up): catalog.import_model_classes
    cfg_dict = json.loads(config_json)
    config = AutoConfig.for_model(cfg_dict.pop("model_type"), **cfg_dict)
    m = meta_model(config, getattr(torch, dtype_name.replace("torch.", "")))
    total, largest, names = sizes(m)
    emb, out = m.get_input_embeddings(), m.get_output_embeddings()
    tied = out is not None and emb is not None and out.weight is emb.weight
    return MetaFacts(type(m).__name__, sum(p.numel() for p in m.parameters()), total, largest, tuple(names), tied)


@functools.lru_cache(maxsize=16)
def _quantized_bytes(config_json: str, name: str) -> int:
    from transformers import AutoConfig  # deferred (start-up): catalog.import_model_classes
    cfg_dict = json.loads(config_json)
    config = AutoConfig.for_model(cfg_dict.pop("model_type"), **cfg_dict)
    return quantize.meta_bytes(meta_model(config, devices.QUANTIZED_BASE), name)


def quantized_bytes(config, name: str) -> int:
    """The weights' bytes once quantized as `name` (int8, int4): the model built on meta in the base dtype, then
    quantized there by torchao (shapes only), counted as the loaded model is counted (`census.nbytes`): scales and
    zero points included, the layers it skips in the base dtype. Once per (config, dtype)."""
    return _quantized_bytes(config.to_json_string(use_diff=False), name)


def sizes(model) -> tuple[int, int, list[str]]:
    """(total bytes, largest layer bytes, its names) by Accelerate's own accounting."""
    total, (largest, names) = calculate_maximum_sizes(model)
    return int(total), int(largest), list(names)


def context_length(config) -> int | None:
    """The most tokens the model attends over, from its config (GPT-2 names it `n_positions`), or None.
    The one reading of it: the estimate, the load report, the context check before a generation."""
    return getattr(config, "max_position_embeddings", None) or getattr(config, "n_positions", None)


def resolve_dtype(dtype: Dtype, config, stored: dict | None) -> tuple[str, Said]:
    """The dtype the weights will have once loaded, and why (from_pretrained's rules for 'auto')."""
    if dtype != "auto":
        name = devices.dtype_name(dtype)
        return name, said("est.dtype.asked", dtype=name)
    cfg_dtype = getattr(config, "dtype", None)
    if cfg_dtype is not None:
        name = str(cfg_dtype).replace("torch.", "")
        return name, said("est.dtype.config", dtype=name)
    if stored and stored.get("dtype"):
        return stored["dtype"], said("est.dtype.stored", dtype=stored["dtype"])
    name = str(torch.get_default_dtype()).replace("torch.", "")
    return name, said("est.dtype.default", dtype=name)


# -- the estimate --------------------------------------------------------------
@dataclass
class Estimate:
    model: str
    source: str
    device: str
    dtype: str  # the dtype the weights will have
    dtype_requested: str
    dtype_reason: Said
    architecture: str
    param_count: int
    weights_bytes: int
    weights_bytes_by_dtype: dict
    largest_layer_bytes: int
    largest_layer_names: list[str]
    kv_bytes_per_token: int
    kv_formula: Said
    context_length: int | None
    kv_bytes_full_context: int | None
    tied_lm_head: bool
    checkpoint: dict | None
    margin: float
    required_bytes: int  # weights x (1 + margin), what must fit in RAM
    available_bytes: int
    available_source: Said | None
    build_bytes: int = 0  # a synthetic model's first use: its float32 build in RAM, with the margin
    vram: list[dict] = field(default_factory=list)  # per GPU: free, required, fits
    fits: bool = True
    reason: Said | None = None
    notes: list[Said] = field(default_factory=list)

    def to_dict(self) -> dict:
        """The API's dict: every sentence said in English, the notes joined into `note`."""
        d = as_text(asdict(self))
        d["note"] = "; ".join(d.pop("notes"))
        return d


def estimate_model(cfg: ModelConfig, dev: DeviceInfo, dtype: Dtype, reclaimable: int = 0,
                   all_dtypes: bool = True, resident: int = 0) -> Estimate:
    """Everything about the model's size, and whether it fits here, without allocating weights.

    `resident`: bytes of RAM the models loaded for visitors hold (see `ram_budget`); `reclaimable`:
    the part of it freed before this one loads (models the pool unloads first), counted as
    available. `all_dtypes=False` builds the meta
    model only in the dtype asked for (the guard's fast path); the other dtypes' sizes are
    then filled in only if the load is refused, to suggest one."""
    stored = None
    if cfg.folder is not None:
        try:
            stored = checkpoint.summary(cfg.folder)
        except (OSError, ValueError) as e:
            stored = dict(error=f"could not read the safetensors header: {e}")
    resolved, reason = resolve_dtype(dtype, cfg.config, stored)
    quantized = resolved in devices.QUANTIZED
    loaded_as = devices.dtype_name(devices.QUANTIZED_BASE) if quantized else resolved  # what from_pretrained makes
    if loaded_as not in devices.TORCH_DTYPES:
        raise UserError.of("err.auto_dtype", name=cfg.source.name, dtype=resolved)

    by_dtype: dict[str, int] = {}
    main = None
    for name, tdtype in devices.TORCH_DTYPES.items():
        if not all_dtypes and name != loaded_as:
            continue
        facts = meta_facts(cfg.config, tdtype)
        by_dtype[name] = facts.total
        if name == loaded_as:
            main = facts
    if cfg.source.kind == "synthetic" and not cfg.built and "float32" not in by_dtype:
        by_dtype["float32"] = meta_facts(cfg.config, torch.float32).total  # ensure() builds in float32
    if quantized:  # torchao is imported for this alone: a float estimate never sizes the quantized dtypes
        by_dtype[resolved] = quantized_bytes(cfg.config, resolved)
    tdtype = devices.TORCH_DTYPES[loaded_as]  # the KV cache and the activations stay in the base dtype
    keeps = kv.kept(cfg.config)  # read once for both figures
    per = kv.per_token(cfg.config, tdtype, keeps)
    ks = kv.shape(cfg.config)
    ctx = context_length(cfg.config)
    est = Estimate(
        model=cfg.source.name, source=cfg.source.kind, device=dev.id, dtype=resolved,
        dtype_requested=devices.dtype_name(dtype), dtype_reason=reason,
        architecture=main.architecture, param_count=main.param_count,
        weights_bytes=by_dtype[resolved], weights_bytes_by_dtype=by_dtype,
        largest_layer_bytes=main.largest, largest_layer_names=list(main.names),
        kv_bytes_per_token=per,
        kv_formula=said("est.kv_formula", layers=ks["layers"], kv_heads=ks["kv_heads"], head_dim=ks["head_dim"],
                        bytes=torch.empty((), dtype=tdtype).element_size(), total=per),
        context_length=ctx, kv_bytes_full_context=kv.size(cfg.config, tdtype, ctx, keeps=keeps) if ctx else None,
        tied_lm_head=main.tied, checkpoint=stored, margin=MARGIN,
        required_bytes=int(main.total * (1 + MARGIN)), available_bytes=0, available_source=None,
    )
    if quantized:  # loaded in the base dtype first, then quantized layer by layer: both held at the peak
        est.required_bytes = int(main.total * (1 + MARGIN)) + by_dtype[resolved]
    _decide(est, dev, cfg, reclaimable, resident)
    if not est.fits and not all_dtypes:  # refused: size the other dtypes too, to suggest one
        for name, tdtype in devices.TORCH_DTYPES.items():
            if name not in by_dtype:
                by_dtype[name] = meta_facts(cfg.config, tdtype).total
        _decide(est, dev, cfg, reclaimable, resident)
    return est


def _decide(est: Estimate, dev: DeviceInfo, cfg: ModelConfig, reclaimable: int = 0, resident: int = 0) -> None:
    """Fill available_bytes, vram, fits and the reason for the decision, kept as facts (`Said`)
    so that a refusal can be said in either language."""
    avail, where = ram_budget(resident)
    if reclaimable > 0:
        avail += reclaimable
        where = said("est.where.frees", where=where, frees=fmt_bytes(reclaimable))
    est.available_bytes, est.available_source = avail, where
    need_ram = est.required_bytes
    notes = []
    building = False  # the first use's float32 build, not the load, sets what RAM must hold
    if cfg.source.kind == "synthetic" and not cfg.built:
        # ensure() first builds the model in float32 in RAM and writes it to disk.
        build = est.build_bytes = int(est.weights_bytes_by_dtype["float32"] * (1 + MARGIN))
        if build > need_ram:
            notes.append(said("est.note.build", build=fmt_bytes(build)))
            need_ram, building = build, True
    if dev.kind == "mps":
        # Unified memory: the CPU copy and the MPS copy share the same RAM until .to() finishes.
        need_ram += est.weights_bytes
        notes.append(said("est.note.mps"))
    gpus = []
    if dev.kind == "cuda":
        idx = devices.cuda_index(dev.id)
        free = vram_free(idx)
        gpus.append(dict(device=dev.id, free_bytes=free, required_bytes=est.required_bytes,
                         fits=est.required_bytes <= free))
    elif dev.kind == "auto":
        for i in range(devices.cuda_count()):
            gpus.append(dict(device=f"cuda:{i}", free_bytes=vram_free(i), required_bytes=None, fits=None))
    est.vram = gpus
    fits_ram = need_ram <= avail
    fmt = fmt_bytes
    if dev.kind == "auto" and gpus:
        # Accelerate spreads the layers over the GPUs, then the CPU: the pool is their sum.
        pool = avail + sum(g["free_bytes"] for g in gpus)
        est.fits = est.required_bytes <= pool
        reason = said("est.reason.auto", need=fmt(est.required_bytes), margin=f"{MARGIN:.0%}", pool=fmt(pool))
    elif dev.kind == "cuda":
        g = gpus[0]
        est.fits = fits_ram and g["fits"]
        reason = said("est.reason.cuda", need=fmt(need_ram), avail=fmt(avail), where=where,
                      vram=fmt(est.required_bytes), device=g["device"], free=fmt(g["free_bytes"]))
    elif building:  # the build, not the load, needs the RAM: say both, since the panel lists the load's figures
        est.fits = fits_ram
        reason = said("est.reason.build", need=fmt(need_ram), f32=fmt(est.weights_bytes_by_dtype["float32"]),
                      margin=f"{MARGIN:.0%}", dtype=est.dtype, load=fmt(est.required_bytes), avail=fmt(avail),
                      where=where)
    elif est.dtype in devices.QUANTIZED:  # the base dtype's weights with the margin, and the quantized copy made
        est.fits = fits_ram
        base = devices.dtype_name(devices.QUANTIZED_BASE)
        reason = said("est.reason.quantized", need=fmt(need_ram), base=base,
                      loaded=fmt(est.weights_bytes_by_dtype[base]), margin=f"{MARGIN:.0%}", dtype=est.dtype,
                      weights=fmt(est.weights_bytes), avail=fmt(avail), where=where)
    else:
        est.fits = fits_ram
        reason = said("est.reason.ram", need=fmt(need_ram), weights=fmt(est.weights_bytes),
                      margin=f"{MARGIN:.0%}", avail=fmt(avail), where=where)
    est.reason, est.notes = reason, notes


def out_of_reach(cfg: ModelConfig) -> Said | None:
    """Why no dtype can ever load this model on this machine, or None where one might: a synthetic model not built
    yet is first built in float32 in RAM, with the margin, whatever dtype it is then loaded in (`_decide`), and
    that must fit in all the RAM the machine has."""
    if cfg.source.kind != "synthetic" or cfg.built:
        return None
    build = int(meta_facts(cfg.config, torch.float32).total * (1 + MARGIN))
    ram = memory.total_bytes()
    return said("est.never", build=fmt_bytes(build), ram=fmt_bytes(ram)) if build > ram else None


def guard(cfg: ModelConfig, dev: DeviceInfo, dtype: Dtype, reclaimable: int = 0, resident: int = 0) -> Estimate:
    """Refuse, before anything is allocated, a load that will not fit; the estimate when it fits."""
    est = estimate_model(cfg, dev, dtype, reclaimable, all_dtypes=False, resident=resident)
    if est.fits:
        return est
    raise DoesNotFit(est)


def refusal(est: Estimate) -> Said:
    """The sentence shown when a load is refused, as facts: both numbers, and what to try instead."""

    def need(b: int) -> int:
        return max(int(b * (1 + MARGIN)), est.build_bytes)

    smaller = [(n, b) for n, b in est.weights_bytes_by_dtype.items()
               if b < est.weights_bytes and need(b) <= est.available_bytes]
    tips = []
    if smaller:
        n, b = min(smaller, key=lambda x: x[1])
        tips.append(said("est.tip.dtype", dtype=n, need=fmt_bytes(need(b))))
    if devices.cuda_count() and est.device != "auto":
        tips.append(said("est.tip.auto"))
    if not tips:  # no dtype fits: say why none does (the float32 build sets the need whatever the dtype)
        tips.append(said("est.tip.build", build=fmt_bytes(est.build_bytes)) if est.build_bytes > est.available_bytes
                    else said("est.tip.smaller"))
    notes = [n for n in est.notes if n.key != "est.note.build" or est.reason.key != "est.reason.build"]  # said once
    note = said("est.refuse.note", note=_listed(notes)) if notes else ""
    return said("est.refuse", model=est.model, dtype=est.dtype, device=est.device, reason=est.reason, note=note,
                tips=_listed(tips))


def _listed(items: list[Said]) -> Said:
    """Sentences as one list, joined the way each language joins them (`est.sep`, nested)."""
    out = items[-1]
    for item in reversed(items[:-1]):
        out = said("est.sep", a=item, b=out)
    return out
