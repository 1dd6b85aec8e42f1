"""The Speed tab's edge (token budget, flag) and its views, in both languages, on recorded data."""

from __future__ import annotations

import gradio as gr
import pytest

from playground.core.errors import UserError
from playground.core.i18n import said
from playground.web import handlers_speed as hs, views_speed as views


@pytest.mark.parametrize("bad", [1, 257, 2.5, "x", None, True])
def test_engine_budget_is_checked_at_the_edge(bad):
    with pytest.raises(UserError):
        hs.check_engine_tokens(bad)
    assert hs.check_engine_tokens("64") == 64


@pytest.mark.parametrize("bad", ["yes", 2, None])
def test_compiled_must_be_a_bool(bad):
    """The API's `compiled` goes through the one yes/no check of core.inputs, before any model is touched."""
    with pytest.raises(gr.Error, match="compiled must be true or false"):
        hs.engines(64, bad)


def test_the_api_refuses_a_bad_budget_in_english_and_the_page_in_chinese():
    with pytest.raises(gr.Error) as e:
        hs.engines(1000)
    assert "from 2 to 256" in e.value.message
    with pytest.raises(gr.Error) as e:
        list(hs.ui_engines(1000, False, "zh"))
    assert "必须是 2 到 256 之间的整数" in e.value.message


RATE = dict(gbps=50.0, bytes=512 * 2**20, seconds=0.01)
KV = dict(model="m", device="cpu", dtype="float32", layers=4, kv_heads=4, head_dim=64, dtype_bytes=4,
          estimate_bytes_per_token=8192, measured_bytes_per_token=8192.0, max_error=0.0, cache_class="DynamicCache",
          prompt_tokens=15, seconds=1.0,
          points=[dict(tokens=15, cache_bytes=122880, estimate_bytes=122880, error=0.0),
                  dict(tokens=100, cache_bytes=819200, estimate_bytes=819200, error=0.0)],
          steps=[dict(tokens=15, with_cache_ms=2.0, without_cache_ms=3.0),
                 dict(tokens=100, with_cache_ms=2.1, without_cache_ms=9.0)])


def test_kv_view_says_the_cost_grows_only_where_the_timings_show_it():
    en, zh = views.kv_markdown(KV, "en"), views.kv_markdown(KV, "zh")
    assert "8,192 bytes per token" in en and "O(n²)" in en and "每个 token 8,192 字节" in zh
    flat = dict(KV, steps=[dict(tokens=15, with_cache_ms=2.0, without_cache_ms=9.0),
                           dict(tokens=100, with_cache_ms=2.1, without_cache_ms=3.0)])
    assert "do not show the growth" in views.kv_markdown(flat, "en") and "O(n²)" not in views.kv_markdown(flat, "en")
    b, s = views.kv_frames(KV, "zh")
    assert len(b) == 4 and len(s) == 4 and set(s["series"]) == {"带 KV 缓存", "不带缓存"}
    plot_b, plot_s = views.kv_plots(KV, "zh")  # the axes and the legend follow the language with the data
    assert (plot_b["x_title"], plot_b["y_title"], plot_s["y_title"]) == ("缓存中的 token 数", "字节", "每步毫秒")
    assert set(views.kv_plots(KV, "en")[0]["value"]["series"]) == {"measured", "estimate"}


def test_engines_view_in_both_languages():
    row = dict(engine="generate", new_tokens=64, tokens_per_second=400.0, same_tokens_as_generate=True,
               first_difference=None, compile_seconds=None, percent_of_bound=20.0, overhead_ms_per_token=2.0)
    comp = dict(row, engine="compiled", tokens_per_second=900.0, same_tokens_as_generate=False,
                first_difference=7, compile_seconds=21.3)
    # the cache-less loop parted from generate() at index 19 (its 20th token), tied in bfloat16: said why
    nocache = dict(row, engine="manual-nocache", tokens_per_second=120.0, same_tokens_as_generate=False,
                   first_difference=19, parting=dict(index=19, chosen=12, other=760, margin=0.0, gap=0.0625,
                                                     other_leads_in_full=True))
    d = dict(model="m", device="cpu", dtype="float32", weights_bytes=21 * 2**20, read=RATE, bound_tokens_per_second=2000.0,
             last_level_cache_bytes=32 * 2**20, weights_in_cache=True, rows=[row, comp, nocache],
             limit=said("eng.limit.overhead", engine=said("engine.generate"), tokens=16, share="27", rate="4.3", read="50.0",
                        others="aten::tanh 12 ms"))
    en, zh = views.engines_markdown(d, "en"), views.engines_markdown(d, "zh")
    assert "2000 tokens/s" in en and "last-level cache" in en and "first differs at token 8" in en  # counted from 1
    # an engine that compiles nothing shows no compile time (it showed "0.0 s"); a compiled one shows its own
    assert "| generate() | 64 | 400.0 | yes | — |" in en and "| 21.3 s |" in en
    assert "Why manual loop, no cache chose other tokens from token 20:** a near-tie" in en
    assert "0.0000 apart in its float32 logits" in en and "by up to 0.0625" in en and "几乎打平" in zh
    assert "only 27% of the time" in en and "只占了 27% 的时间" in zh
    assert "compiled now, in 21.3 s" in en and "现编译，用了 21.3 秒" in zh and "第 8 个 token 起不同" in zh
    # the engines are named in the page's language, by the name each row carries
    assert "| static cache + torch.compile |" in en and "| 静态缓存 + torch.compile |" in zh
    assert "What limits generate() here" in en and "限制 generate()（库自带） 的" in zh  # a name, not code


