"""The pool: each session its own model, a model asked for twice loaded once, a refused load keeps the old one,
Stop ends only its caller's run, a session's end releases its hold, an idle hold expires."""

import threading

import pytest
import torch

from playground.core.errors import UserError
from playground.core.inputs import GenerationParams
from playground.core.paths import BUNDLED_NAME
from playground.hw import memory
from playground.load import loader
from playground.run import decode
from playground.run.decode import check_engine
from playground.run.pool import ModelPool

EIGHT = GenerationParams(max_new_tokens=8)


def load(pool: ModelPool, model: str, device: str = "cpu", dtype: str = "float32", session: str = ""):
    return pool.load(*loader.parse(model, device, dtype), session=session)


def made_by(pool: ModelPool, session: str = "") -> tuple[str, str]:
    *_, (_text, stats) = pool.generate("ROMEO:", EIGHT, session=session)
    return stats.model, stats.dtype


def test_generate_before_load_says_load_first():
    pool = ModelPool()
    with pytest.raises(UserError) as e:
        list(pool.generate("ROMEO:", EIGHT))
    assert "Load" in str(e.value)


@pytest.mark.slow
def test_each_session_generates_on_its_own_model(pool):
    """The issue's case: A loads float32, B loads bfloat16 after it; A's next generation is still A's model
    (the one-model slot ran it on B's)."""
    load(pool, BUNDLED_NAME, dtype="float32", session="a")
    load(pool, BUNDLED_NAME, dtype="bfloat16", session="b")
    assert made_by(pool, "a") == (BUNDLED_NAME, "float32")
    assert made_by(pool, "b") == (BUNDLED_NAME, "bfloat16")
    load(pool, BUNDLED_NAME, dtype="float16", session="b")  # B changes its mind: A's model stays
    assert made_by(pool, "a") == (BUNDLED_NAME, "float32") and made_by(pool, "b") == (BUNDLED_NAME, "float16")
    assert pool.status("a")["dtype"] == "float32" and pool.status("b")["dtype"] == "float16"
    s = pool.status("a")
    assert (s["models"], s["visitors"]) == (2, 2)  # B's bfloat16 went when B let it go: nobody held it
    assert pool.current("b")[0].dtype == "float16" and pool.current("nobody") is None


@pytest.mark.slow
def test_a_model_held_by_another_session_is_shared_not_loaded_again(pool, monkeypatch):
    first = load(pool, BUNDLED_NAME, session="a")
    calls = []
    real = loader.load
    monkeypatch.setattr(loader, "load", lambda *a, **k: calls.append(1) or real(*a, **k))
    shared = load(pool, BUNDLED_NAME, session="b")
    assert calls == [] and shared.shared == 1 and first.shared == 0
    assert shared.load_seconds == first.load_seconds and shared.loaded_at == first.loaded_at  # the figures of that load
    assert made_by(pool, "a") == made_by(pool, "b") and pool.current("a")[0] is pool.current("b")[0]
    assert pool.status("a")["models"] == 1 and pool.status("a")["visitors"] == 2
    # its only holder asking again measures again (a visitor pressing Load twice wants the figures)
    pool.release("b")
    again = load(pool, BUNDLED_NAME, session="a")
    assert calls == [1] and again.shared == 0 and again.loaded_at > first.loaded_at


def test_bad_load_keeps_the_loaded_model():
    pool = ModelPool()
    load(pool, BUNDLED_NAME)
    for bad in [("nope-model-folder/../x", "cpu", "float32"), (BUNDLED_NAME, "gpu", "float32"),
                (BUNDLED_NAME, "cpu", "int3")]:
        with pytest.raises(UserError):  # refused at the edge, before the pool is asked
            load(pool, *bad)
        assert pool.status()["loaded"]
    with pytest.raises(UserError):  # refused by the pool's own checks (the Hub is out of reach here)
        load(pool, "playground-test/not-reachable")
    assert pool.status()["model"] == BUNDLED_NAME
    assert made_by(pool) == (BUNDLED_NAME, "float32")
    pool.clear()


def test_engines_are_checked_at_the_edge():
    assert [check_engine(e) for e in ("generate", "manual", "manual-nocache")] == ["generate", "manual", "manual-nocache"]
    with pytest.raises(UserError):
        check_engine("turbo")


def test_stop_targets_only_its_session(pool):
    load(pool, BUNDLED_NAME, session="a")
    it = pool.generate("ROMEO:", GenerationParams(200), session="a")
    next(it)
    assert pool.stop("b") is False  # another visitor's Stop does nothing here
    assert pool.stop("a") is True
    *_, (text, stats) = it
    assert stats.finish_reason == "stopped"


def test_budget_below_the_model_is_refused_before_allocating_and_the_pool_keeps_serving(pool, monkeypatch):
    load(pool, BUNDLED_NAME, "cpu", "bfloat16")
    monkeypatch.setenv("PLAYGROUND_MEMORY_BUDGET", "100MB")
    rss = memory.rss_bytes()
    with pytest.raises(UserError) as e:
        load(pool, "synthetic/gpt2-medium")
    msg = str(e.value)
    assert "needs" in msg and "available" in msg and "MiB" in msg
    assert memory.rss_bytes() - rss < 100 * 2**20  # nothing the size of the model was allocated
    assert pool.status()["model"] == BUNDLED_NAME  # the old model is still there
    assert made_by(pool) == (BUNDLED_NAME, "bfloat16")


