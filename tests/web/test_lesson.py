"""The guided path: its API's shape, unknown steps refused, and every step run on the bundled model with a
sentence that agrees with its own figures (in both languages, no stray English in the Chinese)."""

from __future__ import annotations

import re
import time
import uuid
from types import SimpleNamespace

import gradio as gr
import pytest
import torch

from playground.core.i18n import t
from playground.load import moves
from playground.run.pool import POOL
from playground.web import handlers_lesson as hl, lesson, views_lesson as views

CJK = re.compile(r"[\u4e00-\u9fff]")
# Words the Chinese sentences may keep in English: names of code, devices, dtypes, units, libraries, the model.
NAMES = {"MB", "GB", "B", "KiB", "MiB", "GiB", "KV", "GPU", "token", "logits", "cpu", "float32", "bfloat16", "int8", "disk", "Accelerate", "PyTorch",
         "bytes", "FakeTensorDeviceMismatchError", "RuntimeError", "Python", "generate",  # generate(): an engine's name
         "torchao"}


def numbers_outside_quotes(sentence: str) -> list[str]:
    """The numbers a sentence states itself: code spans and quoted library messages left out."""
    prose = re.sub(r"`[^`]*`|“[^”]*”", " ", sentence)
    return re.findall(r"\d+(?:\.\d+)?", prose)


def shown_figures(d: dict) -> set[str]:
    """Every number the figures' table shows for this result (as the page formats it)."""
    table = views.figures_markdown(d, "en")
    return set(re.findall(r"\d+(?:\.\d+)?", table))


def agrees(d: dict) -> None:
    """Each number the sentence states is one the table shows, in both languages."""
    shown = shown_figures(d)
    for lang in ("en", "zh"):
        stray = [n for n in numbers_outside_quotes(d[f"sentence_{lang}"]) if n not in shown]
        assert not stray, (d["step"], lang, stray, d[f"sentence_{lang}"], d["figures"])


def no_stray_english(text: str) -> list[str]:
    prose = re.sub(r"`[^`]*`|“[^”]*”|\{[^}]*\}", " ", text)
    return [w for w in re.findall(r"[A-Za-z][A-Za-z0-9_\-]{2,}", prose) if w not in NAMES and not w.startswith("shakespeare")]


def checks(d: dict) -> None:
    """What each step's sentence must say, given its figures (the wording chosen by comparing them)."""
    f, en = d["figures"], d["sentence_en"]
    if d["step"] == "load":
        assert ("all of them still map" in en) == (f["mapped_bytes"] == f["weights_bytes"])
        assert ("nothing moved" in en) == (f["migrate"] == "noop")
    elif d["step"] == "to":
        assert ("already there" in en) == (f["dev_bytes"] == 0)
        assert ("copied 0 bytes" in en) == (f["dev_bytes"] == 0)
        assert f["cast_read"] > 0 and lesson.size(f["cast_read"]) + " read" in en
        assert f["cast_written"] * 2 == f["cast_read"]  # float32 -> bfloat16: half the bytes
    elif d["step"] == "where":
        assert ("one place" in en) == (f["places"] == 1)
        assert ("tied weight" in en) == (f["state_dict"] > f["parameters"] + f["buffers"])
    elif d["step"] == "forward":
        assert ("once per new token" in en) == (f["calls"] == f["new_tokens"])
        assert ("is the forward pass's highest-scoring" in en) == f["same_first"]
        assert ("Both were timed warm" in en) == (f["forward_warmup"] > 0 and f["generate_warmup"] > 0)
    elif d["step"] == "cache":
        assert ("times as long" in en) == (f["ratio"] > 1 and lesson.num(f["ratio"]) != "1.00")
        assert ("the same" in en) == f["same_tokens"]
    elif d["step"] in ("infer", "train"):
        assert f["raised"] and f["error_type"] in en and f["message"] in en
        assert ("simulated GPU" in en) == (f["simulated"] and bool(f["real_gpu"]))
        assert ("worked" in en) == f["fix_ok"]
    elif d["step"] == "fit":
        assert f["disk_blocks"] > 0 and f"{f['disk_blocks']} of {f['blocks']} blocks" in en
        assert f["disk_blocks"] + f["ram_blocks"] == f["blocks"]
    elif d["step"] == "speed":
        # what limits it follows the profile, as the engines panel decides it, not the share of the bound
        assert ("What limits generate() here: reading the weights" in en) == (f["matmul_share"] >= 50)
        assert ("per-token overhead" in en) == (f["matmul_share"] < 50)
        assert abs(f["share"] - 100 * f["tps"] / f["bound"]) < 1e-6
    elif d["step"] == "dtype":
        assert f["bf16_bytes"] < f["f32_bytes"] and f["int8_bytes"] <= f["f32_bytes"]
        assert ("changed nothing" in en) == (f["int8_layers"] == 0) == (f["int8_bytes"] == f["f32_bytes"])
        if "slower than float32 in every timed run" in en:
            assert f["int8_tps"] < f["f32_tps"]
        assert ("Why slower" in en) <= (f["int8_convert_ms"] > f["f32_convert_ms"])
        assert f"{f['bf16_same']} of {f['compared']}" in en


