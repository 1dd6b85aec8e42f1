"""Will it fit, at this context? The KV cache sized as Transformers' own cache keeps it (GQA, sliding windows),
the activation peak measured the same way each time, and the largest context that fits checked against a real
generation at that context (it runs) and one token over the memory budget (it is refused before it starts)."""

from __future__ import annotations

import pytest
import torch
from transformers import AutoConfig, DynamicCache

from playground.core import settings
from playground.core.errors import UserError
from playground.core.inputs import GenerationParams
from playground.core.paths import BUNDLED_NAME
from playground.load import catalog, fit, kv, loader
from playground.run.kvcache import cache_bytes
from playground.run.pool import ModelPool

# Configs with each kind of attention the sizing must know: (model type, fields), all small.
SHAPES = {
    "gpt2 (every layer, every token)": ("gpt2", dict(n_layer=3, n_head=4, n_embd=64)),
    "llama GQA (8 heads share 2 KV heads)": ("llama", dict(num_hidden_layers=3, num_attention_heads=8,
                                                           num_key_value_heads=2, hidden_size=64)),
    "mistral (every layer slides, window 16)": ("mistral", dict(num_hidden_layers=2, num_attention_heads=4,
                                                                num_key_value_heads=2, hidden_size=64, sliding_window=16)),
    "gemma2 (sliding and full layers alternate)": ("gemma2", dict(num_hidden_layers=4, num_attention_heads=4,
                                                                  num_key_value_heads=2, hidden_size=64, head_dim=16,
                                                                  sliding_window=16)),
}


def _config(name: str):
    model_type, fields = SHAPES[name]
    return AutoConfig.for_model(model_type, **fields)


def _filled(config, dtype: torch.dtype, tokens: int, step: int = 5) -> int:
    """Bytes of Transformers' own DynamicCache for `config` after `tokens` tokens, fed `step` at a time as a
    prefill and a decode would feed it."""
    cfg = config.get_text_config(decoder=True)
    s = kv.shape(cfg)
    cache = DynamicCache(config=cfg)
    done = 0
    while done < tokens:
        n = min(step, tokens - done)
        for layer in range(s["layers"]):
            k = torch.zeros(1, s["kv_heads"], n, s["head_dim"], dtype=dtype)
            cache.update(k, k.clone(), layer)
        done += n
    return cache_bytes(cache)[0]


@pytest.mark.parametrize("name", list(SHAPES))
@pytest.mark.parametrize("tokens", [1, 15, 16, 17, 40])
def test_kv_bytes_is_what_transformers_cache_holds(name, tokens):
    config = _config(name)
    for dtype in (torch.float32, torch.bfloat16):
        assert kv.size(config, dtype, tokens) == _filled(config, dtype, tokens), (name, tokens, dtype)
    assert kv.size(config, torch.float32, tokens, batch=3) == 3 * kv.size(config, torch.float32, tokens)


def test_sliding_layers_stop_growing_and_gqa_counts_kv_heads():
    mistral = _config("mistral (every layer slides, window 16)")
    assert kv.size(mistral, torch.float32, 1000) == kv.size(mistral, torch.float32, 15)
    assert kv.sliding(mistral) == dict(layers=2, of=2, window=16)
    gemma = _config("gemma2 (sliding and full layers alternate)")
    assert kv.sliding(gemma) == dict(layers=2, of=4, window=16)
    grows = kv.size(gemma, torch.float32, 1000) - kv.size(gemma, torch.float32, 999)
    assert grows == 2 * 2 * 2 * 16 * 4  # the two full layers only: 2 (k, v) x 2 KV heads x 16 head dim x 4 bytes
    llama = _config("llama GQA (8 heads share 2 KV heads)")
    assert kv.size(llama, torch.float32, 1) == 3 * 2 * 2 * 8 * 4  # KV heads, not the 8 attention heads
    assert kv.sliding(llama) is None


def test_the_activation_peak_is_measured_the_same_each_time(bundled):
    fit._MEASURED.pop(bundled.model, None)
    first = fit.activation(bundled.model, "cpu")
    fit._MEASURED.pop(bundled.model, None)
    again = fit.activation(bundled.model, "cpu")
    assert first == again and first["measured"] and first["counter"] == "live_tensors"
    assert first["per_token"] > 0 and first["tokens"] == [16, 128]


def test_the_live_tensor_count_sees_what_a_block_allocates():
    """The counter itself: 4 MiB made and kept, then 2 MiB made and freed inside, peak 6 MiB; a view adds nothing."""
    with fit.LiveTensors() as live:
        a = torch.ones(2**20)  # 4 MiB
        b = torch.ones(2**19)  # 2 MiB
        view = a.view(2, -1)
        del b
    assert live.peak == 6 * 2**20 and live.live == 4 * 2**20
    del a, view