@pytest.mark.slow
def test_the_budget_covers_every_model_and_the_least_recently_used_goes_first(pool, monkeypatch):
    """Three sessions, a budget for two of the models: the third load unloads the least recently used one, and
    only its session is told, once, on its next action; the accounting adds up."""
    monkeypatch.setenv("PLAYGROUND_MEMORY_BUDGET", "36MiB")  # bundled float32 20.3 MiB, bfloat16 10.2 MiB
    load(pool, BUNDLED_NAME, dtype="bfloat16", session="a")
    load(pool, BUNDLED_NAME, dtype="float16", session="b")
    made_by(pool, "a")  # a's model used after b's: b's is the least recently used
    report = load(pool, BUNDLED_NAME, dtype="float32", session="c")
    said = next(p for p in report.phases if p.name == "estimate").note.text("en")
    assert "less the 20.3 MiB the models loaded for visitors hold" in said, said
    assert pool.status("c")["models"] == 2 and pool.counts["evictions"] == 1
    assert made_by(pool, "a") == (BUNDLED_NAME, "bfloat16")
    gone = pool.status("b")["gone"]
    assert (gone["model"], gone["dtype"], pool.status("b")["loaded"]) == (BUNDLED_NAME, "float16", False)
    for _ in range(2):  # told on every action until it loads again; counted once
        with pytest.raises(UserError) as e:
            made_by(pool, "b")
        assert "to make room for another visitor's" in e.value.text("en") and "腾出内存" in e.value.text("zh")
        assert "float16" in str(e.value) and "Load it again: about" in str(e.value)
    with pytest.raises(UserError, match="to make room"), pool.held("b"):
        pass  # the lab, Inspect and the Speed tab are told the same
    assert pool.counts == {"evictions": 1, "told": 1, "dropped": 0}
    made_by(pool, "c")
    again = load(pool, BUNDLED_NAME, dtype="float16", session="b")  # evicts a's now (the LRU), not c's
    assert again.evicted_before is None and pool.status("a").get("gone") and pool.status("c")["loaded"]
    pool.release("a")  # a leaves without being told: dropped
    s = pool.status("c")
    assert s["evictions"] == s["told"] + s["dropped"] + s["pending"] and s["dropped"] == 1


@pytest.mark.slow
def test_an_eviction_not_yet_told_is_told_by_the_sessions_next_load(pool, monkeypatch):
    monkeypatch.setenv("PLAYGROUND_MEMORY_BUDGET", "28MiB")
    load(pool, BUNDLED_NAME, dtype="float32", session="a")
    load(pool, BUNDLED_NAME, dtype="bfloat16", session="b")  # a's goes: both do not fit
    report = load(pool, BUNDLED_NAME, dtype="float16", session="a")
    assert report.evicted_before == {"model": BUNDLED_NAME, "device": "cpu", "dtype": "float32"}
    assert pool.counts["told"] == 1


@pytest.mark.slow
def test_releasing_sessions_returns_the_pool_to_its_floor(pool):
    """N sessions load (two models, one of them shared) and end: no model is left, and RSS is back within 5%."""
    for dtype in ("float32", "bfloat16"):  # first-use costs (kernels, caches) are not holds
        load(pool, BUNDLED_NAME, dtype=dtype, session="warm-up")
        made_by(pool, "warm-up")
    pool.release("warm-up")
    memory.release_memory()
    before = memory.rss_bytes()
    for i, dtype in enumerate(("float32", "bfloat16", "float32")):
        load(pool, BUNDLED_NAME, dtype=dtype, session=f"s{i}")
        made_by(pool, f"s{i}")
    assert pool.status()["models"] == 2 and pool.status()["visitors"] == 3
    for i in range(3):
        assert pool.release(f"s{i}")
    assert not pool.release("s0")  # a second goodbye changes nothing
    s = pool.status()
    assert (s["models"], s["visitors"], s["bytes"]) == (0, 0, 0)
    memory.release_memory()
    assert memory.rss_bytes() <= before * 1.05, (before, memory.rss_bytes())


@pytest.mark.slow
def test_a_release_while_a_run_holds_the_lane_unloads_when_it_ends(pool):
    load(pool, BUNDLED_NAME, dtype="bfloat16", session="gone")
    load(pool, BUNDLED_NAME, session="busy")
    it = pool.generate("ROMEO:", GenerationParams(32), session="busy")
    next(it)  # holds the lane
    pool.release("gone")  # returns at once: the unload waits for the lane
    assert pool.status()["models"] == 2
    list(it)
    assert pool.status()["models"] == 1 and not pool.busy()


