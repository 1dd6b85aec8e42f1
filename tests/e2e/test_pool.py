"""Every visitor their own model, against one live server (`python app.py`), through the API.

- Two clients (two sessions) load different models and generate in alternation, 20 rounds each,
  concurrently, each loading its own model again halfway: every generation names its client's own
  model, greedy text and all (the one-model slot ran one client's generations on the other's model).
- Each figure says how many other visitors were waiting for the lane when it was taken.
- Clients that load and close release their holds: the server holds no model again, and its RSS is
  back within 5% of where it was.
"""

from __future__ import annotations

import threading
import time

import psutil
import pytest
from gradio_client import Client

from playground.tools.server import log_exceptions
from tests.conftest import start_server, stop_server

pytestmark = pytest.mark.slow

BUNDLED, SMALL = "shakespeare-gpt2", "synthetic/gpt2-small"
ROUNDS = 20


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    s = start_server(tmp_path_factory.mktemp("pool"), {"HF_HUB_OFFLINE": "1"})
    yield s
    stop_server(s)
    found = log_exceptions(s.log_text())
    assert not found, f"exceptions in the server log: {found}\n{s.log_text()[-3000:]}"


def _client(server) -> Client:
    return Client(server.url, verbose=False)


def _pool(server) -> dict:
    c = _client(server)
    try:
        return c.predict(api_name="/status")
    finally:
        c.close()


def test_two_clients_twenty_rounds_each_concurrently_never_run_on_the_others_model(server):
    # another model and another dtype each: a swap of either shows. GPT-2 small in float32, not bfloat16, which
    # this CPU runs without native bfloat16 matrix products (8 tokens: 1.9 s against 0.4 s here, most of the test)
    plan = {"a": (BUNDLED, "bfloat16", "ROMEO:"), "b": (SMALL, "float32", "JULIET:")}
    seen: dict[str, list] = {k: [] for k in plan}
    errors: list[str] = []
    start = threading.Barrier(len(plan))

    def visitor(name: str) -> None:
        model, dtype, prompt = plan[name]
        c = _client(server)
        try:
            c.predict(model, "cpu", dtype, api_name="/load_model")
            start.wait(timeout=120)  # both loaded: the rounds interleave from here
            for k in range(ROUNDS):
                if k == ROUNDS // 2:  # its own model loaded again, between the other's generations
                    report = c.predict(model, "cpu", dtype, api_name="/load_model")
                    seen[name].append(("load", report["model"], report["dtype"], None))
                text, stats = c.predict(prompt, 8, 0.0, 1.0, 0, api_name="/generate")
                seen[name].append(("generate", stats["model"], stats["dtype"], text))
        except Exception as e:  # noqa: BLE001
            errors.append(f"{name}: {type(e).__name__}: {e}")
        finally:
            c.close()

    threads = [threading.Thread(target=visitor, args=(n,)) for n in plan]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=600)
    assert not errors, errors
    swapped = 0
    for name, (model, dtype, _prompt) in plan.items():
        runs = [s for s in seen[name] if s[0] == "generate"]
        assert len(runs) == ROUNDS
        swapped += sum(1 for _, m, d, _t in runs if (m, d) != (model, dtype))
        assert len({t for *_, t in runs}) == 1, f"{name}: greedy texts differ: the model changed under it"
    print(f"{ROUNDS} rounds x {len(plan)} clients, swapped: {swapped}")
    assert swapped == 0, seen


def test_each_figure_says_how_many_other_visitors_were_waiting(server):
    """A long generation runs while two other visitors queue theirs: its final stats say 2 were waiting;
    the second (served next) says 1, the last says 0. A load with nobody queued says 0."""
    clients = [_client(server) for _ in range(3)]
    try:
        report = clients[0].predict(SMALL, "cpu", "float32", api_name="/load_model")
        assert report["waiting"] == 0
        for c in clients[1:]:
            c.predict(BUNDLED, "cpu", "float32", api_name="/load_model")
        long = clients[0].submit("ROMEO:", 200, 0.0, 1.0, 0, api_name="/generate")
        t0 = time.monotonic()
        while not any(o and o[0] for o in long.outputs()):
            assert time.monotonic() - t0 < 120 and not long.done()
            time.sleep(0.02)
        queued = []
        for c in clients[1:]:
            queued.append(c.submit("JULIET:", 4, 0.0, 1.0, 0, api_name="/generate"))
            time.sleep(0.5)  # in this order in the queue
        assert not long.done(), "the long generation ended before the others queued: make it longer"
        _text, stats = long.result(timeout=300)
        later = [job.result(timeout=300)[1] for job in queued]
        assert (stats["new_tokens"], stats["waiting"]) == (200, 2)
        assert [s["waiting"] for s in later] == [1, 0]
        assert all(s["model"] == BUNDLED for s in later) and stats["model"] == SMALL
    finally:
        for c in clients:
            c.close()


