"""The page's and the API's handlers: one check at the edge, typed values inward, errors in the page's language."""

from types import SimpleNamespace

import gradio as gr
import pytest

from playground.hw import devices
from playground.load import estimate, loader
from playground.web import handlers, handlers_compare, results
from playground.web.tabs import play


@pytest.fixture
def toasts(monkeypatch) -> list:
    """The error toasts the page's events send (outside a Gradio event nothing would be sent)."""
    sent: list = []
    monkeypatch.setattr(results, "log_message", lambda msg, title, level: sent.append((msg, title, level)))
    return sent


@pytest.mark.parametrize("lang, words", [("en", "outside the folders the playground may read"),
                                         ("zh", "不在 playground 允许读取的文件夹内")])
def test_a_refused_load_speaks_the_page_language_in_its_toast_and_its_panel_only(lang, words, toasts):
    out = play.ui_load("../../etc/passwd", "cpu", "float32", lang)
    assert words in out["load_note"]  # the Load panel's line
    assert set(out) == {"load_note", "status"}  # the banner said again; every other result on show kept
    assert len(toasts) == 1 and words in toasts[0][0] and toasts[0][1:] == ("错误" if lang == "zh" else "Error", "error")


def test_the_api_answers_in_english_whatever_the_page_shows():
    with pytest.raises(gr.Error) as e:
        handlers.load_model("../../etc/passwd", "cpu", "float32")
    assert "outside the folders" in e.value.message


def _refusal(gen) -> str:
    """A refused run's one update: its message line, every other output left as it is."""
    (out,) = list(gen)
    assert set(out) == {"run_note"}
    return out["run_note"]


def test_a_bad_number_on_the_chinese_page(toasts):
    said = _refusal(play.ui_generate("ROMEO:", 0, 0, 1, 0, False, "inputs-on-cpu", "generate", "zh", None))
    assert "max_new_tokens 必须是" in said and toasts


@pytest.mark.parametrize("args, words", [
    (("  ", 8, 0, 1, 0, "generate"), "prompt is empty"),
    (("ROMEO:", 8, -1, 1, 0, "generate"), "temperature"),
    (("ROMEO:", 8, 0, 0, 0, "generate"), "top_p"),
    (("ROMEO:", 8, 0, 1, -5, "generate"), "seed"),
    (("ROMEO:", 8, 0, 1, 0, "turbo"), "Unknown engine"),
])
def test_generation_settings_are_checked_at_the_edge(args, words, toasts):
    prompt, n, t, p, s, engine = args
    assert words in _refusal(play.ui_generate(prompt, n, t, p, s, False, "inputs-on-cpu", engine, "en", None))


def _count(monkeypatch, module, name: str) -> list:
    calls: list = []
    real = getattr(module, name)

    def counted(*a, **k):
        calls.append(a)
        return real(*a, **k)

    monkeypatch.setattr(module, name, counted)
    return calls


def test_a_load_checks_the_device_once_and_discovers_once(monkeypatch):
    """From the Load button to model.to(): one parse, one discovery, one memory check, one load."""
    discovered = _count(monkeypatch, devices, "discover")
    parsed = _count(monkeypatch, devices, "parse_device")
    guarded = _count(monkeypatch, estimate, "guard")
    loaded = _count(monkeypatch, loader, "load")
    report = handlers.load_model("shakespeare-gpt2", "cpu", "bfloat16")
    assert report["device"] == "cpu" and report["dtype"] == "bfloat16"
    assert (len(parsed), len(discovered), len(guarded), len(loaded)) == (1, 1, 1, 1)
    assert guarded[0][1].id == "cpu" and guarded[0][2] is torch_bf16()  # typed values inward


def torch_bf16():
    import torch

    return torch.bfloat16


@pytest.mark.slow
def test_a_compare_request_checks_once_and_guards_each_row_once(monkeypatch):
    discovered = _count(monkeypatch, devices, "discover")
    guarded = _count(monkeypatch, estimate, "guard")
    rows = handlers_compare.compare("shakespeare-gpt2", ["cpu/bfloat16", "cpu/float16"], 2)
    assert [r["status"] for r in rows] == ["ok", "ok"]
    assert [(r["warmup"], r["runs"]) for r in rows] == [(1, 3), (1, 3)]
    assert len(discovered) == 1 and len(guarded) == 2  # nothing is loaded back: Compare borrows nothing


