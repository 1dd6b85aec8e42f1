"""The shared slot under concurrent use, in one process: a swap waits for a running generation and never
mixes models, a generation resumed on other threads frees the slot, and the banner never waits."""

from __future__ import annotations

import threading
import time

import pytest

from playground.core.inputs import GenerationParams
from playground.load import loader

PROMPT = "ROMEO: What light through yonder window breaks?"


@pytest.fixture
def slot(slot):
    """conftest's slot of the test's own (emptied afterwards), with the bundled model loaded."""
    slot.load(*loader.parse("shakespeare-gpt2", "cpu", "float32"))
    return slot


def test_a_swap_waits_for_the_running_generation_and_never_mixes(slot):
    *_, (reference, _) = slot.generate(PROMPT, GenerationParams(48))
    updates = slot.generate(PROMPT, GenerationParams(48), session="a")
    next(updates)  # the generation has started: it holds the slot
    loaded_at = []
    swap = threading.Thread(target=lambda: (slot.load(*loader.parse("shakespeare-gpt2", "cpu", "bfloat16")),
                                            loaded_at.append(time.perf_counter())))
    swap.start()
    time.sleep(0.5)
    assert swap.is_alive() and not loaded_at, "the load did not wait for the generation"
    text, stats = "", None
    for text, stats in updates:
        time.sleep(0.005)  # a slow reader: the load still waits
    finished_at = time.perf_counter()
    swap.join(timeout=60)
    assert loaded_at and loaded_at[0] > finished_at
    assert text == reference  # the first model's text, token for token
    assert (stats.model, stats.device, stats.dtype) == ("shakespeare-gpt2", "cpu", "float32")
    *_, (_, after) = slot.generate(PROMPT, GenerationParams(8))
    assert after.dtype == "bfloat16" and slot.status()["dtype"] == "bfloat16"


def test_a_generation_resumed_on_other_threads_frees_the_slot(slot):
    """Gradio runs each next() of a streaming handler on whichever pool thread is free."""
    updates = slot.generate(PROMPT, GenerationParams(32))
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
    load = threading.Thread(target=slot.load, args=loader.parse("shakespeare-gpt2", "cpu", "bfloat16"), daemon=True)
    load.start()
    load.join(timeout=30)
    assert not load.is_alive(), "the slot stayed locked after the generation ended on another thread"
    assert slot.status()["dtype"] == "bfloat16"


def test_the_status_banner_does_not_wait_for_a_generation(slot):
    updates = slot.generate(PROMPT, GenerationParams(64))
    next(updates)  # holds the slot
    took: list[float] = []

    def ask() -> None:
        t0 = time.perf_counter()
        slot.status()
        took.append(time.perf_counter() - t0)

    t = threading.Thread(target=ask, daemon=True)
    t.start()
    t.join(timeout=5)
    for _ in updates:
        pass
    assert took and took[0] < 0.5


# ---------------------------------------------------------------- 8 clients, 2 minutes
