import threading

import pytest
import torch

from playground.core.errors import UserError
from playground.core.inputs import GenerationParams
from playground.load.estimate import context_length
from playground.run import decode, generation


def _run(lm, prompt="ROMEO:", **kw):
    updates = list(generation.stream(lm.model, lm.tokenizer, lm.device, prompt, GenerationParams(**kw)))
    return updates


def test_greedy_stream_equals_plain_generate_token_for_token(bundled):
    updates = _run(bundled, max_new_tokens=24, temperature=0)
    text, stats = updates[-1]
    enc = bundled.tokenizer("ROMEO:", return_tensors="pt")
    with torch.inference_mode():
        out = bundled.model.generate(**enc, max_new_tokens=24, do_sample=False,
                                     pad_token_id=bundled.tokenizer.eos_token_id)
    new = out[0, enc["input_ids"].shape[1]:]
    assert stats.new_tokens == len(new)
    assert text == bundled.tokenizer.decode(new, skip_special_tokens=True)
    assert stats.prompt_tokens == enc["input_ids"].shape[1]


def test_stats_are_consistent(bundled):
    text, s = _run(bundled, max_new_tokens=32)[-1]
    assert s.finish_reason in ("length", "eos")
    assert 0 < s.ttft_seconds <= s.total_seconds
    assert s.tokens_per_second == pytest.approx((s.new_tokens - 1) / s.decode_seconds)
    assert s.ttft_seconds + s.decode_seconds <= s.total_seconds + 1e-6


@pytest.mark.slow
def test_streaming_yields_partial_updates(bundled):
    updates = list(generation.stream(bundled.model, bundled.tokenizer, "cpu", "ROMEO:",
                                     GenerationParams(max_new_tokens=200), min_interval=0.0))
    counts = [s.new_tokens for _, s in updates]
    assert len(updates) > 3 and counts == sorted(counts)
    assert updates[0][1].finish_reason == "running" and updates[-1][1].finish_reason != "running"


def test_sampling_is_seeded(bundled):
    a = _run(bundled, max_new_tokens=20, temperature=0.9, top_p=0.9, seed=7)[-1][0]
    b = _run(bundled, max_new_tokens=20, temperature=0.9, top_p=0.9, seed=7)[-1][0]
    c = _run(bundled, max_new_tokens=20, temperature=0.9, top_p=0.9, seed=8)[-1][0]
    assert a == b and a != c


def test_stop_event_ends_generation_early(bundled):
    stop = threading.Event()
    it = generation.stream(bundled.model, bundled.tokenizer, "cpu", "ROMEO:",
                           GenerationParams(max_new_tokens=250), stop=stop, min_interval=0.0)
    next(it)
    stop.set()
    *_, (text, stats) = it
    assert stats.finish_reason == "stopped" and stats.new_tokens < 250
    assert not any(t.name == "generate" and t.is_alive() for t in threading.enumerate())


def test_closing_the_consumer_stops_the_worker(bundled):
    it = generation.stream(bundled.model, bundled.tokenizer, "cpu", "ROMEO:",
                           GenerationParams(max_new_tokens=250), min_interval=0.0)
    next(it)
    it.close()  # what happens when a visitor's tab goes away
    assert not any(t.name == "generate" and t.is_alive() for t in threading.enumerate())


def test_prompt_longer_than_context(bundled):
    ctx = context_length(bundled.model.config)
    with pytest.raises(UserError) as e:
        _run(bundled, prompt="Romeo, " * ctx, max_new_tokens=8)
    assert "context" in str(e.value) and str(ctx) in str(e.value)


def test_a_chat_model_gets_its_template_by_default_and_the_raw_prompt_on_request(chat_model, monkeypatch):
    from playground.run import decode
    from tests.conftest import load

    monkeypatch.setenv("PLAYGROUND_MODEL_DIRS", str(chat_model.parent))
    lm = load(str(chat_model))
    assert lm.report.chat_template is True
    templated = lm.tokenizer.apply_chat_template([{"role": "user", "content": "ROMEO:"}], add_generation_prompt=True,
                                                 return_dict=False)
    raw = lm.tokenizer("ROMEO:")["input_ids"]
    assert len(templated) > len(raw)
    for params, n, applied in ((GenerationParams(8), len(templated), True),
                               (GenerationParams(8, chat_template=False), len(raw), False)):
        *_, (text, stats) = generation.stream(lm.model, lm.tokenizer, lm.device, "ROMEO:", params)
        assert stats.chat_template_applied is applied and stats.prompt_tokens == n
        *_, (text2, st) = decode.stream(lm.model, lm.tokenizer, lm.device, "ROMEO:", params)
        assert st.chat_template_applied is applied and st.prompt_tokens == n and text2 == text  # the same prompt ids


