"""Loading a model in timed phases: import, check, unload, disk -> RAM, `.to(device)`, `eval()`.

`prepare(src, dev, dtype)` imports the architecture's code and makes every check that can fail before
a weight is read (memory guard, synthetic build, Hub download, tokenizer) and returns a `Plan`;
`unload(plan, release)` frees the model held before, as a phase of its own; `load(plan)` runs
`from_pretrained`, `model.to(device)` and `model.eval()`, each timed apart with memory read around it,
and returns a `LoadedModel` holding its `LoadReport`. `trust_remote_code` is never enabled; weights
load only from safetensors. Why the phases are apart: docs/loading.md.
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Callable

import torch

from playground.core.errors import UserError
from playground.core.i18n import Said, as_text, said, translatable
from playground.core.inputs import Placement
from playground.core.paths import by_role
from playground.core.units import fmt_bytes
from playground.hw import census, devices, ledger, memory
from playground.hw.devices import DeviceInfo, Dtype
from playground.load import catalog, checkpoint, estimate, hub, placement as placing, quantize, synthetic
from playground.load.catalog import ModelSource
from playground.load.location import ModelLocation, locate
from playground.load.phases import PhaseReport, Recorder, phase as _phase, recorder

Progress = Callable[[float, str], None]


def _quiet(frac: float, desc: str) -> None:
    """A progress callback that reports nothing."""


@dataclass
class LoadReport:
    model: str
    source: str  # "bundled", "local", "hub", "synthetic"
    device: str
    dtype: str  # the dtype the weights ended up in
    dtype_requested: str
    dtype_reason: Said
    param_count: int
    buffer_count: int
    weights_bytes: int
    disk_bytes: int
    estimate_seconds: float
    import_seconds: float
    load_seconds: float
    migrate_seconds: float
    eval_seconds: float
    phases: list[PhaseReport]
    ram: dict  # {"rss_before", "rss_after", "delta", "available_before", "available_after"}
    vram: dict  # {"available": bool, "reason": Said | None, "gpus": [...]}
    migrate_code: str = ""  # "noop", "copied", "auto_hooks", "auto_single": the migration note's key
    migrate_fields: dict = field(default_factory=dict)
    hf_device_map: dict | None = None
    # where the loaded model lives (per tier: bytes, blocks, offloaded or not; where inputs go; what the device
    # asked for became), read once from its tensors and hooks (load/location.py): every panel reads this
    location: ModelLocation | None = None
    file_backed_bytes: int | None = None  # weights still pointing into the memory-mapped checkpoint
    context_length: int | None = None
    hint: Said | None = None  # what this (device, dtype) pair costs
    label: Said | None = None  # the synthetic models' "random weights" warning
    size_note: Said | None = None  # a synthetic model: why it has fewer parameters than its published size
    # A Hub model's download phase (None for every other source): bytes fetched now (0 from the cache)
    download_seconds: float | None = None
    download_bytes: int | None = None
    download_from_cache: bool | None = None
    chat_template: bool = False  # the tokenizer has one: generation applies it unless asked for the raw prompt
    # Filled by the pool (playground.run.pool) and the page, not by the loader:
    loaded_at: float | None = None  # time.time() when the load ended
    shared: int = 0  # other visitors who held this model when this one asked for it (0: loaded for this one)
    waiting: int | None = None  # other visitors waiting for the lane when the load ended (the page's queue)
    evicted_before: dict | None = None  # the model this visitor held before, unloaded since for another's
    # every byte after the load, each part from its counter (playground.hw.ledger), the estimate beside the weights
    ledger: list[ledger.Part] = field(default_factory=list)
    quantized: quantize.QuantReport | None = None  # int8, int4: which layers were quantized, which skipped and why

    @property
    def migrate_note(self) -> Said:
        return said(f"note.migrate.{self.migrate_code}", **self.migrate_fields)

    def to_dict(self) -> dict:
        """The API's dict: every sentence said in English ('' where there is none)."""
        d = as_text(asdict(self))
        d["migrate_note"] = self.migrate_note.text("en")
        d["hint"], d["label"] = d["hint"] or "", d["label"] or ""
        d["vram"]["reason"] = d["vram"]["reason"] or ""
        for p in d["phases"]:
            p["note"] = p["note"] or ""
        d["ledger"] = ledger.as_dicts(self.ledger)
        d["location"] = self.location.to_dict() if self.location is not None else None
        d["quantized"] = self.quantized.to_dict() if self.quantized is not None else None
        return d


