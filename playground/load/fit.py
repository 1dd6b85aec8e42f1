"""Will it fit, at this context? Weights + KV cache + activation peak against each device's free memory.

The KV cache is sized by `load/kv.py` (layer by layer, as Transformers' DynamicCache keeps it: GQA, sliding
windows). `activation(model, ...)` measures the prefill's
peak above the weights and cache on two short prompts (the rise per token, and what does not grow), once
per loaded model; a model not loaded gets the config's arithmetic instead, and says so. `fit(...)`
gives, per device, the need at a context and batch and the largest context that fits.
"""

from __future__ import annotations

import weakref
from dataclasses import asdict, dataclass, field

import torch
import torch.utils._pytree as pytree
from torch.utils._python_dispatch import TorchDispatchMode

from playground.core import threads
from playground.core.errors import UserError
from playground.core.i18n import Said, as_text, said
from playground.core.units import fmt_bytes
from playground.hw import census, devices, memory
from playground.load import estimate, kv
from playground.load.catalog import ModelConfig

MEASURE_TOKENS = (16, 128)  # the two short prompts the activation peak is measured on (at most half the context)


# -- the activation peak ---------------------------------------------------------------
_MEASURED: "weakref.WeakKeyDictionary[torch.nn.Module, dict]" = weakref.WeakKeyDictionary()


def activation(model: torch.nn.Module, device: str, measure: bool = True) -> dict:
    """The prefill's peak above the weights and its cache, measured on two short prompts (MEASURE_TOKENS, at
    most half the context) as the most bytes of tensors alive at once (`LiveTensors`), and remembered for the
    model: `per_token` (what grows with the prompt) and `fixed` (what does not: the last position's logits).
    The process's RSS rises by more and by varying amounts (the allocator's pages, Python's objects), which
    the ledger of each generation shows beside it. `measure=False`: the measurement if one was made, else the
    config's arithmetic (`activation_from_config`); the check before a generation asks so, since measuring
    runs two prefills under a dispatch mode that sees every operator (seconds for a large model on a CPU),
    which the visitor would wait for before the first token."""
    if model in _MEASURED:
        return _MEASURED[model]
    if not measure:
        return activation_from_config(model.config, next(model.parameters()).dtype)
    _MEASURED[model] = threads.run(_measure, model, device, name="activation-peak")  # torch work: a fresh thread
    return _MEASURED[model]


class LiveTensors(TorchDispatchMode):
    """The most bytes of tensors alive at once while the block runs, counted op by op: each new storage an
    operator makes is counted until the last tensor on it is freed (a view adds a reference, not bytes).
    PyTorch's own allocations, not the allocator's rounding nor Python's objects: the same on every device."""

    def __init__(self) -> None:
        super().__init__()
        self.live = self.peak = 0
        self._refs: dict[int, list[int]] = {}  # storage address -> [bytes, tracked tensors on it]

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        inputs = {id(a) for a in pytree.tree_leaves((args, kwargs)) if isinstance(a, torch.Tensor)}
        for t in pytree.tree_leaves(out):
            if isinstance(t, torch.Tensor) and id(t) not in inputs and t.device.type != "meta":
                self._track(t)
        return out

    def _track(self, t: torch.Tensor) -> None:
        storage = t.untyped_storage()
        key, n = storage.data_ptr(), storage.nbytes()
        if not n:
            return
        ref = self._refs.setdefault(key, [n, 0])
        if ref[1] == 0:
            self.live += n
            self.peak = max(self.peak, self.live)
        ref[1] += 1
        weakref.finalize(t, self._drop, key)

    def _drop(self, key: int) -> None:
        ref = self._refs.get(key)
        if ref is not None:
            ref[1] -= 1
            if ref[1] == 0:
                self.live -= ref[0]
                del self._refs[key]


