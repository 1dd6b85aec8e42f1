"""int8 and int4 weights as dtypes: torchao's weight-only quantization, a load phase of its own.

`SPECS` names the quantized dtypes this CPU runs: int8 (`Int8WeightOnlyConfig`: an int8 value per weight and a
scale per output row) and int4 (`IntxWeightOnlyConfig(weight_dtype=torch.int4)`: a 4-bit value per weight, held
in a byte here, and a scale and zero point per group of 32). The rest of the model (embeddings, norms, what is
skipped) stays in `BASE`, and so do the activations: each step turns the small integers back into float32 to
multiply. `layers(model, name)` says which weight matrices can be quantized and why the others are skipped;
`quantize(model, name)` quantizes those, in place; `refused()` lists torchao's packed int4 formats, each tried
here on a small layer, with what it raised. torchao is imported only here, only when a quantized dtype is asked
for (`torchao()`); its import's log lines are kept (`IMPORT_LINES`), not printed on the console.
See docs/dtypes.md.
"""

from __future__ import annotations

import functools
import logging
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from typing import Iterator

import torch
from accelerate import cpu_offload

from playground.core.errors import UserError
from playground.core.i18n import Said, said, translatable
from playground.core.paths import by_role
from playground.core.units import fmt_bytes
from playground.hw import census, memory
from playground.load.phases import Recorder

BASE = torch.float32  # what the unquantized parts and the activations stay in
# Each dtype's config as the code to copy writes it: `config(name)` evaluates this very text, so the page's code
# and the playground's run cannot part.
SPECS: dict[str, dict] = {
    "int8": dict(config="Int8WeightOnlyConfig()", names=("Int8WeightOnlyConfig",), bits=8, group=None),
    "int4": dict(config="IntxWeightOnlyConfig(weight_dtype=torch.int4, granularity=PerGroup(32))",
                 names=("IntxWeightOnlyConfig", "PerGroup"), bits=4, group=32),
}
# torchao's int4 formats that pack two 4-bit values per byte (Int4WeightOnlyConfig), tried here by `refused()`
PACKED_INT4 = ("plain", "tile_packed_to_4d", "plain_int32", "opaque")
# the loggers torchao's import writes through: its own ("Failed to load ... .so" for each GPU kernel library it
# cannot load here) and torch's pytree registry (a deprecation notice per enum torchao registers)
LOGGERS = ("torchao", "torch.utils._pytree")
IMPORT_LINES: list[str] = []  # what they said, the server's paths named by role


class _Keep(logging.Handler):
    def __init__(self, into: list[str]) -> None:
        super().__init__(logging.DEBUG)
        self.into = into

    def emit(self, record: logging.LogRecord) -> None:
        self.into.append(by_role(record.getMessage()))


@contextmanager
def quiet(into: list[str]) -> Iterator[None]:
    """torchao's and torch's pytree log lines go to `into` instead of the console while the block runs (torchao
    imports some of its modules lazily, at the first quantization, and they log then)."""
    keep = _Keep(into)
    saved = []
    for name in LOGGERS:
        log = logging.getLogger(name)
        saved.append((log, log.propagate))
        log.addHandler(keep)
        log.propagate = False  # not to the root's or torch's own handler, nor to logging's last resort (stderr)
    try:
        yield
    finally:
        for log, propagate in saved:
            log.removeHandler(keep)
            log.propagate = propagate


@functools.cache
def torchao():
    """`torchao.quantization`, imported once, its import's log lines kept in IMPORT_LINES; a UserError saying
    how to install it where it is missing."""
    try:
        with quiet(IMPORT_LINES):
            import torchao.quantization  # deferred (optional): seconds of import, only for a quantized dtype
    except ImportError as e:
        raise UserError.of("quant.missing", error=str(e)[:200]) from None
    return torchao.quantization


def config(name: str):
    """The torchao config of the quantized dtype `name`, made from the text the code to copy shows."""
    ao = torchao()
    names = {n: getattr(ao, n) for n in SPECS[name]["names"]}
    return eval(SPECS[name]["config"], {"__builtins__": {}, "torch": torch, **names})  # a constant of this module


# -- which weight matrices ------------------------------------------------------------------------------
@dataclass
class LayerChoice:
    name: str  # the module's name in the model
    kind: str  # its class
    params: int  # its weight's elements
    reason: str  # "quantized", or why not: "embedding", "tied", "not_linear", "group"


