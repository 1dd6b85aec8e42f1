"""Estimate before loading: equal to compute_module_sizes on the model as loaded, a KV-cache
figure that matches what generation really holds, and a guard that refuses before allocating."""

from __future__ import annotations

import json

import pytest
import torch
from accelerate.utils import calculate_maximum_sizes, compute_module_sizes

from playground.core import settings
from playground.core.errors import UserError
from playground.core.paths import BUNDLED_DIR, BUNDLED_NAME
from playground.core.units import fmt_bytes
from playground.hw import devices, memory
from playground.load import checkpoint, estimate, synthetic
from tests.conftest import estimate_of, guard_of, load

MiB = 2**20


@pytest.mark.slow
@pytest.mark.parametrize("dtype", ["float32", "bfloat16", "float16", "auto"])
def test_bundled_estimate_equals_the_loaded_model_to_the_byte(dtype):
    lm = load(BUNDLED_NAME, "cpu", dtype)
    est = estimate_of(BUNDLED_NAME, dtype).to_dict()
    total, (largest, names) = calculate_maximum_sizes(lm.model)
    assert est["weights_bytes"] == compute_module_sizes(lm.model)[""] == total
    assert est["largest_layer_bytes"] == largest and est["largest_layer_names"] == names
    assert est["dtype"] == lm.report.dtype
    assert est["tied_lm_head"] is True
    assert est["param_count"] == lm.report.param_count


def _gpt2_params(c) -> int:
    d, L, V, P = c.n_embd, c.n_layer, c.vocab_size, c.n_positions
    # token + position embeddings, L blocks (attention 4d^2+4d, MLP 8d^2+5d, two LayerNorms 4d),
    # the final LayerNorm; the LM head is the token embedding (tied), counted once.
    return V * d + P * d + L * (12 * d * d + 13 * d) + 2 * d


