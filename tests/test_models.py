import json
import os
import time
from pathlib import Path

import pytest
import torch

from playground import models
from playground.inputs import UserError


def test_catalog_offers_bundled_first_and_curated_hub_ids():
    cat = models.catalog()
    assert cat[0].id == models.BUNDLED_NAME and cat[0].kind == "bundled"
    assert {"distilgpt2", "gpt2", "HuggingFaceTB/SmolLM2-135M-Instruct", "Qwen/Qwen2.5-0.5B-Instruct"} <= {c.id for c in cat}


def test_bundled_folder_is_a_real_checkpoint():
    folder = models.BUNDLED_DIR
    assert (folder / "model.safetensors").is_file()
    assert (folder / "model.safetensors").stat().st_size <= 25 * 2**20
    assert (folder / "README.md").is_file()
    cfg = json.loads((folder / "config.json").read_text())
    assert cfg["model_type"] == "gpt2"


def test_resolve_kinds():
    assert models.resolve(models.BUNDLED_NAME).kind == "bundled"
    assert models.resolve("gpt2").kind == "hub"
    assert models.resolve("Qwen/Qwen2.5-0.5B-Instruct").kind == "hub"


@pytest.mark.parametrize("bad,fragment", [
    ("", "No model"),
    ("https://evil.example/model", "URLs are not accepted"),
    ("../../etc/passwd", "outside the folders"),
    ("./no-such-model-folder", "outside the folders"),
    ("/etc", "outside the folders"),
    ("~", "outside the folders"),
    ("gpt2; rm -rf /", "neither a Hub id"),
    ("a" * 400, "too long"),
    ("owner/name/extra", "neither a Hub id"),
    ("Ｑwen/Qwen2.5", "neither a Hub id"),
    ("gpt2\u202e", "neither a Hub id"),
    ("$(whoami)", "neither a Hub id"),
])
def test_resolve_rejects(bad, fragment):
    with pytest.raises(UserError) as e:
        models.resolve(bad)
    assert fragment in str(e.value)


def test_symlink_pointing_out_is_refused(tmp_path, monkeypatch):
    root = tmp_path / "models"
    root.mkdir()
    (root / "escape").symlink_to("/etc")
    monkeypatch.setenv("PLAYGROUND_MODEL_DIRS", str(root))
    with pytest.raises(UserError) as e:
        models.resolve(str(root / "escape"))
    assert "outside the folders" in str(e.value)


def _allowed(tmp_path, monkeypatch) -> Path:
    monkeypatch.setenv("PLAYGROUND_MODEL_DIRS", str(tmp_path))
    return tmp_path


def test_missing_folder_inside_allowed_root(tmp_path, monkeypatch):
    _allowed(tmp_path, monkeypatch)
    with pytest.raises(UserError) as e:
        models.resolve(str(tmp_path / "not-there"))
    assert "does not exist" in str(e.value)


def test_folder_without_model(tmp_path, monkeypatch):
    d = _allowed(tmp_path, monkeypatch) / "empty"
    d.mkdir()
    with pytest.raises(UserError) as e:
        models.resolve(str(d))
    assert "config.json is missing" in str(e.value)


def test_malformed_config(tmp_path, monkeypatch):
    d = _allowed(tmp_path, monkeypatch) / "bad"
    d.mkdir()
    (d / "config.json").write_text("{not json")
    (d / "model.safetensors").write_bytes(b"")
    with pytest.raises(UserError) as e:
        models.resolve(str(d))
    assert "not valid JSON" in str(e.value)


def test_pickle_checkpoint_refused(tmp_path, monkeypatch):
    d = _allowed(tmp_path, monkeypatch) / "pickled"
    d.mkdir()
    (d / "config.json").write_text("{}")
    torch.save({"w": torch.zeros(1)}, d / "pytorch_model.bin")
    with pytest.raises(UserError) as e:
        models.resolve(str(d))
    assert "safetensors only" in str(e.value)


