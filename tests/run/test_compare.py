"""Compare: a device x dtype matrix through the page's own load and generation path,
exported as CSV and JSON that read back to the same numbers."""

from __future__ import annotations

import csv
import io
import json
import threading

import pytest
import torch

from playground.core import settings
from playground.core.errors import UserError
from playground.core.inputs import GenerationParams
from playground.core.paths import BUNDLED_NAME
from playground.hw import devices
from playground.load import catalog, loader, synthetic
from playground.run import compare
from tests.conftest import estimate_of


def run(model: str, pairs: list[str], max_new_tokens: int = 16, **kw) -> list[compare.CompareRow]:
    """Compare as the API runs it: the request checked at the edge, then the matrix."""
    return compare.run(catalog.resolve(model), compare.parse_pairs(pairs), max_new_tokens, **kw)


def ids(pairs) -> list[tuple[str, str]]:
    return [(d.id, devices.dtype_name(t)) for d, t in pairs]


def test_pairs_are_validated():
    assert ids(compare.parse_pairs(["cpu/float32", " cpu / bfloat16 ", "cpu/float32"])) == [
        ("cpu", "float32"), ("cpu", "bfloat16")]
    assert ids(compare.parse_pairs("cpu/float32, cpu/float16")) == [("cpu", "float32"), ("cpu", "float16")]
    for bad, match in ((["cpu-float32"], "device/dtype"), (["cpu/float64"], "dtype"), (["tpu/float32"], "device"),
                       ([], "No pairs"), ("", "No pairs"), ([3], "device/dtype")):
        with pytest.raises(UserError, match=match):
            compare.parse_pairs(bad)
    if not torch.cuda.is_available():
        with pytest.raises(UserError, match="not available"):
            compare.parse_pairs(["cuda:0/float16"])


def test_matrix_size_is_capped(monkeypatch):
    monkeypatch.setenv("PLAYGROUND_MAX_COMPARE_PAIRS", "2")
    with pytest.raises(UserError, match="limit is 2"):
        compare.parse_pairs(["cpu/float32", "cpu/bfloat16", "cpu/float16"])
    assert len(compare.parse_pairs(["cpu/float32", "cpu/bfloat16"])) == 2


def test_available_pairs_are_valid_pairs():
    pairs = compare.available_pairs()
    assert {"cpu/float32", "cpu/bfloat16", "cpu/float16"} <= set(pairs)
    assert compare.parse_pairs(pairs[: settings.read().max_compare_pairs])


def test_bad_model_or_tokens_fail_before_any_run():
    from playground.web import handlers_compare  # the API's edge

    with pytest.raises(Exception, match="URLs are not accepted"):
        handlers_compare.compare("http://example.com/model", ["cpu/float32"], 4)
    with pytest.raises(Exception, match="max_new_tokens"):
        handlers_compare.compare(BUNDLED_NAME, ["cpu/float32"], 0)


def test_stop_between_runs_and_a_refused_pair(monkeypatch):
    stop = threading.Event()
    budget = estimate_of(BUNDLED_NAME, "float32").weights_bytes  # bf16 fits, fp32 does not
    monkeypatch.setenv(settings.MEMORY_BUDGET_ENV, str(budget))
    seen = []

    def progress(frac, desc):
        seen.append((frac, desc))
        if desc.startswith("2/3") and "run 1 of" in desc:
            stop.set()  # the Stop button, pressed during the second pair's first timed run

    rows = run(BUNDLED_NAME, ["cpu/float32", "cpu/bfloat16", "cpu/float16"], max_new_tokens=4,
                       progress=progress, stop=stop)
    refused = rows[0].to_dict()
    assert refused["status"] == "refused" and refused["error"].startswith("Not loading") and "float32" in refused["error"]
    assert refused["error_zh"].startswith("不加载")  # the refusal kept as words: said in either language
    assert rows[1].status in ("ok", "stopped") and rows[1].new_tokens >= 1
    assert rows[2].status == "skipped"
    fracs = [f for f, _ in seen]
    assert fracs == sorted(fracs) and fracs[-1] == 1.0


