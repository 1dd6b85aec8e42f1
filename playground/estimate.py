"""Estimate before loading: how many bytes a model will take, and refuse what will not fit.

The size of a model's weights is known before a single weight is read: it is
sum(numel x bytes per element) over its parameters and buffers, and the shapes
follow from config.json. So the playground builds the model on PyTorch's `meta`
device (`accelerate.init_empty_weights`): every parameter has a shape and a dtype
but no storage, so even a 1.5B-parameter model is built in a fraction of a second
with no RAM. Accelerate's `compute_module_sizes` then sums the bytes per module.

Two traps, both handled here:
- Accelerate's `estimate-memory` command builds `AutoModel`, the model without its
  LM head. The playground loads `AutoModelForCausalLM`, so it builds that.
- Under `init_empty_weights`, Transformers 5 leaves the LM head untied from the
  token embedding until `tie_weights()` is called: GPT-2 small would be counted as
  394 MB instead of 369 MB, the 25 MB embedding twice. `tie_weights()` is called.
The model is built in the dtype it will be loaded in (buffers such as Llama's
rotary `inv_freq` stay float32 whatever the weights' dtype), so the estimate
equals `compute_module_sizes` on the model `from_pretrained` returns, to the byte.

Where the checkpoint is on disk, its safetensors headers are read too (8 bytes of
length, then a JSON table of names, dtypes, shapes and byte offsets; no weights):
they give the stored dtype that `auto` resolves to when config.json names none,
and the stored bytes, which equal the estimate in that dtype when nothing is
stored twice.

KV cache: every generated token appends one key and one value vector per layer
and per key/value head, so it costs 2 x layers x kv_heads x head_dim x bytes per
element. Grouped-query attention (Llama's 8 KV heads for 32 query heads) is why
`kv_heads` is not always the number of attention heads.

The guard compares the weights plus a margin with what is free: available RAM
(the weights pass through RAM in a load-then-move) and, for a GPU, free VRAM.
The margin is Accelerate's: its documentation says inference needs up to about
20% more than the weights (activations, the KV cache, allocator slack).
PLAYGROUND_MEMORY_BUDGET (bytes, or "2GB", "512MiB") caps the available RAM the
guard sees, so a small machine can be simulated and the refusal tested.

Building on meta touches process-wide state: `from_config(dtype=...)` sets torch's
default dtype while it builds, and `init_empty_weights` patches
`nn.Module.register_parameter`. A generation or a load in another thread meanwhile
would make its tensors in the wrong dtype, or its parameters on meta. So an estimate
never runs beside other model work: the page and the API queue it in the model lane,
and the slot runs the guard under its lock.
"""

from __future__ import annotations

import copy
import functools
import json
import os
import re
import struct
from dataclasses import asdict, dataclass, field
from pathlib import Path

import torch

from playground import devices, memory
from playground.i18n import t
from playground.inputs import UserError

MARGIN = 0.20  # Accelerate's documented inference overhead: "up to about 20% more than the weights"
BUDGET_ENV = "PLAYGROUND_MEMORY_BUDGET"

# safetensors dtype codes -> (torch name, bytes per element)
SAFETENSORS_DTYPES = {
    "F64": ("float64", 8), "F32": ("float32", 4), "F16": ("float16", 2), "BF16": ("bfloat16", 2),
    "F8_E4M3": ("float8_e4m3fn", 1), "F8_E5M2": ("float8_e5m2", 1),
    "I64": ("int64", 8), "I32": ("int32", 4), "I16": ("int16", 2), "I8": ("int8", 1),
    "U8": ("uint8", 1), "BOOL": ("bool", 1),
}
_FLOAT_CODES = {"F64", "F32", "F16", "BF16", "F8_E4M3", "F8_E5M2"}
_UNITS = {"": 1, "b": 1, "kb": 10**3, "mb": 10**6, "gb": 10**9, "tb": 10**12,
          "k": 2**10, "kib": 2**10, "m": 2**20, "mib": 2**20, "g": 2**30, "gib": 2**30, "tib": 2**40}


class DoesNotFit(UserError):
    """The guard's refusal: a UserError (shown to the visitor), distinguishable from bad input.
    Its sentence is put together from the estimate's facts, in English or Chinese."""

    def __init__(self, est: "Estimate") -> None:
        super().__init__(refusal(est))
        self.est = est

    def text(self, lang: str = "en") -> str:
        return refusal(self.est, lang)