@dataclass
class LoadedModel:
    model: torch.nn.Module
    tokenizer: object
    report: LoadReport
    device: str  # where inputs must go: "cpu", "cuda:0", "mps"; for auto the embedding's device
    folder: str = ""  # the checkpoint's folder (never shown): the ledger reads its mapping's resident pages
    placed: placing.PlacementPlan | None = None  # a load with memory limits: the plan it was loaded by
    offload_folder: str | None = None  # its offload folder (removed when it is unloaded)
    # its tensors counted once when it loaded (where they lie, the checkpoint mappings that hold them): a
    # model in the pool is never moved, so the ranges stay put, and a generation reads their resident pages
    # without reading /proc/self/maps again before its prefill
    counted: census.Census | None = None

    def mapped_ranges(self) -> list[tuple[int, int]] | None:
        """Where its weights are memory-mapped from the checkpoint (None: the maps could not be read)."""
        if self.counted is None:
            self.counted = census.census(self.model)
        return self.counted.ranges if self.counted.mapped is not None else None


@dataclass
class Plan:
    """A load that passed every check that can fail before a weight is read."""

    source: ModelSource
    device: DeviceInfo
    dtype: Dtype
    config: object | None  # config.json as the memory check parsed it; from_pretrained reuses it
    recorder: Recorder  # the phases run so far (import, the checks, an unload), and where the next ones go
    tokenizer: object | None = None  # loaded by the checks, from the files on disk
    folder: str = ""  # what from_pretrained reads: the folder (a Hub model's cached snapshot)
    placed: placing.PlacementPlan | None = None  # memory limits given: the plan (device_map="auto", max_memory=...)
    offload_folder: str | None = None  # the plan uses the disk tier: where Accelerate may write what it offloads
    others_copied: int = 0  # copied weights of other models this process holds (the pool's): not the runtime
    estimate: estimate.Estimate | None = None  # the guard's sizes: the ledger sets the measured weights beside them

    def phases(self) -> list[PhaseReport]:
        """The phases run so far, in the order they ran."""
        return list(self.recorder.phases)