@pytest.mark.slow
def test_compare_runs_in_the_lane_beside_the_pools_models_and_unloads_none(pool):
    pool.load(*loader.parse(BUNDLED_NAME, "cpu", "float32"), session="a")
    model = pool.current("a")[0]
    held = []

    def progress(frac, desc):
        held.append((pool.busy(), pool.status("a")["loaded"]))  # the lane is the compare run's; a's model stays

    rows = run(BUNDLED_NAME, ["cpu/bfloat16"], max_new_tokens=2, progress=progress, pool=pool)
    assert rows[0].status == "ok" and rows[0].warmup == 1 and rows[0].runs == 3
    assert held and all(h == (True, True) for h in held)
    assert rows.beside == {"models": 1, "bytes": model.weights_bytes}
    assert pool.current("a")[0] is model  # the very model, not one loaded back
    *_, (text, stats) = pool.generate("ROMEO:", GenerationParams(4), session="a")
    assert stats.dtype == "float32" and stats.new_tokens == 4
    # each figure carries how busy the machine was when it ended (the page's caveat reads them)
    assert stats.load_average is not None and stats.cores >= 1
    assert rows[0].load_average is not None and rows[0].cores == stats.cores


@pytest.mark.slow
def test_a_pair_that_does_not_fit_beside_the_pool_is_refused_saying_so(pool, monkeypatch):
    """Compare borrows nothing: with a budget for the visitor's model and a bfloat16 copy beside it, a float32
    pair is refused (the pool's share named), a bfloat16 pair runs, and the visitor's model stays."""
    pool.load(*loader.parse(BUNDLED_NAME, "cpu", "float32"), session="a")
    f32, bf16 = estimate_of(BUNDLED_NAME, "float32"), estimate_of(BUNDLED_NAME, "bfloat16")
    left = bf16.required_bytes + 2**20  # what the budget leaves beside a's model
    assert f32.required_bytes > left
    monkeypatch.setenv(settings.MEMORY_BUDGET_ENV, str(f32.weights_bytes + left))
    rows = run(BUNDLED_NAME, ["cpu/float32", "cpu/bfloat16"], max_new_tokens=2, pool=pool, runs=1)
    assert [r.status for r in rows] == ["refused", "ok"]
    said = rows[0].to_dict()["error"]
    assert "the models loaded for visitors hold" in said and "Not loading" in said
    assert pool.status("a")["loaded"] and pool.status("a")["models"] == 1 and pool.counts["evictions"] == 0


@pytest.mark.slow
def test_without_a_pool_model_the_pairs_have_the_whole_budget(pool):
    rows = run(BUNDLED_NAME, ["cpu/bfloat16"], max_new_tokens=2, pool=pool, runs=1)
    assert rows.beside == {"models": 0, "bytes": 0} and not pool.status()["loaded"]
    assert rows[0].runs == 1