class NotCached(UserError):
    """A Hub model whose config is not in the local cache: nothing to estimate from offline."""


# -- budgets -------------------------------------------------------------------
def parse_bytes(text: str | int) -> int:
    """'2GB' -> 2e9, '512MiB' -> 2**29, '1.5 GiB', '123456' -> bytes (GB decimal, GiB binary)."""
    if isinstance(text, int) and not isinstance(text, bool):
        value = text
    else:
        m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([A-Za-z]*)\s*", str(text))
        unit = m.group(2).lower() if m else None
        if not m or unit not in _UNITS:
            raise UserError(
                f"'{str(text)[:40]}' is not a memory size. Write bytes (e.g. 2000000000) or a number with "
                "a unit: KB, MB, GB, TB (powers of 1000) or KiB, MiB, GiB (powers of 1024), e.g. 2GB."
            )
        value = int(float(m.group(1)) * _UNITS[unit])
    if value <= 0:
        raise UserError(f"A memory size must be positive; got {text!r}.")
    return value


def ram_available() -> tuple[int, str]:
    """(bytes the guard may use, where the number comes from)."""
    avail, where = _ram_budget()
    return avail, _say(where)


def _ram_budget() -> tuple[int, tuple[str, dict]]:
    """(bytes the guard may use, where the number comes from as an i18n key and its fields)."""
    avail = memory.available_bytes()
    env = os.environ.get(BUDGET_ENV, "").strip()
    if env:
        budget = parse_bytes(env)
        if budget < avail:
            return budget, ("est.where.budget", dict(env=BUDGET_ENV, value=env, system=memory.fmt_bytes(avail)))
    return avail, ("est.where.system", {})


def _say(part: tuple[str, dict], lang: str = "en") -> str:
    """One sentence part, (i18n key, fields), in `lang`; fields that are parts are said first."""
    key, fields = part
    return t(key, lang, **{k: _say(v, lang) if isinstance(v, tuple) else v for k, v in fields.items()})


def vram_free(index: int) -> int:
    """Free bytes on cuda:index as the driver reports them (cudaMemGetInfo)."""
    free, _total = torch.cuda.mem_get_info(index)
    return int(free)


# -- safetensors headers -------------------------------------------------------
def read_safetensors_header(path: str | Path) -> dict:
    """The JSON table at the head of a .safetensors file; the weights are not read."""
    with open(path, "rb") as fh:
        raw = fh.read(8)
        if len(raw) != 8:
            raise ValueError(f"{path}: too short to be safetensors")
        (n,) = struct.unpack("<Q", raw)  # little-endian u64: the header's length in bytes
        if n > 100 * 2**20:
            raise ValueError(f"{path}: header of {n} bytes is not plausible")
        header = json.loads(fh.read(n))
    header.pop("__metadata__", None)
    return header


def checkpoint_summary(folder: str | Path) -> dict | None:
    """Stored tensors, bytes and dtype of the safetensors files in `folder`, from headers only."""
    files = sorted(Path(folder).glob("*.safetensors"))
    if not files:
        return None
    tensors = 0
    stored = 0
    by_dtype: dict[str, int] = {}
    first_float: str | None = None
    for f in files:
        header = read_safetensors_header(f)
        for name in sorted(header):
            info = header[name]
            begin, end = info["data_offsets"]
            tensors += 1
            stored += end - begin
            by_dtype[info["dtype"]] = by_dtype.get(info["dtype"], 0) + (end - begin)
            if first_float is None and info["dtype"] in _FLOAT_CODES:
                first_float = info["dtype"]
    return dict(
        files=[f.name for f in files], tensors=tensors, stored_bytes=stored,
        file_bytes=sum(f.stat().st_size for f in files),
        bytes_by_dtype={SAFETENSORS_DTYPES.get(k, (k, 0))[0]: v for k, v in by_dtype.items()},
        dtype=SAFETENSORS_DTYPES[first_float][0] if first_float else None,
    )


