"""Models: the catalog, where a model comes from, and loading it in timed phases.

A load is three separate steps, and the playground times each one apart because
they cost different things:

1. `AutoModelForCausalLM.from_pretrained(src, dtype=...)`: read the checkpoint
   from disk (or the page cache) into CPU RAM, casting to the dtype asked for.
2. `model.to(device)`: the migration. `Module.to` walks every parameter and
   buffer; for each one whose device (or dtype) differs it allocates a tensor on
   the target, copies the bytes (over PCIe for a GPU) and repoints the module's
   attribute at it. When nothing differs, `Tensor.to` returns the same tensor:
   on `cpu` the whole call is a cheap walk that copies nothing.
3. `model.eval()`: switches dropout off. It moves nothing; it is timed so the
   learner sees that it is free, and never forgets it.

With `auto`, Accelerate loads with `device_map="auto"`: steps 1 and 2 happen
together, layer by layer, and the placement lands in `model.hf_device_map`.

Safety: `trust_remote_code` is never enabled, weights load only from safetensors,
and local folders are read only under the allowed roots (see `allowed_roots`).
"""

from __future__ import annotations

import gc
import json
import os
import re
import socket
import struct
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Callable
from urllib.parse import urlparse

import torch

from playground import devices, memory
from playground.inputs import UserError, shown

ASSETS = Path(__file__).resolve().parent / "assets"
BUNDLED_NAME = "shakespeare-gpt2"
BUNDLED_DIR = ASSETS / BUNDLED_NAME
HUB_MODELS = ("distilgpt2", "gpt2", "HuggingFaceTB/SmolLM2-135M-Instruct", "Qwen/Qwen2.5-0.5B-Instruct")
HUB_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,95}(/[A-Za-z0-9][A-Za-z0-9._-]{0,95})?$")


@dataclass
class CatalogEntry:
    id: str
    label: str
    kind: str  # "bundled", "hub", "synthetic"
    note: str = ""


def catalog() -> list[CatalogEntry]:
    """What the model picker offers. Anything else typed in is resolved by `resolve`."""
    out = [CatalogEntry(BUNDLED_NAME, f"{BUNDLED_NAME} (bundled, works offline)", "bundled",
                        "5.3M-parameter GPT-2 trained on Shakespeare's plays; ships with the playground")]
    out += [CatalogEntry(h, f"{h} (Hugging Face Hub)", "hub", "needs network, or the Hugging Face cache") for h in HUB_MODELS]
    from playground import space, synthetic

    allowed = space.space_settings().synthetic_allowed
    out += [CatalogEntry(n, f"{n} ({synthetic.PUBLISHED[n]} shape, random weights)", "synthetic", synthetic.LABEL)
            for n in synthetic.CONFIGS if n in allowed]
    return out


@dataclass
class ModelSource:
    kind: str  # "bundled", "local", "hub"
    ref: str  # folder path, or Hub id
    name: str  # what the page shows
    local_files_only: bool = True
    estimate_phase: "PhaseReport | None" = None  # the memory check, timed in prepare()
    config: object = None  # config.json as the memory check parsed it; from_pretrained reuses it


def allowed_roots() -> list[Path]:
    """Folders a local model may be read from: the bundled models, the Hugging Face
    cache, and any listed in PLAYGROUND_MODEL_DIRS (separated by os.pathsep)."""
    from huggingface_hub import constants

    roots = [ASSETS, Path(constants.HF_HUB_CACHE)]
    for extra in os.environ.get("PLAYGROUND_MODEL_DIRS", "").split(os.pathsep):
        if extra.strip():
            roots.append(Path(extra.strip()).expanduser())
    from playground import synthetic  # noqa: PLC0415  (synthetic imports this module)

    roots.append(synthetic.SYNTHETIC_DIR)
    return [r.resolve() for r in roots]


