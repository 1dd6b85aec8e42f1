"""Faults an operator of a public Space meets, each injected into a real server process (`python app.py`).

Every case checks what a visitor and an operator see, and that the shared model survives: a generation
right after each failed load names the model that was loaded before it.

- a malformed PLAYGROUND_* variable, or a port in use: one line at start-up naming the variable, exit 2;
- a corrupt synthetic checkpoint (truncated weights) while another model is loaded: rebuilt, and the
  load report's "build" phase says why;
- a damaged checkpoint that cannot be rebuilt (a file-size limit stops the write): refused with a message
  naming the folder by role, the bytes and the variable; nothing half-written; memory back within 50 MB;
- a full disk in the middle of a build (a small tmpfs that another writer fills), a disk too small from
  the start, a read-only folder (tmpfs mounts: where `mount` is not permitted these skip, saying so);
- a load that fails inside from_pretrained, after the unload: the model before it is loaded back;
- SIGTERM in the middle of a generation, three times (and SIGINT once): exit 0 within 5 s, temporary
  folders gone, the visitor's run ended with its last update;
- SIGTERM in the middle of a build: exit 0 within 5 s, no temporary folder, no half checkpoint;
- SIGKILL in the middle of a build, then a restart: nothing left of the dead build, and the model loads.

The synthetic models live in a temporary PLAYGROUND_SYNTHETIC_DIR (never the shared cache, which is at
most read, once, to copy a complete GPT-2 small from). Cost on the 2-core machine: about two minutes.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import psutil
import pytest
from gradio_client import Client

from playground.load import checkpoint
from tests.conftest import ROOT, start_server, stop_server

pytestmark = pytest.mark.slow

MB = 2**20
BUNDLED = "shakespeare-gpt2"
SMALL = "synthetic/gpt2-small"
SHARED = Path.home() / ".cache" / "device-playground" / "synthetic" / "gpt2-small"


# ---------------------------------------------------------------- helpers

def _load(client, model, device="cpu", dtype="float32"):
    return client.predict(model, device, dtype, api_name="/load_model")


def _generate(client, n=4):
    _text, stats = client.predict("ROMEO:", n, 0.0, 1.0, 0, api_name="/generate")
    return stats


def _error(fn, *args) -> str:
    with pytest.raises(Exception) as e:
        fn(*args)
    return str(e.value)


def _complete(folder: Path) -> bool:
    try:
        checkpoint.check_folder(folder)
    except Exception:
        return False
    return (folder / "tokenizer.json").is_file() and (folder / "tokenizer_config.json").is_file()


def _listing(folder: Path) -> dict:
    return {p.name: p.stat().st_size for p in folder.iterdir()} if folder.exists() else {}


def _rss(pid: int) -> int:
    return psutil.Process(pid).memory_info().rss


@pytest.fixture(scope="module")
def small_ckpt(tmp_path_factory):
    """A complete synthetic/gpt2-small to copy from: the shared cache's if it is complete (only read),
    else built here once in a process of its own (~15 s)."""
    root = tmp_path_factory.mktemp("small-src")
    if _complete(SHARED):
        shutil.copytree(SHARED, root / "gpt2-small")
    else:
        code = f"from playground.load import synthetic; synthetic.ensure({SMALL!r})"
        subprocess.run([sys.executable, "-c", code], cwd=ROOT, check=True, timeout=300,
                       env=dict(os.environ, PLAYGROUND_SYNTHETIC_DIR=str(root)))
    assert _complete(root / "gpt2-small")
    yield root / "gpt2-small"
    shutil.rmtree(root, ignore_errors=True)  # 350 MB: pytest keeps the temporary folders of its last three runs


def _tiny_mismatched(folder: Path) -> Path:
    """A checkpoint that passes every check made before the unload (config parses, weights complete,
    tokenizer present) and fails in from_pretrained: the config says width 64, the weights are 32 wide."""
    from transformers import GPT2Config, GPT2LMHeadModel

    GPT2LMHeadModel(GPT2Config(n_embd=32, n_layer=1, n_head=2, vocab_size=8192, n_positions=64, bos_token_id=0,
                               eos_token_id=0)).save_pretrained(folder)
    for f in ("tokenizer.json", "tokenizer_config.json"):
        shutil.copy(ROOT / "playground" / "assets" / BUNDLED / f, folder / f)
    cfg = json.loads((folder / "config.json").read_text())
    (folder / "config.json").write_text(json.dumps(cfg | {"n_embd": 64}))
    return folder


class Site:
    """One server with its own synthetic folder (a GPT-2 small copied in), model folder and TMPDIR."""

    def __init__(self, tmp: Path, small: Path | None, linked: bool = False) -> None:
        self.synth, self.models, self.tmpdir = tmp / "synthetic", tmp / "models", tmp / "tmp"
        for d in (self.synth, self.models, self.tmpdir):
            d.mkdir()
        if small is not None:  # linked: hard links to this module's private copy, for servers that only read it
            shutil.copytree(small, self.synth / "gpt2-small", copy_function=os.link if linked else shutil.copy2)
        self.env = {"PLAYGROUND_SYNTHETIC_DIR": str(self.synth), "PLAYGROUND_MODEL_DIRS": str(self.models),
                    "TMPDIR": str(self.tmpdir)}
        self.tmp = tmp
        SITES.append(self)

    def start(self, name: str = "log"):
        (self.tmp / name).mkdir(exist_ok=True)
        self.server = start_server(self.tmp / name, self.env)
        self.client = Client(self.server.url, verbose=False)
        return self.server

    @property
    def pid(self) -> int:
        return self.server.proc.pid

    def leftovers(self) -> list[Path]:
        return sorted(self.synth.glob(".tmp-*"))

    def free_disk(self) -> None:
        """Remove the checkpoints (350 MB each) once the server is gone; its log stays."""
        if getattr(self, "server", None) is None or self.server.proc.poll() is not None:
            shutil.rmtree(self.synth, ignore_errors=True)


SITES: list[Site] = []


@pytest.fixture(autouse=True)
def free_disk():
    """pytest keeps the temporary folders of its last three runs: without this, 1.5 GB of checkpoints each."""
    yield
    for s in SITES:
        s.free_disk()


@pytest.fixture(scope="module")
def site(tmp_path_factory, small_ckpt):
    s = Site(tmp_path_factory.mktemp("faults"), small_ckpt)
    _tiny_mismatched(s.models / "mismatched")
    s.start()
    yield s
    stop_server(s.server)
    s.free_disk()


def _bundled_still_serves(site: Site, dtype: str = "float32") -> None:
    stats = _generate(site.client)
    assert (stats["model"], stats["device"], stats["dtype"]) == (BUNDLED, "cpu", dtype), stats
    assert stats["new_tokens"] == 4


# ---------------------------------------------------------------- start-up

MALFORMED = [("PLAYGROUND_MEMORY_BUDGET", "lots", "PLAYGROUND_MEMORY_BUDGET=2GB"),
             ("PLAYGROUND_PORT", "abc", "PLAYGROUND_PORT=7860"),
             ("PLAYGROUND_PORT", "99999", "PLAYGROUND_PORT=7860"),
             ("PLAYGROUND_SYNTHETIC_MAX", "gpt2-huge", "PLAYGROUND_SYNTHETIC_MAX=gpt2-medium")]


def _refused(env_extra: dict) -> tuple[int | None, list[str]]:
    env = dict(os.environ, GRADIO_ANALYTICS_ENABLED="False", **env_extra)
    proc = subprocess.Popen([sys.executable, "app.py"], cwd=ROOT, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)
    try:
        out, _ = proc.communicate(timeout=40)
    except subprocess.TimeoutExpired:  # it started and served instead of refusing
        proc.kill()
        out, _ = proc.communicate()
        return None, out.splitlines()
    return proc.returncode, [ln for ln in out.splitlines() if ln.strip()]


@pytest.mark.parametrize("name, value, example", MALFORMED, ids=[f"{n}={v}" for n, v, _ in MALFORMED])
def test_a_malformed_variable_stops_the_server_in_one_line(name, value, example):
    rc, lines = _refused({name: value})
    assert rc == 2, (rc, lines[-5:])
    assert len(lines) == 1, lines
    assert lines[0].startswith(f"app.py: cannot start: {name}={value!r}") and example in lines[0]


def test_a_port_in_use_names_the_variable_that_set_it():
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        rc, lines = _refused({"PLAYGROUND_PORT": str(port), "PLAYGROUND_HOST": "127.0.0.1"})
    assert rc == 2 and len(lines) == 1, (rc, lines[-5:])
    assert f"PLAYGROUND_PORT='{port}'" in lines[0] and "already in use" in lines[0]
    assert "GRADIO_SERVER_PORT" not in lines[0]


# ---------------------------------------------------------------- a corrupt checkpoint, another model loaded

def test_truncated_weights_are_rebuilt_and_the_report_says_why(site):
    _load(site.client, BUNDLED)
    weights = site.synth / "gpt2-small" / "model.safetensors"
    size = weights.stat().st_size
    os.truncate(weights, size // 2)
    report = _load(site.client, SMALL)
    build = [p for p in report["phases"] if p["name"] == "build"]
    assert build, [p["name"] for p in report["phases"]]
    print(f"build phase: {build[0]['seconds']:.2f} s: {build[0]['note']}")
    assert "its weights are damaged: 'gpt2-small/model.safetensors' is truncated" in build[0]["note"]
    assert build[0]["seconds"] > 0.5 and weights.stat().st_size == size
    assert _generate(site.client)["model"] == SMALL
    assert site.leftovers() == []


def test_a_damaged_checkpoint_that_cannot_be_rebuilt_is_refused_and_the_loaded_model_keeps_serving(site):
    """A broken config.json, and a file-size limit (ulimit -f, 50 MB) on the server: the rebuild fails
    part-way through writing 350 MB of weights."""
    _load(site.client, BUNDLED)
    _bundled_still_serves(site)
    folder = site.synth / "gpt2-small"
    (folder / "config.json").write_text("{ this is not JSON")
    before = _listing(folder)
    proc = psutil.Process(site.pid)
    rss_before = _rss(site.pid)
    soft, hard = proc.rlimit(psutil.RLIMIT_FSIZE)
    proc.rlimit(psutil.RLIMIT_FSIZE, (50 * MB, hard))
    try:
        msg = _error(_load, site.client, SMALL)
    finally:
        proc.rlimit(psutil.RLIMIT_FSIZE, (soft, hard))
    time.sleep(0.5)
    rss_after = _rss(site.pid)
    print(f"server RSS {rss_before / MB:.0f} MB before the failed rebuild, {rss_after / MB:.0f} MB after: {msg}")
    assert "its config.json is damaged" in msg and "file-size limit" in msg, msg
    assert "synthetic models folder (PLAYGROUND_SYNTHETIC_DIR)" in msg and "Nothing was unloaded" in msg, msg
    assert str(site.synth) not in msg and str(Path.home()) not in msg
    _bundled_still_serves(site)
    assert site.leftovers() == [] and _listing(folder) == before  # nothing half-written, nothing replaced
    assert abs(rss_after - rss_before) < 50 * MB, (rss_before / MB, rss_after / MB)


def test_a_failure_inside_from_pretrained_loads_the_model_before_it_back(site):
    _load(site.client, BUNDLED, dtype="bfloat16")
    msg = _error(_load, site.client, str(site.models / "mismatched"))
    assert "RuntimeError" in msg and f"{BUNDLED} (cpu, bfloat16), was loaded back" in msg, msg
    assert str(site.models) not in msg
    _bundled_still_serves(site, "bfloat16")


# ---------------------------------------------------------------- disks: full, too small, read-only (tmpfs)

class Mount:
    """A tmpfs mounted over a folder (hiding what is there) for the length of a `with`."""

    def __init__(self, where: Path, size_mb: int, read_only: bool = False) -> None:
        self.where, self.opts = where, f"size={size_mb}m" + (",ro" if read_only else "")

    def __enter__(self) -> "Mount":
        r = subprocess.run(["mount", "-t", "tmpfs", "-o", self.opts, "tmpfs", str(self.where)],
                           capture_output=True, text=True)
        if r.returncode != 0:
            pytest.skip(f"cannot mount a tmpfs here ({r.stderr.strip() or r.returncode}): the file-size-limit "
                        "case above covers a failed write without one")
        return self

    def __exit__(self, *exc) -> None:
        subprocess.run(["umount", "-l", str(self.where)], check=True)


def test_a_disk_that_fills_up_during_a_build(site):
    """The synthetic folder on a tmpfs with room for GPT-2 small, which another writer fills once the
    build has started allocating: the write fails with ENOSPC part-way."""
    _load(site.client, BUNDLED)
    need = 360 * MB
    with Mount(site.synth, (need + 64 * MB) // MB):
        rss_before = _rss(site.pid)
        filled = threading.Event()

        def fill() -> None:  # the other writer: waits until the build allocates (after any disk check)
            deadline = time.monotonic() + 120
            while time.monotonic() < deadline and _rss(site.pid) < rss_before + 20 * MB:
                time.sleep(0.01)
            chunk = b"\0" * (8 * MB)
            try:
                with open(site.synth / "filler", "wb") as fh:
                    while True:  # until the disk is full
                        fh.write(chunk)
                        fh.flush()
            except OSError:
                filled.set()

        t = threading.Thread(target=fill)
        t.start()
        msg = _error(_load, site.client, SMALL)
        t.join(30)
        time.sleep(0.5)
        rss_after = _rss(site.pid)
        left = _listing(site.synth)
    print(f"server RSS {rss_before / MB:.0f} MB before the build, {rss_after / MB:.0f} MB after it failed: {msg}")
    assert filled.is_set()
    assert "Not enough disk space to build synthetic/gpt2-small in the synthetic models folder" in msg, msg
    assert "is free" in msg and "PLAYGROUND_SYNTHETIC_DIR" in msg and str(site.synth) not in msg
    assert set(left) <= {"filler", ".gpt2-small.lock"}, left  # no temporary folder, no half checkpoint
    assert abs(rss_after - rss_before) < 50 * MB, (rss_before / MB, rss_after / MB)
    _bundled_still_serves(site)


def test_a_disk_too_small_is_refused_before_building_and_a_read_only_folder_is_named(site):
    _load(site.client, BUNDLED)
    with Mount(site.synth, 64):
        rss_before = _rss(site.pid)
        t0 = time.perf_counter()
        msg = _error(_load, site.client, SMALL)
        seconds = time.perf_counter() - t0
        rss_after = _rss(site.pid)
        left = _listing(site.synth)
    print(f"refused in {seconds:.2f} s: {msg}")
    assert re.search(r"Not enough disk space to build synthetic/gpt2-small in the synthetic models folder "
                     r"\(PLAYGROUND_SYNTHETIC_DIR\): it needs 35\d\.\d MiB, 6\d\.\d MiB is free", msg), msg
    assert seconds < 10 and rss_after - rss_before < 50 * MB and set(left) <= {".gpt2-small.lock"}, (seconds, left)
    _bundled_still_serves(site)
    with Mount(site.synth, 1, read_only=True):
        msg = _error(_load, site.client, SMALL)
    assert "synthetic models folder (PLAYGROUND_SYNTHETIC_DIR) is read-only here" in msg, msg
    assert "writable" in msg and str(site.synth) not in msg and "Errno" not in msg
    _bundled_still_serves(site)


# ---------------------------------------------------------------- signals

def _signalled(server, sig: int) -> tuple[int, float, str]:
    """Send `sig` and wait for the exit: (exit code, seconds from the signal to the exit, the server's log)."""
    t0 = time.monotonic()
    server.proc.send_signal(sig)
    rc = server.proc.wait(timeout=30)
    return rc, time.monotonic() - t0, server.log_text()


def _kill_if_running(server) -> None:
    if server.proc.poll() is None:
        server.proc.kill()
        server.proc.wait()


def _exited_cleanly(rc: int, seconds: float, log: str) -> None:
    assert rc == 0 and seconds < 5, (rc, seconds, log[-2000:])
    assert "terminate called" not in log and "Traceback" not in log, log[-2000:]


@pytest.mark.parametrize("sig, run", [("SIGTERM", 1), ("SIGTERM", 2), ("SIGTERM", 3), ("SIGINT", 1)])
def test_sigterm_mid_generation_exits_0_within_5_s(tmp_path, small_ckpt, sig, run):
    s = Site(tmp_path, small_ckpt, linked=True)
    server = s.start()
    try:
        _load(s.client, SMALL)  # ~45 tokens/s here: 1,000 tokens would take 20 s
        exports = list(s.tmpdir.glob("playground-exports-*"))
        assert len(exports) == 1
        job = s.client.submit("ROMEO:", 1000, 1.0, 1.0, 0, api_name="/generate")
        deadline = time.monotonic() + 60
        while not job.outputs() and time.monotonic() < deadline:
            time.sleep(0.02)
        assert job.outputs(), "no update came"
        rc, seconds, log = _signalled(server, getattr(signal, sig))
    finally:
        _kill_if_running(server)
    print(f"{sig} run {run}: exit {rc} {seconds:.2f} s after the signal")
    _exited_cleanly(rc, seconds, log)
    assert not exports[0].exists() and list(s.tmpdir.glob("playground-exports-*")) == []
    assert s.leftovers() == []
    last = job.outputs()[-1][1]  # the visitor's run ended with its last update, stopped, not cut off
    assert last["finish_reason"] == "stopped" and last["new_tokens"] < 1000, last


def test_sigterm_mid_build_exits_0_and_leaves_nothing_half_visible(tmp_path):
    s = Site(tmp_path, None)
    server = s.start()
    try:
        job = s.client.submit(SMALL, "cpu", "float32", api_name="/load_model")
        rss = _rss(s.pid)
        deadline = time.monotonic() + 120
        while _rss(s.pid) < rss + 100 * MB and time.monotonic() < deadline:  # the build is allocating
            time.sleep(0.02)
        rc, seconds, log = _signalled(server, signal.SIGTERM)
    finally:
        _kill_if_running(server)
    print(f"SIGTERM mid-build: exit {rc} {seconds:.2f} s after the signal")
    _exited_cleanly(rc, seconds, log)
    assert s.leftovers() == [] and _listing(s.synth) == {".gpt2-small.lock": 0}  # no half checkpoint
    assert list(s.tmpdir.glob("playground-exports-*")) == []
    assert job.done()


def test_sigkill_mid_build_then_a_restart_leaves_nothing_and_the_model_loads(tmp_path):
    s = Site(tmp_path, None)
    first = s.start("first")
    try:
        s.client.submit(SMALL, "cpu", "float32", api_name="/load_model")
        deadline = time.monotonic() + 180
        while not s.leftovers() and time.monotonic() < deadline:
            time.sleep(0.02)
        assert s.leftovers(), "the build never started writing"
    finally:
        _kill_if_running(first)  # SIGKILL: no handler runs, nothing is cleaned
    dead_build, dead_exports = s.leftovers(), list(s.tmpdir.glob("playground-exports-*"))
    assert dead_build and dead_exports and not (s.synth / "gpt2-small").exists()
    second = s.start("second")
    try:
        assert s.leftovers() == [] and not any(p.exists() for p in dead_exports)  # swept at start-up
        report = _load(s.client, SMALL)
        assert report["model"] == SMALL and "build" in [p["name"] for p in report["phases"]]
        assert s.leftovers() == []
        assert _generate(s.client)["model"] == SMALL
    finally:
        stop_server(second)


def test_known_limit_truncating_a_loaded_float32_checkpoint_kills_the_server_with_sigbus_and_a_log_line(
        tmp_path, small_ckpt):
    """docs/reliability.md's known limit, as it is: a float32 model on the CPU is the checkpoint's memory-mapped
    pages, so truncating that file under it is a bus error at the next forward pass, which no Python code
    can catch. The server dies; the log says why (faulthandler)."""
    s = Site(tmp_path, small_ckpt)  # a copy of its own: this test truncates it
    server = s.start()
    try:
        report = _load(s.client, SMALL)
        assert report["file_backed_bytes"] > 300 * MB  # the weights are the file's pages
        weights = s.synth / "gpt2-small" / "model.safetensors"
        os.truncate(weights, weights.stat().st_size // 2)
        with pytest.raises(Exception):
            _generate(s.client)
        rc = server.proc.wait(timeout=30)
    finally:
        _kill_if_running(server)
    assert rc == -signal.SIGBUS
    assert "Fatal Python error: Bus error" in server.log_text()