def _settled_rss(proc, limit: float = 20.0) -> int:
    """The server's RSS once it stops falling: what the last requests left in flight (their buffers, the worker
    threads Gradio ends after 10 s idle) goes within seconds of the pool's floor. Read every 0.5 s until four
    readings in a row lie within 2 MiB, or for `limit` seconds (then the lowest)."""
    readings, t0 = [], time.monotonic()
    while time.monotonic() - t0 < limit:
        readings.append(proc.memory_info().rss)
        if len(readings) >= 4 and max(readings[-4:]) - min(readings[-4:]) <= 2 * 2**20:
            return readings[-1]
        time.sleep(0.5)
    return min(readings)


def test_clients_that_close_release_their_models_and_the_ram(server):
    """Four clients load four models (one of them gpt2-small in bfloat16, 176 MiB) and generate, then close:
    the pool is back to its floor (no model, no visitor), and the server's RSS does not grow from cycle to cycle.
    A leak grows every cycle; what the allocator keeps once does not (CI saw +25 MiB after one cycle, 5.1%, while
    this machine saw +3 to +5 MiB; on 2026-11-28 a clean clone's CI saw +2.9 MiB then +18.6 in the next): so the
    smaller of the two measured cycles' growths is what is bounded, with the whole growth within 7%; RSS that
    falls (CI saw 507 -> 465 MiB on 2026-11-28) is memory given back, not a leak."""
    proc = psutil.Process(server.proc.pid)
    wanted = [(BUNDLED, "float32"), (BUNDLED, "bfloat16"), (BUNDLED, "float16"), (SMALL, "bfloat16")]

    def cycle() -> tuple[dict, float]:
        clients = [_client(server) for _ in wanted]
        for c, (model, dtype) in zip(clients, wanted):
            c.predict(model, "cpu", dtype, api_name="/load_model")
            c.predict("ROMEO:", 8, 0.0, 1.0, 0, api_name="/generate")
        holding = _pool(server)
        for c in clients:
            c.close()  # its heartbeat ends: the server runs the unload event for its session
        t0 = time.monotonic()
        # visitors first, then models: a model nobody holds goes when the lane frees
        while (_pool(server)["visitors"] or _pool(server)["models"]) and time.monotonic() - t0 < 45:
            time.sleep(0.2)
        return holding, time.monotonic() - t0

    cycle()  # first-use costs (kernels, caches, worker threads) are not holds
    before = _settled_rss(proc)
    holding, took = cycle()
    middle = _settled_rss(proc)
    cycle()
    after, rss = _pool(server), _settled_rss(proc)
    print(f"held {holding['models']} models ({holding['bytes'] / 2**20:.0f} MiB) for {holding['visitors']} visitors; "
          f"all released {took:.1f} s after the clients closed; RSS {before / 2**20:.0f} -> {middle / 2**20:.0f} -> "
          f"{rss / 2**20:.0f} MiB")
    assert holding["models"] >= 4 and holding["visitors"] >= 4
    assert (after["models"], after["visitors"], after["bytes"]) == (0, 0, 0)
    mib = [round(x / 2**20, 1) for x in (before, middle, rss)]
    # 12 MiB here: a leak of the bundled model's weights (20 MiB) a cycle grows both cycles by it and fails this
    assert min(middle - before, rss - middle) <= 0.025 * before, mib
    # growth only: the allocator giving pages back after `before` was read (CI saw 507 -> 465 -> 467 MiB) is no leak
    assert rss - before <= 0.07 * before, mib