# ---------------------------------------------------------------- the API's shape, and refusals

def test_the_steps_are_listed_in_order_in_both_languages():
    steps = hl.lesson_steps()
    assert 8 <= len(steps) <= 12
    assert [s["id"] for s in steps] == ["load", "to", "where", "forward", "cache", "infer", "train", "fit", "speed",
                                        "dtype"]
    for s in steps:
        assert {"id", "title_en", "title_zh", "panel"} <= set(s)
        assert CJK.search(s["title_zh"]) and not CJK.search(s["title_en"])
        assert s["panel"].startswith("panel:")


def test_every_step_goes_deeper_to_an_element_the_page_has():
    from playground.web import ui

    demo = ui.build()
    ids = {getattr(b, "elem_id", None) for b in demo.blocks.values()}
    tabs = {getattr(b, "id", None) for b in demo.blocks.values() if isinstance(b, gr.Tab)}
    for s in lesson.STEPS:
        assert s.panel.removeprefix("panel:") in ids, s.panel
        assert s.tab in tabs, s.tab


@pytest.mark.parametrize("bad", ["nope", "", "LOAD", None, 5, ["load"], "x" * 10_000])
def test_an_unknown_step_is_refused_with_the_valid_ids(bad):
    with pytest.raises(gr.Error) as e:
        hl.lesson_step(bad)
    assert "There is no step" in e.value.message and "load, to, where" in e.value.message
    assert len(e.value.message) < 300
    with pytest.raises(gr.Error) as e:
        list(hl.ui_run(bad, {}, "zh"))
    assert "没有名为" in e.value.message


# ---------------------------------------------------------------- the sentence chosen from the numbers

def test_walk_to_counts_copies_by_data_ptr_and_changes_nothing():
    layer = torch.nn.Linear(64, 32)
    before = layer.weight.data_ptr()
    same = moves.walk_to(layer, "cpu")
    assert (same.tensors, same.copied, same.same, same.bytes_in) == (2, 0, 2, 0)
    cast = moves.walk_to(layer, torch.bfloat16)
    assert (cast.copied, cast.bytes_in, cast.bytes_out) == (2, (64 * 32 + 32) * 4, (64 * 32 + 32) * 2)
    assert layer.weight.data_ptr() == before and layer.weight.dtype == torch.float32  # the model is left as it was


def test_the_to_step_says_what_its_own_numbers_say_for_a_bfloat16_model():
    """A bfloat16 model: the cast goes to float32 and writes twice what it reads; the sentence follows."""
    model = torch.nn.Sequential(torch.nn.Linear(16, 16)).to(torch.bfloat16)
    f, s = lesson.to_step(SimpleNamespace(model=model))
    en = s.text("en")
    assert f["cast_dtype"] == "float32" and f["cast_written"] == 2 * f["cast_read"] > 0
    assert "already there" in en and f"{lesson.size(f['cast_written'])} written" in en
    assert not no_stray_english(s.text("zh"))


def test_num_and_size_keep_three_figures():
    assert [lesson.num(x) for x in (0, 0.0617, 2.119, 14.69, 223.19, 1262.3)] == ["0", "0.0617", "2.12", "14.7", "223", "1262"]
    assert (lesson.size(0), lesson.size(21288960)) == ("0 bytes", "20.3 MiB")  # as the banner says the same bytes


def test_the_forward_step_warms_up_each_side_before_timing_it(bundled, one_thread):
    """Step 4 compared a cold forward pass (28.2 ms) with a warm `generate()` (8 passes in 30.9 ms; a rerun gave
    7.8 against 23.6 ms). Each side now runs once untimed first: the model's forward passes, in order, are a
    warm-up of the forward, the timed forward, a warm-up `generate()`, the timed one; the report counts the
    warm-ups, and the sentence says the times are warm."""
    seen = []  # each forward pass's input length: the whole prompt, or one token with the cache
    hook = bundled.model.register_forward_hook(lambda m, args, kwargs, out: seen.append(kwargs["input_ids"].shape[-1]),
                                               with_kwargs=True)
    try:
        f, s = lesson.forward_step(bundled)
    finally:
        hook.remove()
    n, p = f["new_tokens"], f["prompt_tokens"]
    assert (f["forward_warmup"], f["generate_warmup"], f["calls"]) == (1, 2, n)
    assert seen == [p, p] + [p, 1] + [p] + [1] * (n - 1)
    d = dict(step="forward", figures=f, sentence_en=s.text("en"), sentence_zh=s.text("zh"), model="m", device="cpu",
             dtype="float32", seconds=1.0)
    agrees(d)
    checks(d)
    assert "Both were timed warm" in d["sentence_en"] and not no_stray_english(d["sentence_zh"])