def test_truncated_safetensors_gives_a_clear_message(tmp_path, monkeypatch):
    d = _allowed(tmp_path, monkeypatch) / "trunc"
    d.mkdir()
    for f in ("config.json", "tokenizer.json", "tokenizer_config.json"):
        (d / f).write_bytes((models.BUNDLED_DIR / f).read_bytes())
    (d / "model.safetensors").write_bytes((models.BUNDLED_DIR / "model.safetensors").read_bytes()[:5000])
    with pytest.raises(UserError) as e:
        models.load(str(d), "cpu", "float32")
    # refused by the header check, before anything is unloaded (models.check_safetensors)
    assert "trunc/model.safetensors" in str(e.value) and "Download or save it again" in str(e.value)


def test_hub_id_without_network_fails_fast(monkeypatch):
    from huggingface_hub import constants

    # Point the Hub at a closed local port: the same as no network, deterministic.
    monkeypatch.setattr(constants, "ENDPOINT", "https://127.0.0.1:9")
    t0 = time.perf_counter()
    with pytest.raises(UserError) as e:
        models.load("playground-test/not-cached-model", "cpu", "float32")
    assert time.perf_counter() - t0 < 5
    assert models.BUNDLED_NAME in str(e.value) and "unreachable" in str(e.value)


def test_real_hub_id_here_fails_fast_or_is_not_found():
    # On these machines there is no network: the real path must answer quickly too.
    t0 = time.perf_counter()
    with pytest.raises(UserError) as e:
        models.load("playground-test/not-a-real-model-x9", "cpu", "float32")
    assert time.perf_counter() - t0 < 10
    msg = str(e.value)
    assert models.BUNDLED_NAME in msg or "not found" in msg


def test_load_bundled_float32_phases(bundled):
    r = bundled.report
    assert [p.name for p in r.phases] == ["estimate", "import", "load", "migrate", "eval"]
    assert r.import_seconds >= 0
    n = sum(p.numel() for p in bundled.model.parameters())
    assert r.param_count == n and 3_000_000 <= n <= 6_000_000
    assert r.weights_bytes == n * 4  # float32, no buffers, tied head counted once
    assert r.load_seconds > 0 and r.migrate_seconds >= 0
    assert "no-op" in r.migrate_note  # cpu -> cpu copies nothing
    assert r.disk_bytes == (models.BUNDLED_DIR / "model.safetensors").stat().st_size
    assert r.ram["rss_before"] > 0 and r.ram["rss_after"] > 0
    assert not bundled.model.training  # eval() ran
    # float32 checkpoint, float32 on cpu: the weights stay mapped from the file (zero copy)
    assert r.file_backed_bytes == r.weights_bytes
    if not torch.cuda.is_available():
        assert r.vram["available"] is False and r.vram["reason"]


def test_load_bfloat16_halves_weight_bytes(bundled):
    lm = models.load(models.BUNDLED_NAME, "cpu", "bfloat16")
    assert lm.report.dtype == "bfloat16"
    assert lm.report.weights_bytes * 2 == bundled.report.weights_bytes
    assert all(p.dtype == torch.bfloat16 for p in lm.model.parameters())


def test_auto_dtype_keeps_checkpoint_dtype():
    lm = models.load(models.BUNDLED_NAME, "cpu", "auto")
    assert lm.report.dtype == "float32" and "checkpoint" in lm.report.dtype_reason


def test_auto_device_reports_placement():
    lm = models.load(models.BUNDLED_NAME, "auto", "float32")
    assert lm.report.migrate_seconds == 0.0 and "device_map" in lm.report.migrate_note
    assert sum(lm.report.placement.values()) == lm.report.param_count
    if not torch.cuda.is_available():
        # one device only: Transformers places it directly, without Accelerate hooks
        assert lm.report.placement == {"cpu": lm.report.param_count}
        assert lm.report.hf_device_map is None and "no hf_device_map" in lm.report.migrate_note


def test_trust_remote_code_is_never_enabled(monkeypatch):
    seen = []
    import transformers

    real = transformers.AutoModelForCausalLM.from_pretrained

    def spy(*a, **kw):
        seen.append(kw.get("trust_remote_code"))
        return real(*a, **kw)

    monkeypatch.setattr(transformers.AutoModelForCausalLM, "from_pretrained", spy)
    models.load(models.BUNDLED_NAME, "cpu", "float32")
    assert seen == [False]
