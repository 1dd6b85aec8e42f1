"""Folders named by role: a message never shows the server's absolute paths."""

from huggingface_hub import constants

from playground.core import paths


def test_known_folders_are_named_by_role(tmp_path, monkeypatch):
    monkeypatch.setenv("PLAYGROUND_MODEL_DIRS", str(tmp_path))
    text = (f"{paths.BUNDLED_DIR}/config.json, {constants.HF_HUB_CACHE}/models--gpt2/x, {tmp_path}/mine/config.json, "
            f"{paths.REPO}/app.py")
    said = paths.by_role(text)
    assert str(paths.REPO) not in said and str(tmp_path) not in said and constants.HF_HUB_CACHE not in said
    assert said.startswith("the bundled models folder/shakespeare-gpt2/config.json, the Hugging Face cache/models--gpt2")
    assert "a folder listed in PLAYGROUND_MODEL_DIRS/mine" in said and "the playground's folder/app.py" in said
    assert "Hugging Face 缓存" in paths.by_role(text, "zh")


def test_other_paths_are_left_as_they_are():
    assert paths.by_role("/etc/passwd and relative/x") == "/etc/passwd and relative/x"
