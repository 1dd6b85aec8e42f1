"""Synthetic models: real-size architectures with random weights, made offline.

`ensure(name)` builds a checkpoint once from a published config (`CONFIGS`), with progress,
atomically and under a lock, rebuilding a damaged one, and returns its folder, which then loads
through the same `from_pretrained` path as any model, with the bundled model's tokenizer (8,192
tokens). Random weights: the text is noise; the timings and memory are real. See docs/loading.md.
"""

from __future__ import annotations

import copy
import functools
import json
import os
import shutil
import threading
import traceback
from contextlib import contextmanager
from pathlib import Path
from typing import Callable, Iterator

import torch
from accelerate import init_empty_weights
from safetensors.torch import save_file

from playground.core import leftovers, settings
from playground.core.errors import UserError
from playground.core.i18n import Said, translatable
from playground.core.paths import BUNDLED_DIR
from playground.hw import memory
from playground.load import checkpoint, integrity

# Published shapes (GPT-2 from OpenAI's release, the Llamas shaped like karpathy/llama2.c's stories42M, Llama 3.2 1B
# and Llama 2 7B).
CONFIGS: dict[str, dict] = {
    # the smallest Llama here (builds in seconds): every projection an nn.Linear, the head tied to the embedding
    "synthetic/llama-42m": dict(
        model_type="llama", hidden_size=512, intermediate_size=1376, num_hidden_layers=8, num_attention_heads=8,
        num_key_value_heads=8, max_position_embeddings=1024, tie_word_embeddings=True, rope_theta=10000.0,
        rms_norm_eps=1e-5,
    ),
    "synthetic/gpt2-small": dict(model_type="gpt2", n_embd=768, n_layer=12, n_head=12, n_positions=1024),
    "synthetic/gpt2-medium": dict(model_type="gpt2", n_embd=1024, n_layer=24, n_head=16, n_positions=1024),
    "synthetic/gpt2-large": dict(model_type="gpt2", n_embd=1280, n_layer=36, n_head=20, n_positions=1024),
    "synthetic/gpt2-xl": dict(model_type="gpt2", n_embd=1600, n_layer=48, n_head=25, n_positions=1024),
    "synthetic/llama-1b": dict(
        model_type="llama", hidden_size=2048, intermediate_size=8192, num_hidden_layers=16,
        num_attention_heads=32, num_key_value_heads=8, max_position_embeddings=2048,
        tie_word_embeddings=True, rope_theta=500000.0, rms_norm_eps=1e-5,
    ),
    # Llama 2 7B's shape: 6.5B parameters with the bundled 8,192-token vocabulary, 26 GB in float32.
    # Larger than most machines' RAM: the estimate refuses it before anything is built, and it
    # is here to show that refusal.
    "synthetic/llama-7b": dict(
        model_type="llama", hidden_size=4096, intermediate_size=11008, num_hidden_layers=32,
        num_attention_heads=32, num_key_value_heads=32, max_position_embeddings=4096,
        tie_word_embeddings=False, rope_theta=10000.0, rms_norm_eps=1e-5,
    ),
}
# The published models' sizes (with their own vocabularies: 50,257 for GPT-2, 128,256 for Llama 3.2).
PUBLISHED = {
    "synthetic/llama-42m": "42M", "synthetic/gpt2-small": "124M", "synthetic/gpt2-medium": "355M", "synthetic/gpt2-large": "774M",
    "synthetic/gpt2-xl": "1.5B", "synthetic/llama-1b": "1.2B", "synthetic/llama-7b": "6.7B",
}
# ...and those vocabularies: these models use the bundled tokenizer's 8,192 tokens instead, so they have fewer
# parameters than the published size (GPT-2 small: 92.1M here, 124M published), all of them in the embedding
PUBLISHED_VOCAB = {"synthetic/gpt2-small": 50257, "synthetic/gpt2-medium": 50257, "synthetic/gpt2-large": 50257,
                   "synthetic/gpt2-xl": 50257, "synthetic/llama-1b": 128256, "synthetic/llama-7b": 32000,
                   "synthetic/llama-42m": 32000}
LABEL = "random weights: the text is noise; the timings and memory are real"
SHARD_BYTES = 1 << 30  # 1 GiB shards: GPT-2 XL in float32 is 6 shards, one progress step each
TMP_PREFIX = ".tmp-"  # a build in progress: .tmp-<pid>-<start time>-<random>
UNOWNED_AFTER = 3600  # a .tmp-<random> folder of an older version, untouched for an hour, is a dead build's

