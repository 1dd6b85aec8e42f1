"""No absolute path of the server where a visitor looks: the refusals (page and API, both languages), the
code to copy for every kind of model, the load report, Compare's downloads.

On a public Space a path reveals the machine's layout (the home folder, where the cache lives). The
playground names its folders by role instead ("the bundled models folder", "the Hugging Face cache", "a
folder listed in PLAYGROUND_MODEL_DIRS"), and writes the bundled model relative to its repository.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from pathlib import Path

import gradio as gr
import pytest

from playground.core.inputs import GenerationParams
from playground.core.paths import BUNDLED_DIR, BUNDLED_NAME, REPO
from playground.load import catalog, synthetic
from playground.run import compare
from playground.web import handlers, handlers_compare, snippet
from playground.web.tabs import play


def server_paths() -> list[str]:
    from huggingface_hub import constants

    found = [REPO, Path.home(), Path(constants.HF_HUB_CACHE), Path(tempfile.gettempdir()), synthetic.root()]
    return sorted({str(p) for p in found} | {str(p.resolve()) for p in found}, key=len, reverse=True)


def leaks(text: str) -> list[str]:
    return [p for p in server_paths() if p in text]


def test_the_check_itself_finds_a_path():
    assert leaks(f"model_id = '{BUNDLED_DIR}'") and not leaks("model_id = 'playground/assets/shakespeare-gpt2'")


@pytest.mark.parametrize("typed", ["/etc", "../../etc/passwd", "/nonexistent/model", "~/.ssh", "gpt2/../../../../etc"])
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_refused_path_names_the_allowed_folders_by_role(typed, lang):
    msg = play.ui_load(typed, "cpu", "float32", lang)["load_note"]  # the Load panel's line (and its toast)
    assert not leaks(msg), msg
    roles = ("the bundled models folder", "the Hugging Face cache", "PLAYGROUND_MODEL_DIRS") if lang == "en" else \
            ("内置模型文件夹", "Hugging Face 缓存", "PLAYGROUND_MODEL_DIRS")
    assert all(r in msg for r in roles), msg
    with pytest.raises(gr.Error) as e:  # the API says the same, in English
        handlers.load_model(typed, "cpu", "float32")
    assert not leaks(e.value.message) and "the Hugging Face cache" in e.value.message


def test_the_estimate_and_compare_refuse_without_paths():
    for call in (lambda: handlers.estimate("/etc", "float32"), lambda: handlers_compare.compare("/etc", ["cpu/float32"], 2),
                 lambda: handlers.estimate("playground-test/never-cached", "float32")):
        with pytest.raises(gr.Error) as e:
            call()
        assert not leaks(e.value.message), e.value.message


@pytest.mark.parametrize("engine", ["generate", "manual", "manual-nocache"])
def test_the_code_to_copy_names_no_server_path(engine, tmp_path, monkeypatch):
    folder = tmp_path / "models" / "mine"
    shutil.copytree(BUNDLED_DIR, folder)
    monkeypatch.setenv("PLAYGROUND_MODEL_DIRS", str(tmp_path / "models"))
    for model in (BUNDLED_NAME, "synthetic/gpt2-small", str(folder), "gpt2", "./playground/assets/shakespeare-gpt2"):
        src = catalog.resolve(model)
        for chat in (False, True):
            code = snippet.snippet(src, "cpu", "bfloat16", "ROMEO:", GenerationParams(8, 0.8, 0.95, 0), engine, chat)
            assert not leaks(code) and str(tmp_path) not in code, (model, code)


@pytest.mark.slow
def test_the_load_report_and_compares_downloads_name_no_server_path(tmp_path):
    report = handlers.load_model(BUNDLED_NAME, "cpu", "bfloat16")
    assert not leaks(json.dumps(report)), [p for p in leaks(json.dumps(report))]
    rows = compare.run(catalog.resolve(BUNDLED_NAME), compare.parse_pairs(["cpu/bfloat16"]), 2, runs=1)
    paths = compare.export(rows, tmp_path)
    for p in paths.values():
        text = p.read_text(encoding="utf-8").replace(str(tmp_path), "")
        assert not leaks(text), leaks(text)
