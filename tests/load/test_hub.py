"""A Hub model through the real `huggingface_hub` client and a real socket, offline: a small Hub in the
tests (tests/hub_server.py) serves copies of the bundled model.

huggingface_hub reads HF_ENDPOINT and HF_HUB_OFFLINE when it is imported (its URL template is built from
the endpoint then), so the loads run in a child process started with them set, as a server would be;
HF_HOME and HF_HUB_CACHE point into a temporary folder, never the machine's cache.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from playground.core.errors import UserError
from playground.core.paths import BUNDLED_DIR, BUNDLED_NAME
from playground.load import hub
from tests.conftest import ROOT
from tests.hub_server import HubServer, Repo

TINY = "playground-test/tiny-shakespeare"
TRUNCATED = "playground-test/truncated"
CUT = "playground-test/cut-off"

# The child: each step loads or generates through the pool, as the page does (one session); one JSON line out.
CHILD = r"""
import json, sys
from playground.core.errors import UserError
from playground.core.inputs import GenerationParams
from playground.load import loader
from playground.run.pool import POOL

out = []
for kind, arg in json.loads(sys.argv[1]):
    if kind == "load":
        seen = []
        try:
            report = POOL.load(*loader.parse(arg, "cpu", "float32"), progress=lambda f, d: seen.append([f, str(d)]))
            out.append({"report": report.to_dict(), "progress": seen})
        except UserError as e:
            out.append({"error": str(e), "status": POOL.status()["model"] if POOL.status()["loaded"] else None})
    else:
        *_, (text, stats) = POOL.generate("ROMEO:", GenerationParams(8, 0.0, 1.0, 0))
        out.append({"text": text, "new_tokens": stats.new_tokens, "model": stats.model})
