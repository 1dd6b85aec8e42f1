"""The load report and the generation's stats as the page and the CLI show them."""

from __future__ import annotations

from playground.core.inputs import GenerationParams
from playground.run import decode, generation, render
from playground.run.generation import GenerationStats


def test_a_running_generation_says_how_long_it_may_still_take():
    """A float16 run on a CPU took 17 s, its stats saying only 'generating…': they say how far it is, and the
    time left at the rate so far if it runs to its budget (an EOS may end it sooner)."""
    running = GenerationStats(new_tokens=23, tokens_per_second=10.0, ttft_seconds=0.2, decode_seconds=2.2,
                              total_seconds=2.4, finish_reason="running", max_new_tokens=64)
    assert "23 of 64 tokens; about 4.10 s more at this rate, if it runs to 64" in render.stats_markdown(running, "en")
    assert "已生成 23/64 个 token；按现在的速度，生成满 64 个还要约 4.10 s" in render.stats_markdown(running, "zh")
    done = GenerationStats(new_tokens=64, tokens_per_second=10.0, finish_reason="length", max_new_tokens=64)
    assert "more at this rate" not in render.stats_markdown(done, "en")


def test_every_engines_updates_carry_the_budget(bundled):
    """The figure comes from the run itself: each engine's live updates carry max_new_tokens."""
    p = GenerationParams(max_new_tokens=12, temperature=0.0, top_p=1.0, seed=0)
    for engine in generation.ENGINES:
        for _, stats in decode.stream_engine(engine, bundled.model, bundled.tokenizer, "cpu", "ROMEO:", p):
            assert stats.max_new_tokens == 12, engine


def _done(load: float | None, cores: int | None) -> GenerationStats:
    return GenerationStats(new_tokens=64, ttft_seconds=0.01, decode_seconds=0.3, tokens_per_second=210.0,
                           total_seconds=0.31, finish_reason="length", max_new_tokens=64, load_average=load,
                           cores=cores)


def test_a_rate_measured_on_a_busy_machine_says_so_in_both_languages():
    """The load average is the run's own (injected here, not this machine's): above the cores, the caveat."""
    en, zh = render.stats_markdown(_done(3.4, 2), "en"), render.stats_markdown(_done(3.4, 2), "zh")
    assert "measured while the machine was busy (load average 3.4 on 2 cores)" in en
    assert "测量时机器正忙（2 个核心上的负载均值为 3.4）" in zh


def test_a_rate_measured_with_a_core_to_spare_has_no_caveat():
    for load, cores in ((1.9, 2), (2.0, 2), (None, 2), (5.0, None)):
        text = render.stats_markdown(_done(load, cores), "en") + render.stats_markdown(_done(load, cores), "zh")
        assert "busy" not in text and "正忙" not in text, (load, cores)


def test_a_cpu_rate_says_how_many_torch_threads_made_it_and_a_gpu_rate_does_not():
    """The thread count is the run's own (hw.cpu_threads chose it at start-up): beside the model, both languages."""
    s = _done(0.5, 2)
    s.threads, s.model, s.device, s.dtype = 1, "shakespeare-gpt2", "cpu", "bfloat16"
    assert "· torch threads: 1 of 2 cores" in render.stats_markdown(s, "en")
    assert "· torch 线程数：1，共 2 个核" in render.stats_markdown(s, "zh")
    s.device = "cuda:0"
    assert "torch threads" not in render.stats_markdown(s, "en")


def test_parts_that_add_up_to_more_than_the_whole_say_so_with_one_minus_sign():
    """A fresh look read "the parts explain 525.0 MiB of the 521.8 MiB ... −3.2 MiB (-0.6%)": the parts can
    overlap (a page two counters both count); the sentence says they add up to more, with one kind of minus."""
    from playground.hw import ledger
    MiB = 2**20
    parts = [ledger.Part("runtime", "cpu", 300 * MiB, "rss_anon_idle").to_dict(),
             ledger.Part("weights", "cpu", 225 * MiB, "storages", estimate_bytes=226 * MiB, error_pct=-0.44,
                         error_bytes=-1 * MiB).to_dict(),
             ledger.Part("unaccounted", "cpu", -3 * MiB, "rss").to_dict()]
    en, zh = render.ledger_markdown(parts, "en"), render.ledger_markdown(parts, "zh")
    assert "The measured parts add up to 525.0 MiB, 3.0 MiB more than the 522.0 MiB" in en and "−0.6%" in en
    assert "比本进程在" in zh and "多出 3.0 MiB" in zh
    assert "−3.0 MiB" in en and "-3.0 MiB" not in en and "−0.44%" in en and "-0.44%" not in en