def test_a_reused_compilation_is_said_as_one_not_as_compiled_in_0_s():
    """The walk read "compiled in 26.3 s this time (0 s: reused from earlier in this process)": one of the two.
    A run that compiled says so with its time; a run that reused says it reused, with what compiling cost then."""
    row = dict(engine="compiled", new_tokens=64, tokens_per_second=900.0, same_tokens_as_generate=True,
               first_difference=None, percent_of_bound=40.0, overhead_ms_per_token=1.0)
    d = dict(model="m", device="cpu", dtype="float32", weights_bytes=21 * 2**20, read=RATE, bound_tokens_per_second=2000.0,
             last_level_cache_bytes=None, weights_in_cache=False,
             limit=said("eng.limit.overhead", engine=said("engine.generate"), tokens=16, share="27", rate="4.3",
                        read="50.0", others="aten::tanh 12 ms"))
    now = views.engines_markdown(dict(d, rows=[dict(row, compile_seconds=26.3)]), "en")
    reused = {lang: views.engines_markdown(dict(d, rows=[dict(row, compile_seconds=0.0, compiled_before=26.3)]), lang)
              for lang in ("en", "zh")}
    assert "compiled now, in 26.3 s" in now and "reused" not in now
    assert "reused a compilation made earlier in this process (26.3 s then)" in reused["en"]
    assert "| reused (26.3 s then) |" in reused["en"] and "复用了本进程先前的编译结果（当时用了 26.3 秒）" in reused["zh"]
    for md in (now, *reused.values()):
        assert "0 s" not in md.replace("26.3 s", "") and "0.0 s" not in md and "this time" not in md


def test_engines_say_a_busy_machine_and_why_the_loop_without_the_cache_won():
    """The walk: the engines table had no busy-machine warning (other panels say it: hw.busy) and showed the
    no-cache loop faster than the cached one without a word. Both said, from the run's own figures."""
    base = dict(new_tokens=24, same_tokens_as_generate=True, first_difference=None, compile_seconds=None,
                percent_of_bound=20.0, overhead_ms_per_token=2.0)
    rows = [dict(base, engine="generate", tokens_per_second=400.0), dict(base, engine="manual", tokens_per_second=380.0),
            dict(base, engine="manual-nocache", tokens_per_second=420.0)]
    d = dict(model="m", device="cpu", dtype="float32", weights_bytes=21 * 2**20, read=RATE, prompt_tokens=9,
             bound_tokens_per_second=2000.0, last_level_cache_bytes=None, weights_in_cache=False, rows=rows,
             limit=said("eng.limit.overhead", engine=said("engine.generate"), tokens=16, share="27", rate="4.3",
                        read="50.0", others="aten::tanh 12 ms"), load_average=3.6, cores=2)
    en, zh = views.engines_markdown(d, "en"), views.engines_markdown(d, "zh")
    assert "measured while the machine was busy (load average 3.6 on 2 cores)" in en and "机器正忙" in zh
    assert "Why the loop without the cache was faster here (420.0 against 380.0 tokens/s, 24 tokens)" in en
    assert "its longest step ran 32 tokens" in en and "不用缓存的循环反而更快" in zh  # 9 + 24 - 1
    quiet = dict(d, load_average=0.5, rows=[rows[0], rows[1], dict(rows[2], tokens_per_second=300.0)])
    calm = views.engines_markdown(quiet, "en")
    assert "busy" not in calm and "without the cache was faster" not in calm


def test_rerender_leaves_what_was_never_measured_alone():
    out = hs.rerender("zh", None, None, None)
    assert len(out) == 5 and all(isinstance(o, dict) and o.get("__type__") == "update" for o in out)
