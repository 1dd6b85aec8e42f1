"""What a model name refers to: the catalog, the allowed folders, the checks a folder must pass."""

import json
from pathlib import Path

import pytest
import torch

from playground.core.errors import UserError
from playground.core.paths import BUNDLED_DIR, BUNDLED_NAME
from playground.load import catalog


def test_catalog_offers_bundled_first_and_curated_hub_ids():
    cat = catalog.catalog()
    assert cat[0].id == BUNDLED_NAME and cat[0].kind == "bundled"
    assert {"distilgpt2", "gpt2", "HuggingFaceTB/SmolLM2-135M-Instruct", "Qwen/Qwen2.5-0.5B-Instruct"} <= {c.id for c in cat}


def test_bundled_folder_is_a_real_checkpoint():
    folder = BUNDLED_DIR
    assert (folder / "model.safetensors").is_file()
    assert (folder / "model.safetensors").stat().st_size <= 25 * 2**20
    assert (folder / "README.md").is_file()
    cfg = json.loads((folder / "config.json").read_text())
    assert cfg["model_type"] == "gpt2"


def test_resolve_kinds():
    assert catalog.resolve(BUNDLED_NAME).kind == "bundled"
    assert catalog.resolve("gpt2").kind == "hub"
    assert catalog.resolve("Qwen/Qwen2.5-0.5B-Instruct").kind == "hub"


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
        catalog.resolve(bad)
    assert fragment in str(e.value)


def test_symlink_pointing_out_is_refused(tmp_path, monkeypatch):
    root = tmp_path / "models"
    root.mkdir()
    (root / "escape").symlink_to("/etc")
    monkeypatch.setenv("PLAYGROUND_MODEL_DIRS", str(root))
    with pytest.raises(UserError) as e:
        catalog.resolve(str(root / "escape"))
    assert "outside the folders" in str(e.value)


def _allowed(tmp_path, monkeypatch) -> Path:
    monkeypatch.setenv("PLAYGROUND_MODEL_DIRS", str(tmp_path))
    return tmp_path


def test_missing_folder_inside_allowed_root(tmp_path, monkeypatch):
    _allowed(tmp_path, monkeypatch)
    with pytest.raises(UserError) as e:
        catalog.resolve(str(tmp_path / "not-there"))
    assert "does not exist" in str(e.value)


def test_folder_without_model(tmp_path, monkeypatch):
    d = _allowed(tmp_path, monkeypatch) / "empty"
    d.mkdir()
    with pytest.raises(UserError) as e:
        catalog.resolve(str(d))
    assert "config.json is missing" in str(e.value)


def test_malformed_config(tmp_path, monkeypatch):
    d = _allowed(tmp_path, monkeypatch) / "bad"
    d.mkdir()
    (d / "config.json").write_text("{not json")
    (d / "model.safetensors").write_bytes(b"")
    with pytest.raises(UserError) as e:
        catalog.resolve(str(d))
    assert "not valid JSON" in str(e.value)


def test_pickle_checkpoint_refused(tmp_path, monkeypatch):
    d = _allowed(tmp_path, monkeypatch) / "pickled"
    d.mkdir()
    (d / "config.json").write_text("{}")
    torch.save({"w": torch.zeros(1)}, d / "pytorch_model.bin")
    with pytest.raises(UserError) as e:
        catalog.resolve(str(d))
    assert "safetensors only" in str(e.value)


def test_read_config_never_reads_weights_and_knows_the_source():
    cfg = catalog.read_config(catalog.resolve(BUNDLED_NAME))
    assert cfg.config.model_type == "gpt2" and cfg.folder == BUNDLED_DIR and cfg.source.kind == "bundled"


def test_truncated_safetensors_gives_a_clear_message(tmp_path, monkeypatch):
    d = _allowed(tmp_path, monkeypatch) / "trunc"
    d.mkdir()
    for f in ("config.json", "tokenizer.json", "tokenizer_config.json"):
        (d / f).write_bytes((BUNDLED_DIR / f).read_bytes())
    (d / "model.safetensors").write_bytes((BUNDLED_DIR / "model.safetensors").read_bytes()[:5000])
    with pytest.raises(UserError) as e:
        catalog.resolve(str(d))
    # refused by the header check at the edge, before anything is unloaded (checkpoint.check_file)
    assert "trunc/model.safetensors" in str(e.value) and "Download or save it again" in str(e.value)


@pytest.mark.slow
def test_a_synthetic_model_says_why_it_has_fewer_parameters_than_its_published_size():
    """"124M shape" was listed beside a load report of 92M parameters, unexplained. The picker names the
    published model's layers and the bundled vocabulary; the load report's note counts the difference: the
    published vocabulary's extra rows in the embedding (and in the output head, when it is not tied)."""
    from playground.load import estimate, synthetic

    labels = dict((v, k) for k, v in catalog.choices("en"))
    assert labels["synthetic/gpt2-small"] == "synthetic/gpt2-small (the 124M model's layers, the bundled vocabulary; random weights)"
    for name in synthetic.CONFIGS:
        cfg = catalog.read_config(catalog.resolve(name)).config
        counted = estimate.meta_facts(cfg, torch.float32).param_count
        note = synthetic.size_note(name, cfg, counted)
        total = float(note.fields["total"].rstrip("M").replace(",", "")) * 1e6
        assert abs(total / synthetic._size(name) - 1) < 0.05, (name, note.text())  # 92.1M + 32.3M = 124.4M: "124M"
        assert note.fields["here"] == f"{counted / 1e6:,.1f}M" and "fewer" in note.text("en") and "少了" in note.text("zh")
    assert synthetic.size_note("synthetic/llama-7b", cfg, counted).fields["where"].key == "label.embedding_head"  # untied