def test_a_model_without_a_template_gets_the_raw_prompt(bundled):
    assert bundled.report.chat_template is False
    _, stats = _run(bundled, max_new_tokens=2)[-1]
    assert stats.chat_template_applied is False and stats.prompt_tokens == 2


def test_a_prompt_that_fills_the_context_asks_for_a_shorter_prompt(bundled):
    ctx = context_length(bundled.model.config)
    long = "ROMEO: " * ctx
    with pytest.raises(UserError, match="Shorten the prompt") as e:
        _run(bundled, prompt=long, max_new_tokens=1)
    assert "max_new_tokens" not in str(e.value)
    n, c = generation.prompt_and_context(bundled.tokenizer, bundled.model, "ROMEO:")
    assert (n, c) == (2, ctx)
    with pytest.raises(UserError, match=f"lower max_new_tokens to {ctx - 2}"):
        _run(bundled, max_new_tokens=ctx - 1)


@pytest.mark.slow
@pytest.mark.parametrize("engine", generation.ENGINES)
def test_a_list_of_eos_ids_stops_at_any_of_them_and_says_eos(bundled, monkeypatch, engine):
    """Llama-3 and Qwen instruct models list several ids in generation_config.eos_token_id, and generate()
    stops at each. The bundled model's own end-of-text is id 0; with '.' listed beside it, greedy decoding
    of "ROMEO:" ends at its first full stop, and the stats say it ended there ("eos", not "length")."""
    tok, model = bundled.tokenizer, bundled.model
    enc = tok("ROMEO:", return_tensors="pt")
    with torch.inference_mode():
        out = model.generate(**enc, max_new_tokens=32, do_sample=False, pad_token_id=model.generation_config.pad_token_id)
    ref = out[0, enc["input_ids"].shape[1]:].tolist()
    dot, own = tok.convert_tokens_to_ids("."), model.generation_config.eos_token_id
    assert dot in ref[:-1] and own not in ref, "precondition: a full stop before the budget ends, no end-of-text"
    stop_at = ref.index(dot) + 1
    monkeypatch.setattr(model.generation_config, "eos_token_id", [own, dot])
    *_, (text, stats) = decode.stream_engine(engine, model, tok, bundled.device, "ROMEO:",
                                             GenerationParams(max_new_tokens=32, temperature=0))
    assert (stats.new_tokens, stats.finish_reason) == (stop_at, "eos")
    assert text == tok.decode(ref[:stop_at], skip_special_tokens=True) and text.endswith(".")


def test_the_streamer_stamps_every_token_and_hands_them_over_in_batches():
    """One hand-over at the first token, then at most one per `min_interval`, and the rest at the end: the
    consumer wakes per batch, not per token; every token keeps its own arrival time."""
    got = []
    s = generation.TokenStreamer(got.append, min_interval=60.0)
    s.put(torch.tensor([[11, 12, 13]]))  # the prompt: counted, not handed over
    for tok in (5, 6, 7):
        s.put(torch.tensor([tok]))
    s.end()
    assert s.prompt_tokens == 3
    assert [([tok for tok, _ in batch], last) for batch, last in got] == [([5], False), ([6, 7], True)]
    stamps = [t for batch, _ in got for _, t in batch]
    assert stamps == sorted(stamps) and len(set(stamps)) == 3
    got.clear()
    s = generation.TokenStreamer(got.append, min_interval=0.0)
    s.put(torch.tensor([[11]]))
    for tok in (5, 6):
        s.put(torch.tensor([tok]))
    s.end()
    assert [([tok for tok, _ in batch], last) for batch, last in got] == [([5], False), ([6], False), ([], True)]