@pytest.mark.slow
def test_cpu_dtype_matrix_for_synthetic_gpt2_small_exports_and_reads_back(tmp_path, one_thread):
    synthetic.ensure("synthetic/gpt2-small")  # first build ~10 s, then reused
    fracs = []
    rows = run("synthetic/gpt2-small", ["cpu/float32", "cpu/bfloat16", "cpu/float16"], max_new_tokens=4,
                       progress=lambda f, d: fracs.append(f))
    assert fracs == sorted(fracs) and fracs[-1] == 1.0
    assert [r.pair for r in rows] == ["cpu/float32", "cpu/bfloat16", "cpu/float16"]
    est = {dt: estimate_of("synthetic/gpt2-small", dt).weights_bytes for dt in ("float32", "bfloat16")}
    for r in rows:
        assert r.status == "ok", r.error
        assert r.new_tokens == 4 and r.decode_tokens == 3 and r.prompt_tokens > 0
        assert r.load_s > 0 and r.migrate_s >= 0 and r.ttft_s > 0 and r.decode_tokens_per_s > 0
        assert r.decode_tokens_per_s == pytest.approx(3 / r.decode_s)
        assert r.peak_rss >= r.rss_start and r.peak_rss_growth == r.peak_rss - r.rss_start
        assert r.bound_tokens_per_s == pytest.approx(r.bandwidth_gbps * 1e9 / r.weights_bytes)
        assert r.percent_of_bound == pytest.approx(100 * r.decode_tokens_per_s / r.bound_tokens_per_s)
        assert r.label.text("en") == synthetic.LABEL and r.to_dict()["label"] == synthetic.LABEL
        assert {"load", "migrate", "warm-up", "prefill", "decode"} <= {p["name"] for p in r.phases}
        # one warm-up, three timed runs: the median and the spread of what was measured
        assert r.warmup == 1 and r.runs == 3 and len(r.run_ttft_s) == len(r.run_decode_tokens_per_s) == 3
        assert r.ttft_min_s <= r.ttft_s <= r.ttft_max_s and r.ttft_s == sorted(r.run_ttft_s)[1]
        assert r.decode_min_tokens_per_s <= r.decode_tokens_per_s <= r.decode_max_tokens_per_s
        assert r.decode_tokens_per_s == sorted(r.run_decode_tokens_per_s)[1]
        # which bound applies: the share of a step spent reading the weights
        assert r.percent_of_bound == pytest.approx(100 * r.weights_read_ms / r.step_ms)
        assert r.bound == ("memory" if r.percent_of_bound >= compare.MEMORY_BOUND else "overhead")
    assert rows[0].weights_bytes == est["float32"] and rows[1].weights_bytes == rows[2].weights_bytes == est["bfloat16"]

    paths = compare.export(rows, tmp_path)
    back = list(csv.DictReader(io.StringIO(paths["csv"].read_text(encoding="utf-8"))))
    assert [b["pair"] for b in back] == [r.pair for r in rows]
    for b, r in zip(back, rows):
        for col in ("load_s", "ttft_s", "decode_tokens_per_s", "weights_bytes", "peak_rss", "percent_of_bound",
                    "new_tokens", "decode_tokens", "warmup", "runs", "ttft_min_s", "decode_max_tokens_per_s", "bound"):
            value = getattr(r, col)
            assert b[col] == ("" if value is None else str(value)), col  # str() of a float round-trips exactly
    data = json.loads(paths["json"].read_text(encoding="utf-8"))
    assert data["rows"] == json.loads(json.dumps([r.to_dict() for r in rows]))
    assert data["machine"]["host_memcpy_gbps"] > 0
    assert compare.to_csv(rows).count("\n") == 4  # header + 3 rows

    print("\n" + compare.to_csv(rows))


@pytest.mark.slow
def test_float32_bfloat16_int8_int4_on_a_llama_with_agreement_speed_and_where_the_time_goes(one_thread):
    """The reference (float32) runs first wherever it is listed; every row is compared with its tokens, teacher-
    forced, and profiled; the quantized rows hold their quantized bytes and spend a step converting them back."""
    pairs = ["cpu/int8", "cpu/bfloat16", "cpu/float32", "cpu/int4"]
    rows = run("synthetic/llama-42m", pairs, max_new_tokens=8, runs=2)
    assert [r.pair for r in rows] == pairs and all(r.status == "ok" for r in rows), [r.error for r in rows]
    by = {r.pair.split("/")[1]: r for r in rows}
    f32, bf16, int8, int4 = by["float32"], by["bfloat16"], by["int8"], by["int4"]
    assert f32.agreement == dict(reference="cpu/float32", compared=8, same=8, first_change=None, logit_diff=[0.0] * 8,
                                 logit_diff_median=0.0, logit_diff_max=0.0)
    for r in (bf16, int8, int4):
        a = r.agreement
        assert a["reference"] == "cpu/float32" and a["compared"] == 8 and 0 <= a["same"] <= 8
        assert len(a["logit_diff"]) == 8 and a["logit_diff_max"] > 0
    assert int8.weights_bytes < bf16.weights_bytes < f32.weights_bytes and int4.weights_bytes < bf16.weights_bytes
    assert int8.quantized["quantized"] == int4.quantized["quantized"] == 56 and f32.quantized is None
    for r in rows:
        assert r.prefill_tokens_per_s == pytest.approx(r.prompt_tokens / r.ttft_s)
        assert r.profile["tokens"] >= 1 and r.profile["ops"] and "agreement" in {p["name"] for p in r.phases}
    # weight-only int8 turns its integers back into floats at every step: float32 converts (almost) nothing
    assert int8.profile["convert_ms_per_token"] > 5 * f32.profile["convert_ms_per_token"]
    back = list(csv.DictReader(io.StringIO(compare.to_csv(rows))))
    assert [b["agree_same"] for b in back] == [str(r.agreement["same"]) for r in rows]
