"""End to end: the real server (`python app.py`), driven through gradio_client.

Each bad input of the issue's section 8 gets a clear message, and the request
after it succeeds: the server keeps serving.
"""

import contextlib
import io
import time
from pathlib import Path

import psutil
import pytest
from gradio_client import Client

from playground.hw import busy, cpu_threads
from tests.conftest import fresh_torch_threads, start_server, stop_server

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.slow

LOAD_KEYS = {"model", "device", "dtype", "param_count", "weights_bytes", "load_seconds", "migrate_seconds", "ram", "vram"}


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    s = start_server(tmp_path_factory.mktemp("e2e"))
    yield s
    stop_server(s)
    log = s.log_text()
    assert "Traceback" not in log, log[-3000:]


@pytest.fixture(scope="module")
def client(server):
    return Client(server.url, verbose=False)


def _error(fn, *args, **kw) -> str:
    with pytest.raises(Exception) as e:
        fn(*args, **kw)
    return str(e.value)


def _load(client, model="shakespeare-gpt2", device="cpu", dtype="float32"):
    return client.predict(model, device, dtype, api_name="/load_model")


def _generate(client, prompt="ROMEO:", n=16, temperature=0.0, top_p=1.0, seed=0):
    return client.predict(prompt, n, temperature, top_p, seed, api_name="/generate")


def test_api_lists_both_endpoints(client):
    names = client.view_api(print_info=False, return_format="dict")["named_endpoints"]
    assert "/load_model" in names and "/generate" in names


def test_generate_before_any_load_says_so_then_load_works(client):
    msg = _error(_generate, client)
    assert "No model is loaded" in msg
    report = _load(client)
    assert LOAD_KEYS <= set(report)


def test_load_report_contract(client):
    r = _load(client, dtype="bfloat16")
    assert LOAD_KEYS <= set(r)
    assert (r["model"], r["device"], r["dtype"]) == ("shakespeare-gpt2", "cpu", "bfloat16")
    assert r["weights_bytes"] == 2 * r["param_count"]
    assert r["load_seconds"] > 0 and r["migrate_seconds"] >= 0
    assert r["ram"]["rss_after"] > 0 and "rss_before" in r["ram"]
    assert r["vram"]["gpus"] or r["vram"]["reason"]


def test_generate_streams_text_and_stats(client):
    _load(client)
    job = client.submit("ROMEO:", 120, 0.0, 1.0, 0, api_name="/generate")
    updates = []
    for update in job:
        updates.append(update)
    text, stats = job.outputs()[-1]
    assert len(job.outputs()) >= 2  # streamed, not one final blob
    assert stats["new_tokens"] > 0 and stats["ttft_seconds"] > 0 and stats["tokens_per_second"] > 0
    assert {"ttft_seconds", "new_tokens", "tokens_per_second"} <= set(stats)
    assert text.strip()
    # the server listens on 127.0.0.1 (start_server): its torch threads are the ones chosen for that address
    want = cpu_threads.choose(0, "127.0.0.1", busy.cores(), fresh_torch_threads())
    assert (stats["threads"], stats["cores"]) == (want.threads, want.cores)


def test_the_server_says_why_it_runs_on_fewer_threads(server):
    want = cpu_threads.choose(0, "127.0.0.1", busy.cores(), fresh_torch_threads())
    said = "one left to the browser on this machine" in server.log_text()
    assert said == (want.why == "local")


def test_an_idle_server_uses_under_5_percent_of_a_core(server, client):
    """Nothing to do, nothing burnt: Gradio's queue polls for events every 1 ms unless told otherwise
    (playground.web.ui.idle_polls), ~10 % of a core here with no visitor. CPU time, not wall time: another
    process on the machine does not add to it. The client stays connected (its heartbeat), as a visitor's tab."""
    _load(client)
    _generate(client, n=4)
    time.sleep(1.0)  # the generation's last update sent, its thread gone
    proc = psutil.Process(server.proc.pid)
    before, t0 = proc.cpu_times(), time.perf_counter()
    time.sleep(5.0)
    after, wall = proc.cpu_times(), time.perf_counter() - t0
    used = (after.user - before.user) + (after.system - before.system)
    assert used / wall < 0.05, f"idle for {wall:.1f} s, the server used {used:.2f} CPU-s ({used / wall:.0%} of a core)"


def test_greedy_is_deterministic_through_the_api(client):
    _load(client)
    a = _generate(client, n=20)
    b = _generate(client, n=20)
    assert a[0] == b[0] and a[1]["new_tokens"] == 20


BAD = [
    ("unknown hub id", lambda c: _load(c, model="playground-test/definitely-not-a-model"), ["shakespeare-gpt2", "not found"]),
    ("hub id with no network", lambda c: _load(c, model="distilgpt2"), ["unreachable", "not found"]),
    ("missing local path", lambda c: _load(c, model="./no/such/folder"), ["outside the folders"]),
    ("folder without model", lambda c: _load(c, model="./playground/assets/corpus"), ["config.json is missing"]),
    ("absent device", lambda c: _load(c, device="cuda:0"), ["not available"]),
    ("unknown device", lambda c: _load(c, device="gpu"), ["not a device name"]),
    ("unknown dtype", lambda c: _load(c, dtype="int3"), ["not a dtype"]),
    ("empty prompt", lambda c: _generate(c, prompt="   "), ["prompt is empty"]),
    ("max_new_tokens 0", lambda c: _generate(c, n=0), ["max_new_tokens"]),
    ("max_new_tokens 2000", lambda c: _generate(c, n=2000), ["max_new_tokens"]),
    ("prompt longer than context", lambda c: _generate(c, prompt="Romeo, " * 400, n=8), ["context"]),
]