def layers(model: torch.nn.Module, name: str) -> list[LayerChoice]:
    """Every module holding a weight matrix, and what quantizing `name` does to it. torchao's weight-only configs
    swap the weight of an `nn.Linear`; an embedding is a lookup, not a matrix product, and stays; an output head
    tied to the embedding stays (quantizing it would make a second, quantized copy beside the float embedding:
    more bytes, not fewer); GPT-2's `Conv1D` (a weight stored [in, out], multiplied by `addmm`) is no
    `nn.Linear`; with groups, a layer whose inputs are not a multiple of the group size cannot be split."""
    group = SPECS[name]["group"]
    emb = model.get_input_embeddings() if hasattr(model, "get_input_embeddings") else None
    tied = emb.weight if emb is not None else None
    out = []
    for mod_name, mod in model.named_modules():
        w = getattr(mod, "weight", None)
        if not isinstance(w, torch.Tensor) or w.dim() != 2:
            continue
        if isinstance(mod, torch.nn.Embedding):
            reason = "embedding"
        elif w is tied:
            reason = "tied"
        elif type(mod) is not torch.nn.Linear:
            reason = "not_linear"
        elif group and mod.in_features % group:
            reason = "group"
        else:
            reason = "quantized"
        out.append(LayerChoice(mod_name, type(mod).__name__, w.numel(), reason))
    return out


@dataclass
class QuantReport:
    """What quantizing did to the loaded model, counted from it."""

    dtype: str  # "int8", "int4"
    config: str  # the config's code
    tensor: str  # the tensor subclass each quantized weight became ("" where none was)
    base: str  # the dtype the rest stays in
    quantized: int  # weight matrices quantized
    quantized_params: int
    skipped: list[dict]  # per reason: {reason, count, params, kinds, first}
    weights_before: int  # bytes, counted from the tensors (census.nbytes)
    weights_after: int
    log_lines: int = 0  # lines torchao logged (kept off the console), its import's included
    layer_names: list[str] = field(default_factory=list)  # the quantized modules
    refused: list[dict] = field(default_factory=list)  # int4: torchao's packed formats, tried here (`refused()`)
    copied_from_file: int = 0  # bytes of the unquantized tensors copied out of the checkpoint's mapping

    def to_dict(self) -> dict:
        return asdict(self)


def summary(choices: list[LayerChoice]) -> list[dict]:
    """The skipped layers per reason: how many, their weights' elements, their classes, the first one's name."""
    out: dict[str, dict] = {}
    for c in choices:
        if c.reason == "quantized":
            continue
        s = out.setdefault(c.reason, dict(reason=c.reason, count=0, params=0, kinds=[], first=c.name))
        s["count"] += 1
        s["params"] += c.params
        if c.kind not in s["kinds"]:
            s["kinds"].append(c.kind)
    return list(out.values())


def quantize(model: torch.nn.Module, name: str) -> QuantReport:
    """Quantize `model`'s weight matrices in place as the dtype `name` asks (`layers` says which), torchao's log
    lines kept off the console; the report counts the bytes before and after from the tensors."""
    choices = layers(model, name)
    chosen = {c.name for c in choices if c.reason == "quantized"}
    before = census.weights_bytes(model)
    cfg = config(name)
    lines: list[str] = []
    if chosen:
        with quiet(lines):
            torchao().quantize_(model, cfg, filter_fn=lambda _mod, fqn: fqn in chosen)
    unmapped = _copy_out_of_the_file(model) if chosen else 0
    kinds = {type(model.get_submodule(n).weight).__name__ for n in chosen}
    return QuantReport(
        dtype=name, config=SPECS[name]["config"], tensor=", ".join(sorted(kinds)), base=str(BASE).removeprefix("torch."),
        quantized=len(chosen), quantized_params=sum(c.params for c in choices if c.reason == "quantized"),
        skipped=summary(choices), weights_before=before, weights_after=census.weights_bytes(model),
        log_lines=len(IMPORT_LINES) + len(lines), layer_names=sorted(chosen), copied_from_file=unmapped,
        refused=[asdict(r) for r in refused()] if SPECS[name]["bits"] == 4 else [])


def phase(model: torch.nn.Module, name: str, rec: Recorder, device: str) -> QuantReport:
    """The load's "quantize" phase: `quantize` timed (the device synchronised around it), its note saying what it
    did."""
    with rec.phase("quantize", 0.8, translatable("progress.quantize", dtype=name), sync=device) as done:
        rep = quantize(model, name)
        memory.trim_heap()  # quantize_'s float temporaries handed back: the phase's RSS is what it keeps
    done.note = said("quant.phase", n=rep.quantized, of=rep.quantized + sum(s["count"] for s in rep.skipped),
                     dtype=name, tensor=rep.tensor or "-", before=fmt_bytes(rep.weights_before),
                     after=fmt_bytes(rep.weights_after), copied=fmt_bytes(rep.copied_from_file))
    return rep