def test_the_load_step_says_when_the_load_measured_its_figures_and_never_prints_an_exponent():
    """The walk read "Measured just now ... in 7.91e-05 s" above the figures of a load made minutes earlier: the
    load step reads the load's report, so it says when that load ended; durations are written as people do."""
    request = SimpleNamespace(session_hash="test-lesson-when-" + uuid.uuid4().hex[:8])
    try:
        hl.lesson_step("where", request)  # loads the bundled model first
        loaded_at = POOL.current(request.session_hash)[0].loaded_at
        d, later = hl.lesson_step("load", request), hl.lesson_step("where", request)
    finally:
        POOL.release(request.session_hash)
    assert d["measured_at"] == loaded_at < later["measured_at"]
    at = time.strftime("%H:%M:%S", time.localtime(loaded_at))
    for lang in ("en", "zh"):
        head = views.figures_markdown(d, lang).splitlines()[0]
        assert at in head and "just now" not in head and "刚刚" not in head, head
        for shown in (head, views.figures_markdown(later, lang).splitlines()[0]):
            assert not re.search(r"\de-?\d", shown), shown
    assert "ended at" in views.figures_markdown(d, "en").splitlines()[0]


# ---------------------------------------------------------------- every step, on the bundled model

@pytest.fixture(scope="module")
def walked():
    """The whole path for a fresh session (no model loaded: the first step loads the bundled one), via the API."""
    session = "test-lesson-" + uuid.uuid4().hex[:8]
    request = SimpleNamespace(session_hash=session)
    try:
        yield [hl.lesson_step(s.id, request) for s in lesson.STEPS]
    finally:
        POOL.release(session)


def test_the_first_steps_load_the_bundled_model_first_and_agree_with_their_figures():
    """Fast: a fresh session's `to` and `where` steps (the bundled model loaded first, said so)."""
    request = SimpleNamespace(session_hash="test-lesson-fast-" + uuid.uuid4().hex[:8])
    try:
        first = hl.lesson_step("to", request)
        second = hl.lesson_step("where", request)
    finally:
        POOL.release(request.session_hash)
    assert first["loaded_first"] and "loaded the bundled model" in first["note_en"] and CJK.search(first["note_zh"])
    assert not second["loaded_first"] and second["note_en"] == ""
    for d in (first, second):
        assert {"figures", "sentence_en", "sentence_zh", "panel"} <= set(d)
        agrees(d)
        checks(d)
        assert not no_stray_english(d["sentence_zh"]), d["sentence_zh"]


@pytest.mark.slow
def test_every_step_runs_and_its_sentence_agrees_with_its_figures(walked):
    assert [d["step"] for d in walked] == [s.id for s in lesson.STEPS]
    assert walked[0]["loaded_first"] and not any(d["loaded_first"] for d in walked[1:])
    for d in walked:
        assert d["panel"] == lesson.BY_ID[d["step"]].panel
        agrees(d)
        checks(d)


@pytest.mark.slow
def test_the_chinese_sentences_and_tables_keep_no_stray_english(walked):
    for d in walked:
        assert CJK.search(d["sentence_zh"]), d["step"]
        assert not no_stray_english(d["sentence_zh"]), (d["step"], no_stray_english(d["sentence_zh"]))
        table = views.figures_markdown(d, "zh")
        labels = [row.split("|")[1] for row in table.splitlines()[4:]]
        assert all(CJK.search(x) for x in labels), labels
        assert t("lesson.yes", "en") not in table.split("|")


@pytest.mark.parametrize("lang, zero, noop", [("en", "0 bytes", "no-op"), ("zh", "0 字节", "空操作")])
def test_the_figures_table_says_units_and_the_move_in_the_page_language(lang, zero, noop):
    d = dict(step="load", model="m", device="cpu", dtype="float32", seconds=0.5,
             figures=dict(mapped_bytes=0, weights_bytes=21288960, migrate="noop"))
    cells = [row.split("|")[2].strip() for row in views.figures_markdown(d, lang).splitlines()[4:]]
    assert cells == [zero, "20.3 MiB", noop]
    assert noop == t("note.migrate.noop", lang).split("：" if lang == "zh" else ":")[0]  # the load report's word