@pytest.mark.parametrize("name,call,fragments", BAD, ids=[b[0] for b in BAD])
def test_bad_input_gets_a_message_and_the_next_request_works(client, name, call, fragments):
    _load(client)
    t0 = time.perf_counter()
    msg = _error(call, client)
    assert time.perf_counter() - t0 < 15, "must fail fast"
    assert any(f in msg for f in fragments), msg
    text, stats = _generate(client, n=8)
    assert stats["new_tokens"] == 8


def test_break_it_endpoints(client):
    scen = client.predict(api_name="/break_it_scenarios")
    assert len(scen) >= 12 and {"id", "title_en", "title_zh", "needs_gpu"} <= set(scen[0])
    _load(client)
    r = client.predict("inputs-on-cpu", api_name="/break_it")
    for key in ("scenario", "raised", "error_type", "error_message", "simulated", "explanation_en",
                "explanation_zh", "fix_ok", "measured"):
        assert key in r
    assert r["raised"] and r["fix_ok"] and "same device" in r["error_message"]
    msg = _error(client.predict, "no-such-mistake", api_name="/break_it")
    assert "Unknown mistake" in msg
    text, stats = _generate(client, n=8)
    assert stats["new_tokens"] == 8


def test_diagnose_endpoint(client):
    d = client.predict("RuntimeError: Expected all tensors to be on the same device, but found at least two "
                       "devices, cuda:1 and cpu! (when checking argument for argument index in method "
                       "wrapper_CUDA__index_select)", api_name="/diagnose")
    assert d["matches"] and d["matches"][0] in ("inputs-on-cpu", "model-on-cpu")
    none = client.predict("KeyError: 'foo'", api_name="/diagnose")
    assert none["matches"] == []


def test_estimate_endpoint(client):
    e = client.predict("shakespeare-gpt2", "bfloat16", api_name="/estimate")
    for key in ("weights_bytes", "largest_layer_bytes", "kv_bytes_per_token", "available_bytes", "fits"):
        assert key in e
    assert e["fits"] is True and e["weights_bytes"] > 0
    big = client.predict("synthetic/gpt2-xl", "float32", api_name="/estimate")
    assert big["weights_bytes"] > 10 * e["weights_bytes"]


def test_compare_endpoint(client):
    _load(client, dtype="bfloat16")  # the visitor's model: the matrix runs beside it
    rows = client.predict("shakespeare-gpt2", ["cpu/float32", "cpu/bfloat16"], 4, api_name="/compare")
    assert [r["pair"] for r in rows] == ["cpu/float32", "cpu/bfloat16"]
    assert all(r["status"] == "ok" and r["new_tokens"] == 4 for r in rows)
    for r in rows:  # one warm-up, then at least three timed runs: their median and spread
        assert r["warmup"] >= 1 and r["runs"] >= 3 and len(r["run_decode_tokens_per_s"]) == r["runs"]
        assert r["decode_min_tokens_per_s"] <= r["decode_tokens_per_s"] <= r["decode_max_tokens_per_s"]
        assert r["ttft_min_s"] <= r["ttft_s"] <= r["ttft_max_s"] and r["bound"] in ("memory", "overhead")
    assert all(r["waiting"] == 0 for r in rows)  # nobody else was queued
    text, stats = _generate(client, n=8)  # no load in between: the model stayed, and generates
    assert (stats["model"], stats["dtype"], stats["new_tokens"]) == ("shakespeare-gpt2", "bfloat16", 8)
    msg = _error(client.predict, "shakespeare-gpt2", ["gpu/float32"], 4, api_name="/compare")
    assert "gpu" in msg


def test_generate_says_whether_a_chat_template_was_applied(client):
    _load(client)
    _, stats = _generate(client, n=4)
    # the bundled model's tokenizer has no template: the raw prompt (tests/run covers a chat model)
    assert stats["chat_template_applied"] is False and stats["prompt_tokens"] == 2


def readme_api_example() -> str:
    """The Python block under the README's `<!-- api-example -->` marker, as a visitor copies it."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    after = readme[readme.index("<!-- api-example -->"):]
    return after[after.index("```python\n") + len("```python\n"):after.index("\n```", after.index("```python"))]


def test_the_readmes_api_example_runs_as_written(server):
    code = readme_api_example()
    address = 'Client("http://127.0.0.1:7860/")'
    assert address in code  # the README's own address, replaced by this test server's: nothing else changes
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code.replace(address, f"Client({server.url!r}, verbose=False)"), "README.md", "exec"), {})
    load_s, migrate_s, rate, tokens = (float(x) for x in out.getvalue().split())
    assert load_s > 0 and migrate_s >= 0 and rate > 0 and 1 <= tokens <= 64