def test_a_hold_untouched_for_the_idle_time_is_released():
    pool = ModelPool(idle_seconds=0.0)
    load(pool, BUNDLED_NAME, dtype="bfloat16", session="left")
    load(pool, BUNDLED_NAME, session="here")  # a load sweeps the idle holds (its own is renewed)
    s = pool.status("here")
    assert (s["models"], s["visitors"], s["loaded"]) == (1, 1, True)
    with pytest.raises(UserError, match="No model is loaded"):
        made_by(pool, "left")
    pool.clear()


def test_the_memory_of_the_other_sessions_models(pool):
    load(pool, BUNDLED_NAME, session="a")
    load(pool, BUNDLED_NAME, dtype="bfloat16", session="b")
    load(pool, BUNDLED_NAME, dtype="bfloat16", session="c")
    theirs = pool.others("a")
    assert [(m["dtype"], m["visitors"]) for m in theirs] == [("bfloat16", 2)]
    assert theirs[0]["bytes"] == pool.current("b")[0].weights_bytes
    assert sum(m["bytes"] for m in pool.others()) == pool.status()["bytes"]


@pytest.mark.slow
def test_timeline_of_load_and_generate_on_synthetic_gpt2_small(pool):
    report = load(pool, "synthetic/gpt2-small")
    for _ in pool.generate("ROMEO:", GenerationParams(16)):
        pass
    rows, peaks = pool.timeline()
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
    assert pool.timeline("someone else") == ([], [])


def test_pool_load_and_the_manual_loop_run_off_the_calling_thread(monkeypatch, pool):
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
    load(pool, BUNDLED_NAME, session="threads")
    text, stats = "", None
    for text, stats in pool.generate("ROMEO:", GenerationParams(4), session="threads", engine="manual"):
        pass
    assert stats.new_tokens == 4
    for name in ("load", "loop"):
        assert calls[name] is not threading.current_thread(), name
        assert not calls[name].is_alive(), name  # ended: no thread keeps an OpenMP pool


@pytest.mark.slow
@pytest.mark.device
def test_unload_cycles_give_the_ram_back(pool, figures):
    """5 load/unload cycles give the RAM back: RSS after the last unload within max(5%, 50 MB) of after the first."""
    after = []
    for _ in range(5):
        load(pool, BUNDLED_NAME, "cpu", "bfloat16")  # a cast: the weights are copied into RAM, not mapped from the file
        pool.unload()
        after.append(memory.rss_bytes())
    figures.update(rss_after_unload=after, growth_bytes=after[-1] - after[0])
    assert after[-1] - after[0] <= max(0.05 * after[0], 50e6)


# What each kind of GPU's allocator says its live tensors hold.
ALLOCATED = {"cuda": lambda device: torch.cuda.memory_allocated(device),
             "mps": lambda device: torch.mps.current_allocated_memory()}


@pytest.mark.slow
@pytest.mark.device(kinds=("cuda", "mps"))
def test_unload_cycles_give_the_gpu_memory_back(device, pool, figures):
    """5 load/unload cycles return the GPU memory: the allocator's live bytes (`memory_allocated`,
    `torch.mps.current_allocated_memory`) back to where they started, NVML's used memory within 64 MiB of
    after the first cycle where NVML reads this GPU."""
    allocated = ALLOCATED[device.split(":")[0]]
    if device.startswith("cuda"):  # cuBLAS's workspaces stay allocated after the first matmul (empty_cache keeps
        memory.cublas_workspace(torch.device(device).index or 0)  # them): made before the start, as in any order
    start = allocated(device)
    after = []
    for _ in range(5):
        load(pool, BUNDLED_NAME, device)
        pool.unload()
        gpu = next((g for g in memory.gpu_readings()[0] if f"cuda:{g.index}" == device), None)
        after.append(dict(allocated=allocated(device), nvml_used=gpu.nvml_used if gpu else None))
    figures.update(allocated_at_start=start, after_each_unload=after)
    assert after[-1]["allocated"] <= start + 2**20
    if after[0]["nvml_used"] is not None:
        assert after[-1]["nvml_used"] - after[0]["nvml_used"] <= 64 * 2**20


def test_the_ledger_shows_the_other_visitors_models_as_their_own_part(pool):
    """Another visitor's bfloat16 copy sat in this visitor's ledger as 'unaccounted' (or in the runtime, read while
    it was held): it is a part of its own, the pool's figure for its copied weights."""
    load(pool, BUNDLED_NAME, dtype="bfloat16", session="other")
    load(pool, BUNDLED_NAME, dtype="float32", session="me")
    *_, (_text, stats) = pool.generate("ROMEO:", GenerationParams(4, 0.0), session="me")
    parts = {p["part"]: p for p in stats.ledger if p["device"] == "cpu"}
    copied = pool.others("me")[0]["copied"]
    assert copied > 10 * 2**20 and parts["others_copied"]["bytes"] == copied
    assert parts["others_copied"]["counter"] == "pool_storages"
    held = [p for p in stats.ledger if p["device"] == "cpu" and p["scope"] == "process"]
    assert abs(parts["unaccounted"]["bytes"]) < 0.05 * sum(p["bytes"] for p in held), held