def prepare(src: ModelSource, dev: DeviceInfo, dtype: Dtype, progress: Progress | Recorder = _quiet,
            reclaimable: int = 0, placement: Placement | None = None, resident: int = 0) -> Plan:
    """The architecture's import, then the checks before a single weight is read: does it fit (`resident`:
    RAM the models already loaded hold; `reclaimable`: the part of it given back first; with `placement`, the
    plan for those memory limits), a Hub model's download (after the memory check: only config.json comes
    down before it) and the safetensors checks of what came down, is a synthetic checkpoint built, the
    tokenizer, is the offload folder writable. `progress`: a Recorder (the pool's, which marks the memory
    timeline) or a progress callback."""
    rec = recorder(progress)
    started = time.perf_counter()
    if src.kind == "hub":
        # config.json first (from the cache, or alone from the Hub): the memory check needs nothing more,
        # so a model that will not fit is refused before its weights come down
        rec.begin("download", 0.0, translatable("progress.download_check", ref=src.ref))
        blobs, dl_before = hub.blobs(src.ref), memory.snapshot()
        if hub.cached(src.ref) is None:
            hub.config_folder(src.ref)
    configured = time.perf_counter()
    # Transformers imports each architecture's Python code lazily, on first use: seconds of `import`,
    # once per process. The estimate below builds the model on the meta device, which would import it
    # and bill the import to "checking it fits": import it first, as a phase of its own.
    with rec.phase("import", 0.01, translatable("progress.import")) as imported:
        cfg = catalog.read_config(src)
        model_class = _model_class(src, cfg.config)
        ao = dtype in devices.QUANTIZED and quantize.torchao()  # int8, int4: torchao too, here only
    imported.note = said("phase.import_torchao" if ao else "phase.import", cls=model_class.__name__)
    _context_phase(dev, rec)  # a GPU's first use in this process: its CUDA context, measured
    # Refuse what will not fit before a byte is allocated (or a synthetic checkpoint built).
    with rec.phase("estimate", 0.02, translatable("progress.estimate")) as phase:
        est = placed = None
        if placement is not None:  # the plan for these limits, checked (the RAM it needs, the disk tier)
            placed = placing.guard(cfg, dtype, placement, reclaimable, resident)
            phase.note = said("place.phase", limits=str(placement), tiers=placing.tiers_text(placed))
        else:
            est = estimate.guard(cfg, dev, dtype, reclaimable=reclaimable, resident=resident)
            phase.note = said("phase.estimate", need=fmt_bytes(est.required_bytes),
                              avail=fmt_bytes(est.available_bytes), where=est.available_source)
    folder = src.ref
    if src.kind == "hub":
        folder = _download(src, rec, blobs, dl_before, configured - started)
    elif src.kind == "synthetic":
        _build_phase(src, rec)
    with rec.phase("tokenizer", 0.11, translatable("progress.tokenizer")) as checked:
        tokenizer = _checked_tokenizer(src, folder)
    checked.note = said("phase.tokenizer", cls=type(tokenizer).__name__)
    # the same config.json from_pretrained would parse again (a synthetic one is built from its spec)
    config = cfg.config if src.kind != "synthetic" else None
    offload = str(placing.new_folder(placed.by_tier["disk"])) if placed and placed.by_tier.get("disk") else None
    return Plan(src, dev, dtype, config, rec, tokenizer=tokenizer, folder=folder, estimate=est,
                placed=placed, offload_folder=offload)


def _context_phase(dev: DeviceInfo, rec: Recorder) -> PhaseReport | None:
    """A GPU's first CUDA call creates its context (VRAM, 1-2.5 GB of host RAM, seconds): timed and measured
    here, before the estimate's free-memory query would create it unseen. None when it exists already."""
    index = devices.cuda_index(dev.id)
    if index is None or not ledger.cuda_context_pending(index):
        return None
    with rec.phase("context", 0.015, translatable("progress.context", device=dev.id)) as made:
        cost = ledger.cuda_context(index)
    made.note = said("phase.context", device=dev.id, host=fmt_bytes(cost["host_bytes"] or 0),
                     vram=fmt_bytes(cost["device_bytes"]) if cost["device_bytes"] is not None else "?")
    return made


def _model_class(src: ModelSource, config) -> type:
    """The causal-LM class for `config` (Transformers' mapping; importing its module on first use)."""
    from transformers import AutoModelForCausalLM  # deferred (start-up): catalog.import_model_classes
    try:
        return AutoModelForCausalLM._model_mapping[type(config)]
    except KeyError:
        raise UserError.of("err.not_causal", name=src.name, model_type=getattr(config, "model_type", "?")) from None
    except Exception as e:
        raise _load_error(src, e) from None


def unload(plan: Plan, release: Callable[[], None], progress: Progress | None = None,
           previous: str | None = None) -> PhaseReport | None:
    """Free the model held before (`previous` names it; None: nothing was held) by calling `release`, timed
    as the load's "unload" phase, its memory read around it; the phase joins `plan`'s and is returned.
    With nothing held, `release` still runs and no phase is reported."""
    if previous is None:
        release()
        return None
    rec = plan.recorder
    if progress is not None:
        rec.progress = progress
    with rec.phase("unload", 0.115, translatable("progress.unload", model=previous)) as freed:
        release()
    freed.note = said("phase.unload", model=previous, freed=fmt_bytes(max(freed.rss_before - freed.rss_after, 0)))
    return freed


