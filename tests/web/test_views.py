"""The page's tables keep their columns whatever a cell holds; the banner and the waiting line say what they should."""

import json
import re

from playground.run.compare import CompareRow
from playground.web import compare_views


def test_a_compare_row_whose_error_holds_a_pipe_and_a_line_break_keeps_its_columns():
    row = CompareRow(pair="cpu/float16", model="m", device="cpu", dtype="float16", status="error",
                     error="RuntimeError: expected a | b\nin the second line")
    lines = [ln for ln in compare_views.table([row], "en").splitlines() if ln.startswith("|")]
    widths = {len(re.split(r"(?<!\\)\|", ln)) for ln in lines}
    assert len(lines) == 3 and widths == {12}, lines  # header, delimiter, the row: 10 cells each


def test_the_banner_says_the_visitors_own_model_and_apart_the_pool(pool):
    """From the pool's own status: the visitor's model (or that it went, or none), then the pool's size."""
    from playground.core.paths import BUNDLED_NAME
    from playground.load import loader
    from playground.web import views

    pool.load(*loader.parse(BUNDLED_NAME, "cpu", "bfloat16"), session="a")
    pool.load(*loader.parse(BUNDLED_NAME, "cpu", "float32"), session="b")
    mine, pool_line = views.status_markdown(pool.status("a"), "en").split("  \n")
    assert mine == f"**Your model:** `{BUNDLED_NAME}` on `cpu` in `bfloat16`, 10.2 MiB of it in RAM"
    assert pool_line.startswith("**This server holds** 2 models for 2 visitors (") and "MiB of RAM)" in pool_line
    zh = views.status_markdown(pool.status("a"), "zh")
    assert "**你的模型**：" in zh and "为 2 位访客保留着 2 个模型" in zh
    assert views.status_markdown(pool.status("nobody"), "en").startswith("**Your model:** none yet")
    gone = dict(pool.status("b"), loaded=False, gone=dict(model=BUNDLED_NAME, device="cpu", dtype="float32",
                                                           seconds=1.26, at=0.0, told=False))
    said = views.status_markdown(gone, "en")
    assert "was unloaded at" in said and "to make room for another visitor's" in said and "(about 1.3 s)" in said
    assert "为另一位访客的模型腾出内存" in views.status_markdown(gone, "zh")


def test_each_figure_says_how_many_visitors_were_waiting():
    from playground.run.generation import GenerationStats
    from playground.run.render import stats_markdown, waited

    assert waited(None) == "" and waited(0) == "Measured with no other visitor waiting."
    assert waited(2).startswith("Measured while 2 other visitors waited") and "2 位其他访客" in waited(2, "zh")
    done = GenerationStats(new_tokens=4, finish_reason="length", model="m", device="cpu", dtype="float32", waiting=1)
    said = stats_markdown(done, "en")
    assert "model: `m` (cpu, float32)" in said and said.endswith("_Measured while 1 other visitor waited their "
                                                                 "turn: runs take turns, so none ran beside this one._")