print(json.dumps(out))
"""


def child(steps: list, cache: Path, endpoint: str, **env: str) -> list[dict]:
    e = {k: v for k, v in os.environ.items() if not k.startswith(("HF_", "HUGGINGFACE_", "TRANSFORMERS_OFFLINE"))}
    e.update(HF_ENDPOINT=endpoint, HF_HOME=str(cache), HF_HUB_CACHE=str(cache / "hub"), HF_HUB_DISABLE_TELEMETRY="1",
             TRANSFORMERS_VERBOSITY="error", **env)
    proc = subprocess.run([sys.executable, "-c", CHILD, json.dumps(steps)], cwd=ROOT, env=e, capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    """The Hub in the tests: a copy of the bundled model, the same copy with its weights cut short (the
    headers agree: a broken upload), and one whose connection drops halfway (the headers promise more)."""
    root = tmp_path_factory.mktemp("hub-repos")
    folder = root / "tiny"
    shutil.copytree(BUNDLED_DIR, folder)
    size = (folder / "model.safetensors").stat().st_size
    repos = {TINY: Repo(folder), TRUNCATED: Repo(folder, truncate={"model.safetensors": size // 2}),
             CUT: Repo(folder, cut={"model.safetensors": size // 3})}
    # throttled to ~25 MB/s, so a download of the 21 MB weights takes long enough to report progress
    with HubServer(repos, bytes_per_second=25e6) as server:
        yield server


@pytest.fixture(scope="module")
def first_and_second(served, tmp_path_factory):
    """One process: a first load (downloads), a generation, a second load of the same id (the cache)."""
    cache = tmp_path_factory.mktemp("hf-home")
    start = len(served.requests)
    first, gen, second = child([["load", TINY], ["generate", ""], ["load", TINY]], cache, served.url)
    return dict(cache=cache, first=first, gen=gen, second=second, requests=served.requests[start:])


@pytest.mark.slow
def test_a_first_load_downloads_in_its_own_phase_with_bytes_and_progress(first_and_second):
    r = first_and_second["first"]["report"]
    # the memory check first, on config.json alone: a model that will not fit is refused before its weights come
    assert [p["name"] for p in r["phases"]] == ["import", "estimate", "download", "tokenizer", "load", "migrate", "eval"]
    weights = (BUNDLED_DIR / "model.safetensors").stat().st_size
    served_bytes = sum(p.stat().st_size for p in BUNDLED_DIR.iterdir() if p.suffix in (".json", ".safetensors"))
    # every file a causal LM needs came down, and only those (the README.md stayed on the Hub)
    assert r["download_bytes"] == served_bytes and r["download_from_cache"] is False
    assert r["download_seconds"] == r["phases"][2]["seconds"] > 0.3  # 21 MB at ~25 MB/s
    assert "downloaded" in r["phases"][2]["note"] and "from the Hub" in r["phases"][2]["note"]
    assert r["disk_bytes"] == weights and r["model"] == TINY and r["source"] == "hub"
    # the load phase read the cached folder: it is disk -> RAM only, far shorter than the download
    assert r["load_seconds"] < r["download_seconds"]
    # live byte progress: several updates, counting up to every byte
    moved = [d for _, d in first_and_second["first"]["progress"] if d.startswith("download:") and " of " in d]
    assert len(moved) >= 3, moved
    assert moved[-1].endswith(f"{_fmt(served_bytes)} of {_fmt(served_bytes)}")
    fracs = [f for f, _ in first_and_second["first"]["progress"]]
    assert fracs == sorted(fracs), first_and_second["first"]["progress"]
    assert first_and_second["gen"]["new_tokens"] == 8 and first_and_second["gen"]["model"] == TINY
    # the README.md was never asked for: only the files in hub.FILES
    assert "README.md" not in first_and_second["requests"] and "README.md" not in str(first_and_second["requests"])


@pytest.mark.slow
def test_a_second_load_downloads_nothing(first_and_second, served):
    r = first_and_second["second"]["report"]
    assert r["phases"][2]["name"] == "download"
    assert r["download_bytes"] == 0 and r["download_from_cache"] is True
    assert "from the cache" in r["phases"][2]["note"]
    got = [p.rsplit("/", 1)[-1] for m, p in first_and_second["requests"] if m == "GET" and "/resolve/" in p]
    assert sorted(got) == sorted(p.name for p in BUNDLED_DIR.iterdir() if p.suffix in (".json", ".safetensors"))


@pytest.mark.slow
def test_a_restart_with_hf_hub_offline_loads_from_the_cache(first_and_second, served):
    start = len(served.requests)
    out = child([["load", TINY], ["generate", ""]], first_and_second["cache"], served.url, HF_HUB_OFFLINE="1")
    r = out[0]["report"]
    assert r["download_from_cache"] is True and r["download_bytes"] == 0
    assert out[1]["new_tokens"] == 8 and out[1]["text"] == first_and_second["gen"]["text"]
    assert served.requests[start:] == []  # offline means offline: not one request
    # and a model that is not in the cache is refused at once, naming the reason and the bundled model
    out = child([["load", CUT]], first_and_second["cache"], served.url, HF_HUB_OFFLINE="1")
    assert "HF_HUB_OFFLINE is set" in out[0]["error"] and BUNDLED_NAME in out[0]["error"]


@pytest.mark.slow
def test_a_truncated_or_cut_off_download_is_refused_and_the_loaded_model_keeps_serving(served, tmp_path):
    steps = [["load", BUNDLED_NAME], ["load", TRUNCATED], ["generate", ""], ["load", CUT], ["generate", ""]]
    _, truncated, gen1, cut, gen2 = child(steps, tmp_path / "hf", served.url)
    assert "truncated" in truncated["error"] and "model.safetensors" in truncated["error"]
    assert cut["error"].startswith(f"The download of '{CUT}' failed")
    for refused, gen in ((truncated, gen1), (cut, gen2)):
        assert refused["status"] == BUNDLED_NAME  # still loaded
        assert gen["model"] == BUNDLED_NAME and gen["new_tokens"] == 8  # and still generating
    assert str(tmp_path) not in truncated["error"] + cut["error"]  # no server path in the message


@pytest.mark.slow
def test_a_model_that_will_not_fit_is_refused_before_its_weights_come_down(served, tmp_path):
    start = len(served.requests)
    out = child([["load", TINY]], tmp_path / "hf", served.url, PLAYGROUND_MEMORY_BUDGET="4MB")
    assert out[0]["error"].startswith(f"Not loading {TINY}"), out
    fetched = [p.rsplit("/", 1)[-1] for m, p in served.requests[start:] if m == "GET" and "/resolve/" in p]
    assert fetched == ["config.json"]  # the memory check's one file; no weights


def _fmt(n: int) -> str:
    from playground.core.units import fmt_bytes

    return fmt_bytes(n)


# ---------------------------------------------------------------- in this process: the endpoint, no download

def test_reachability_uses_the_endpoints_scheme_host_and_port(monkeypatch):
    from huggingface_hub import constants

    with socket.socket() as s:  # a port that listens, and is not 443
        s.bind(("127.0.0.1", 0))
        s.listen()
        port = s.getsockname()[1]
        monkeypatch.setattr(constants, "ENDPOINT", f"http://127.0.0.1:{port}")
        assert hub.endpoint() == ("http", "127.0.0.1", port)
        assert hub.reachable() == (True, "")
    ok, why = hub.reachable()  # closed now
    assert not ok and f"http://127.0.0.1:{port}" in why.text("en") and "连不上" in why.text("zh")
    monkeypatch.setattr(constants, "ENDPOINT", "https://hub.example")
    assert hub.endpoint() == ("https", "hub.example", 443)
    monkeypatch.setattr(constants, "ENDPOINT", "http://mirror.example")
    assert hub.endpoint() == ("http", "mirror.example", 80)


def test_offline_is_huggingface_hubs_own_switch(monkeypatch):
    from huggingface_hub import constants

    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", True)
    ok, why = hub.reachable()
    assert hub.offline() and not ok and why.text("en") == "HF_HUB_OFFLINE is set"
    with pytest.raises(UserError, match="HF_HUB_OFFLINE is set"):
        hub.fetch("playground-test/never-cached")
