"""What a load reads from a checkpoint folder before its weights (config.json, the safetensors headers, the
checks a folder passes) is read once, and again as soon as a file in the folder changes."""

from __future__ import annotations

import json
import os
import shutil

import pytest
from transformers import GPT2Config, GPT2LMHeadModel

from playground.core.errors import UserError
from playground.load import catalog, checkpoint


@pytest.fixture(scope="module")
def pristine(tmp_path_factory):
    out = tmp_path_factory.mktemp("tiny") / "tiny"
    GPT2LMHeadModel(GPT2Config(n_embd=32, n_layer=2, n_head=2, vocab_size=64, n_positions=32)).save_pretrained(out)
    return out


@pytest.fixture
def folder(pristine, tmp_path, monkeypatch):
    monkeypatch.setattr(checkpoint, "_READ", {})
    return shutil.copytree(pristine, tmp_path / "tiny")


def test_the_checks_read_a_folder_once_and_again_once_a_file_changes(folder, pristine, monkeypatch):
    read = []
    check = checkpoint.file_problem
    monkeypatch.setattr(checkpoint, "file_problem", lambda p: read.append(p.name) or check(p))
    checkpoint.check_folder(folder)
    checkpoint.check_folder(folder)
    assert read == ["model.safetensors"]  # the second check found every file as the first left it
    weights = folder / "model.safetensors"
    os.truncate(weights, weights.stat().st_size - 1)
    with pytest.raises(UserError) as e:
        checkpoint.check_folder(folder)
    assert e.value.said.key == "err.st_truncated"
    with pytest.raises(UserError):  # a failed check is not kept: the file is read again, and still refused
        checkpoint.check_folder(folder)
    assert len(read) == 3
    shutil.copy(pristine / "model.safetensors", weights)
    checkpoint.check_folder(folder)
    assert len(read) == 4


def test_a_header_summary_is_read_again_once_the_weights_change(folder):
    before = checkpoint.summary(folder)
    assert before["dtype"] == "float32" and checkpoint.summary(folder) == before
    before["dtype"] = "changed by a caller"  # each caller gets its own copy
    assert checkpoint.summary(folder)["dtype"] == "float32"
    from safetensors.torch import load_file, save_file
    tensors = load_file(folder / "model.safetensors")
    save_file({k: v.half() for k, v in tensors.items()}, folder / "model.safetensors", metadata={"format": "pt"})
    assert checkpoint.summary(folder)["dtype"] == "float16"


def test_a_local_config_is_parsed_once_and_again_once_config_json_changes(folder, monkeypatch):
    from transformers import AutoConfig
    parsed = []
    parse = AutoConfig.from_pretrained
    monkeypatch.setattr(AutoConfig, "from_pretrained", lambda *a, **k: parsed.append(a) or parse(*a, **k))
    src = catalog.ModelSource(kind="local", name="tiny", ref=str(folder))
    first = catalog.read_config(src).config
    first.n_layer = 7  # a caller changing its config changes no one else's
    again = catalog.read_config(src).config
    assert len(parsed) == 1 and again.n_layer == 2
    cfg = json.loads((folder / "config.json").read_text(encoding="utf-8"))
    (folder / "config.json").write_text(json.dumps({**cfg, "n_layer": 3}), encoding="utf-8")
    assert catalog.read_config(src).config.n_layer == 3 and len(parsed) == 2


def test_a_folder_that_cannot_be_listed_is_read_every_time(tmp_path):
    calls = []
    missing = tmp_path / "gone"
    assert checkpoint.signature(missing) is None
    for _ in range(2):
        checkpoint.read_once("x", missing, lambda: calls.append(1) or 5)
    assert calls == [1, 1]
