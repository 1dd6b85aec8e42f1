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