def test_back_and_next_are_pressable_only_where_there_is_a_step_to_go_to():
    """Next on the last step and Back on the first did nothing, looking pressable (a fresh look at the page)."""
    ids = [s.id for s in lesson.STEPS]
    pressable = lambda shown: (shown["back"]["interactive"], shown["next"]["interactive"])  # noqa: E731
    assert pressable(hl.ui_show(ids[0], None, "en")) == (False, True)
    assert pressable(hl.ui_show(ids[3], None, "en")) == (True, True)
    assert pressable(hl.ui_show(ids[-1], None, "zh")) == (True, False)


def test_a_step_that_names_a_tutorial_names_one_the_page_lists():
    """The walk: steps named "the third tutorial", which the page neither showed nor linked. Each names it by its
    label (T1 to T5), and the Start here tab lists the five with their titles and what each taught."""
    from playground.web import ui

    ordinals = re.compile(r"\b(first|second|third|fourth|fifth) (?:and \w+ )?tutorial|第[一二三四五、]+篇教程")
    named = 0
    for s in lesson.STEPS:
        for lang in ("en", "zh"):
            text = t(s.text, lang)
            for m in ordinals.finditer(text):
                named += 1
                assert re.search(r"T[1-5]", text[m.start():m.end() + 40]), (s.id, lang, text[m.start():m.end() + 40])
    assert named >= 10
    listed = {lang: t("lesson.tutorials", lang) for lang in ("en", "zh")}
    for lang, text in listed.items():
        assert all(f"**T{i}**" in text for i in range(1, 6)), lang
    assert "血案" in listed["en"] and "a night lost to a device mismatch" in listed["en"]
    demo = ui.build()
    shown = [b for b in demo.blocks.values() if getattr(b, "elem_id", None) == "lesson-tutorials"]
    assert shown and isinstance(shown[0], gr.Accordion)


@pytest.mark.slow
def test_step_9_says_what_limits_decode_as_the_engines_panel_does_from_the_same_profile(monkeypatch):
    """The walk: step 9 read 45% of the bandwidth bound as "not what limits it" and called single-thread matmul time
    "Python overhead". The step now takes the engines panel's rule and words (`engines.limit_of`, on the share of
    the time the matrix multiplications took), whatever share of the bound the run reached. Profiles stubbed both
    ways; the rest measured on the bundled model."""
    from playground.run import engines

    request = SimpleNamespace(session_hash="test-lesson-speed-" + uuid.uuid4().hex[:8])
    real = engines.matmul_profile
    try:
        for share in (0.8, 0.2):
            def profiled(*a, share=share, **k):
                p = real(*a, **k)
                return dict(p, matmul_share=share, matmul_seconds=p["wall_seconds"] * share)
            monkeypatch.setattr(engines, "matmul_profile", profiled)
            d = hl.lesson_step("speed", request)
            en, zh = d["sentence_en"], d["sentence_zh"]
            assert ("What limits generate() here: reading the weights" in en) == (share >= 0.5), en
            assert ("per-token overhead" in en) == (share < 0.5)
            assert ("so memory bandwidth is what limits it" not in en and "is not what limits it" not in en)
            assert d["figures"]["matmul_share"] == 100 * share
            agrees(d)
            assert not no_stray_english(zh), no_stray_english(zh)
    finally:
        POOL.release(request.session_hash)


@pytest.mark.slow
def test_the_dtype_step_on_a_llama_says_what_int8_did_and_agrees_with_its_figures():
    """On a model whose projections are nn.Linear, int8 quantizes them: fewer bytes, its speed set against float32's
    only where every run says so, and its tokens against float32's; on the bundled GPT-2 (the walk above) it
    changes nothing, and says why."""
    from playground.load import loader

    request = SimpleNamespace(session_hash="test-lesson-dtype-" + uuid.uuid4().hex[:8])
    try:
        POOL.load(*loader.parse("synthetic/llama-42m", "cpu", "float32"), session=request.session_hash)
        d = hl.lesson_step("dtype", request)
    finally:
        POOL.release(request.session_hash)
    f = d["figures"]
    assert d["model"] == "synthetic/llama-42m" and f["int8_layers"] == 56 and f["int8_bytes"] < f["bf16_bytes"]
    assert f["int8_share"] == pytest.approx(f["int8_bytes"] / f["f32_bytes"])
    agrees(d)
    checks(d)
    assert not no_stray_english(d["sentence_zh"]), d["sentence_zh"]