def _download(src: ModelSource, rec: Recorder, blobs: set, before: memory.MemorySnapshot,
              config_seconds: float) -> str:
    """The download phase: the Hub model's files into the Hugging Face cache (nothing on a cache hit),
    then the same safetensors checks a local folder passes, so that a truncated download is refused
    here, before the loaded model is unloaded. Its seconds are config.json's (fetched before the memory
    check) and the rest's; its bytes every file that was not in the cache before. Returns the folder."""
    def moved(done: int, total: int) -> None:
        frac = done / total if total else 0.0
        rec.say(0.02 + 0.08 * frac,
                translatable("progress.download", ref=src.ref, done=fmt_bytes(done), total=fmt_bytes(total)))

    rec.begin("download", 0.02, translatable("progress.download", ref=src.ref, done=fmt_bytes(0), total="?"))
    got = hub.fetch(src.ref, moved, blobs)
    seconds = config_seconds + got.seconds
    if got.from_cache:
        note = said("phase.download_cached", files=got.files)
    else:
        rate = fmt_bytes(got.bytes / seconds) + "/s" if seconds > 0 else "n/a"
        note = said("phase.download", bytes=fmt_bytes(got.bytes), files=got.files, rate=rate)
    phase = rec.add(_phase("download", seconds, before, memory.snapshot(), note))
    phase.bytes = got.bytes
    rec.say(0.1, translatable("progress.downloaded", ref=src.ref))
    return str(got.folder)


def _build_phase(src: ModelSource, rec: Recorder) -> PhaseReport | None:
    """Write a synthetic checkpoint that is missing or damaged (`synthetic.problem` says which), as a
    timed phase of its own; None when it is complete. A failed rebuild says what was wrong with the
    old checkpoint too: nothing has been unloaded yet, so the loaded model keeps serving."""
    why = synthetic.problem(src.name)
    if why is None:
        return None
    with rec.phase("build", 0.03, translatable("progress.synth_build", name=src.name)) as phase:
        try:
            synthetic.ensure(src.name, progress=rec.say)
        except UserError as e:
            if why.key == "synth.why.first":
                raise
            raise UserError.of("err.damaged_rebuild", name=src.name, why=why, error=e.said) from None
    phase.note = said("phase.build", why=why)
    return phase


def _checked_tokenizer(src: ModelSource, folder: str):
    """The checks that need the files (a Hub model's are in its cached snapshot by now): every safetensors file
    complete, a tokenizer's vocabulary there, the tokenizer loaded (from_pretrained would fail after the unload)."""
    from transformers import AutoTokenizer  # deferred (start-up): catalog.import_model_classes
    checkpoint.check_folder(Path(folder))
    checkpoint.check_tokenizer(Path(folder))
    try:
        return AutoTokenizer.from_pretrained(folder, trust_remote_code=False, local_files_only=True)
    except Exception as e:
        raise _load_error(src, e) from None


