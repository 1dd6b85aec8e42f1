import contextvars
import threading

import pytest

from playground.core import threads

REQUEST = contextvars.ContextVar("request", default=None)


def test_run_returns_raises_and_carries_context():
    REQUEST.set("visitor-1")
    seen = {}

    def work(a, b=0):
        seen["thread"] = threading.current_thread()
        seen["request"] = REQUEST.get()
        return a + b

    assert threads.run(work, 2, b=3) == 5
    assert seen["thread"] is not threading.current_thread()
    assert not seen["thread"].is_alive()  # it ended with the work, and its OpenMP pool with it
    assert seen["request"] == "visitor-1"  # Gradio's progress bar is found through context variables

    def boom():
        raise KeyError("no such layer")

    with pytest.raises(KeyError, match="no such layer"):
        threads.run(boom)


def test_iterate_yields_in_order_and_leaves_stop_alone_when_finished():
    stop = threading.Event()
    where = []

    def make():
        for i in range(5):
            where.append(threading.current_thread())
            yield i

    assert list(threads.iterate(make, stop)) == [0, 1, 2, 3, 4]
    assert not stop.is_set()  # a producer that ran to its end: the caller's event may be reused
    assert all(t is not threading.current_thread() and not t.is_alive() for t in where)


def test_iterate_stops_the_producer_when_the_consumer_leaves():
    stop = threading.Event()
    producer = []

    def make():  # would run forever without the stop event
        producer.append(threading.current_thread())
        i = 0
        while not stop.is_set():
            yield i
            i += 1
            stop.wait(0.001)

    it = threads.iterate(make, stop)
    assert next(it) == 0
    it.close()  # a closed tab: the generator is closed
    assert stop.is_set()
    assert not producer[0].is_alive()  # joined before close() returned


def test_iterate_raises_the_producers_error():
    def make():
        yield 1
        raise RuntimeError("Expected all tensors to be on the same device")

    it = threads.iterate(make, threading.Event())
    assert next(it) == 1
    with pytest.raises(RuntimeError, match="same device"):
        next(it)


def test_relay_yields_what_a_calling_back_producer_puts_then_its_error():
    """A producer that calls back (generate()'s streamer) rather than yields: its items, in order, from a
    thread of its own, then its exception, raised in the consumer."""
    where = []

    def work(put):
        where.append(threading.current_thread())
        for i in range(3):
            put(i)
        raise RuntimeError("CUDA out of memory")

    it = threads.relay(work, threading.Event())
    assert [next(it) for _ in range(3)] == [0, 1, 2]
    with pytest.raises(RuntimeError, match="out of memory"):
        next(it)
    assert where[0] is not threading.current_thread() and not where[0].is_alive()