Progress = Callable[[float, str], None]
_LOCK = threading.Lock()


def root() -> Path:
    """Where synthetic checkpoints are written (PLAYGROUND_SYNTHETIC_DIR)."""
    return settings.read().synthetic_dir


def folder(name: str) -> Path:
    return root() / name.split("/", 1)[1]


def _check_name(name: str) -> None:
    if name not in CONFIGS:
        raise UserError.of("err.synthetic_name", name=str(name)[:60], known=", ".join(CONFIGS))


def size_note(name: str, config, param_count: int) -> Said | None:
    """Why a synthetic model has fewer parameters than its published size, from its config and its counted
    parameters: the published vocabulary's extra rows in the embedding (and the output head, when untied).
    None for a model with no published size."""
    if name not in PUBLISHED_VOCAB:
        return None
    tied = bool(getattr(config, "tie_word_embeddings", True))
    extra = (PUBLISHED_VOCAB[name] - config.vocab_size) * config.hidden_size * (1 if tied else 2)
    return Said("label.synthetic_size", dict(
        here=f"{param_count / 1e6:,.1f}M", published=PUBLISHED[name], vocab=f"{config.vocab_size:,}",
        published_vocab=f"{PUBLISHED_VOCAB[name]:,}", extra=f"{extra / 1e6:,.1f}M",
        total=f"{(param_count + extra) / 1e6:,.1f}M", where=Said("label.embedding" if tied else "label.embedding_head")))


# -- which ones this process offers -----------------------------------------------
def _size(name: str) -> float:
    """Published parameter count ('124M', '1.5B') as a number, to order the models."""
    s = PUBLISHED[name]
    return float(s[:-1]) * {"M": 1e6, "B": 1e9}[s[-1]]


def by_size() -> list[str]:
    return sorted(CONFIGS, key=_size)


def allowed(s: settings.Settings | None = None) -> tuple[str | None, list[str], str]:
    """(the largest allowed, every allowed name by size, why): PLAYGROUND_SYNTHETIC_MAX, or the default
    (all of them on a laptop, up to GPT-2 medium on a shared Space, where 1.5B parameters would need
    6 GB of float32 weights and minutes of writing). A name that is no synthetic model raises
    `settings.Malformed`."""
    s = s or settings.read()
    ordered = by_size()
    default_max = settings.SPACE_SYNTHETIC_MAX if s.on_space else ordered[-1]
    raw = s.synthetic_max
    name = raw if raw.startswith("synthetic/") else f"synthetic/{raw}"
    if not raw:
        top, why = default_max, f"default {'up to ' + default_max if s.on_space else 'all'} {s.where}"
    elif raw.lower() == "none":
        top, why = None, "PLAYGROUND_SYNTHETIC_MAX=none"
    elif raw.lower() == "all":
        top, why = ordered[-1], "PLAYGROUND_SYNTHETIC_MAX=all"
    elif name in CONFIGS:
        top, why = name, f"PLAYGROUND_SYNTHETIC_MAX={raw}"
    else:  # the operator's mistake: app.py refuses to start on it (check_or_exit)
        raise settings.Malformed("PLAYGROUND_SYNTHETIC_MAX", raw,
                                 f"names no synthetic model (use one of {', '.join(ordered)}, all or none)", "gpt2-medium")
    return top, ([] if top is None else [n for n in ordered if _size(n) <= _size(top)]), why


def check_or_exit(program: str = "app.py") -> None:
    """PLAYGROUND_SYNTHETIC_MAX names a synthetic model (or all, none): else one line on stderr and exit 2.
    `python app.py` asks before the page's libraries load, as it asks settings.check_or_exit."""
    try:
        allowed()
    except settings.Malformed as e:
        settings.exit_on(settings.refusal(e, program))


def check_allowed(name: str) -> None:
    """Refuse a synthetic model larger than this process allows, saying what is allowed."""
    s = settings.read()
    _top, names, why = allowed(s)
    if name in names:
        return
    if not names:
        raise UserError.of("err.synthetic_off", name=name, why=why)
    raise UserError.of("err.synthetic_big_space" if s.on_space else "err.synthetic_big", name=name, why=why,
                       names=", ".join(names))


def config(name: str):
    """The transformers config for a synthetic model, vocabulary matched to the bundled tokenizer (a copy of the
    one built once: building it takes ~1 ms, and every load, estimate and fit check asks)."""
    _check_name(name)
    return copy.deepcopy(_config(name))


