"""The KV cache, measured: what generating really holds against the estimate's bytes per token."""

from __future__ import annotations

import pytest
from accelerate.utils import compute_module_sizes

from playground.load import synthetic
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
