"""Synthetic models: real-size architectures with random weights, made offline.

Load time and memory grow with the number of bytes in a checkpoint, not with
what the weights mean, so a GPT-2 XL config filled with random numbers teaches
exactly what the real GPT-2 XL would about `from_pretrained` and `.to()`. These
are built once from the published configs, saved as safetensors under the
synthetic folder, and then loaded through the same `from_pretrained` path as any
model. They share the bundled model's tokenizer, so their vocabulary is resized
to its 8,192 tokens (the parameter counts below say so).

Random weights: the text is noise; the timings and memory are real.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path
from typing import Callable

SYNTHETIC_DIR = Path(
    os.environ.get("PLAYGROUND_SYNTHETIC_DIR", Path.home() / ".cache" / "device-playground" / "synthetic")
).expanduser()

# Published shapes (GPT-2 from OpenAI's release, the Llama one shaped like Llama 3.2 1B).
CONFIGS: dict[str, dict] = {
    "synthetic/gpt2-small": dict(model_type="gpt2", n_embd=768, n_layer=12, n_head=12, n_positions=1024),
    "synthetic/gpt2-medium": dict(model_type="gpt2", n_embd=1024, n_layer=24, n_head=16, n_positions=1024),
    "synthetic/gpt2-large": dict(model_type="gpt2", n_embd=1280, n_layer=36, n_head=20, n_positions=1024),
    "synthetic/gpt2-xl": dict(model_type="gpt2", n_embd=1600, n_layer=48, n_head=25, n_positions=1024),
    "synthetic/llama-1b": dict(
        model_type="llama", hidden_size=2048, intermediate_size=8192, num_hidden_layers=16,
        num_attention_heads=32, num_key_value_heads=8, max_position_embeddings=2048,
        tie_word_embeddings=True, rope_theta=500000.0, rms_norm_eps=1e-5,
    ),
}
PUBLISHED = {
    "synthetic/gpt2-small": "124M", "synthetic/gpt2-medium": "355M", "synthetic/gpt2-large": "774M",
    "synthetic/gpt2-xl": "1.5B", "synthetic/llama-1b": "1.2B",
}
LABEL = "random weights: the text is noise; the timings and memory are real"


def folder(name: str) -> Path:
    return SYNTHETIC_DIR / name.split("/", 1)[1]


def config(name: str):
    """The transformers config for a synthetic model, vocabulary matched to the bundled tokenizer."""
    from transformers import AutoConfig, AutoTokenizer

    from playground.models import BUNDLED_DIR

    spec = dict(CONFIGS[name])
    model_type = spec.pop("model_type")
    tok = AutoTokenizer.from_pretrained(BUNDLED_DIR, local_files_only=True)
    spec.update(vocab_size=len(tok), bos_token_id=tok.bos_token_id, eos_token_id=tok.eos_token_id)
    return AutoConfig.for_model(model_type, **spec)


def ensure(name: str, progress: Callable[[float, str], None] | None = None) -> Path:
    """Write the random checkpoint once (atomically: a half-written one never counts)."""
    progress = progress or (lambda frac, desc: None)
    out = folder(name)
    if (out / "config.json").is_file() and any(out.glob("*.safetensors")):
        return out
    import torch
    from transformers import AutoModelForCausalLM

    from playground.models import BUNDLED_DIR

    out.parent.mkdir(parents=True, exist_ok=True)
    progress(0.0, f"building {name} with random weights (first use only)")
    torch.manual_seed(0)
    model = AutoModelForCausalLM.from_config(config(name), dtype=torch.float32)
    progress(0.3, f"writing {name} to {out}")
    tmp = Path(tempfile.mkdtemp(prefix=".tmp-", dir=out.parent))
    try:
        model.save_pretrained(tmp, safe_serialization=True, max_shard_size="2GB")
        for f in ("tokenizer.json", "tokenizer_config.json"):
            shutil.copy(BUNDLED_DIR / f, tmp / f)
        (tmp / "README.md").write_text(f"# {name}\n\n{LABEL}.\n", encoding="utf-8")
        del model
        if out.exists():
            shutil.rmtree(out)
        os.replace(tmp, out)
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)
    progress(0.6, f"{name} written")
    return out