@pytest.fixture
def budgeted(monkeypatch):
    """The bundled model loaded in a pool of its own; `set(ctx)` puts PLAYGROUND_MEMORY_BUDGET where the
    cache and activations of exactly `ctx` tokens fit beside it, and returns that fit."""
    pool = ModelPool()
    pool.load(*loader.parse(BUNDLED_NAME, "cpu", "float32"))
    cfg = catalog.read_config(catalog.resolve(BUNDLED_NAME))

    def set_budget(ctx: int) -> fit.Fit:
        with pool.held() as lm:
            act = fit.activation(lm.model, "cpu")
            kv, a, total = fit.need(cfg.config, torch.float32, 0, act, ctx, 1)
            monkeypatch.setenv(settings.MEMORY_BUDGET_ENV, str(total))  # the loaded model's weights count back in
            return fit.fit(cfg, "float32", ctx, 1, loaded=lm)

    yield pool, set_budget
    pool.unload()


@pytest.mark.slow
def test_the_largest_context_runs_and_one_token_more_is_refused(budgeted):
    pool, set_budget = budgeted
    got = set_budget(160)
    cpu = next(d for d in got.devices if d.device == "cpu")
    assert cpu.largest_context == 160 and cpu.fits and not cpu.capped
    # a real generation of exactly that context: prompt + new tokens = 160. It runs to the end, and the cache it
    # filled is what the fit counted for it
    prompt = "ROMEO:"
    text, stats = "", None
    n_prompt = pool.prompt_and_context("", prompt, chat_template=False)[0]
    for text, stats in pool.generate(prompt, GenerationParams(160 - n_prompt, 0.0, chat_template=False)):
        pass
    assert stats.finish_reason in ("length", "eos") and stats.new_tokens >= 1
    kv = next(p for p in stats.ledger if p["part"] == "kv_cache")
    assert kv["bytes"] <= cpu.kv_bytes and kv["estimate_bytes"] <= cpu.kv_bytes
    # one token over: the same arithmetic refuses it before a token is made, and says what fits
    with pytest.raises(UserError) as e:
        list(pool.generate(prompt, GenerationParams(161 - n_prompt, 0.0, chat_template=False)))
    assert e.value.key == "err.context_memory" and e.value.fields["top"] == 160
    assert "would not fit in memory" in str(e.value) and "放不下" in e.value.text("zh")
    over = fit.fit(catalog.read_config(catalog.resolve(BUNDLED_NAME)), "float32", 161, 1, loaded=None)
    assert over.devices  # a fit without the loaded model sizes the activations from the config, and says so
    assert over.activation["measured"] is False and over.activation["counter"] == "config"


def test_a_context_beyond_the_model_never_fits(bundled):
    got = fit.fit(catalog.read_config(catalog.resolve(BUNDLED_NAME)), "float32", 257, 1)
    assert got.beyond_model and not any(d.fits for d in got.devices)
    assert all(d.largest_context == 256 and d.capped for d in got.devices if d.free_bytes > 10 * 2**20)


def as_in_transformers_5_17(get_layer_types_and_kwargs):
    """Transformers 5.17's shape of `get_layer_types_and_kwargs`: the layer types and one kwargs dict shared by every
    layer, holding the sliding window when any layer slides (5.23 returns one dict per layer): the installed
    function's answer, reshaped as 5.17 returns it."""
    def shared(config):
        types, per_layer = get_layer_types_and_kwargs(config)
        return types, {k: v for kw in per_layer for k, v in kw.items()}
    return shared


@pytest.mark.parametrize("name", list(SHAPES))
def test_kv_bytes_reads_transformers_5_17s_shared_kwargs(name, monkeypatch):
    """With 5.17's shape, zip(types, kwargs) walked the dict's keys: the KV estimate was 0 (the report, the fit
    panel and the ledger said 0), or a string's .get raised. Both shapes give the same sizes."""
    config = _config(name)
    pinned = [kv.size(config, torch.float32, n) for n in (1, 15, 40)], kv.sliding(config)
    monkeypatch.setattr(kv, "get_layer_types_and_kwargs", as_in_transformers_5_17(kv.get_layer_types_and_kwargs))
    assert ([kv.size(config, torch.float32, n) for n in (1, 15, 40)], kv.sliding(config)) == pinned
    assert pinned[0][0] > 0