def _measure(model: torch.nn.Module, device: str) -> dict:
    first = next(model.parameters())
    vocab = model.get_input_embeddings().num_embeddings
    ctx = estimate.context_length(model.config) or 1 << 20
    short, long = MEASURE_TOKENS[0], min(MEASURE_TOKENS[1], max(ctx // 2, MEASURE_TOKENS[0] + 1))
    rise: dict[int, int] = {}
    for n in (short, long):
        ids = torch.arange(n, device=first.device).remainder(vocab).unsqueeze(0)
        with torch.inference_mode(), LiveTensors() as live:
            out = model(input_ids=ids, use_cache=True, logits_to_keep=1)  # as generate() runs a prefill
            del out
        rise[n] = max(live.peak - kv.size(model.config, first.dtype, n), 0)  # the cache made is not activation
    per = max((rise[long] - rise[short]) / (long - short), 0.0)
    return dict(measured=True, per_token=per, fixed=max(rise[short] - per * short, 0.0), counter="live_tensors",
                reason=None, tokens=[short, long])


def activation_from_config(config, dtype: torch.dtype) -> dict:
    """Without the model loaded: per token, a block's hidden-sized tensors (the residual, the norm, q, k, v,
    the attention's output) and its MLP's two intermediate ones, and one position's float32 logits.
    Arithmetic, not a measurement, and the panel says so: GPT-2's shapes measure about 22 hidden-sized
    tensors per token alive at the peak of a 128-token prefill against this arithmetic's 14."""
    cfg = config.get_text_config() if hasattr(config, "get_text_config") else config
    hidden = int(getattr(cfg, "hidden_size", None) or getattr(cfg, "n_embd", 0))
    inter = int(getattr(cfg, "intermediate_size", None) or getattr(cfg, "n_inner", None) or 4 * hidden)
    size = torch.empty((), dtype=dtype).element_size()
    per = size * (6 * hidden + 2 * inter)
    return dict(measured=False, per_token=float(per), fixed=float(4 * int(getattr(cfg, "vocab_size", 0))),
                counter="config", reason=said("fit.act.config"), tokens=None)


# -- the answer ------------------------------------------------------------------------
@dataclass
class DeviceFit:
    device: str
    free_bytes: int  # what it can still give (the loaded model's own bytes there counted back in)
    free_source: Said
    weights_bytes: int
    kv_bytes: int  # at the context and batch asked
    activation_bytes: int
    need_bytes: int
    fits: bool
    largest_context: int  # the longest context whose need fits (0: not even one token)
    capped: bool  # the model's own context length stops it before memory does


@dataclass
class Fit:
    model: str
    dtype: str
    context: int
    batch: int
    context_length: int | None
    kv_bytes_per_token: int  # batch 1, while no sliding window is full (load/kv.py)
    kv_formula: Said
    sliding: dict | None
    activation: dict
    devices: list[DeviceFit] = field(default_factory=list)
    beyond_model: bool = False  # the context asked is longer than the model attends over: no device fits it

    def to_dict(self) -> dict:
        d = as_text(asdict(self))
        d["activation"]["reason"] = d["activation"]["reason"] or ""
        return d


def need(config, dtype: torch.dtype, weights: int, act: dict, context: int, batch: int,
         keeps: list[int | None] | None = None) -> tuple[int, int, int]:
    """(kv bytes, activation bytes, total) at `context` tokens and `batch` sequences (`keeps`: `kv.kept(config)`)."""
    kv_b = kv.size(config, dtype, context, batch, keeps=keeps)
    a = int(batch * (act["per_token"] * context + act["fixed"]))
    return kv_b, a, weights + kv_b + a


def largest(config, dtype: torch.dtype, weights: int, act: dict, batch: int, free: int, limit: int,
            keeps: list[int | None] | None = None) -> int:
    """The longest context (at most `limit`) whose need fits in `free`: need grows with the context."""
    keeps = kv.kept(config) if keeps is None else keeps  # read once for the ~20 steps of the search
    lo, hi = 0, limit
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if need(config, dtype, weights, act, mid, batch, keeps)[2] <= free:
            lo = mid
        else:
            hi = mid - 1
    return lo


def free_memory(dev: str, loaded=None) -> tuple[int, Said]:
    """What `dev` can still give, the loaded model's own weights there counted back in (fit sizes the model
    as if loaded anew; for the loaded model that leaves its cache and activations against what is free)."""
    back = _weights_on(loaded, dev) if loaded is not None else 0
    if dev == "cpu":
        avail, where = estimate.ram_budget()
    elif devices.kind_of(dev) == "cuda":
        avail, where = estimate.vram_free(devices.cuda_index(dev)), said("fit.where.cuda")
    else:
        avail = memory.mps_free()
        where = said("fit.where.mps")
    if back:
        where = said("est.where.frees", where=where, frees=fmt_bytes(back))
    return avail + back, where


def _weights_on(loaded, dev: str) -> int:
    """The loaded model's weight bytes on `dev` (a ledger device name), from the count made when it loaded."""
    counted = loaded.counted if loaded.counted is not None else census.census(loaded.model)
    return counted.by_device.get(dev, 0)


def fit(cfg: ModelConfig, dtype: devices.Dtype, context: int, batch: int, loaded=None) -> Fit:
    """Per device present: weights + KV cache + activation peak at `context` tokens and `batch` sequences
    against its free memory, and the largest context that fits. `loaded`: the slot's LoadedModel, whose
    activation peak is measured when it is this model in this dtype (otherwise the config's arithmetic)."""
    resolved, _ = estimate.resolve_dtype(dtype, cfg.config, None)
    base = devices.dtype_name(devices.load_dtype(resolved))  # int8, int4: the cache and activations stay float32
    if base not in devices.TORCH_DTYPES:
        raise UserError.of("err.auto_dtype", name=cfg.source.name, dtype=resolved)
    tdtype = devices.TORCH_DTYPES[base]
    weights = (estimate.quantized_bytes(cfg.config, resolved) if resolved in devices.QUANTIZED
               else estimate.meta_facts(cfg.config, tdtype).total)
    ctx_len = estimate.context_length(cfg.config)
    same = loaded is not None and loaded.report.model == cfg.source.name and loaded.report.dtype == resolved
    act = activation(loaded.model, loaded.device) if same else activation_from_config(cfg.config, tdtype)
    shape = kv.shape(cfg.config)
    keeps = kv.kept(cfg.config)  # read once: the per-token figure, the windows, every device's need and largest context
    per_token = kv.per_token(cfg.config, tdtype, keeps)
    out = Fit(cfg.source.name, resolved, context, batch, ctx_len, per_token,
              said("est.kv_formula", layers=shape["layers"], kv_heads=shape["kv_heads"], head_dim=shape["head_dim"],
                   bytes=torch.empty((), dtype=tdtype).element_size(), total=per_token),
              kv.sliding(cfg.config, keeps), act, beyond_model=ctx_len is not None and context > ctx_len)
    limit = ctx_len or 1 << 20
    for d in devices.discover():
        if not d.available or d.id == "auto":
            continue
        free, where = free_memory(d.id, loaded if same else None)
        kv_b, a, total = need(cfg.config, tdtype, weights, act, context, batch, keeps)
        top = largest(cfg.config, tdtype, weights, act, batch, free, limit, keeps)
        out.devices.append(DeviceFit(d.id, free, where, weights, kv_b, a, total, total <= free and not out.beyond_model,
                                     top, capped=ctx_len is not None and top == ctx_len))
    return out


def check_context(loaded, tokens: int, batch: int = 1) -> None:
    """Refuse, before it starts, a generation whose context would not fit beside the loaded model (the
    same arithmetic as `fit`, on the device the model's inputs go to)."""
    model = loaded.model
    dev = devices.name(loaded.device)
    tdtype = next(model.parameters()).dtype
    weights = _weights_on(loaded, dev)
    act = activation(model, loaded.device, measure=False)  # measured once asked for ("Will it fit?"), else the config's
    free, _ = free_memory(dev, loaded)
    keeps = kv.kept(model.config)
    kv_b, a, total = need(model.config, tdtype, weights, act, tokens, batch, keeps)
    if total > free:
        top = largest(model.config, tdtype, weights, act, batch, free, tokens, keeps)
        raise UserError.of("err.context_memory", tokens=tokens, device=dev, need=fmt_bytes(total),
                           kv=fmt_bytes(kv_b), act=fmt_bytes(a), weights=fmt_bytes(weights), free=fmt_bytes(free),
                           top=top, how=said("fit.act.short.measured" if act["measured"] else "fit.act.short.config"))