def resolve(model: object) -> ModelSource:
    """Turn what the visitor typed into a model source, or explain why not."""
    if not isinstance(model, str) or not model.strip():
        raise UserError.of("err.model_none", bundled=BUNDLED_NAME)
    model = model.strip()
    if len(model) > 300:
        raise UserError.of("err.model_long")
    if model in (BUNDLED_NAME, f"bundled/{BUNDLED_NAME}"):
        return ModelSource("bundled", str(BUNDLED_DIR), BUNDLED_NAME)
    from playground import synthetic

    if model in synthetic.CONFIGS:
        from playground import space

        space.check_synthetic(model)  # a shared Space caps the sizes (PLAYGROUND_SYNTHETIC_MAX)
        return ModelSource("synthetic", str(synthetic.folder(model)), model)
    if "://" in model or model.lower().startswith(("http:", "https:", "ftp:", "file:")):
        host = urlparse(model).netloc or "that address"
        raise UserError.of("err.model_url", host=shown(host, 60), bundled=BUNDLED_NAME)
    looks_like_path = model.startswith(("/", ".", "~")) or ".." in model or "\\" in model
    if looks_like_path:
        return _local_source(model)
    if HUB_ID.match(model):
        return ModelSource("hub", model, model, local_files_only=False)
    raise UserError.of("err.model_name", model=shown(model), bundled=BUNDLED_NAME)


def _local_source(model: str) -> ModelSource:
    # Resolve symlinks and '..' first, then check the roots, and only then whether
    # it exists: a visitor learns nothing about files outside the allowed folders.
    try:
        real = Path(model).expanduser().resolve(strict=False)
    except (OSError, RuntimeError):
        raise UserError.of("err.path_bad", model=shown(model, 80)) from None
    roots = allowed_roots()
    if not any(real == r or r in real.parents for r in roots):
        raise UserError.of("err.path_outside", model=shown(model, 80), roots=", ".join(str(r) for r in roots[:2]))
    if not real.exists():
        raise UserError.of("err.path_missing", model=shown(model, 80), bundled=BUNDLED_NAME)
    if not real.is_dir():
        raise UserError.of("err.path_file", model=shown(model, 80))
    check_local_folder(real)
    return ModelSource("local", str(real), real.name)