def load(plan: Plan, progress: Progress | None = None) -> LoadedModel:
    """from_pretrained, then model.to(device), then eval(), each a phase of `plan.recorder` (timed apart, memory
    read around it). `progress`: where the recorder's lines go from here on (the pool's, which also refuses a
    load during a shutdown), when not the one `prepare` was given."""
    from transformers import AutoModelForCausalLM, AutoTokenizer  # deferred (start-up): catalog.import_model_classes
    src, dev = plan.source, plan.device
    rec = plan.recorder
    if progress is not None:
        rec.progress = progress
    ref = plan.folder or src.ref  # a Hub model: its snapshot folder, downloaded by prepare
    common = dict(trust_remote_code=False, local_files_only=True)  # never the network: see `prepare`
    try:
        tokenizer = plan.tokenizer if plan.tokenizer is not None else AutoTokenizer.from_pretrained(ref, **common)
    except Exception as e:
        raise _load_error(src, e) from None
    kwargs = dict(dtype=devices.load_dtype(plan.dtype), use_safetensors=True, **common)
    if dev.id == "auto":
        kwargs["device_map"] = "auto"
    if plan.placed is not None:  # Accelerate plans again from these numbers: the same plan (load/placement.py)
        kwargs.update(device_map="auto", max_memory=plan.placed.max_memory_arg(), offload_folder=plan.offload_folder)
    config = plan.config  # None for a synthetic model: from_pretrained reads the one written with it

    # The ledger's runtime, read before the clock starts: this process's anonymous memory with no weights of
    # this model held, freed heap pages handed back first (as the ledger's own reading does) and the other
    # models' copies (the pool's) taken off.
    memory.trim_heap()
    idle = memory.rss_anonymous() - plan.others_copied

    # 1. Disk -> RAM (or, with auto, disk -> wherever Accelerate places each layer).
    with rec.phase("load", 0.2, translatable("progress.load" if dev.id != "auto" else "progress.load_auto")):
        failure = None
        try:
            # config= spares a second parse of config.json; from_pretrained deep-copies it
            model = AutoModelForCausalLM.from_pretrained(ref, config=config, **kwargs)
        except Exception as e:
            failure = _load_error(src, e)
        if failure is not None:  # raised out here, not chained to the error whose frames hold the half-loaded model
            placing.remove_folder(plan.offload_folder)
            memory.release_memory()
            raise failure
        devices.sync("auto" if dev.id == "auto" else "cpu")

    # 2. The migration, model.to(device).
    if dev.id == "auto":  # placed by from_pretrained already: nothing to move, nothing to time
        rec.begin("migrate", 0.7, translatable("progress.migrate_auto"))
        code, fields = ("auto_hooks" if getattr(model, "hf_device_map", None) else "auto_single"), {}
        moved = rec.add(_phase("migrate", 0.0, memory.snapshot(), memory.snapshot()))
    else:
        first = next(model.parameters())
        ptr_before, dev_before = first.data_ptr(), first.device
        # bytes still in the checkpoint's mapping, which a copy to another device faults in (read before the clock;
        # nothing to read when the model stays where it is)
        mapped = census.census(model).mapped if devices.name(dev_before) != devices.name(dev.id) else 0
        with rec.phase("migrate", 0.7, translatable("progress.migrate", device=dev.id), sync=dev.id) as moved:
            model.to(dev.id)
        first = next(model.parameters())
        # Same data_ptr and device after .to(): Tensor.to returned the tensor itself, nothing copied.
        if first.data_ptr() == ptr_before and first.device == dev_before:
            code, fields = "noop", {"device": str(dev_before)}
        else:
            code, fields = "copied", {"src": str(dev_before), "dst": str(first.device), "mapped_bytes": mapped}
    moved.note = said(f"note.migrate.{code}", **fields)
    # 2b. int8, int4: the weights quantized where they now live (torchao, weight-only: load/quantize.py)
    quant = quantize.phase(model, plan.dtype, rec, dev.id) if plan.dtype in devices.QUANTIZED else None

    # 3. eval() flips `training` on every submodule: dropout off. Moves nothing.
    with rec.phase("eval", 0.9, translatable("progress.eval"), said("phase.eval")):
        model.eval()

    # the last phase ends here: what follows (the report, the ledger) is bookkeeping, in no phase
    rec.done(translatable("progress.loaded"))
    if model.generation_config.pad_token_id is None and tokenizer.eos_token_id is not None:
        model.generation_config.pad_token_id = tokenizer.eos_token_id
    counted = census.census(model)
    report = _report(plan, model, tokenizer, plan.phases(), code, fields, idle, counted, quant)
    return LoadedModel(model=model, tokenizer=tokenizer, report=report,
                       device=placing.input_device(model), folder=ref, placed=plan.placed,
                       offload_folder=plan.offload_folder, counted=counted)


