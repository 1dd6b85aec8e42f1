"""The checks before an unload: every way a checkpoint folder can be broken is named, and a write that
fails is explained with the folder by role, the bytes, and the variable that moves it."""

from __future__ import annotations

import errno
import json
import os
import shutil
import subprocess
import sys

import pytest
from safetensors import SafetensorError
from transformers import GPT2Config, GPT2LMHeadModel

from playground.core.errors import UserError
from playground.core.paths import BUNDLED_DIR
from playground.load import checkpoint, integrity

NAME = "synthetic/tiny"


@pytest.fixture(scope="module")
def expected():
    return GPT2Config(n_embd=32, n_layer=2, n_head=2, vocab_size=64, n_positions=32)


@pytest.fixture(scope="module")
def pristine(tmp_path_factory, expected):
    out = tmp_path_factory.mktemp("tiny") / "tiny"
    GPT2LMHeadModel(expected).save_pretrained(out)
    for f in integrity.TOKENIZER_FILES:
        shutil.copy(BUNDLED_DIR / f, out / f)
    return out


@pytest.fixture
def ckpt(pristine, tmp_path):
    return shutil.copytree(pristine, tmp_path / "tiny")


def _problem(folder, expected):
    p = integrity.synthetic_problem(folder, NAME, expected, BUNDLED_DIR)
    return None if p is None else (p.key, p.text("en"), p.text("zh"))


def test_a_complete_checkpoint_has_no_problem(ckpt, expected):
    assert _problem(ckpt, expected) is None


def test_a_checkpoint_found_complete_is_not_read_again_until_a_file_changes(ckpt, pristine, expected, monkeypatch):
    # synthetic.problem runs before every load: the full check once, then only the files' sizes and times,
    # and any change to a file (truncated weights, another config.json) is a full check again
    from playground.load import synthetic
    name = "synthetic/gpt2-small"
    monkeypatch.setattr(synthetic, "folder", lambda n: ckpt)
    monkeypatch.setattr(synthetic, "config", lambda n: expected)
    monkeypatch.setattr(checkpoint, "_READ", {})
    full = []
    check = integrity.synthetic_problem
    monkeypatch.setattr(integrity, "synthetic_problem", lambda *a: full.append(a) or check(*a))
    assert synthetic.problem(name) is None and synthetic.problem(name) is None
    assert len(full) == 1
    weights = ckpt / "model.safetensors"
    os.truncate(weights, weights.stat().st_size - 1)
    assert synthetic.problem(name).key == "synth.why.weights" and len(full) == 2
    shutil.copy(pristine / "model.safetensors", weights)
    assert synthetic.problem(name) is None and synthetic.problem(name) is None and len(full) == 3
    cfg = json.loads((ckpt / "config.json").read_text(encoding="utf-8"))
    (ckpt / "config.json").write_text(json.dumps({**cfg, "n_layer": 3}), encoding="utf-8")
    assert synthetic.problem(name).key == "synth.why.config_differs" and len(full) == 4


def test_a_missing_folder_is_a_first_use(tmp_path, expected):
    assert _problem(tmp_path / "nothing", expected)[0] == "synth.why.first"


