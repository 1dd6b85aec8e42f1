"""The manual prefill/decode loop: token for token what generate() produces, streamed with the
same stats, stoppable, and per-token decode times for both engines."""

from __future__ import annotations

import threading

import pytest
import torch
from transformers import AutoConfig, AutoModelForCausalLM

from playground.core.inputs import GenerationParams
from playground.run import decode, generation

PROMPT = "ROMEO: Is the day so young?"


pytestmark = pytest.mark.usefixtures("one_thread")


@pytest.fixture(scope="module")
def noisy(bundled):
    """A small random GPT-2 with large weights, so greedy decoding wanders over many tokens
    (a loop that only ever repeats one token would make an equality test meaningless)."""
    tok = bundled.tokenizer
    cfg = AutoConfig.for_model("gpt2", n_embd=64, n_layer=2, n_head=4, n_positions=256, vocab_size=len(tok),
                               bos_token_id=tok.bos_token_id, eos_token_id=tok.eos_token_id, initializer_range=0.5)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(1)
        m = AutoModelForCausalLM.from_config(cfg).eval()
    m.generation_config.pad_token_id = tok.eos_token_id
    m.generation_config.eos_token_id = None  # run the whole budget
    return m


def _generate_ids(model, tok, prompt, n) -> list[int]:
    enc = tok(prompt, return_tensors="pt")
    with torch.inference_mode():
        out = model.generate(**enc, max_new_tokens=n, do_sample=False, pad_token_id=model.generation_config.pad_token_id)
    return out[0, enc["input_ids"].shape[-1]:].tolist()


@pytest.mark.slow
@pytest.mark.parametrize("use_cache", [True, False])
def test_greedy_manual_loop_equals_generate_on_the_bundled_model(bundled, use_cache):
    n = 32
    ref = _generate_ids(bundled.model, bundled.tokenizer, PROMPT, n)
    text, stats = decode.run(bundled.model, bundled.tokenizer, bundled.device, PROMPT, GenerationParams(max_new_tokens=n),
                             use_cache=use_cache)
    assert stats.token_ids == ref
    # and the same text as the page's own path, generation.stream
    for ui_text, ui_stats in generation.stream(bundled.model, bundled.tokenizer, bundled.device, PROMPT,
                                               GenerationParams(max_new_tokens=n)):
        pass
    assert text == ui_text and stats.new_tokens == ui_stats.new_tokens
    assert stats.finish_reason == ui_stats.finish_reason


@pytest.mark.parametrize("use_cache", [True, False])
def test_greedy_manual_loop_equals_generate_on_a_wandering_model(bundled, noisy, use_cache):
    n = 40
    ref = _generate_ids(noisy, bundled.tokenizer, PROMPT, n)
    assert len(set(ref)) >= 5, "precondition: the reference output must vary"
    _, stats = decode.run(noisy, bundled.tokenizer, "cpu", PROMPT, GenerationParams(max_new_tokens=n), use_cache=use_cache)
    assert stats.token_ids == ref


def test_stats_have_generate_fields_plus_prefill_and_per_token_times(bundled):
    n = 20
    _, s = decode.run(bundled.model, bundled.tokenizer, bundled.device, PROMPT, GenerationParams(max_new_tokens=n))
    assert isinstance(s, generation.GenerationStats)
    assert s.engine == "manual" and s.use_cache and s.greedy
    assert s.prompt_tokens == len(bundled.tokenizer(PROMPT)["input_ids"])
    assert s.new_tokens == n == len(s.token_ids) and s.finish_reason == "length"
    assert 0 < s.prefill_seconds <= s.ttft_seconds <= s.total_seconds
    assert len(s.token_seconds) == n - 1 and all(t > 0 for t in s.token_seconds)
    assert sum(s.token_seconds) == pytest.approx(s.decode_seconds)
    assert s.tokens_per_second == pytest.approx((n - 1) / s.decode_seconds)
    p = decode.profile(s.token_seconds)
    assert p["count"] == n - 1 and p["min"] <= p["median"] <= p["max"]


def test_eos_ends_both_engines_at_the_same_token(bundled, noisy):
    tok = bundled.tokenizer
    ref = _generate_ids(noisy, tok, PROMPT, 30)
    eos = ref[6]
    noisy.generation_config.eos_token_id = eos
    try:
        ref_eos = _generate_ids(noisy, tok, PROMPT, 30)
        _, s = decode.run(noisy, tok, "cpu", PROMPT, GenerationParams(max_new_tokens=30))
    finally:
        noisy.generation_config.eos_token_id = None
    assert s.token_ids == ref_eos == ref[: ref.index(eos) + 1]
    assert s.finish_reason == "eos"


def test_stop_event_ends_the_loop_between_steps(bundled, noisy):
    stop = threading.Event()
    updates = 0
    for _text, s in decode.stream(noisy, bundled.tokenizer, "cpu", PROMPT, GenerationParams(max_new_tokens=200),
                                  stop=stop, min_interval=0.0):
        updates += 1
        if s.new_tokens >= 3:
            stop.set()
    assert s.finish_reason == "stopped" and 3 <= s.new_tokens < 200
    assert updates >= 3  # it streamed


def test_sampling_uses_generate_seed_semantics(bundled, noisy):
    tok = bundled.tokenizer
    p = GenerationParams(max_new_tokens=30, temperature=0.9, top_p=0.9, seed=7)
    _, a = decode.run(noisy, tok, "cpu", "ROMEO:", p)
    _, b = decode.run(noisy, tok, "cpu", "ROMEO:", p)
    _, c = decode.run(noisy, tok, "cpu", "ROMEO:", GenerationParams(max_new_tokens=30, temperature=0.9, top_p=0.9, seed=8))
    assert a.token_ids == b.token_ids and a.token_ids != c.token_ids and not a.greedy
    # Not promised, but true with these versions: torch.manual_seed(seed), the same warpers and
    # torch.multinomial reproduce generate()'s sampled tokens exactly.
    for text, _ in generation.stream(noisy, tok, "cpu", "ROMEO:", p):
        pass
    assert text == tok.decode(a.token_ids, skip_special_tokens=True)


def test_step_seconds_from_the_token_streamer_timestamps(bundled):
    params = GenerationParams(max_new_tokens=12, chat_template=False)
    *_, (_, st) = generation.stream(bundled.model, bundled.tokenizer, "cpu", PROMPT, params, exact=True)
    stamps = st.token_times  # the streamer's stamps, seconds since the call
    steps = decode.step_seconds(stamps)
    assert len(stamps) == 12 == len(st.token_ids) and len(steps) == 11
    assert all(s >= 0 for s in steps) and sum(steps) == pytest.approx(stamps[-1] - stamps[0])
    assert decode.step_seconds([1.0]) == [] and decode.profile([]) == {"count": 0}