def check_local_folder(folder: Path) -> None:
    """A loadable folder has a readable config.json and complete safetensors weights."""
    cfg = folder / "config.json"
    if not cfg.is_file():
        raise UserError.of("err.no_config", name=folder.name)
    try:
        json.loads(cfg.read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        raise UserError(f"'{folder.name}/config.json' is not valid JSON ({e}). Re-save the model.") from None
    if not any(folder.glob("*.safetensors")):
        if any(folder.glob("*.bin")) or any(folder.glob("*.pt")) or any(folder.glob("*.pth")):
            raise UserError.of("err.pickle_only", name=folder.name)
        raise UserError.of("err.no_weights", name=folder.name)
    for f in sorted(folder.glob("*.safetensors")):
        check_safetensors(f)


def check_safetensors(path: Path) -> None:
    """The file holds its header and every byte the header promises. A safetensors file is
    8 bytes of header length, a JSON header (names, dtypes, shapes, byte offsets), then the
    data; a truncated download is refused here, before the loaded model is unloaded, not by
    from_pretrained after it (which would leave the slot empty)."""
    name = f"{path.parent.name}/{path.name}"
    try:
        size = path.stat().st_size
        with open(path, "rb") as fh:
            (n,) = struct.unpack("<Q", fh.read(8))  # struct.error when fewer than 8 bytes
            if n > 100 * 2**20 or 8 + n > size:
                raise ValueError("header length")
            header = json.loads(fh.read(n))
        header.pop("__metadata__", None)
        end = max((int(t["data_offsets"][1]) for t in header.values()), default=0)
    except (OSError, ValueError, KeyError, TypeError, IndexError, AttributeError, struct.error):
        raise UserError.of("err.st_unreadable", name=name) from None
    if 8 + n + end > size:
        raise UserError.of("err.st_truncated", name=name, want=memory.fmt_bytes(8 + n + end), have=memory.fmt_bytes(size))


def hub_reachable(timeout: float = 2.0) -> tuple[bool, str]:
    """Can we open a TCP connection to the Hub? Checked before any download, because
    huggingface_hub retries for ~25 s before giving up when there is no network."""
    from huggingface_hub import constants

    if constants.HF_HUB_OFFLINE:
        return False, "HF_HUB_OFFLINE is set"
    host = urlparse(constants.ENDPOINT).hostname or "huggingface.co"
    try:
        socket.create_connection((host, 443), timeout=timeout).close()
        return True, ""
    except OSError as e:
        return False, f"cannot reach {host} ({e.__class__.__name__}: {e})"


def _hub_cached(repo_id: str) -> bool:
    from huggingface_hub import try_to_load_from_cache

    hit = try_to_load_from_cache(repo_id, "config.json")
    return isinstance(hit, str)


@dataclass
class PhaseReport:
    name: str  # "estimate", "import", "load", "migrate", "eval"
    seconds: float
    rss_before: int
    rss_after: int
    available_before: int
    available_after: int
    vram_before: list[dict] = field(default_factory=list)
    vram_after: list[dict] = field(default_factory=list)
    note: str = ""


@dataclass
class LoadReport:
    model: str
    source: str  # "bundled", "local", "hub", "synthetic"
    device: str
    dtype: str  # the dtype the weights ended up in
    dtype_requested: str
    dtype_reason: str
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
    vram: dict  # {"available": bool, "reason": str, "gpus": [...]}
    migrate_note: str = ""
    migrate_code: str = ""  # "noop", "copied", "auto_hooks", "auto_single": the note's key, for other languages
    migrate_fields: dict = field(default_factory=dict)
    hf_device_map: dict | None = None
    placement: dict = field(default_factory=dict)  # device -> parameter count, measured on the loaded model
    file_backed_bytes: int | None = None  # weights still pointing into the memory-mapped checkpoint
    context_length: int | None = None
    hint: str = ""
    label: str = ""  # e.g. the synthetic models' "random weights" warning

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass
class LoadedModel:
    model: torch.nn.Module
    tokenizer: object
    report: LoadReport
    device: str  # where inputs must go: "cpu", "cuda:0", "mps"; for auto the embedding's device


Progress = Callable[[float, str], None]


def load(model: str, device: str, dtype: str, progress: Progress | None = None) -> LoadedModel:
    """Resolve, validate, then load in timed phases. Raises UserError for bad input."""
    progress = progress or (lambda frac, desc: None)
    src, dev, dtype = prepare(model, device, dtype, progress)
    return load_prepared(src, dev, dtype, progress)


def prepare(model: str, device: str, dtype: str, progress: Progress | None = None, reclaimable: int = 0
            ) -> tuple[ModelSource, devices.DeviceInfo, str]:
    """Every check that can fail before a single weight is read: names, device, dtype,
    allowed folders, whether a Hub model can be reached at all, and whether it fits
    (`reclaimable`: RAM the currently loaded model gives back before this load)."""
    progress = progress or (lambda frac, desc: None)
    dtype = devices.check_dtype(dtype)
    dev = devices.check_device(device)
    src = resolve(model)
    from playground import estimate

    # Refuse what will not fit before a byte is allocated (or a synthetic checkpoint built).
    # The check builds the model on the meta device (shapes, no data), which also imports
    # the architecture's code: timed here, reported as the "estimate" phase.
    before = memory.snapshot()
    t0 = time.perf_counter()
    try:
        cfg = estimate.load_config(src)
    except estimate.NotCached:
        cfg = None  # a Hub model not downloaded yet: its size is unknown until then, nothing to check
    est = estimate.guard(cfg, dev.id, dtype, reclaimable=reclaimable) if cfg is not None else None
    if cfg is not None and src.kind != "synthetic":
        src.config = cfg.config  # the same config.json from_pretrained would parse again
    src.estimate_phase = _phase(
        "estimate", time.perf_counter() - t0, before, memory.snapshot(),
        (f"built on the meta device: needs {memory.fmt_bytes(est.required_bytes)} with the margin, "
         f"{memory.fmt_bytes(est.available_bytes)} available ({est.available_source})") if est is not None
        else "size unknown until the download: not checked",
    )
    if src.kind == "synthetic":
        from playground import synthetic

        synthetic.ensure(src.name, progress=progress)
    elif src.kind == "hub":
        if _hub_cached(src.ref):
            src.local_files_only = True
        else:
            ok, why = hub_reachable()
            if not ok:
                raise UserError.of("err.hub_offline", ref=src.ref, why=why, bundled=BUNDLED_NAME)
    return src, dev, dtype


def load_prepared(src: ModelSource, dev: devices.DeviceInfo, dtype: str, progress: Progress | None = None) -> LoadedModel:
    return _load_phases(src, dev, dtype, progress or (lambda frac, desc: None))


def _torch_dtype_arg(dtype: str):
    return "auto" if dtype == "auto" else devices.TORCH_DTYPES[dtype]


def _load_phases(src: ModelSource, dev: devices.DeviceInfo, dtype: str, progress: Progress) -> LoadedModel:
    from transformers import AutoModelForCausalLM, AutoTokenizer

    common = dict(trust_remote_code=False, local_files_only=src.local_files_only)
    progress(0.02, "tokenizer")
    try:
        tokenizer = AutoTokenizer.from_pretrained(src.ref, **common)
    except Exception as e:
        raise _load_error(src, e) from None

    phases: list[PhaseReport] = [src.estimate_phase] if src.estimate_phase else []
    kwargs = dict(dtype=_torch_dtype_arg(dtype), use_safetensors=True, **common)
    if dev.id == "auto":
        kwargs["device_map"] = "auto"

    # Phase 0: find the model class from config.json. Transformers imports each
    # architecture's Python code lazily, on first use: seconds of `import`, once per
    # process, that would otherwise be billed to "loading from disk".
    progress(0.05, "import: the architecture's code (first load only)")
    before = memory.snapshot()
    t0 = time.perf_counter()
    try:
        from transformers import AutoConfig

        config = src.config if src.config is not None else AutoConfig.from_pretrained(src.ref, **common)
        model_class = AutoModelForCausalLM._model_mapping[type(config)]
    except KeyError:
        raise UserError.of("err.not_causal", name=src.name, model_type=getattr(config, "model_type", "?")) from None
    except Exception as e:
        raise _load_error(src, e) from None
    import_s = time.perf_counter() - t0
    phases.append(_phase("import", import_s, before, memory.snapshot(),
                         f"resolved {model_class.__name__}; its module is imported once per process"))

    # Phase 1: disk -> RAM (or, with auto, disk -> wherever Accelerate places each layer).
    progress(0.1, "load: from_pretrained (disk to RAM)" if dev.id != "auto" else "load: from_pretrained(device_map='auto')")
    before = memory.snapshot()
    t0 = time.perf_counter()
    try:
        # config= spares a second parse of config.json; from_pretrained deep-copies it
        model = AutoModelForCausalLM.from_pretrained(src.ref, config=config, **kwargs)
    except Exception as e:
        gc.collect()
        raise _load_error(src, e) from None
    devices.sync("auto" if dev.id == "auto" else "cpu")
    load_s = time.perf_counter() - t0
    after = memory.snapshot()
    phases.append(_phase("load", load_s, before, after))

    # Phase 2: the migration, model.to(device).
    progress(0.7, f"migrate: model.to('{dev.id}')")
    first = next(model.parameters())
    ptr_before, dev_before = first.data_ptr(), first.device
    before = memory.snapshot()
    if dev.id == "auto":
        migrate_s = 0.0
        note_code, note_fields = ("auto_hooks" if getattr(model, "hf_device_map", None) else "auto_single"), {}
    else:
        devices.sync(dev.id)
        t0 = time.perf_counter()
        model.to(dev.id)
        devices.sync(dev.id)
        migrate_s = time.perf_counter() - t0
        first = next(model.parameters())
        # Same data_ptr and device after .to(): Tensor.to returned the tensor itself, nothing copied.
        if first.data_ptr() == ptr_before and first.device == dev_before:
            note_code, note_fields = "noop", {"device": str(dev_before)}
        else:
            note_code, note_fields = "copied", {"src": str(dev_before), "dst": str(first.device)}
    from playground.i18n import t

    note = t(f"note.migrate.{note_code}", "en", **note_fields)
    after = memory.snapshot()
    phases.append(_phase("migrate", migrate_s, before, after, note))

    # Phase 3: eval() flips `training` on every submodule: dropout off. Moves nothing.
    progress(0.9, "model.eval()")
    before = memory.snapshot()
    t0 = time.perf_counter()
    model.eval()
    eval_s = time.perf_counter() - t0
    after = memory.snapshot()
    phases.append(_phase("eval", eval_s, before, after, "dropout off; no memory moves"))

    if model.generation_config.pad_token_id is None and tokenizer.eos_token_id is not None:
        model.generation_config.pad_token_id = tokenizer.eos_token_id

    report = _report(src, dev, dtype, model, phases, note)
    report.migrate_code, report.migrate_fields = note_code, note_fields
    progress(1.0, "loaded")
    input_device = str(model.get_input_embeddings().weight.device)
    return LoadedModel(model=model, tokenizer=tokenizer, report=report, device=input_device)


def _phase(name: str, seconds: float, before: memory.MemorySnapshot, after: memory.MemorySnapshot, note: str = "") -> PhaseReport:
    return PhaseReport(
        name=name, seconds=seconds, rss_before=before.rss, rss_after=after.rss,
        available_before=before.available, available_after=after.available,
        vram_before=[asdict(g) for g in before.gpus], vram_after=[asdict(g) for g in after.gpus], note=note,
    )


def _report(src: ModelSource, dev: devices.DeviceInfo, dtype: str, model, phases: list[PhaseReport], note: str) -> LoadReport:
    params = list(model.parameters())
    actual = str(params[0].dtype).replace("torch.", "")
    from playground.i18n import t

    reason = t("note.dtype.auto" if dtype == "auto" else "note.dtype.cast", "en", dtype=actual)
    vram_gpus, vram_reason = memory.gpu_readings()
    by = {p.name: p for p in phases}
    first, last = by["load"], phases[-1]
    ctx = getattr(model.config, "max_position_embeddings", None) or getattr(model.config, "n_positions", None)
    label = ""
    if src.kind == "synthetic":
        label = "random weights: the text is noise; the timings and memory are real"
    return LoadReport(
        model=src.name, source=src.kind, device=dev.id, dtype=actual, dtype_requested=dtype, dtype_reason=reason,
        param_count=sum(p.numel() for p in params),
        buffer_count=sum(1 for _ in model.buffers()),
        weights_bytes=memory.weights_bytes(model),
        disk_bytes=_disk_bytes(src.ref),
        estimate_seconds=by["estimate"].seconds if "estimate" in by else 0.0,
        import_seconds=by["import"].seconds, load_seconds=by["load"].seconds,
        migrate_seconds=by["migrate"].seconds, eval_seconds=by["eval"].seconds,
        phases=phases,
        ram=dict(rss_before=first.rss_before, rss_after=last.rss_after, delta=last.rss_after - first.rss_before,
                 available_before=first.available_before, available_after=last.available_after),
        vram=dict(available=bool(vram_gpus), reason=vram_reason,
                  gpus=[asdict(g) for g in vram_gpus]),
        migrate_note=note,
        hf_device_map=dict(getattr(model, "hf_device_map", {}) or {}) or None,
        placement=_placement(params),
        file_backed_bytes=_file_backed(model),
        context_length=ctx,
        hint=devices.dtype_hint(dev, dtype),
        label=label,
    )


def _file_backed(model) -> int | None:
    from playground import migration

    return migration.file_backed_bytes(model)


def _placement(params: list[torch.nn.Parameter]) -> dict:
    out: dict[str, int] = {}
    for p in params:
        out[str(p.device)] = out.get(str(p.device), 0) + p.numel()
    return out


def _disk_bytes(ref: str) -> int:
    """Bytes of safetensors weights on disk (a local folder, or the Hub cache snapshot)."""
    folder = Path(ref)
    if not folder.is_dir():
        from huggingface_hub import try_to_load_from_cache

        hit = try_to_load_from_cache(ref, "config.json")
        if not isinstance(hit, str):
            return 0
        folder = Path(hit).parent
    return sum(f.stat().st_size for f in folder.glob("*.safetensors"))


def _load_error(src: ModelSource, e: Exception) -> UserError:
    """Translate what from_pretrained raised into a sentence that says what to do."""
    msg = str(e).split("\n")[0][:300]
    if src.kind == "hub":
        if "not a valid model identifier" in msg or "RepositoryNotFound" in type(e).__name__ or "404" in msg:
            return UserError.of("err.hub_missing", ref=src.ref)
        if "trust_remote_code" in msg:
            return UserError.of("err.remote_code_hub", ref=src.ref)
        return UserError(f"Could not load '{src.ref}' from the Hub: {msg}")
    if "trust_remote_code" in msg:
        return UserError.of("err.remote_code", name=src.name)
    return UserError(f"Could not load '{src.name}': {type(e).__name__}: {msg}")
