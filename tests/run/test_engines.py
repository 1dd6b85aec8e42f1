"""Decode engines side by side: the same greedy tokens, each rate against the read-bandwidth bound."""

from __future__ import annotations

import pytest

from playground.core.errors import UserError
from playground.run import engines, generation


def test_rows_compare_token_by_token_and_do_the_bound_arithmetic():
    bound = 1000.0
    ref = [5, 6, 7, 8]
    same = engines.make_row("a", ref, [0.1, 0.2, 0.3, 0.4], ref, bound)
    assert same.same_tokens_as_generate and same.first_difference is None
    assert same.tokens_per_second == pytest.approx(3 / 0.3)
    assert same.percent_of_bound == pytest.approx(100 * 10 / 1000)
    assert same.overhead_ms_per_token == pytest.approx(100 - 1)  # 100 ms a token, of which 1 ms reads the weights
    differ = engines.make_row("b", [5, 6, 9, 8], [0.1, 0.2, 0.3, 0.4], ref, bound)
    assert not differ.same_tokens_as_generate and differ.first_difference == 2
    short = engines.make_row("c", [5, 6], [0.1, 0.2], ref, bound)
    assert short.first_difference == 2  # stopped early: the lengths differ
    assert engines.make_row("d", [5], [0.1], ref, bound).tokens_per_second is None  # one token: no decode rate


@pytest.mark.parametrize("share, key", [(0.27, "eng.limit.overhead"), (0.85, "eng.limit.bandwidth")])
def test_what_limits_an_engine_follows_its_profile(share, key):
    row = engines.make_row("generate", [1, 2, 3], [0.0, 0.01, 0.02], None, 1000.0)
    prof = dict(tokens=16, matmul_share=share, matmul_gbps=22.0,
                largest_others=[dict(op="aten::tanh", seconds=0.012), dict(op="aten::add", seconds=0.004)])
    said = engines.limit_of(row, prof, 70.0)
    assert said.key == key and f"{100 * share:.0f}%" in said.text("en") and said.text("zh") != said.text("en")
    if key == "eng.limit.overhead":
        assert "`aten::tanh` 12 ms" in said.text("en")
    else:
        assert "22.0 GB/s where a streaming read reaches 70.0 GB/s" in said.text("en")


def test_the_profile_counts_the_matmuls_of_a_real_generate(bundled, one_thread):
    p = engines.matmul_profile(bundled.model, bundled.tokenizer, "cpu", engines.PROMPT, 8)
    assert p["tokens"] == 8 and 0 < p["matmul_seconds"] < p["wall_seconds"]
    assert 0 < p["matmul_share"] < 1 and p["matmul_gbps"] > 0 and len(p["largest_others"]) == 3


def test_generate_and_manual_loops_choose_the_same_tokens(bundled, one_thread):
    r = engines.run(bundled.model, bundled.tokenizer, "cpu", 24, False, "bundled")
    assert [row.engine for row in r.rows] == list(generation.ENGINES)
    assert all(row.same_tokens_as_generate and row.new_tokens == 24 for row in r.rows)
    assert r.bound_tokens_per_second == pytest.approx(r.read["gbps"] * 1e9 / r.weights_bytes)
    assert r.weights_in_cache == (r.last_level_cache_bytes is not None and r.weights_bytes <= r.last_level_cache_bytes)
    d = r.to_dict()
    assert isinstance(d["limit"], str) and d["rows"][0]["compile_seconds"] == 0
    assert r.limit.key in ("eng.limit.overhead", "eng.limit.bandwidth") and r.profile["tokens"] == 16


def test_a_budget_beyond_the_context_is_refused_before_any_work(bundled):
    with pytest.raises(UserError, match="context"):
        engines.run(bundled.model, bundled.tokenizer, "cpu", 400, False)  # the bundled model holds 256


def test_a_compile_that_fails_is_said_with_the_libraries_words(bundled, one_thread, monkeypatch):
    from playground.run import compiled

    def no_compiler(*a, **k):
        raise RuntimeError("InvalidCxxCompiler: No working C++ compiler found in torch._inductor.config.cpp.cxx")

    r = engines.run(bundled.model, bundled.tokenizer, "cpu", 8, False, "bundled")
    monkeypatch.setattr(compiled, "run", no_compiler)
    with pytest.raises(UserError) as e:
        engines.add_compiled(r, bundled.model, bundled.tokenizer)
    assert "could not compile" in str(e.value) and "No working C++ compiler" in str(e.value)
    assert "无法编译" in e.value.text("zh") and len(r.rows) == 3  # the other rows stand