def _llama_params(c) -> int:
    d, L, V, inter = c.hidden_size, c.num_hidden_layers, c.vocab_size, c.intermediate_size
    kv = c.num_key_value_heads * (d // c.num_attention_heads)
    head = 0 if c.tie_word_embeddings else V * d  # an untied LM head is a second V x d matrix
    return V * d + L * (2 * d * d + 2 * d * kv + 3 * d * inter + 2 * d) + d + head


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(synthetic.CONFIGS))
def test_synthetic_estimates_follow_from_the_architecture(name):
    """Built on meta, never loaded: the bytes must equal the parameter count worked out from the
    published shapes by hand, times the element size, with the tied head counted once."""
    cfg = synthetic.config(name)
    for dtype, size in (("float32", 4), ("bfloat16", 2), ("float16", 2)):
        est = estimate_of(name, dtype)
        meta = estimate.meta_model(cfg, devices.TORCH_DTYPES[dtype])
        assert est.weights_bytes == compute_module_sizes(meta)[""]
        if cfg.model_type == "gpt2":
            assert est.param_count == _gpt2_params(cfg)
            assert est.weights_bytes == est.param_count * size
            assert est.kv_bytes_per_token == 2 * cfg.n_layer * cfg.n_head * (cfg.n_embd // cfg.n_head) * size
        else:
            assert est.param_count == _llama_params(cfg)
            # rotary inv_freq and original_inv_freq: float32 buffers whatever the weights' dtype
            head = cfg.hidden_size // cfg.num_attention_heads
            assert est.weights_bytes == est.param_count * size + 2 * (head // 2) * 4
            assert est.kv_bytes_per_token == 2 * cfg.num_hidden_layers * cfg.num_key_value_heads * head * size
        assert est.weights_bytes_by_dtype[dtype] == est.weights_bytes
        assert est.tied_lm_head == cfg.tie_word_embeddings


def test_untied_meta_model_would_count_the_embedding_twice():
    """The Transformers 5 trap the estimate avoids by calling tie_weights()."""
    from accelerate import init_empty_weights
    from transformers import AutoModelForCausalLM

    cfg = synthetic.config("synthetic/gpt2-small")
    with init_empty_weights():
        untied = AutoModelForCausalLM.from_config(cfg, dtype=torch.float32)
    est = estimate_of("synthetic/gpt2-small", "float32")
    embedding = cfg.vocab_size * cfg.n_embd * 4
    assert compute_module_sizes(untied)[""] == est.weights_bytes + embedding


def test_tiny_llama_checkpoint_loaded_for_real(tmp_path, monkeypatch):
    """A Llama-shaped checkpoint (float32 rotary buffers, grouped KV heads, untied head),
    loaded by from_pretrained in each dtype, equals its estimate to the byte."""
    from transformers import AutoConfig, AutoModelForCausalLM

    cfg = AutoConfig.for_model("llama", hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                               num_attention_heads=4, num_key_value_heads=2, vocab_size=300,
                               tie_word_embeddings=False)
    folder = tmp_path / "tiny-llama"
    AutoModelForCausalLM.from_config(cfg).save_pretrained(folder)
    monkeypatch.setenv("PLAYGROUND_MODEL_DIRS", str(tmp_path))
    for dtype in ("float32", "bfloat16", "float16", "auto"):
        loaded = AutoModelForCausalLM.from_pretrained(folder, dtype=devices.parse_dtype(dtype))
        est = estimate_of(str(folder), dtype).to_dict()
        assert est["weights_bytes"] == compute_module_sizes(loaded)[""], dtype
        assert not est["tied_lm_head"]
        assert est["kv_bytes_per_token"] == 2 * 2 * 2 * 16 * loaded.dtype.itemsize


def test_safetensors_header_matches_the_estimate():
    summary = checkpoint.summary(BUNDLED_DIR)
    est = estimate_of(BUNDLED_NAME, "float32")
    assert summary["dtype"] == "float32"
    # the tied head is stored once, so the stored bytes are exactly the float32 weights
    assert summary["stored_bytes"] == est.weights_bytes
    assert summary["file_bytes"] > summary["stored_bytes"]  # plus the header itself
    from safetensors import safe_open

    with safe_open(BUNDLED_DIR / summary["files"][0], "pt") as f:
        assert summary["tensors"] == len(list(f.keys()))


def test_the_estimate_api_shape():
    d = estimate_of(BUNDLED_NAME, "bfloat16").to_dict()
    for key in ("weights_bytes", "largest_layer_bytes", "kv_bytes_per_token", "available_bytes", "fits"):
        assert key in d
    assert isinstance(d["fits"], bool) and d["fits"]
    assert d["weights_bytes"] * 2 == d["weights_bytes_by_dtype"]["float32"]
    json.dumps(d)


def test_guard_refuses_with_both_numbers_and_a_smaller_dtype(monkeypatch):
    est = estimate_of(BUNDLED_NAME, "float32")
    budget = est.weights_bytes  # enough for bfloat16 + 20%, not for float32 + 20%
    monkeypatch.setenv(settings.MEMORY_BUDGET_ENV, str(budget))
    with pytest.raises(estimate.DoesNotFit) as err:
        guard_of(BUNDLED_NAME, "cpu", "float32")
    msg = str(err.value)
    assert fmt_bytes(est.required_bytes) in msg and fmt_bytes(budget) in msg
    assert "float16" in msg  # bfloat16 or float16 would fit
    assert isinstance(err.value, UserError)
    assert guard_of(BUNDLED_NAME, "cpu", "bfloat16").fits
    d = estimate_of(BUNDLED_NAME, "float32").to_dict()
    assert d["fits"] is False and d["available_bytes"] == budget


def test_guard_counts_the_memory_the_loaded_model_frees(monkeypatch):
    est = estimate_of(BUNDLED_NAME, "float32")
    monkeypatch.setenv(settings.MEMORY_BUDGET_ENV, str(est.weights_bytes))
    with pytest.raises(estimate.DoesNotFit):
        guard_of(BUNDLED_NAME, "cpu", "float32")
    assert guard_of(BUNDLED_NAME, "cpu", "float32", reclaimable=est.weights_bytes).fits


def test_guard_refuses_a_synthetic_model_before_building_it(tmp_path, monkeypatch):
    monkeypatch.setenv("PLAYGROUND_SYNTHETIC_DIR", str(tmp_path / "synthetic"))
    monkeypatch.setenv(settings.MEMORY_BUDGET_ENV, "1GB")
    rss0 = memory.rss_bytes()
    with pytest.raises(estimate.DoesNotFit, match="synthetic/gpt2-large") as err:
        guard_of("synthetic/gpt2-large", "cpu", "bfloat16")
    assert "to build its float32 checkpoint in RAM on first use" in str(err.value)
    assert not synthetic.folder("synthetic/gpt2-large").exists()  # nothing written
    assert memory.rss_bytes() - rss0 < 200 * MiB  # and nothing near its 1.4 GB allocated


def test_a_refusal_by_the_first_build_says_so_and_the_estimate_lists_it(tmp_path, monkeypatch):
    """synthetic/llama-7b was listed at 12.2 GiB in bfloat16 with 21.7 GiB free, and Load refused it with 'needs
    29.3 GiB (weights 12.2 GiB + 20% margin)' and 'a smaller dtype would not fit either', no reason given: the
    first use's float32 build sets the need. The refusal says so with both figures, and the tip says why no
    dtype helps (the panel lists the build's figure: tests/web/test_views.py)."""
    monkeypatch.setenv("PLAYGROUND_SYNTHETIC_DIR", str(tmp_path / "synthetic"))
    est = estimate_of("synthetic/gpt2-large", "bfloat16")
    budget = (est.required_bytes + est.build_bytes) // 2  # the load in bfloat16 fits, the float32 build does not
    monkeypatch.setenv(settings.MEMORY_BUDGET_ENV, str(budget))
    with pytest.raises(estimate.DoesNotFit) as err:
        guard_of("synthetic/gpt2-large", "cpu", "bfloat16")
    msg = str(err.value)
    assert f"needs {fmt_bytes(est.build_bytes)} to build its float32 checkpoint" in msg
    assert f"in bfloat16 the load itself needs {fmt_bytes(est.required_bytes)}" in msg
    assert "no dtype avoids the float32 build" in msg and "would not fit either" not in msg
    assert msg.count(fmt_bytes(est.build_bytes)) == 2  # the reason and the tip; the note is not said again
    refused = estimate_of("synthetic/gpt2-large", "bfloat16")  # the panel's estimate says the same reason
    assert not refused.fits and refused.reason.key == "est.reason.build" and refused.build_bytes > budget


def test_hub_model_not_in_the_cache(monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(UserError, match="not.*cache|no config.json"):
        estimate_of("nobody-here/no-such-model-xyz", "float32")


def test_bad_dtype_and_device_are_user_errors():
    with pytest.raises(UserError):
        estimate_of(BUNDLED_NAME, "float8")
    with pytest.raises(UserError):
        estimate_of(BUNDLED_NAME, "float32", device="tpu")


def test_synthetic_build_reports_progress_and_loads_cleanly(tmp_path, monkeypatch):
    """synthetic.ensure: per-module init and per-shard write progress; the sharded checkpoint it
    writes loads with nothing missing, and its headers agree with the estimate."""
    from transformers import AutoModelForCausalLM

    name = "synthetic/tiny-test"
    monkeypatch.setenv("PLAYGROUND_SYNTHETIC_DIR", str(tmp_path / "synthetic"))
    monkeypatch.setitem(synthetic.CONFIGS, name, dict(model_type="gpt2", n_embd=64, n_layer=3, n_head=4,
                                                       n_positions=128))
    monkeypatch.setitem(synthetic.PUBLISHED, name, "1M")
    monkeypatch.setattr(synthetic, "SHARD_BYTES", 1 * MiB)  # force several shards
    calls = []
    folder = synthetic.ensure(name, progress=lambda f, d: calls.append((f, d)))
    fracs = [f for f, _ in calls]
    assert fracs == sorted(fracs) and fracs[-1] == 1.0
    assert sum(d.startswith("init ") for _, d in calls) >= 10
    shards = [d for _, d in calls if d.startswith("writing ")]
    assert len(shards) >= 2 and synthetic.is_built(name)
    assert (folder / "model.safetensors.index.json").is_file()
    model, info = AutoModelForCausalLM.from_pretrained(folder, output_loading_info=True)
    assert not info["missing_keys"] and not info["unexpected_keys"]
    assert model.lm_head.weight is model.transformer.wte.weight
    w = model.transformer.h[0].attn.c_attn.weight
    assert 0.015 < float(w.detach().std()) < 0.025  # initialised (normal, std 0.02), not left empty
    est = estimate_of(name, "float32")
    assert est.checkpoint["stored_bytes"] == est.weights_bytes == compute_module_sizes(model)[""]
    calls.clear()
    assert synthetic.ensure(name, progress=lambda f, d: calls.append(d)) == folder and not calls  # built once


def test_a_refusal_is_said_in_both_languages(monkeypatch):
    import re

    monkeypatch.setenv(settings.MEMORY_BUDGET_ENV, "1GB")
    with pytest.raises(estimate.DoesNotFit) as e:
        guard_of("synthetic/llama-7b", "cpu", "float32")
    en, zh = str(e.value), e.value.text("zh")
    assert en.startswith("Not loading synthetic/llama-7b in float32 on cpu: it needs ") and "Try: " in en
    assert zh.startswith("不加载 synthetic/llama-7b（float32，cpu）：它需要 ") and "可以试试：" in zh
    # the same numbers in both: what it needs, what is available
    assert re.findall(r"\d+(?:\.\d+)? [KMGT]?i?B", en) == re.findall(r"\d+(?:\.\d+)? [KMGT]?i?B", zh)