# -- building on meta ----------------------------------------------------------
def meta_model(config, dtype: torch.dtype):
    """The causal LM built on the meta device in `dtype`, LM head tied as from_pretrained ties it."""
    from accelerate import init_empty_weights
    from transformers import AutoModelForCausalLM

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
    from transformers import AutoConfig

    cfg_dict = json.loads(config_json)
    config = AutoConfig.for_model(cfg_dict.pop("model_type"), **cfg_dict)
    m = meta_model(config, getattr(torch, dtype_name.replace("torch.", "")))
    total, largest, names = sizes(m)
    emb, out = m.get_input_embeddings(), m.get_output_embeddings()
    tied = out is not None and emb is not None and out.weight is emb.weight
    return MetaFacts(type(m).__name__, sum(p.numel() for p in m.parameters()), total, largest, tuple(names), tied)


def sizes(model) -> tuple[int, int, list[str]]:
    """(total bytes, largest layer bytes, its names) by Accelerate's own accounting."""
    from accelerate.utils import calculate_maximum_sizes

    total, (largest, names) = calculate_maximum_sizes(model)
    return int(total), int(largest), list(names)


def kv_shape(config) -> dict:
    """Layers, key/value heads and head size that set the KV cache's size."""
    cfg = config.get_text_config() if hasattr(config, "get_text_config") else config
    layers = cfg.num_hidden_layers
    heads = cfg.num_attention_heads
    kv_heads = getattr(cfg, "num_key_value_heads", None) or heads
    head_dim = getattr(cfg, "head_dim", None) or cfg.hidden_size // heads
    return dict(layers=int(layers), kv_heads=int(kv_heads), head_dim=int(head_dim), attention_heads=int(heads))


def kv_bytes_per_token(config, dtype: torch.dtype) -> int:
    """2 (key and value) x layers x kv_heads x head_dim x bytes per element."""
    s = kv_shape(config)
    return 2 * s["layers"] * s["kv_heads"] * s["head_dim"] * torch.empty((), dtype=dtype).element_size()


def context_length(config) -> int | None:
    return getattr(config, "max_position_embeddings", None) or getattr(config, "n_positions", None)


# -- resolving a model without loading it --------------------------------------
@dataclass
class ConfigSource:
    name: str
    kind: str  # bundled, local, synthetic, hub
    config: object
    folder: Path | None  # where safetensors headers can be read, if anywhere
    built: bool = True  # synthetic: is the checkpoint written yet


def load_config(model: str) -> ConfigSource:
    """The model's config with no weights read: local config.json, the synthetic spec, or
    the Hugging Face cache (never the network)."""
    from transformers import AutoConfig

    from playground import models

    if isinstance(model, ConfigSource):
        return model  # already read (the load's memory check reuses it)
    src = model if isinstance(model, models.ModelSource) else models.resolve(model)
    try:
        if src.kind == "synthetic":
            from playground import synthetic

            folder = synthetic.folder(src.name)
            built = synthetic.is_built(src.name)
            return ConfigSource(src.name, src.kind, synthetic.config(src.name), folder if built else None, built)
        if src.kind == "hub":
            from huggingface_hub import try_to_load_from_cache

            hit = try_to_load_from_cache(src.ref, "config.json")
            if not isinstance(hit, str):
                raise NotCached(
                    f"'{src.ref}' has no config.json in the local Hugging Face cache, and the estimate never "
                    "goes to the network. Load it once (with network) or pick a bundled or synthetic model."
                )
            cfg = AutoConfig.from_pretrained(src.ref, local_files_only=True, trust_remote_code=False)
            return ConfigSource(src.name, src.kind, cfg, Path(hit).parent)
        cfg = AutoConfig.from_pretrained(src.ref, local_files_only=True, trust_remote_code=False)
        return ConfigSource(src.name, src.kind, cfg, Path(src.ref))
    except UserError:
        raise
    except Exception as e:  # unknown model_type, custom code, broken JSON
        raise UserError(f"Cannot read the config of '{src.name}': {type(e).__name__}: {str(e)[:200]}") from None


def resolve_dtype(dtype: str, config, checkpoint: dict | None) -> tuple[str, str]:
    """The dtype the weights will have once loaded, and why (from_pretrained's rules for 'auto')."""
    if dtype != "auto":
        return dtype, f"asked for {dtype}"
    cfg_dtype = getattr(config, "dtype", None)
    if cfg_dtype is not None:
        name = str(cfg_dtype).replace("torch.", "")
        return name, f"auto: config.json says dtype={name}"
    if checkpoint and checkpoint.get("dtype"):
        return checkpoint["dtype"], f"auto: config.json names no dtype; the checkpoint stores {checkpoint['dtype']}"
    name = str(torch.get_default_dtype()).replace("torch.", "")
    return name, f"auto: neither config nor checkpoint says; PyTorch's default {name}"


