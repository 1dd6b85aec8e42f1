"""The pool under concurrent use, in one process: another session's load waits for a running generation and
changes nothing of it, a model in use is never evicted, a generation resumed on other threads frees the lane,
and the banner never waits."""

from __future__ import annotations

import threading
import time

import pytest

from playground.core.errors import UserError
from playground.core.inputs import GenerationParams
from playground.load import loader

PROMPT = "ROMEO: What light through yonder window breaks?"


@pytest.fixture
def pool(pool):
    """conftest's pool of the test's own (emptied afterwards), with the bundled model loaded for session "a"."""
    pool.load(*loader.parse("shakespeare-gpt2", "cpu", "float32"), session="a")
    return pool


def _slow_generation_meets_a_load(pool, dtype: str) -> tuple[str, object, list[float], float]:
    """Session a streams 48 tokens, read slowly; meanwhile session b asks to load the bundled model in `dtype`.
    Returns a's text and last stats, when b's load ended, and when a's generation ended."""
    updates = pool.generate(PROMPT, GenerationParams(48), session="a")
    next(updates)  # the generation has started: it holds the lane
    loaded_at: list[float] = []
    other = threading.Thread(target=lambda: (pool.load(*loader.parse("shakespeare-gpt2", "cpu", dtype), session="b"),
                                             loaded_at.append(time.perf_counter())))
    other.start()
    time.sleep(0.5)
    assert other.is_alive() and not loaded_at, "the load did not wait for the generation"
    text, stats = "", None
    for text, stats in updates:
        time.sleep(0.005)  # a slow reader: the load still waits
    finished_at = time.perf_counter()
    other.join(timeout=60)
    return text, stats, loaded_at, finished_at


@pytest.mark.slow
def test_another_sessions_load_waits_for_the_running_generation_and_changes_nothing_of_it(pool):
    *_, (reference, _) = pool.generate(PROMPT, GenerationParams(48), session="a")
    text, stats, loaded_at, finished_at = _slow_generation_meets_a_load(pool, "bfloat16")
    assert loaded_at and loaded_at[0] > finished_at
    assert text == reference  # the first model's text, token for token
    assert (stats.model, stats.device, stats.dtype) == ("shakespeare-gpt2", "cpu", "float32")
    # and afterwards each session still has its own: a's next run is a's model, not b's
    *_, (_, after_a) = pool.generate(PROMPT, GenerationParams(8), session="a")
    *_, (_, after_b) = pool.generate(PROMPT, GenerationParams(8), session="b")
    assert (after_a.dtype, after_b.dtype) == ("float32", "bfloat16")
    assert pool.status("a")["dtype"] == "float32" and pool.status("b")["dtype"] == "bfloat16"


@pytest.mark.slow
def test_a_model_in_use_is_never_evicted(pool, monkeypatch):
    """A budget with room for one of the two models: b's load, which needs a's room, waits while a's generation
    runs; the generation finishes on a's model; then a's model goes for b's, and a is told on its next action
    (the one-model slot ran a's next generation on b's model instead)."""
    *_, (reference, _) = pool.generate(PROMPT, GenerationParams(48), session="a")
    monkeypatch.setenv("PLAYGROUND_MEMORY_BUDGET", "28MiB")  # float32 takes 20.3 MiB, float16 10.2 MiB (+20%)
    text, stats, loaded_at, finished_at = _slow_generation_meets_a_load(pool, "float16")
    assert loaded_at and loaded_at[0] > finished_at  # the load waited: a's model was in use
    assert text == reference and stats.finish_reason == "length" and stats.dtype == "float32"
    assert pool.status("b")["dtype"] == "float16" and pool.status("b")["models"] == 1
    with pytest.raises(UserError) as e:
        list(pool.generate(PROMPT, GenerationParams(8), session="a"))
    said = e.value.text("en")
    assert "shakespeare-gpt2 (cpu, float32), was unloaded" in said and "nothing ran on another model" in said


@pytest.mark.slow
def test_a_generation_resumed_on_other_threads_frees_the_lane(pool):
    """Gradio runs each next() of a streaming handler on whichever pool thread is free."""
    updates = pool.generate(PROMPT, GenerationParams(32), session="a")
    errors: list[BaseException] = []
    first_done, rest_done = threading.Event(), threading.Event()

    def step(n: int, then_wait: bool) -> None:
        try:
            for _ in range(n):
                next(updates)
        except StopIteration:
            pass
        except BaseException as e:  # noqa: BLE001
            errors.append(e)
        if then_wait:  # stay alive, idle, like a pool thread: the next thread gets another identity
            first_done.set()
            rest_done.wait(60)

    a = threading.Thread(target=step, args=(1, True), daemon=True)
    a.start()
    assert first_done.wait(60)
    b = threading.Thread(target=step, args=(10_000, False))
    b.start()
    b.join(timeout=60)
    rest_done.set()
    a.join(timeout=10)
    assert not errors, errors
    load = threading.Thread(target=pool.load, args=loader.parse("shakespeare-gpt2", "cpu", "bfloat16"),
                            kwargs=dict(session="a"), daemon=True)
    load.start()
    load.join(timeout=30)
    assert not load.is_alive(), "the lane stayed locked after the generation ended on another thread"
    assert pool.status("a")["dtype"] == "bfloat16"


@pytest.mark.slow
def test_the_status_banner_does_not_wait_for_a_generation(pool):
    updates = pool.generate(PROMPT, GenerationParams(64), session="a")
    next(updates)  # holds the lane
    took: list[float] = []

    def ask() -> None:
        t0 = time.perf_counter()
        pool.status("b")
        took.append(time.perf_counter() - t0)

    t = threading.Thread(target=ask, daemon=True)
    t.start()
    t.join(timeout=5)
    for _ in updates:
        pass
    assert took and took[0] < 0.5


# ---------------------------------------------------------------- 8 clients, 2 minutes