def test_the_estimate_lists_a_first_builds_need_beside_the_loads(tmp_path, monkeypatch):
    """The panel listed a synthetic model's weights and their margin only, and said 'Would be refused' with the
    build's larger figure: it lists the float32 build's need too, and says that is the reason."""
    from playground.core import settings
    from playground.core.units import fmt_bytes
    from playground.web import views
    from tests.conftest import estimate_of

    monkeypatch.setenv("PLAYGROUND_SYNTHETIC_DIR", str(tmp_path / "synthetic"))
    est = estimate_of("synthetic/gpt2-large", "bfloat16")
    monkeypatch.setenv(settings.MEMORY_BUDGET_ENV, str((est.required_bytes + est.build_bytes) // 2))
    for lang, row, why in (("en", "first use: the float32 build in RAM, with the margin", "to build its float32"),
                           ("zh", "首次使用：在内存中构建 float32，含余量", "来构建它的 float32 检查点")):
        shown = views.estimate_markdown(estimate_of("synthetic/gpt2-large", "bfloat16"), lang)
        assert f"| {row} | {fmt_bytes(est.build_bytes)} |" in shown and why in shown.splitlines()[0]
    built = estimate_of("shakespeare-gpt2", "bfloat16")  # nothing to build: no such row
    assert "float32 build" not in views.estimate_markdown(built, "en")


def test_the_estimate_names_its_largest_layers_whole():
    """The largest layer's names were joined and cut at 80 characters, mid-name ("transformer.h.5, tran"):
    the first two are named whole, then how many more share the size, in the page's language."""
    from playground.web import views
    from tests.conftest import estimate_of

    est = estimate_of("synthetic/gpt2-small", "float32")
    assert len(est.largest_layer_names) == 12
    en, zh = views.estimate_markdown(est, "en"), views.estimate_markdown(est, "zh")
    assert "(`transformer.h.0`, `transformer.h.1` and 10 more of its size) |" in en
    assert "（`transformer.h.0`，`transformer.h.1` 等，另有 10 个同样大小） |" in zh


def test_results_made_with_another_model_say_what_they_belonged_to():
    from playground.web import views

    f32 = dict(model="shakespeare-gpt2", device="cpu", dtype="float32")
    bf16 = dict(f32, dtype="bfloat16")
    assert views.stale_markdown(f32, f32, "en") == "" and views.stale_markdown(None, bf16, "en") == ""
    en, zh = views.stale_markdown(f32, bf16, "en"), views.stale_markdown(f32, bf16, "zh")
    assert "from shakespeare-gpt2 on cpu in float32, before your load of shakespeare-gpt2 on cpu in bfloat16" in en
    assert "来自 cpu 上 float32 的 shakespeare-gpt2" in zh and "加载 cpu 上 bfloat16 的 shakespeare-gpt2 之前" in zh
    assert "no longer loaded" in views.stale_markdown(f32, None, "en")
    assert views.made_with({"model": "m", "device": "cpu", "dtype": "float32", "new_tokens": 3}) == dict(
        model="m", device="cpu", dtype="float32")


def _ranked(pair: str, lo: float, mid: float, hi: float, runs: int = 3, load: float | None = 0.5) -> CompareRow:
    return CompareRow(pair=pair, model="m", device="cpu", dtype=pair.split("/")[1], status="ok", runs=runs,
                      decode_tokens_per_s=mid, decode_min_tokens_per_s=lo, decode_max_tokens_per_s=hi,
                      decode_tokens=15, load_average=load, cores=2)


def test_compare_cannot_tell_two_rows_whose_spreads_overlap():
    rows = [_ranked("cpu/float32", 180.0, 230.0, 240.0), _ranked("cpu/bfloat16", 150.0, 200.0, 235.0)]
    en, zh = compare_views.table(rows, "en"), compare_views.table(rows, "zh")
    assert ("**cpu/float32** and **cpu/bfloat16**: their spreads overlap (180.0–240.0 and 150.0–235.0 tokens/s), "
            "so this run cannot tell which decodes faster") in en
    assert "分不出哪个解码更快" in zh
    assert "decodes faster than" not in en


def test_compare_ranks_two_rows_apart_only_when_every_run_beat_every_run():
    rows = [_ranked("cpu/bfloat16", 90.0, 95.0, 99.0), _ranked("cpu/float32", 200.0, 230.0, 240.0)]
    en = compare_views.table(rows, "en")
    assert "**cpu/float32** decodes faster than **cpu/bfloat16**" in en and "cannot tell" not in en
    # one timed run each: no spread, so nothing is told apart
    once = [_ranked("cpu/bfloat16", 95.0, 95.0, 95.0, runs=1), _ranked("cpu/float32", 230.0, 230.0, 230.0, runs=1)]
    assert "cannot tell" in compare_views.table(once, "en")


def test_compare_charts_show_each_medians_spread_in_the_tables_units():
    """The walk: the charts showed medians alone beside a table that "cannot tell" which is faster, and seconds
    beside the table's ms. The rate and TTFT charts draw each pair's lowest-to-highest run over its median bar,
    the same figures the table brackets; the time charts are in ms, as the table writes them."""
    rows = [_ranked("cpu/float32", 180.0, 230.0, 240.0), _ranked("cpu/bfloat16", 150.0, 200.0, 235.0)]
    for r, (lo, mid, hi) in zip(rows, ((0.011, 0.0125, 0.019), (0.020, 0.022, 0.031))):
        r.ttft_min_s, r.ttft_s, r.ttft_max_s, r.load_s, r.migrate_s = lo, mid, hi, 0.5, 0.0001
    table = compare_views.table(rows, "en")
    for col, key in compare_views.CHARTS:
        spec = compare_views.chart_spec(rows, col, key, "en")
        bars = spec["layer"][0]
        assert [v["pair"] for v in bars["data"]["values"]] == ["cpu/float32", "cpu/bfloat16"]  # the table's order
        ranges = [layer for layer in spec["layer"] if layer["mark"]["type"] == "rule"]
        if col == "decode_tokens_per_s":
            assert [(v["lo"], v["hi"]) for v in ranges[0]["data"]["values"]] == [(180.0, 240.0), (150.0, 235.0)]
            assert "180.0–240.0" in table and "150.0–235.0" in table
        elif col == "ttft_ms":
            assert [v["value"] for v in bars["data"]["values"]] == [12.5, 22.0]  # ms: the table's "12.5 ms"
            assert [(round(v["lo"], 3), round(v["hi"], 3)) for v in ranges[0]["data"]["values"]] == [(11, 19), (20, 31)]
            assert "12.5 ms (11.0 ms–19.0 ms)" in table
        else:
            assert not ranges  # one measurement a pair: nothing to spread
        if col in ("load_ms", "migrate_ms", "ttft_ms"):
            assert bars["encoding"]["y"]["title"].endswith("(ms)") and "(s)" not in json.dumps(spec)
    assert "加载（毫秒）" in json.dumps(compare_views.chart_spec(rows, "load_ms", "cmp.chart.load", "zh"), ensure_ascii=False)


def test_compare_says_which_rows_ran_on_a_busy_machine():
    rows = [_ranked("cpu/float32", 180.0, 230.0, 240.0, load=4.2), _ranked("cpu/bfloat16", 150.0, 200.0, 235.0)]
    en, zh = compare_views.table(rows, "en"), compare_views.table(rows, "zh")
    assert "**cpu/float32**: measured while the machine was busy (load average 4.2 on 2 cores)" in en
    assert "cpu/bfloat16**: measured" not in en
    assert "**cpu/float32**：测量时机器正忙（2 个核心上的负载均值为 4.2）" in zh


def test_the_fit_table_does_not_say_fits_when_the_estimate_refuses_the_load(tmp_path, monkeypatch):
    """synthetic/... in bfloat16 whose float32 build does not fit was 'Would be refused' above a fit table
    saying 'fits: yes': the table says the load is refused; and the Chinese says 'only' (只有) for a refusal only."""
    from playground.core import settings
    from playground.core.i18n import t
    from playground.load import catalog, fit
    from playground.hw import devices
    from playground.web import views
    from tests.conftest import estimate_of

    monkeypatch.setenv("PLAYGROUND_SYNTHETIC_DIR", str(tmp_path / "synthetic"))
    est = estimate_of("synthetic/gpt2-large", "bfloat16")
    fitted = fit.fit(catalog.read_config(catalog.resolve("synthetic/gpt2-large")), devices.parse_dtype("bfloat16"), 256, 1)
    monkeypatch.setenv(settings.MEMORY_BUDGET_ENV, str((est.required_bytes + est.build_bytes) // 2))
    refused = estimate_of("synthetic/gpt2-large", "bfloat16")
    assert not refused.fits and fitted.devices and all(d.fits for d in fitted.devices)  # the contradiction's makings
    for lang in ("en", "zh"):
        rows = views.estimate_fit_markdown((refused, fitted), lang).splitlines()
        fits_row = next(r for r in rows if r.startswith(f"| {t('fit.col.fits', lang)} |"))
        cells = [c.strip() for c in fits_row.strip().strip("|").split("|")][1:]
        assert cells and all(c == t("fit.refused", lang) for c in cells), fits_row
    monkeypatch.setenv(settings.MEMORY_BUDGET_ENV, str(est.build_bytes * 4))
    fits = estimate_of("synthetic/gpt2-large", "bfloat16")
    assert fits.fits and "只有" not in views.estimate_markdown(fits, "zh").splitlines()[0]
    shown = views.estimate_fit_markdown((fits, fitted), "en")
    assert f"| {t('fit.col.fits', 'en')} | {t('fit.yes', 'en')} |" in shown


def test_the_claim_picker_speaks_the_pages_language_first():
    """On the Chinese page the picker began every claim with its English id ("backends-cuda-synchronize：..."):
    the claim comes first, in the page's language, and its id (what the API takes) after it, whole."""
    from playground.lab import factcheck
    from playground.web.tabs.factcheck import _choices

    for lang, first in (("zh", re.compile(r"^[\u4e00-\u9fff“「《`(（A-Za-z0-9]")), ("en", re.compile(r"^\S"))):
        choices = _choices(lang)
        assert [v for _label, v in choices] == list(factcheck.CLAIMS)
        for label, cid in choices:
            assert not label.startswith(cid) and label.endswith((f"({cid})", f"（{cid}）")), label
            assert first.match(label), label
    assert sum(bool(re.match(r"^[\u4e00-\u9fff]", label)) for label, _ in _choices("zh")) >= len(factcheck.CLAIMS) // 2


def test_the_banner_says_what_auto_became_and_what_it_holds_in_ram(pool):
    """The walk found "0 B of RAM" for gpt2-small loaded on `auto` (351.5 MiB on the CPU): the pool counted RAM
    only for a model on "cpu" or "mps", and `auto` meant four things in four modules. The banner and the pool's
    count now read the model's location, made once when it loaded."""
    from playground.core.paths import BUNDLED_NAME
    from playground.load import loader
    from playground.web import views

    from playground.core.units import fmt_bytes

    r = pool.load(*loader.parse(BUNDLED_NAME, "auto", "float32"), session="a")
    with pool.held("a") as lm:  # the weights in RAM, counted here from the tensors themselves
        in_ram = sum(t.nbytes for t in {id(t): t for t in [*lm.model.parameters(), *lm.model.buffers()]}.values()
                     if t.device.type == "cpu")
    status = pool.status("a")
    assert status["bytes"] == status["ram"] == in_ram
    mine, pool_line = views.status_markdown(status, "en").split("  \n")
    assert mine.endswith(f"on `auto` in `float32` (placed on {r.location.became}), {fmt_bytes(in_ram)} of it in RAM")
    assert f"({fmt_bytes(in_ram)} of RAM)" in pool_line
    assert "（放在 " in views.status_markdown(status, "zh")


def _dtype_row(pair: str, weights: int, lo: float, mid: float, hi: float, same: int, conv: float,
               step: float = 10.0) -> CompareRow:
    row = _ranked(pair, lo, mid, hi)
    row.weights_bytes, row.prefill_tokens_per_s, row.prompt_tokens = weights, 200.0, 12
    row.agreement = dict(reference="cpu/float32", compared=16, same=same, first_change=None if same == 16 else 3,
                         logit_diff=[0.1] * 16, logit_diff_median=0.1, logit_diff_max=0.2)
    row.profile = dict(tokens=8, ms_per_token=step, convert_ms_per_token=conv,
                       ops=[dict(op="aten::mm", ms_per_token=step / 2, share=0.5)])
    return row


def test_the_dtype_table_says_what_its_numbers_say():
    """Slower only when every run was; why slower only where it spends more of a step converting than float32."""
    f32 = _dtype_row("cpu/float32", 400, 40.0, 42.0, 44.0, 16, 0.1)
    slow = _dtype_row("cpu/int8", 140, 10.0, 11.0, 12.0, 15, 30.0, step=90.0)
    close = _dtype_row("cpu/bfloat16", 200, 39.0, 43.0, 47.0, 14, 0.1)
    en = compare_views.table([f32, slow, close], "en")
    assert "What the dtype changed, against cpu/float32 on the same prompt" in en
    assert ("**cpu/int8** holds 0.35× the weights of **cpu/float32** (140 B against 400 B), decodes slower "
            "(11.0 against 42.0 tokens/s, every run), and chose cpu/float32's next token at 15 of 16 positions.") in en
    assert "Why slower: of its 90.0 ms per step, 30.0 ms go to operators that convert" in en
    assert "**cpu/bfloat16** holds 0.50× the weights" in en and "runs too close to tell which is faster" in en
    assert en.count("Why slower") == 1 and "first different at token 4" in en
    zh = compare_views.table([f32, slow, close], "zh")
    assert "解码更慢（11.0 对 42.0 tokens/s，每次运行都如此）" in zh and "为什么更慢" in zh
    no_ref = compare_views.table([slow], "en")  # no agreement measured: no dtype table
    slow.agreement = None
    assert "What the dtype changed" not in compare_views.table([slow], "en") and no_ref