# -- the estimate --------------------------------------------------------------
@dataclass
class Estimate:
    model: str
    source: str
    device: str
    dtype: str  # the dtype the weights will have
    dtype_requested: str
    dtype_reason: str
    architecture: str
    param_count: int
    weights_bytes: int
    weights_bytes_by_dtype: dict
    largest_layer_bytes: int
    largest_layer_names: list[str]
    kv_bytes_per_token: int
    kv_formula: str
    context_length: int | None
    kv_bytes_full_context: int | None
    tied_lm_head: bool
    checkpoint: dict | None
    margin: float
    required_bytes: int  # weights x (1 + margin), what must fit in RAM
    available_bytes: int
    available_source: str
    build_bytes: int = 0  # a synthetic model's first use: its float32 build in RAM, with the margin
    vram: list[dict] = field(default_factory=list)  # per GPU: free, required, fits
    fits: bool = True
    reason: str = ""
    note: str = ""

    def to_dict(self) -> dict:
        return asdict(self)


def estimate_model(model, dtype: str, device: str = "cpu", reclaimable: int = 0, all_dtypes: bool = True) -> Estimate:
    """Everything about the model's size, and whether it fits here, without allocating weights.

    `reclaimable`: bytes of RAM held by a model that will be freed before this one loads
    (the slot's current model), counted as available. `all_dtypes=False` builds the meta
    model only in the dtype asked for (the guard's fast path); the other dtypes' sizes are
    then filled in only if the load is refused, to suggest one."""
    dtype = devices.check_dtype(dtype)
    dev = devices.check_device(device)
    src = load_config(model)
    checkpoint = None
    if src.folder is not None:
        try:
            checkpoint = checkpoint_summary(src.folder)
        except (OSError, ValueError) as e:
            checkpoint = dict(error=f"could not read the safetensors header: {e}")
    resolved, reason = resolve_dtype(dtype, src.config, checkpoint)
    if resolved not in devices.TORCH_DTYPES:
        raise UserError(f"'{src.name}' resolves to {resolved} under auto; pick float32, float16 or bfloat16.")

    by_dtype: dict[str, int] = {}
    main = None
    for name, tdtype in devices.TORCH_DTYPES.items():
        if not all_dtypes and name != resolved:
            continue
        facts = meta_facts(src.config, tdtype)
        by_dtype[name] = facts.total
        if name == resolved:
            main = facts
    total, largest, names, tied = main.total, main.largest, list(main.names), main.tied
    if src.kind == "synthetic" and not src.built and "float32" not in by_dtype:
        by_dtype["float32"] = meta_facts(src.config, torch.float32).total  # ensure() builds in float32
    tdtype = devices.TORCH_DTYPES[resolved]
    kv = kv_bytes_per_token(src.config, tdtype)
    ks = kv_shape(src.config)
    ctx = context_length(src.config)

    est = Estimate(
        model=src.name, source=src.kind, device=dev.id, dtype=resolved, dtype_requested=dtype, dtype_reason=reason,
        architecture=main.architecture,
        param_count=main.param_count,
        weights_bytes=total, weights_bytes_by_dtype=by_dtype,
        largest_layer_bytes=largest, largest_layer_names=names,
        kv_bytes_per_token=kv,
        kv_formula=(f"2 x {ks['layers']} layers x {ks['kv_heads']} kv heads x {ks['head_dim']} head dim "
                    f"x {torch.empty((), dtype=tdtype).element_size()} bytes = {kv} bytes per token"),
        context_length=ctx, kv_bytes_full_context=kv * ctx if ctx else None,
        tied_lm_head=tied, checkpoint=checkpoint, margin=MARGIN,
        required_bytes=int(total * (1 + MARGIN)), available_bytes=0, available_source="",
    )
    _decide(est, dev, src, reclaimable)
    if not est.fits and not all_dtypes:  # refused: size the other dtypes too, to suggest one
        for name, tdtype in devices.TORCH_DTYPES.items():
            if name not in by_dtype:
                by_dtype[name] = meta_facts(src.config, tdtype).total
        _decide(est, dev, src, reclaimable)
    return est


