import pytest

from playground import models
from playground.inputs import UserError
from playground.slot import ModelSlot


def test_generate_before_load_says_load_first():
    slot = ModelSlot()
    with pytest.raises(UserError) as e:
        list(slot.generate("ROMEO:", 8, 0, 1, 0))
    assert "Load" in str(e.value)


def test_bad_load_keeps_the_loaded_model():
    slot = ModelSlot()
    slot.load(models.BUNDLED_NAME, "cpu", "float32")
    for bad in [("nope-model-folder/../x", "cpu", "float32"), (models.BUNDLED_NAME, "gpu", "float32"),
                (models.BUNDLED_NAME, "cpu", "int8"), ("playground-test/not-reachable", "cpu", "float32")]:
        with pytest.raises(UserError):
            slot.load(*bad)
        assert slot.status()["loaded"]
    text, stats = list(slot.generate("ROMEO:", 8, 0, 1, 0))[-1]
    assert stats.new_tokens == 8


def test_status_names_model_device_dtype():
    slot = ModelSlot()
    assert slot.status() == {"loaded": False}
    slot.load(models.BUNDLED_NAME, "cpu", "bfloat16")
    s = slot.status()
    assert (s["model"], s["device"], s["dtype"]) == (models.BUNDLED_NAME, "cpu", "bfloat16")


def test_stop_targets_only_its_session():
    slot = ModelSlot()
    slot.load(models.BUNDLED_NAME, "cpu", "float32")
    it = slot.generate("ROMEO:", 200, 0, 1, 0, session="a")
    next(it)
    assert slot.stop("b") is False  # another visitor's Stop does nothing here
    assert slot.stop("a") is True
    *_, (text, stats) = it
    assert stats.finish_reason == "stopped"


def test_budget_below_the_model_is_refused_before_allocating_and_the_slot_keeps_serving(monkeypatch):
    from playground import memory

    slot = ModelSlot()
    slot.load(models.BUNDLED_NAME, "cpu", "bfloat16")
    monkeypatch.setenv("PLAYGROUND_MEMORY_BUDGET", "100MB")
    rss = memory.rss_bytes()
    with pytest.raises(UserError) as e:
        slot.load("synthetic/gpt2-medium", "cpu", "float32")
    msg = str(e.value)
    assert "needs" in msg and "available" in msg and "MiB" in msg
    assert memory.rss_bytes() - rss < 100 * 2**20  # nothing the size of the model was allocated
    assert slot.status()["model"] == models.BUNDLED_NAME  # the old model is still there
    text, stats = list(slot.generate("ROMEO:", 8, 0, 1, 0))[-1]
    assert stats.new_tokens == 8


def test_timeline_of_load_and_generate_on_synthetic_gpt2_small():
    slot = ModelSlot()
    report = slot.load("synthetic/gpt2-small", "cpu", "float32")
    for _ in slot.generate("ROMEO:", 16, 0, 1, 0):
        pass
    rows, peaks = slot.timeline()
    names = [p["name"] for p in peaks]
    for phase in ("load", "migrate", "prefill", "decode"):
        assert phase in names
    by = {p["name"]: p for p in peaks}
    by_report = {p.name: p for p in report.phases}
    # the sampler's peaks agree with the load report's before/after readings (1 MiB of slack:
    # the readings are taken microseconds apart)
    for name in ("load", "migrate"):
        assert by[name]["rss_peak"] >= max(by_report[name].rss_before, by_report[name].rss_after) - 2**20
    assert rows and {r["series"] for r in rows} >= {"process RSS", "system available"}
