"""The pool under faults: a load that fails after the session's own model was freed loads that one back, a
checkpoint that fails its checks unloads nothing, and `close()` stops runs and refuses new ones."""

from __future__ import annotations

import json
import shutil
import threading

import pytest
from transformers import GPT2Config, GPT2LMHeadModel

from playground.core.errors import UserError
from playground.core.inputs import GenerationParams
from playground.core.paths import BUNDLED_DIR, BUNDLED_NAME
from playground.load import loader
from playground.run.pool import ModelPool

EIGHT = GenerationParams(max_new_tokens=8)


def _tiny(folder, **changes):
    """A small GPT-2 checkpoint with the bundled tokenizer; `changes` are written into its config.json only,
    so that it passes every check made before the unload and fails in from_pretrained."""
    GPT2LMHeadModel(GPT2Config(n_embd=32, n_layer=1, n_head=2, vocab_size=8192, n_positions=64, bos_token_id=0,
                               eos_token_id=0)).save_pretrained(folder)
    for f in ("tokenizer.json", "tokenizer_config.json"):
        shutil.copy(BUNDLED_DIR / f, folder / f)
    cfg = json.loads((folder / "config.json").read_text()) | changes
    (folder / "config.json").write_text(json.dumps(cfg))
    return folder


@pytest.fixture
def models(tmp_path, monkeypatch):
    monkeypatch.setenv("PLAYGROUND_MODEL_DIRS", str(tmp_path))
    return tmp_path


@pytest.mark.slow
def test_a_from_pretrained_failure_loads_the_model_before_it_back(models):
    bad = _tiny(models / "mismatched", n_embd=64)  # weights of width 32 under a config of width 64
    pool = ModelPool()
    pool.load(*loader.parse(BUNDLED_NAME, "cpu", "bfloat16"))
    with pytest.raises(UserError) as e:
        pool.load(*loader.parse(str(bad), "cpu", "float32"))
    en, zh = e.value.text("en"), e.value.text("zh")
    assert "Could not load 'mismatched': RuntimeError" in en
    assert f"{BUNDLED_NAME} (cpu, bfloat16), was loaded back and keeps serving" in en and "已重新加载" in zh
    assert str(models) not in en  # the library's words quote no server path
    s = pool.status()
    assert (s["model"], s["device"], s["dtype"]) == (BUNDLED_NAME, "cpu", "bfloat16")
    _text, stats = list(pool.generate("ROMEO:", EIGHT))[-1]
    assert (stats.model, stats.new_tokens) == (BUNDLED_NAME, 8)
    assert pool.current()[1].name == BUNDLED_NAME


@pytest.mark.slow
def test_when_the_model_before_cannot_come_back_the_error_says_so(models):
    good = _tiny(models / "good")
    bad = _tiny(models / "mismatched", n_embd=64)
    pool = ModelPool()
    pool.load(*loader.parse(str(good), "cpu", "float32"))
    shutil.rmtree(good)  # someone removed the model that was loaded
    with pytest.raises(UserError) as e:
        pool.load(*loader.parse(str(bad), "cpu", "float32"))
    assert "loading that model, good, back failed too" in str(e.value) and "No model is loaded" in str(e.value)
    assert not pool.status()["loaded"] and pool.status()["models"] == 0


@pytest.mark.slow
@pytest.mark.parametrize("damage", ["tokenizer", "weights", "config"])
def test_a_local_checkpoint_that_fails_its_checks_unloads_nothing(models, damage):
    folder = _tiny(models / "damaged")
    pool = ModelPool()
    pool.load(*loader.parse(BUNDLED_NAME, "cpu", "float32"))
    src, dev, dtype = loader.parse(str(folder), "cpu", "float32")  # checked as the edge checks it
    if damage == "tokenizer":
        (folder / "tokenizer.json").unlink()
        (folder / "tokenizer_config.json").unlink()
    elif damage == "weights":
        f = folder / "model.safetensors"
        f.write_bytes(f.read_bytes()[: f.stat().st_size // 2])
    else:
        (folder / "config.json").write_text("{garbage")
    with pytest.raises(UserError) as e:
        pool.load(src, dev, dtype)
    assert "loaded back" not in str(e.value)  # refused before the unload: nothing had to come back
    assert pool.status()["model"] == BUNDLED_NAME
    assert list(pool.generate("ROMEO:", EIGHT))[-1][1].model == BUNDLED_NAME


def test_close_stops_a_running_generation_and_refuses_new_work():
    pool = ModelPool()
    pool.load(*loader.parse(BUNDLED_NAME, "cpu", "float32"), session="a")
    updates, started = [], threading.Event()

    def run():
        for text, stats in pool.generate("ROMEO:", GenerationParams(max_new_tokens=250), session="a"):
            updates.append(stats)
            started.set()

    t = threading.Thread(target=run)
    t.start()
    assert started.wait(30)
    assert pool.close() == 1
    t.join(10)
    assert not t.is_alive() and updates[-1].finish_reason == "stopped" and updates[-1].new_tokens < 250
    with pytest.raises(UserError, match="shutting down"):
        list(pool.generate("ROMEO:", EIGHT))
    with pytest.raises(UserError, match="shutting down"):
        pool.load(*loader.parse(BUNDLED_NAME, "cpu", "float32"))
    assert pool.drain(1.0) and not pool.status()["loaded"] and pool.status()["models"] == 0


def test_drain_gives_up_while_the_lane_is_held():
    pool = ModelPool()
    with pool.held():
        got = []
        t = threading.Thread(target=lambda: got.append(pool.drain(0.2)))
        t.start()
        t.join(5)
    assert got == [False]


def test_an_unexpected_error_after_the_unload_loads_the_model_before_it_back(monkeypatch):
    """Not only from_pretrained's refusals: anything raised after the unload (an out-of-memory in
    .to(device), say) gives the session its previous model back."""
    pool = ModelPool()
    pool.load(*loader.parse(BUNDLED_NAME, "cpu", "float32"))
    real = loader.load

    def failing(plan, progress=None):
        if plan.dtype != "auto" and str(plan.dtype) == "torch.bfloat16":
            raise MemoryError("cannot allocate 42 bytes")
        return real(plan, progress) if progress else real(plan)

    monkeypatch.setattr(loader, "load", failing)
    with pytest.raises(UserError) as e:
        pool.load(*loader.parse(BUNDLED_NAME, "cpu", "bfloat16"))
    assert str(e.value).startswith("MemoryError: cannot allocate 42 bytes. It failed after the model before it")
    assert (pool.status()["model"], pool.status()["dtype"]) == (BUNDLED_NAME, "float32")
