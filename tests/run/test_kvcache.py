"""The KV cache, measured: what generating really holds against the estimate's bytes per token."""

from __future__ import annotations

import pytest
import torch
from accelerate.utils import compute_module_sizes

from playground.load import kv, synthetic
from playground.run import kvcache
from tests.conftest import estimate_of, load


@pytest.mark.slow
def test_kv_cache_estimate_matches_memory_growth_over_512_tokens(one_thread):
    """The KV-cache estimate (bytes per token x tokens held) against what generating 512 tokens
    with synthetic GPT-2 small really holds: the cache's tensors, and the process's RSS."""
    synthetic.ensure("synthetic/gpt2-small")
    lm = load("synthetic/gpt2-small", "cpu", "float32")
    assert compute_module_sizes(lm.model)[""] == estimate_of("synthetic/gpt2-small", "float32").to_dict()["weights_bytes"]
    m = kvcache.measure_kv(lm.model, lm.tokenizer, lm.device, "ROMEO:", 512)
    print(f"\nKV cache, {m.tokens_in_cache} tokens: estimate {m.estimate_bytes:,} B; tensors {m.cache_tensor_bytes:,} B "
          f"({m.tensor_error:+.2%}); RSS growth held {m.rss_growth_held:,} B ({m.rss_error:+.2%}); "
          f"RSS released {m.rss_released:,} B ({m.released_error:+.2%}); {m.seconds:.1f} s")
    prompt_tokens = len(lm.tokenizer("ROMEO:")["input_ids"])
    assert m.tokens_in_cache == prompt_tokens + 512 - 1  # the last token chosen is never fed back
    assert abs(m.tensor_error) <= 0.10
    assert abs(m.rss_error) <= 0.10
    assert abs(m.released_error) <= 0.10


def test_growth_lengths_are_spread_and_distinct():
    assert kvcache.growth_lengths(15, 270, 8) == [15, 51, 88, 124, 161, 197, 234, 270]
    assert kvcache.growth_lengths(3, 5, 8) == [3, 4, 5]
    assert kvcache.growth_lengths(7, 7, 8) == [7]


@pytest.mark.slow
@pytest.mark.device
def test_kv_growth_reads_the_real_cache_within_2_percent_of_the_estimate(bundled, one_thread, figures):
    """The KV cache, read from the real cache object, grows by 2 x layers x KV heads x head dim x dtype bytes
    per token, within 2%, at each of 8 lengths."""

    g = kvcache.kv_growth(bundled.model, bundled.tokenizer, "cpu", "ROMEO:\nBut, soft!", 96, "bundled")
    figures.update(estimate_bytes_per_token=g.estimate_bytes_per_token, max_error=g.max_error, points=len(g.points),
                   measured_bytes_per_token=g.measured_bytes_per_token)
    cfg = bundled.model.config
    assert g.estimate_bytes_per_token == 2 * cfg.n_layer * cfg.n_head * (cfg.n_embd // cfg.n_head) * 4
    assert g.estimate_bytes_per_token == kv.per_token(cfg, bundled.model.dtype)
    assert g.cache_class == "DynamicCache" and len(g.points) == 8
    tokens = [p.tokens for p in g.points]
    assert tokens == sorted(tokens) and tokens[0] == g.prompt_tokens and tokens[-1] == g.prompt_tokens + 95
    assert all(abs(p.error) <= 0.02 for p in g.points) and g.max_error <= 0.02
    assert g.measured_bytes_per_token == pytest.approx(g.estimate_bytes_per_token, rel=0.02)
    # each length also timed: one step with the cache, one forward over the sequence without it
    assert [s.tokens for s in g.steps] == tokens
    assert all(s.with_cache_ms > 0 and s.without_cache_ms > 0 for s in g.steps)


def test_speed_and_the_ledger_size_a_sliding_window_cache_with_one_formula(bundled, one_thread):
    """Speed's KV growth multiplied one per-token figure by the tokens held, while the ledger and the fit stopped
    a sliding-window layer at its window: past the window the two panels disagreed. Both now size the cache with
    load/kv.py, and on a model whose layers all slide over 16 tokens the estimate is the real cache's bytes at
    every length, the ones past the window included."""
    from transformers import AutoConfig, AutoModelForCausalLM

    cfg = AutoConfig.for_model("mistral", num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
                               hidden_size=64, intermediate_size=128, sliding_window=16, vocab_size=8192,
                               max_position_embeddings=256)
    torch.manual_seed(0)
    model = AutoModelForCausalLM.from_config(cfg).eval()
    g = kvcache.kv_growth(model, bundled.tokenizer, "cpu", "ROMEO:", 40, "sliding")
    assert max(p.tokens for p in g.points) > 16  # some lengths past the window
    assert all(p.estimate_bytes == p.cache_bytes for p in g.points), [(p.tokens, p.estimate_bytes, p.cache_bytes)
                                                                    for p in g.points]
    assert g.points[-1].estimate_bytes == kv.size(cfg, torch.float32, g.points[-1].tokens)
