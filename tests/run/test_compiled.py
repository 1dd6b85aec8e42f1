"""The compiled static-cache engine: compiled once per session (tens of seconds), then the same greedy
tokens as generate(), and reused without compiling again."""

from __future__ import annotations

import pytest
import torch

from playground.core import threads
from playground.run import compiled, engines, generation


def test_cache_lengths_come_in_powers_of_two_within_the_context():
    assert compiled.cache_len_for(15, 32, 256) == 64
    assert compiled.cache_len_for(15, 64, 256) == 128
    assert compiled.cache_len_for(15, 240, 256) == 256
    assert compiled.cache_len_for(15, 600, 1024) == 1024
    assert compiled.cache_len_for(2, 2, None) == compiled.MIN_CACHE


def test_decode_layout_is_the_same_weights_in_out_in_order(bundled):
    from transformers.pytorch_utils import Conv1D

    layout = compiled.decode_layout(bundled.model, "cpu")
    convs = {f"{n}.weight": m.weight for n, m in bundled.model.named_modules() if isinstance(m, Conv1D)}
    assert set(layout) == set(convs) and layout
    for name, w in layout.items():
        p = convs[name]
        assert w.shape == p.shape and w.stride() == (1, p.shape[0])  # [in, out] viewed over [out, in] memory
        assert torch.equal(w, p) and w.data_ptr() != p.data_ptr()
    assert compiled.decode_layout(bundled.model, "cuda:0") == {}  # on a GPU, cuBLAS takes the weights as they are


@pytest.fixture(scope="module")
def two_runs(bundled):
    """Two compiled runs of 48 tokens: the first compiles (once in the session), the second reuses it."""
    first = threads.run(compiled.run, bundled.model, bundled.tokenizer, "cpu", engines.PROMPT, 48)
    second = threads.run(compiled.run, bundled.model, bundled.tokenizer, "cpu", engines.PROMPT, 48)
    ref, _, _ = threads.run(generation.generate_ids, bundled.model, bundled.tokenizer, "cpu", engines.PROMPT, 48)
    yield first, second, ref
    compiled.forget()


@pytest.mark.slow
def test_compiled_engine_compiles_once_and_matches_generate(two_runs):
    first, second, ref = two_runs
    print(f"\ncompile {first.compile_seconds:.1f} s; compiled {second.tokens_per_second:.0f} tokens/s "
          f"({second.new_tokens} tokens)")
    assert first.compile_seconds > 0.2 and second.compile_seconds == 0.0  # cached for the process
    # the reuse carries what the compilation cost when it was made, so that the page never says "0 s"
    assert first.compiled_before is None and second.compiled_before == first.compile_seconds
    assert first.cache_len == second.cache_len == 64
    assert first.token_ids == ref and second.token_ids == ref  # greedy: token for token
    assert second.tokens_per_second and second.new_tokens == len(ref)


@pytest.mark.slow
def test_unloading_the_model_forgets_its_compiled_step():
    from playground.load import loader
    from playground.run.pool import ModelPool

    pool = ModelPool()
    pool.load(*loader.parse("shakespeare-gpt2", "cpu", "float32"))
    with pool.held() as lm:
        model = lm.model
    entry = compiled.compiled_for(model, "cpu")  # made, not compiled yet (that happens on the first call)
    assert compiled.compiled_for(model, "cpu") is entry
    compiled.forget(object())  # another model's unload leaves it
    assert compiled.compiled_for(model, "cpu") is entry
    pool.unload()
    assert compiled.compiled_for(model, "cpu") is not entry
    compiled.forget()