def reason(rep: QuantReport) -> Said:
    """What happened to the dtype: loaded in the base dtype, then which weight matrices were quantized, and why
    the others were skipped (each reason with its count), from the model."""
    skipped = [said(f"quant.skip.{s['reason']}", n=s["count"], kinds=", ".join(s["kinds"]), first=s["first"])
               for s in rep.skipped]
    if not rep.quantized:
        return said("quant.reason_none", dtype=rep.dtype, base=rep.base, skipped=joined(skipped))
    return said("quant.reason", dtype=rep.dtype, base=rep.base, n=rep.quantized, tensor=rep.tensor,
                params=f"{rep.quantized_params / 1e6:,.1f}M", before=fmt_bytes(rep.weights_before),
                after=fmt_bytes(rep.weights_after), skipped=joined(skipped) if skipped else said("quant.skip.none"))


def joined(items: list[Said]) -> Said | str:
    """Sentences as one list, joined the way each language joins them (`quant.sep`, nested)."""
    if not items:
        return ""
    out = items[-1]
    for item in reversed(items[:-1]):
        out = said("quant.sep", a=item, b=out)
    return out


def _copy_out_of_the_file(model: torch.nn.Module) -> int:
    """Copy into RAM PyTorch allocates the tensors still pointing into the memory-mapped checkpoint (a float32 load
    of a float32 file maps it: the embedding, the norms), so that nothing holds the mapping: its pages, every float
    weight quantize_ read, then leave the process's RSS. Left mapped, the int8 model holds the float32 file's
    pages beside its own bytes: more RSS than the float32 model. Returns the bytes copied."""
    copied = 0
    with torch.no_grad():
        for t in census.tensors(model):
            if type(t) in (torch.Tensor, torch.nn.Parameter) and t.device.type == "cpu" \
                    and not t.untyped_storage().resizable():  # memory PyTorch did not allocate: the file's
                t.data = t.data.clone()
                copied += t.nbytes
    return copied


def meta_bytes(model: torch.nn.Module, name: str) -> int:
    """Bytes of `model` (built on the meta device, no storage) once quantized as `name`: torchao quantizes meta
    tensors too, shapes only, so the estimate counts the very tensors a load makes, scales and zero points
    included."""
    return quantize(model, name).weights_after


@functools.cache
def offload_refusal() -> str:
    """What Accelerate's offload hooks meet on a quantized weight, tried on a small int8 layer here once per process
    (`cpu_offload`: the weights kept in RAM, each brought to the execution device by a hook before its module runs),
    under `inference_mode` as a generation runs: the hook's `value.to(dtype)` then reaches the quantized tensor
    itself, which torchao does not implement (under `no_grad` it decomposes first and runs). The library's words,
    "<class>: <first line>", or "" if it ran."""
    layer = torch.nn.Sequential(torch.nn.Linear(64, 64))
    lines: list[str] = []
    try:
        with quiet(lines):
            torchao().quantize_(layer, config("int8"))
            cpu_offload(layer, execution_device="cpu")
            with torch.inference_mode():
                layer(torch.ones(1, 64))
    except Exception as e:  # the library's own refusal, whatever its class
        return f"{type(e).__name__}: {by_role(str(e).splitlines()[0] if str(e) else '')[:160]}"
    return ""


# -- what torchao refuses here ----------------------------------------------------------------------------
@dataclass(frozen=True)
class Refusal:
    format: str  # the packing format tried
    config: str  # its config's code
    error: str  # what torchao (or torch under it) raised here, live: "<class>: <its first line>"


@functools.cache
def refused() -> tuple[Refusal, ...]:
    """torchao's packed int4 formats (`Int4WeightOnlyConfig`), each tried on a 128 x 128 bfloat16 layer on this
    machine, with the error each raised; a format that quantizes here is not listed. Tried once per process."""
    ao = torchao()
    out = []
    for fmt in PACKED_INT4:
        code = f'Int4WeightOnlyConfig(int4_packing_format="{fmt}")'
        layer = torch.nn.Sequential(torch.nn.Linear(128, 128, bias=False, dtype=torch.bfloat16))
        lines: list[str] = []
        try:
            with quiet(lines):
                ao.quantize_(layer, ao.Int4WeightOnlyConfig(int4_packing_format=fmt))
                layer(torch.ones(1, 128, dtype=torch.bfloat16))
        except Exception as e:  # the library's own refusal, whatever its class: that is what is shown
            out.append(Refusal(fmt, code, f"{type(e).__name__}: {by_role(str(e).splitlines()[0] if str(e) else '')[:200]}"))
    return tuple(out)