def _report(plan: Plan, model, tokenizer, phases: list[PhaseReport], code: str, fields: dict, idle,
            counted: census.Census, quant: quantize.QuantReport | None = None) -> LoadReport:
    src, dev = plan.source, plan.device
    actual = quant.dtype if quant is not None else str(next(model.parameters()).dtype).replace("torch.", "")
    vram_gpus, vram_reason = memory.gpu_readings()
    by = {p.name: p for p in phases}
    first, last, down = by["load"], phases[-1], by.get("download")
    folder = Path(plan.folder or src.ref)
    weights, mapped = counted.total, counted.mapped
    return LoadReport(
        model=src.name, source=src.kind, device=dev.id, dtype=actual, dtype_requested=devices.dtype_name(plan.dtype),
        dtype_reason=quantize.reason(quant) if quant is not None else _dtype_reason(plan, actual, weights, mapped),
        param_count=counted.parameters,
        buffer_count=counted.buffers,
        weights_bytes=weights,
        disk_bytes=checkpoint.disk_bytes(folder),
        estimate_seconds=by["estimate"].seconds, import_seconds=by["import"].seconds,
        load_seconds=by["load"].seconds, migrate_seconds=by["migrate"].seconds, eval_seconds=by["eval"].seconds,
        phases=phases,
        ram=dict(rss_before=first.rss_before, rss_after=last.rss_after, delta=last.rss_after - first.rss_before,
                 available_before=first.available_before, available_after=last.available_after),
        vram=dict(available=bool(vram_gpus), reason=vram_reason, gpus=[asdict(g) for g in vram_gpus]),
        migrate_code=code, migrate_fields=fields,
        hf_device_map=dict(getattr(model, "hf_device_map", {}) or {}) or None,
        location=locate(model, dev.id, plan.placed, plan.offload_folder, counted),
        file_backed_bytes=mapped,
        context_length=estimate.context_length(model.config),
        hint=devices.hint(dev, plan.dtype),
        label=said("label.synthetic") if src.kind == "synthetic" else None,
        size_note=synthetic.size_note(src.name, model.config, counted.parameters)
        if src.kind == "synthetic" else None,
        download_seconds=down.seconds if down else None, download_bytes=down.bytes if down else None,
        download_from_cache=(down.bytes == 0) if down else None,
        chat_template=bool(getattr(tokenizer, "chat_template", None)),
        ledger=ledger.assemble(model, runtime_anon=idle, folder=str(folder), counted=counted,
                               weights_estimate=plan.estimate.weights_bytes if plan.estimate is not None else None),
        quantized=quant,
    )


def _dtype_reason(plan: Plan, actual: str, weights: int, mapped: int | None) -> Said:
    """What happened to the dtype, from the checkpoint's stored dtype (its safetensors header) and where the
    loaded weights' bytes lie: kept as stored (mapped from the file, or not), or cast while loading (copied)."""
    if plan.dtype == "auto":
        return said("note.dtype.auto", dtype=actual)
    if plan.estimate is not None:  # the memory check read the header already
        stored = (plan.estimate.checkpoint or {}).get("dtype")
    else:  # a load with memory limits was checked by the planner, which reads no header: read it now
        try:
            stored = (checkpoint.summary(plan.folder or plan.source.ref) or {}).get("dtype")
        except (OSError, ValueError):
            stored = None
    if stored is None:
        return said("note.dtype.unknown", dtype=actual)
    sizes = dict(dtype=actual, weights=fmt_bytes(weights), mapped=fmt_bytes(mapped or 0))
    if stored != actual:  # from_pretrained's cast makes a new tensor per weight: nothing stays mapped
        return said("note.dtype.cast", stored=stored, **sizes)
    return said("note.dtype.mapped" if mapped and mapped >= weights else "note.dtype.same", **sizes)


def _load_error(src: ModelSource, e: Exception) -> UserError:
    """Translate what from_pretrained raised into a sentence that says what to do."""
    msg = by_role(str(e).split("\n")[0])[:300]  # a library's words may quote the server's paths
    if src.kind == "hub":
        if "not a valid model identifier" in msg or "RepositoryNotFound" in type(e).__name__ or "404" in msg:
            return UserError.of("err.hub_missing", ref=src.ref)
        if "trust_remote_code" in msg:
            return UserError.of("err.remote_code_hub", ref=src.ref)
        return UserError.of("err.load_hub", ref=src.ref, error=msg)
    if "trust_remote_code" in msg:
        return UserError.of("err.remote_code", name=src.name)
    return UserError.of("err.load_failed", name=src.name, error=f"{type(e).__name__}: {msg}")


def parse(model: object, device: object, dtype: object) -> tuple[ModelSource, DeviceInfo, Dtype]:
    """What a visitor asked to load, as typed values: the edge's one check (one device discovery)."""
    dt = devices.parse_dtype(dtype)
    dev = devices.parse_device(device)
    return catalog.resolve(model), dev, dt