def _decide(est: Estimate, dev: devices.DeviceInfo, src: ConfigSource, reclaimable: int = 0) -> None:
    """Fill available_bytes, vram, fits and the reason for the decision. The reason and notes are
    kept as (i18n key, fields) parts too, so that a refusal can be said in either language."""
    avail, where = _ram_budget()
    if reclaimable > 0:
        avail += reclaimable
        where = ("est.where.frees", dict(where=where, frees=memory.fmt_bytes(reclaimable)))
    est.available_bytes, est.available_source = avail, _say(where)
    need_ram = est.required_bytes
    notes = []
    if src.kind == "synthetic" and not src.built:
        # ensure() first builds the model in float32 in RAM and writes it to disk.
        build = est.build_bytes = int(est.weights_bytes_by_dtype["float32"] * (1 + MARGIN))
        if build > need_ram:
            notes.append(("est.note.build", dict(build=memory.fmt_bytes(build))))
            need_ram = build
    if dev.kind == "mps":
        # Unified memory: the CPU copy and the MPS copy share the same RAM until .to() finishes.
        need_ram += est.weights_bytes
        notes.append(("est.note.mps", {}))
    gpus = []
    if dev.kind == "cuda":
        idx = int(dev.id.split(":")[1])
        free = vram_free(idx)
        gpus.append(dict(device=dev.id, free_bytes=free, required_bytes=est.required_bytes,
                         fits=est.required_bytes <= free))
    elif dev.kind == "auto" and torch.cuda.is_available():
        for i in range(torch.cuda.device_count()):
            gpus.append(dict(device=f"cuda:{i}", free_bytes=vram_free(i), required_bytes=None, fits=None))
    est.vram = gpus
    fits_ram = need_ram <= avail
    fmt = memory.fmt_bytes
    if dev.kind == "auto" and gpus:
        # Accelerate spreads the layers over the GPUs, then the CPU: the pool is their sum.
        pool = avail + sum(g["free_bytes"] for g in gpus)
        est.fits = est.required_bytes <= pool
        reason = ("est.reason.auto", dict(need=fmt(est.required_bytes), margin=f"{MARGIN:.0%}", pool=fmt(pool)))
    elif dev.kind == "cuda":
        g = gpus[0]
        est.fits = fits_ram and g["fits"]
        reason = ("est.reason.cuda", dict(need=fmt(need_ram), avail=fmt(avail), where=where,
                                          vram=fmt(est.required_bytes), device=g["device"],
                                          free=fmt(g["free_bytes"])))
    else:
        est.fits = fits_ram
        reason = ("est.reason.ram", dict(need=fmt(need_ram), weights=fmt(est.weights_bytes),
                                         margin=f"{MARGIN:.0%}", avail=fmt(avail), where=where))
    est.reason = _say(reason)
    est.note = "; ".join(_say(n) for n in notes)
    est._parts = dict(reason=reason, notes=notes)  # not a field: the API's dict stays as it was


def estimate(model: str, dtype: str, device: str = "cpu") -> dict:
    """API: the estimate as a plain dict (weights_bytes, largest_layer_bytes, kv_bytes_per_token,
    available_bytes, fits, ...)."""
    return estimate_model(model, dtype, device).to_dict()


def guard(model, device: str, dtype: str, reclaimable: int = 0) -> Estimate | None:
    """Refuse, before anything is allocated, a load that will not fit. Returns the estimate
    when it fits, None when there is nothing to estimate from (a Hub model not yet cached:
    its size is unknown until the download)."""
    try:
        est = estimate_model(model, dtype, device, reclaimable, all_dtypes=False)
    except NotCached:
        return None  # from_pretrained will download it; its size is unknown until then
    if est.fits:
        return est
    raise DoesNotFit(est)


def refusal(est: Estimate, lang: str = "en") -> str:
    """The sentence shown when a load is refused: both numbers, and what to try instead."""
    parts = est._parts  # set by _decide, which every estimate goes through
    msg = t("est.refuse", lang, model=est.model, dtype=est.dtype, device=est.device,
            reason=_say(parts["reason"], lang))
    notes = [_say(n, lang) for n in parts["notes"]]
    if notes:
        msg += t("est.refuse.note", lang, note=t("est.sep", lang).join(notes))

    def need(b: int) -> int:
        return max(int(b * (1 + MARGIN)), est.build_bytes)

    smaller = [(n, b) for n, b in est.weights_bytes_by_dtype.items()
               if b < est.weights_bytes and need(b) <= est.available_bytes]
    tips = []
    if smaller:
        n, b = min(smaller, key=lambda x: x[1])
        tips.append(t("est.tip.dtype", lang, dtype=n, need=memory.fmt_bytes(need(b))))
    if torch.cuda.is_available() and est.device != "auto":
        tips.append(t("est.tip.auto", lang))
    if not tips:
        tips.append(t("est.tip.smaller", lang))
    return msg + t("est.refuse.try", lang, tips=t("est.sep", lang).join(tips))


