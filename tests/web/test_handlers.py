"""The page's and the API's handlers: one check at the edge, typed values inward, errors in the page's language."""

import gradio as gr
import pytest

from playground.hw import devices
from playground.load import estimate, loader
from playground.web import handlers, handlers_compare, results


@pytest.fixture
def toasts(monkeypatch) -> list:
    """The error toasts the page's events send (outside a Gradio event nothing would be sent)."""
    sent: list = []
    monkeypatch.setattr(results, "log_message", lambda msg, title, level: sent.append((msg, title, level)))
    return sent


@pytest.mark.parametrize("lang, words", [("en", "outside the folders the playground may read"),
                                         ("zh", "不在 playground 允许读取的文件夹内")])
def test_a_refused_load_speaks_the_page_language_in_its_toast_and_its_panel_only(lang, words, toasts):
    out = handlers.ui_load("../../etc/passwd", "cpu", "float32", lang)
    assert words in out[-1]  # the Load panel's line
    assert [o for i, o in enumerate(out) if i not in (2, len(out) - 1)] == [gr.skip()] * (len(out) - 2)  # kept
    assert len(toasts) == 1 and words in toasts[0][0] and toasts[0][1:] == ("错误" if lang == "zh" else "Error", "error")


def test_the_api_answers_in_english_whatever_the_page_shows():
    with pytest.raises(gr.Error) as e:
        handlers.load_model("../../etc/passwd", "cpu", "float32")
    assert "outside the folders" in e.value.message


def _refusal(gen) -> str:
    """A refused run's one update: every output skipped but its message line (the 14th)."""
    (out,) = list(gen)
    assert [o for i, o in enumerate(out) if i != 13] == [gr.skip()] * (len(out) - 1)
    return out[13]


def test_a_bad_number_on_the_chinese_page(toasts):
    said = _refusal(handlers.ui_generate("ROMEO:", 0, 0, 1, 0, False, "inputs-on-cpu", "generate", "zh", None))
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
    assert words in _refusal(handlers.ui_generate(prompt, n, t, p, s, False, "inputs-on-cpu", engine, "en", None))


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


def test_a_compare_request_checks_once_and_guards_each_row_once(monkeypatch):
    discovered = _count(monkeypatch, devices, "discover")
    guarded = _count(monkeypatch, estimate, "guard")
    rows = handlers_compare.compare("shakespeare-gpt2", ["cpu/bfloat16", "cpu/float16"], 2)
    assert [r["status"] for r in rows] == ["ok", "ok"]
    assert [(r["warmup"], r["runs"]) for r in rows] == [(1, 3), (1, 3)]
    assert len(discovered) == 1 and len(guarded) == 2  # nothing is loaded back: Compare borrows nothing
