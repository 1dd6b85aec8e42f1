"""The shared slot: one model at a time, a refused load keeps the old one, Stop ends only its caller's run."""

import threading

import pytest
import torch

from playground.core.errors import UserError
from playground.core.inputs import GenerationParams
from playground.core.paths import BUNDLED_NAME
from playground.hw import memory
from playground.load import loader
from playground.run import decode
from playground.run.slot import ModelSlot, check_engine

EIGHT = GenerationParams(max_new_tokens=8)


def load(slot: ModelSlot, model: str, device: str = "cpu", dtype: str = "float32"):
    return slot.load(*loader.parse(model, device, dtype))


def test_generate_before_load_says_load_first():
    slot = ModelSlot()
    with pytest.raises(UserError) as e:
        list(slot.generate("ROMEO:", EIGHT))
    assert "Load" in str(e.value)


def test_bad_load_keeps_the_loaded_model():
    slot = ModelSlot()
    load(slot, BUNDLED_NAME)
    for bad in [("nope-model-folder/../x", "cpu", "float32"), (BUNDLED_NAME, "gpu", "float32"),
                (BUNDLED_NAME, "cpu", "int8")]:
        with pytest.raises(UserError):  # refused at the edge, before the slot is asked
            load(slot, *bad)
        assert slot.status()["loaded"]
    with pytest.raises(UserError):  # refused by the slot's own checks (the Hub is out of reach here)
        load(slot, "playground-test/not-reachable")
    assert slot.status()["model"] == BUNDLED_NAME
    text, stats = list(slot.generate("ROMEO:", EIGHT))[-1]
    assert stats.new_tokens == 8


def test_engines_are_checked_at_the_edge():
    assert [check_engine(e) for e in ("generate", "manual", "manual-nocache")] == ["generate", "manual", "manual-nocache"]
    with pytest.raises(UserError):
        check_engine("turbo")


def test_status_names_model_device_dtype_and_spec_loads_it_again():
    slot = ModelSlot()
    assert slot.status() == {"loaded": False} and slot.spec() is None
    load(slot, BUNDLED_NAME, "cpu", "bfloat16")
    s = slot.status()
    assert (s["model"], s["device"], s["dtype"]) == (BUNDLED_NAME, "cpu", "bfloat16")
    src, dev, dtype = slot.spec()
    slot.unload()
    assert slot.spec() is None
    slot.load(src, dev, dtype)
    assert slot.status()["dtype"] == "bfloat16"


def test_stop_targets_only_its_session():
    slot = ModelSlot()
    load(slot, BUNDLED_NAME)
    it = slot.generate("ROMEO:", GenerationParams(200), session="a")
    next(it)
    assert slot.stop("b") is False  # another visitor's Stop does nothing here
    assert slot.stop("a") is True
    *_, (text, stats) = it
    assert stats.finish_reason == "stopped"


def test_budget_below_the_model_is_refused_before_allocating_and_the_slot_keeps_serving(monkeypatch):
    slot = ModelSlot()
    load(slot, BUNDLED_NAME, "cpu", "bfloat16")
    monkeypatch.setenv("PLAYGROUND_MEMORY_BUDGET", "100MB")
    rss = memory.rss_bytes()
    with pytest.raises(UserError) as e:
        load(slot, "synthetic/gpt2-medium")
    msg = str(e.value)
    assert "needs" in msg and "available" in msg and "MiB" in msg
    assert memory.rss_bytes() - rss < 100 * 2**20  # nothing the size of the model was allocated
    assert slot.status()["model"] == BUNDLED_NAME  # the old model is still there
    text, stats = list(slot.generate("ROMEO:", EIGHT))[-1]
    assert stats.new_tokens == 8


def test_timeline_of_load_and_generate_on_synthetic_gpt2_small():
    slot = ModelSlot()
    report = load(slot, "synthetic/gpt2-small")
    for _ in slot.generate("ROMEO:", GenerationParams(16)):
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


def test_slot_load_and_the_manual_loop_run_off_the_calling_thread(monkeypatch):
    calls = {}
    real_load, real_loop = loader.load, decode._loop

    def loader_load(*a, **k):
        calls["load"] = threading.current_thread()
        return real_load(*a, **k)

    def loop(*a, **k):
        calls["loop"] = threading.current_thread()
        yield from real_loop(*a, **k)

    monkeypatch.setattr(loader, "load", loader_load)
    monkeypatch.setattr(decode, "_loop", loop)
    slot = ModelSlot()
    load(slot, BUNDLED_NAME)
    text, stats = "", None
    for text, stats in slot.generate("ROMEO:", GenerationParams(4), session="threads", engine="manual"):
        pass
    assert stats.new_tokens == 4
    for name in ("load", "loop"):
        assert calls[name] is not threading.current_thread(), name
        assert not calls[name].is_alive(), name  # ended: no thread keeps an OpenMP pool


@pytest.mark.slow
@pytest.mark.device
def test_unload_cycles_give_the_ram_back(slot, figures):
    """5 load/unload cycles give the RAM back: RSS after the last unload within max(5%, 50 MB) of after the first."""
    after = []
    for _ in range(5):
        load(slot, BUNDLED_NAME, "cpu", "bfloat16")  # a cast: the weights are copied into RAM, not mapped from the file
        slot.unload()
        after.append(memory.rss_bytes())
    figures.update(rss_after_unload=after, growth_bytes=after[-1] - after[0])
    assert after[-1] - after[0] <= max(0.05 * after[0], 50e6)


# What each kind of GPU's allocator says its live tensors hold.
ALLOCATED = {"cuda": lambda device: torch.cuda.memory_allocated(device),
             "mps": lambda device: torch.mps.current_allocated_memory()}


@pytest.mark.slow
@pytest.mark.device(kinds=("cuda", "mps"))
def test_unload_cycles_give_the_gpu_memory_back(device, slot, figures):
    """5 load/unload cycles return the GPU memory: the allocator's live bytes (`memory_allocated`,
    `torch.mps.current_allocated_memory`) back to where they started, NVML's used memory within 64 MiB of
    after the first cycle where NVML reads this GPU."""
    allocated = ALLOCATED[device.split(":")[0]]
    start = allocated(device)
    after = []
    for _ in range(5):
        load(slot, BUNDLED_NAME, device)
        slot.unload()
        gpu = next((g for g in memory.gpu_readings()[0] if f"cuda:{g.index}" == device), None)
        after.append(dict(allocated=allocated(device), nvml_used=gpu.nvml_used if gpu else None))
    figures.update(allocated_at_start=start, after_each_unload=after)
    assert after[-1]["allocated"] <= start + 2**20
    if after[0]["nvml_used"] is not None:
        assert after[-1]["nvml_used"] - after[0]["nvml_used"] <= 64 * 2**20