# -- the KV cache, measured ------------------------------------------------------
def cache_bytes(cache) -> tuple[int, int]:
    """(bytes in the cache's key and value tensors, tokens it holds) for a DynamicCache
    (Transformers 5: one layer object per layer with .keys and .values) or legacy tuples."""
    layers = getattr(cache, "layers", None)
    pairs = [(layer.keys, layer.values) for layer in layers] if layers is not None else list(cache)
    total = 0
    tokens = 0
    for k, v in pairs:
        if k is None:
            continue
        total += k.numel() * k.element_size() + v.numel() * v.element_size()
        tokens = max(tokens, int(k.shape[-2]))  # [batch, kv_heads, tokens, head_dim]
    return total, tokens


@dataclass
class KvMeasurement:
    new_tokens: int
    tokens_in_cache: int  # prompt + new - 1: the last token chosen is never fed back
    kv_bytes_per_token: int  # the estimate's
    estimate_bytes: int  # kv_bytes_per_token x tokens_in_cache
    cache_tensor_bytes: int  # what the returned cache's tensors hold
    rss_growth_held: int  # RSS after generating (cache held) minus before
    rss_released: int  # RSS given back when the cache is dropped
    vram_growth_held: int | None
    tensor_error: float  # cache_tensor_bytes / estimate_bytes - 1
    rss_error: float  # rss_growth_held / estimate_bytes - 1
    released_error: float
    seconds: float

    def to_dict(self) -> dict:
        return asdict(self)


def measure_kv(model, tokenizer, device: str, prompt: str, new_tokens: int) -> KvMeasurement:
    """Generate `new_tokens` greedy tokens, keep the cache, and compare its size with the estimate
    three ways: the cache's tensor bytes, RSS growth while it is held, RSS given back when dropped.

    Before each RSS reading the heap is trimmed (`migration.release_memory`: glibc otherwise keeps
    freed pages, e.g. the cache's earlier, shorter copies), and a warm-up generation first faults in
    the weights (memory-mapped from the checkpoint) so their pages do not count as cache."""
    import time as _time

    from playground import migration

    enc = tokenizer(prompt, return_tensors="pt").to(device)
    common = dict(do_sample=False, pad_token_id=model.generation_config.pad_token_id,
                  temperature=None, top_p=None, top_k=None)
    on_gpu = torch.device(device).type == "cuda"
    with torch.inference_mode():
        model.generate(**enc, max_new_tokens=4, min_new_tokens=4, **common)  # warm-up
    migration.release_memory()
    rss0 = memory.rss_bytes()
    vram0 = torch.cuda.memory_allocated(torch.device(device)) if on_gpu else None
    t0 = _time.perf_counter()
    with torch.inference_mode():
        out = model.generate(**enc, max_new_tokens=new_tokens, min_new_tokens=new_tokens,
                             return_dict_in_generate=True, **common)
    devices.sync(device)
    seconds = _time.perf_counter() - t0
    cache = out.past_key_values
    out = None
    migration.release_memory()
    rss1 = memory.rss_bytes()
    vram1 = torch.cuda.memory_allocated(torch.device(device)) if on_gpu else None
    tensor_bytes, tokens = cache_bytes(cache)
    del cache
    migration.release_memory()
    rss2 = memory.rss_bytes()
    dtype = next(model.parameters()).dtype
    per_token = kv_bytes_per_token(model.config, dtype)
    est = per_token * tokens
    return KvMeasurement(
        new_tokens=new_tokens, tokens_in_cache=tokens, kv_bytes_per_token=per_token, estimate_bytes=est,
        cache_tensor_bytes=tensor_bytes, rss_growth_held=rss1 - rss0, rss_released=rss1 - rss2,
        vram_growth_held=(vram1 - vram0) if on_gpu else None,
        tensor_error=tensor_bytes / est - 1, rss_error=(rss1 - rss0) / est - 1,
        released_error=(rss1 - rss2) / est - 1, seconds=seconds,
    )