@functools.lru_cache(maxsize=None)
def _config(name: str):
    from transformers import AutoConfig  # deferred (start-up): catalog.import_model_classes
    spec = dict(CONFIGS[name])
    model_type = spec.pop("model_type")
    vocab, bos, eos = _bundled_vocab()
    spec.update(vocab_size=vocab, bos_token_id=bos, eos_token_id=eos)
    return AutoConfig.for_model(model_type, **spec)


@functools.lru_cache(maxsize=1)  # loading the tokenizer costs ~20 ms; every synthetic load asked again
def _bundled_vocab() -> tuple[int, int | None, int | None]:
    from transformers import AutoTokenizer  # deferred (start-up): catalog.import_model_classes
    tok = AutoTokenizer.from_pretrained(BUNDLED_DIR, local_files_only=True)
    return len(tok), tok.bos_token_id, tok.eos_token_id


def is_built(name: str) -> bool:
    """A complete, loadable checkpoint (see `problem`)."""
    return problem(name) is None


def problem(name: str) -> Said | None:
    """Why `name` must be (re)built before it can be loaded: not built yet, or damaged (a
    truncated or missing weights file, a config.json that does not parse or describes another
    model, a missing tokenizer file); None when it is complete.

    The answer is not worked out again while none of its files, nor the bundled tokenizer's that it copies,
    changed size, inode or modification time since (`checkpoint.read_once`): the full check parses config.json
    twice and compares the tokenizer byte for byte, ~10 ms that every load would pay again."""
    _check_name(name)
    out = folder(name)
    return checkpoint.read_once("synthetic", out,
                                lambda: integrity.synthetic_problem(out, name, config(name), BUNDLED_DIR),
                                also=[BUNDLED_DIR / f for f in integrity.TOKENIZER_FILES])


def ensure(name: str, progress: Progress | None = None) -> Path:
    """Write the random checkpoint (again, if damaged); report progress per module built and per
    shard written. A failure leaves nothing half-written and gives the build's memory back."""
    _check_name(name)
    progress = progress or (lambda frac, desc: None)
    out = folder(name)
    if is_built(name):
        return out
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        with _LOCK, _file_lock(out.parent / f".{out.name}.lock"):
            # a build killed part-way (SIGKILL, the OOM killer) left its temporary folder: up to GBs
            leftovers.sweep(out.parent, TMP_PREFIX, unowned_after=UNOWNED_AFTER)
            if not is_built(name):  # else another thread or process finished it while we waited
                _build(name, out, progress)
    except BaseException as e:
        failure = e if isinstance(e, UserError) else integrity.write_failure(e, name, out.parent, 0) or e
        _forget_frames(e)
    else:
        progress(1.0, translatable("progress.synth_ready", name=name))
        return out
    # Outside the except block, so the raised error does not keep the original (and its frames) alive.
    memory.release_memory()
    raise failure


def _forget_frames(e: BaseException) -> None:
    """Drop the local variables of every frame an exception (and what it chained) went through: the
    half-built model, its state dict and its shards live there, and an exception kept by a caller
    or a log would otherwise hold their memory (measured: +460 MB per failed GPT-2 small build)."""
    seen = set()
    while e is not None and id(e) not in seen:
        seen.add(id(e))
        traceback.clear_frames(e.__traceback__)
        e = e.__cause__ or e.__context__


