"""The page's handlers (playground.ui): a visitor's mistake comes back in the page's language."""

import gradio as gr
import pytest

from playground import ui


@pytest.mark.parametrize("lang, words", [("en", "outside the folders the playground may read"),
                                         ("zh", "不在 playground 允许读取的文件夹内")])
def test_a_refused_load_speaks_the_page_language(lang, words):
    with pytest.raises(gr.Error) as e:
        ui.ui_load("../../etc/passwd", "cpu", "float32", lang)
    assert words in e.value.message
    assert e.value.title == ("错误" if lang == "zh" else "Error")


def test_the_api_answers_in_english_whatever_the_page_shows():
    with pytest.raises(gr.Error) as e:
        ui.load_model("../../etc/passwd", "cpu", "float32")
    assert "outside the folders" in e.value.message


def test_a_bad_number_on_the_chinese_page():
    with pytest.raises(gr.Error) as e:
        list(ui.ui_generate("ROMEO:", 0, 0, 1, 0, False, "inputs-on-cpu", "generate", "zh", None))
    assert "max_new_tokens 必须是" in e.value.message