def test_truncated_weights_are_named_with_both_sizes(ckpt, expected):
    f = ckpt / "model.safetensors"
    os.truncate(f, f.stat().st_size // 2)
    key, en, zh = _problem(ckpt, expected)
    assert key == "synth.why.weights"
    assert "'tiny/model.safetensors' is truncated: its header describes" in en and "the file holds" in en
    assert "不完整" in zh


def test_a_header_cut_short_is_unreadable(ckpt, expected):
    os.truncate(ckpt / "model.safetensors", 5)
    assert "not a readable safetensors file" in _problem(ckpt, expected)[1]


@pytest.mark.parametrize("garbage", ["{not json", "", '{"model_type": "no-such-architecture"}'])
def test_a_config_that_does_not_parse_is_named(ckpt, expected, garbage):
    (ckpt / "config.json").write_text(garbage)
    key, en, _ = _problem(ckpt, expected)
    assert key == "synth.why.config" and en.startswith("its config.json is damaged")


def test_a_config_of_another_shape_is_named(ckpt, expected):
    cfg = json.loads((ckpt / "config.json").read_text())
    cfg["n_layer"] = 3
    (ckpt / "config.json").write_text(json.dumps(cfg))
    key, en, _ = _problem(ckpt, expected)
    assert key == "synth.why.config_differs" and "num_hidden_layers is 3, expected 2" in en


def test_a_shard_the_index_names_must_be_there(ckpt, expected):
    (ckpt / "model.safetensors").rename(ckpt / "model-00001-of-00002.safetensors")
    index = {"metadata": {}, "weight_map": {"a": "model-00001-of-00002.safetensors",
                                            "b": "model-00002-of-00002.safetensors"}}
    (ckpt / "model.safetensors.index.json").write_text(json.dumps(index))
    assert "'tiny/model-00002-of-00002.safetensors' is missing" in _problem(ckpt, expected)[1]
    (ckpt / "model.safetensors.index.json").write_text("[1, 2")
    assert _problem(ckpt, expected)[0] == "synth.why.index"


@pytest.mark.parametrize("f", integrity.TOKENIZER_FILES)
def test_a_missing_or_damaged_tokenizer_file_is_named(ckpt, expected, f):
    (ckpt / f).unlink()
    assert _problem(ckpt, expected)[1] == f"its tokenizer file {f} is missing or damaged"
    (ckpt / f).write_text("{")
    assert _problem(ckpt, expected)[0] == "synth.why.tokenizer"


def test_check_file_still_says_what_to_do(ckpt):
    os.truncate(ckpt / "model.safetensors", (ckpt / "model.safetensors").stat().st_size - 1)
    with pytest.raises(UserError, match="is truncated: .*Download or save it again"):
        checkpoint.check_file(ckpt / "model.safetensors")
    with pytest.raises(UserError, match="'tiny/nope.safetensors' is missing. Download or save it again"):
        checkpoint.check_file(ckpt / "nope.safetensors")


# ---------------------------------------------------------------- writing

def test_a_build_the_disk_cannot_hold_is_refused_first(tmp_path):
    free = shutil.disk_usage(tmp_path).free
    with pytest.raises(UserError) as e:
        integrity.check_space(tmp_path, free + 2**30, "synthetic/gpt2-xl")
    en, zh = e.value.text("en"), e.value.text("zh")
    assert "Not enough disk space to build synthetic/gpt2-xl in the synthetic models folder" in en
    assert "is free" in en and "PLAYGROUND_SYNTHETIC_DIR" in en and str(tmp_path) not in en
    assert "磁盘空间不足" in zh and "合成模型文件夹" in zh
    integrity.check_space(tmp_path, 1000, "synthetic/gpt2-small")  # room enough: no error


@pytest.mark.parametrize("error, key", [
    (OSError(errno.ENOSPC, "No space left on device"), "err.disk_full"),
    (SafetensorError("Error while serializing: I/O error: No space left on device (os error 28)"), "err.disk_full"),
    (OSError(errno.EFBIG, "File too large", "/srv/x/.tmp-1-2-abc/model.safetensors"), "err.file_limit"),
    (OSError(errno.EROFS, "Read-only file system", "/srv/x/.gpt2-small.lock"), "err.read_only"),
    (PermissionError(errno.EACCES, "Permission denied"), "err.read_only"),
])
def test_write_failures_are_explained(tmp_path, error, key):
    e = integrity.write_failure(error, "synthetic/gpt2-small", tmp_path, 350 * 2**20)
    assert e.key == key
    text = e.text("en")
    assert "synthetic models folder (PLAYGROUND_SYNTHETIC_DIR)" in text and "/srv/x" not in text
    assert "Nothing was unloaded" in text


def test_other_failures_are_not_blamed_on_the_disk(tmp_path):
    assert integrity.write_failure(ValueError("shape"), "synthetic/gpt2-small", tmp_path, 1) is None
    assert integrity.write_failure(OSError(errno.EIO, "I/O error"), "synthetic/gpt2-small", tmp_path, 1) is None


@pytest.mark.slow
def test_a_real_file_size_limit_is_recognised(tmp_path):
    """safetensors' own error under a real RLIMIT_FSIZE (SIGXFSZ ignored, as the server ignores it)."""
    code = (
        "import resource, signal, torch\n"
        "from safetensors.torch import save_file\n"
        "signal.signal(signal.SIGXFSZ, signal.SIG_IGN)\n"
        "resource.setrlimit(resource.RLIMIT_FSIZE, (2**20, resource.getrlimit(resource.RLIMIT_FSIZE)[1]))\n"
        "try:\n"
        f"    save_file({{'w': torch.zeros(2**20)}}, {str(tmp_path / 'w.safetensors')!r})\n"
        "except Exception as e:\n"
        "    print(type(e).__name__ + '|' + str(e))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60).stdout.strip()
    kind, _, message = out.partition("|")
    assert kind in ("SafetensorError", "OSError"), out
    error = SafetensorError(message) if kind == "SafetensorError" else OSError(errno.EFBIG, message)
    assert integrity.write_failure(error, "synthetic/gpt2-small", tmp_path, 2**22).key == "err.file_limit"