@contextmanager
def _file_lock(path: Path) -> Iterator[None]:
    """An exclusive lock between processes (POSIX flock; a no-op where fcntl is absent)."""
    try:
        import fcntl  # deferred (optional): POSIX only; Windows has no fcntl
    except ImportError:  # Windows: the thread lock still serialises this process
        yield
        return
    with open(path, "a+") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def _build(name: str, out: Path, progress: Progress) -> None:
    from transformers import AutoModelForCausalLM  # deferred (start-up): catalog.import_model_classes
    progress(0.0, translatable("progress.synth_build", name=name))
    cfg = config(name)
    with init_empty_weights():  # shapes only: no memory, no init yet
        model = AutoModelForCausalLM.from_config(cfg, dtype=torch.float32)
    model.tie_weights()  # the LM head and the embedding become one (meta) Parameter
    total = sum(p.numel() * p.element_size() for p in model.parameters()) or 1
    integrity.check_space(out.parent, total, name)  # before a byte is allocated: a full disk is known now
    done = 0
    made: dict[int, torch.nn.Parameter] = {}  # id(meta param) -> its real one, so ties survive
    # fork_rng: the seed makes the checkpoint reproducible without touching the caller's RNG.
    with torch.random.fork_rng(devices=[]), torch.no_grad():
        torch.manual_seed(0)
        for mod_name, module in _post_order(model):
            fresh = 0
            for key, p in list(module._parameters.items()):
                if p is None or p.device.type != "meta":
                    continue
                if id(p) not in made:
                    made[id(p)] = torch.nn.Parameter(torch.empty(p.shape, dtype=p.dtype), requires_grad=p.requires_grad)
                    fresh += p.numel() * p.element_size()
                module._parameters[key] = made[id(p)]
            for key, b in list(module._buffers.items()):
                if b is not None and b.device.type == "meta":  # buffers computed at init are already real
                    module._buffers[key] = torch.zeros(b.shape, dtype=b.dtype)
            # Children come first (post-order), as in Transformers' own initialize_weights: a parent's
            # init (GPT-2's attention and MLP rescale their c_proj) overrides its children's.
            model._init_weights(module)
            if fresh:
                done += fresh
                progress(0.6 * done / total, translatable("progress.synth_init", module=mod_name or "model",
                                                    done=f"{done / 2**20:,.0f}", total=f"{total / 2**20:,.0f}"))
    model.tie_weights()
    model.config.architectures = [type(model).__name__]

    tmp = leftovers.make(TMP_PREFIX, out.parent)
    os.chmod(tmp, 0o755)  # mkdtemp makes it private; the checkpoint is not secret
    try:
        _write(model, tmp, progress, name)
        for f in integrity.TOKENIZER_FILES:
            shutil.copy(BUNDLED_DIR / f, tmp / f)
        (tmp / "README.md").write_text(f"# {name}\n\n{LABEL}.\n", encoding="utf-8")
        del model
        if out.exists():  # a stale, incomplete or damaged folder (problem() said so)
            shutil.rmtree(out)
        os.replace(tmp, out)
    except Exception as e:
        shutil.rmtree(tmp, ignore_errors=True)  # first, so that the free space below is measured without it
        explained = integrity.write_failure(e, name, out.parent, total)
        if explained is None:
            raise
        raise explained from None
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)


def _post_order(module, prefix: str = "") -> Iterator[tuple[str, object]]:
    for child_name, child in module.named_children():
        yield from _post_order(child, f"{prefix}.{child_name}" if prefix else child_name)
    yield prefix, module


def _write(model, tmp: Path, progress: Progress, name: str) -> None:
    """config.json, generation_config.json and the weights, in shards of at most SHARD_BYTES."""
    state = model.state_dict()
    tied = set(getattr(model, "all_tied_weights_keys", {}) or {})  # targets: lm_head.weight -> stored as the embedding
    seen: set[int] = set()
    tensors = {}
    for key, t in state.items():
        if key in tied or t.data_ptr() in seen:
            continue
        seen.add(t.data_ptr())
        tensors[key] = t.contiguous()
    shards: list[dict] = [{}]
    size = 0
    for key, t in tensors.items():
        nbytes = t.numel() * t.element_size()
        if shards[-1] and size + nbytes > SHARD_BYTES:
            shards.append({})
            size = 0
        shards[-1][key] = t
        size += nbytes
    n = len(shards)
    names = ["model.safetensors"] if n == 1 else [f"model-{i + 1:05d}-of-{n:05d}.safetensors" for i in range(n)]
    model.config.save_pretrained(tmp)
    if getattr(model, "generation_config", None) is not None:
        model.generation_config.save_pretrained(tmp)
    for i, (shard, fname) in enumerate(zip(shards, names)):
        progress(0.6 + 0.38 * i / n, translatable("progress.synth_write", name=name, i=i + 1, n=n))
        save_file(shard, tmp / fname, metadata={"format": "pt"})
    if n > 1:
        index = dict(metadata=dict(total_size=sum(t.numel() * t.element_size() for t in tensors.values())),
                     weight_map={k: fname for shard, fname in zip(shards, names) for k in shard})
        (tmp / "model.safetensors.index.json").write_text(json.dumps(index, indent=2), encoding="utf-8")
    progress(0.98, translatable("progress.synth_written" if n > 1 else "progress.synth_written_one", name=name, n=n))