def _fake_generation(clock: list, n: int, step_s: float):
    """`n` running updates `step_s` apart on the fake clock, then the final one."""
    def gen(prompt, max_new, temperature, top_p, seed, session, engine, chat):
        for k in range(1, n + 1):
            clock[0] += step_s
            yield "x" * k, dict(finish_reason="running", new_tokens=k, max_new_tokens=n, prompt_tokens=2)
        yield "x" * n, dict(finish_reason="length", new_tokens=n, max_new_tokens=n, prompt_tokens=2,
                            ttft_seconds=0.01, decode_seconds=n * step_s, tokens_per_second=1 / step_s,
                            total_seconds=n * step_s)
    return gen


@pytest.mark.parametrize("step_s", [0.001, 0.004, 0.5])
def test_the_page_is_told_at_most_four_times_a_second_and_always_the_last(monkeypatch, step_s):
    """A token every `step_s` (1000, 250, 2 a second): the page gets one update per PAGE_EVERY at most, and the
    final text and figures always; a slow run still gets every token."""
    from playground.web import pace

    clock = [0.0]
    monkeypatch.setattr(pace.time, "monotonic", lambda: clock[0])
    n = 400 if step_s < 0.1 else 6
    monkeypatch.setattr(handlers, "generate_on_gpu", _fake_generation(clock, n, step_s))  # as play.py calls it
    out = list(play.ui_generate("ROMEO:", n, 0, 1, 0, False, "inputs-on-cpu", "generate", "en", None))
    seconds = n * step_s
    assert len(out) <= seconds / pace.PAGE_EVERY + 2, f"{len(out)} updates in {seconds:.1f} s"
    text = lambda u: u["value"] if isinstance(u, dict) else u  # noqa: E731  (the box shown again: an update)
    last = out[-1]
    assert text(last["output"]) == "x" * n and "length" not in last["stats_md"]
    assert last["stats_s"]["finish_reason"] == "length"
    if step_s >= pace.PAGE_EVERY:
        assert len(out) == n + 1  # every token, and the final update


def test_a_refused_prompt_leaves_the_count_blank_and_any_other_failure_surfaces(monkeypatch):
    """The slider's top follows the prompt as it is typed: a prompt the edge refuses is not counted (Generate says
    why when pressed); a failure nobody expected is raised, for Gradio to show, not swallowed."""
    report = SimpleNamespace(context_length=256)
    monkeypatch.setattr(handlers.POOL, "current", lambda session: (report, None))
    counted: list = []
    monkeypatch.setattr(handlers.POOL, "prompt_and_context",
                        lambda session, prompt, chat: counted.append(prompt) or (3, 256))
    assert handlers.prompt_and_context("ROMEO:", True, "s") == (3, 256)
    assert handlers.prompt_and_context("a\x00b", True, "s") == (None, 256)
    assert handlers.prompt_and_context("   ", True, "s") == (None, 256)
    assert counted == ["ROMEO:"]

    def broken(*args):
        raise RuntimeError("the tokenizer's own failure")
    monkeypatch.setattr(handlers.POOL, "prompt_and_context", broken)
    with pytest.raises(RuntimeError, match="own failure"):
        handlers.prompt_and_context("ROMEO:", True, "s")


def test_the_slider_keeps_a_value_set_while_its_update_was_on_the_way():
    """The prompt's token count comes back with the slider's value as it was when the event started: sent back, it
    would undo what the visitor set meanwhile. The value is set only when it must change."""
    counted = (2, 256)  # a 2-token prompt in a 256-token context: 254 left
    kept = handlers.slider_update(counted, 64, "en")
    assert kept["maximum"] == 254 and "value" not in kept and "254" in kept["info"]
    assert handlers.slider_update(counted, 400, "en")["value"] == 254  # above the top: it must change, and does
    assert handlers.slider_update(counted, "", "en")["value"] == 64  # not a number: the page's default
    assert handlers.slider_update((None, None), 2000, "en")["value"] == handlers.settings.read().max_new_tokens


def test_the_float16_hint_claims_no_factor_the_page_does_not_measure(monkeypatch):
    """The walk: the hint said float16 "runs several times slower" on this CPU while the page's own generations
    measured 1.4x slower in one run and faster in another. It says why it may cost time, and no factor."""
    import re

    monkeypatch.setattr(devices, "cpu_native_fp16", lambda *a: False)
    for lang in ("en", "zh"):
        hint = handlers.ui_hint("cpu", "float16", lang)
        assert hint and ("float32" in hint)
        assert not re.search(r"times (slower|faster)|\d(\.\d+)?\s*x\b|几倍|慢好|\d\s*倍", hint), hint
    assert "Compare" in handlers.ui_hint("cpu", "float16", "en")
