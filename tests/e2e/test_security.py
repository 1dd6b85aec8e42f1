"""The security rules (the issue's section 4) and the memory guard (section 5), enforced and tested.

Read in the source (the package's syntax tree, so a rule cannot hide in a string):
- `trust_remote_code` is never set to anything but False;
- every `torch.load` passes `weights_only=True`, and nothing calls pickle;
- every model `from_pretrained` reached from a visitor passes `use_safetensors=True`;
- every PLAYGROUND_* environment variable the package reads is documented in the README.
Seen on the live server shared with tests/test_hostile.py:
- a config that asks for custom code is refused, one that names it beside a known
  architecture loads the built-in class, and the custom code never runs;
- Gradio serves no file it was not asked to serve (/etc/passwd, the app's own sources,
  the models), and accepts no upload;
- what a visitor's requests make is written only under the per-process temporary folder
  (`playground.web.exports.EXPORTS`), and that folder is gone once the server has stopped;
- the limits are set by environment variables and hold in the API and in the page's
  events (the rows of test_hostile.py; the synthetic size cap here, in-process);
- models larger than the memory budget (PLAYGROUND_MEMORY_BUDGET=2GB): synthetic GPT-2 XL,
  Llama 1B and Llama 7B, and a Hub id whose config.json is in a test cache (Llama 2 7B),
  are refused before anything is allocated or built, the message giving the estimate and
  the memory available, while the server's RSS, sampled at 20 Hz, stays under the budget.
"""

from __future__ import annotations

import ast
import os
import re
import threading
import time
from pathlib import Path

import httpx
import psutil
import pytest

from playground.core.errors import UserError
from playground.load import estimate, synthetic
from playground.tools.raw_session import RawSession
from tests.conftest import ROOT

PACKAGE = ROOT / "playground"
BUDGET = 2 * 10**9  # test_hostile.LIMITS["PLAYGROUND_MEMORY_BUDGET"] = "2GB"
SOURCES = sorted(PACKAGE.rglob("*.py")) + [ROOT / "app.py"]


def _calls(tree: ast.AST):
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            yield node


def _name(func: ast.expr) -> str:
    return func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""


def _receiver(func: ast.expr) -> str:
    return ast.unparse(func.value) if isinstance(func, ast.Attribute) else ""


# ---------------------------------------------------------------- rules read in the source

def test_trust_remote_code_is_never_anything_but_false():
    seen = 0
    for path in SOURCES:
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.keyword) and node.arg == "trust_remote_code":
                seen += 1
                assert isinstance(node.value, ast.Constant) and node.value.value is False, \
                    f"{path.name}:{node.value.lineno}: trust_remote_code={ast.unparse(node.value)}"
            if isinstance(node, ast.Dict):
                for k, v in zip(node.keys, node.values):
                    if isinstance(k, ast.Constant) and k.value == "trust_remote_code":
                        assert isinstance(v, ast.Constant) and v.value is False, f"{path.name}:{k.lineno}"
    assert seen >= 3  # the loader, the estimate and the migration pass it explicitly


def test_torch_load_is_weights_only_and_nothing_unpickles():
    loads = 0
    for path in SOURCES:
        for call in _calls(ast.parse(path.read_text(encoding="utf-8"))):
            name, recv = _name(call.func), _receiver(call.func)
            if recv == "torch" and name == "load":
                loads += 1
                kw = {k.arg: k.value for k in call.keywords}
                assert isinstance(kw.get("weights_only"), ast.Constant) and kw["weights_only"].value is True, \
                    f"{path.name}:{call.lineno}: torch.load without weights_only=True"
            assert not (recv in ("pickle", "cPickle", "dill") and name in ("load", "loads", "Unpickler")), \
                f"{path.name}:{call.lineno}: unpickling"
    assert loads >= 1  # the break-it lab reads back the checkpoint it wrote itself


def _kwargs_dicts(func: ast.AST) -> dict[str, ast.Call]:
    """name -> dict(...) call, for `name = dict(...)` assignments in a function."""
    out = {}
    for node in ast.walk(func):
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call) and _name(node.value.func) == "dict":
            for t in node.targets:
                if isinstance(t, ast.Name):
                    out[t.id] = node.value
    return out


# Loads that read only the playground's own files, or run only from an operator's command line:
# the lab's and the inspector's bundled model (safetensors shipped in the repo), and the
# benchmark's "bare" side, which is plain Transformers on purpose (python -m playground.bench).
OWN_FILES = {("harness.py", "bundled"), ("bench_sides.py", "bare_run")}


@pytest.mark.slow
def test_every_model_load_a_visitor_reaches_is_safetensors_only():
    checked = 0
    for path in SOURCES:
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for func in ast.walk(tree):
            if not isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            dicts = _kwargs_dicts(func)
            for call in _calls(func):
                if _name(call.func) != "from_pretrained" or "Model" not in _receiver(call.func):
                    continue
                if (path.name, func.name) in OWN_FILES:
                    continue
                kws = {k.arg: k.value for k in call.keywords if k.arg}
                for k in call.keywords:
                    if k.arg is None and isinstance(k.value, ast.Name) and k.value.id in dicts:
                        kws.update({kk.arg: kk.value for kk in dicts[k.value.id].keywords if kk.arg})
                v = kws.get("use_safetensors")
                assert isinstance(v, ast.Constant) and v.value is True, \
                    f"{path.name}:{call.lineno} ({func.name}): from_pretrained without use_safetensors=True"
                checked += 1
    assert checked >= 2  # the loader's and the migration's


def test_every_environment_variable_is_documented():
    names = set()
    for path in SOURCES:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and re.fullmatch(r"PLAYGROUND_[A-Z_]+", node.value):
                names.add(node.value)
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert {"PLAYGROUND_MAX_NEW_TOKENS", "PLAYGROUND_MAX_PROMPT_CHARS", "PLAYGROUND_MEMORY_BUDGET",
            "PLAYGROUND_MAX_COMPARE_PAIRS", "PLAYGROUND_SYNTHETIC_MAX", "PLAYGROUND_MODEL_DIRS",
            "PLAYGROUND_MAX_QUEUE"} <= names
    missing = sorted(n for n in names if f"`{n}`" not in readme)
    assert not missing, f"not in the README: {missing}"


# ---------------------------------------------------------------- the live server

@pytest.mark.slow
def test_custom_code_is_refused_or_ignored_and_never_runs(hostile):
    c = hostile.client
    with pytest.raises(Exception, match="custom code"):
        c.predict(str(hostile.models / "remote-code"), "cpu", "float32", api_name="/load_model")
    # A known architecture with an auto_map beside it: the built-in GPT-2 class loads, the map is ignored.
    r = c.predict(str(hostile.models / "known-type-with-code"), "cpu", "float32", api_name="/load_model")
    assert r["model"] == "known-type-with-code" and r["param_count"] > 0
    c.predict("shakespeare-gpt2", "cpu", "float32", api_name="/load_model")
    assert list(hostile.markers.iterdir()) == []


# (path asked for, a piece of that file's content that must not come back)
FILES = [
    ("gradio_api/file=/etc/passwd", "root:x:0:0"),
    ("gradio_api/file=%2Fetc%2Fpasswd", "root:x:0:0"),
    ("gradio_api/file=../../../../etc/passwd", "root:x:0:0"),
    ("gradio_api/file=..%2F..%2F..%2F..%2Fetc%2Fpasswd", "root:x:0:0"),
    ("file=/etc/passwd", "root:x:0:0"),
    ("static/../../../../etc/passwd", "root:x:0:0"),
    ("assets/..%2F..%2F..%2F..%2Fetc%2Fpasswd", "root:x:0:0"),
    ("gradio_api/file=/proc/self/environ", "PLAYGROUND_MODEL_DIRS="),
    ("gradio_api/file=app.py", "launch_kwargs()"),
    ("gradio_api/file=ROOT/app.py", "launch_kwargs()"),
    ("gradio_api/file=ROOT/playground/load/catalog.py", "def resolve("),
    ("gradio_api/file=ROOT/playground/assets/shakespeare-gpt2/model.safetensors", "data_offsets"),
    ("gradio_api/file=MODELS/malformed/config.json", '"n_layer": '),
    ("gradio_api/file=CACHE/models--meta-llama--Llama-2-7b-hf/refs/main", "0" * 40),
    ("gradio_api/file=~/.bashrc", "PS1"),
]


@pytest.mark.slow
@pytest.mark.parametrize("path,content", FILES, ids=[f[0] for f in FILES])
def test_gradio_serves_no_file_beyond_the_app(hostile, path, content):
    path = path.replace("ROOT", str(ROOT)).replace("MODELS", str(hostile.models)).replace("CACHE", str(hostile.cache))
    r = httpx.get(hostile.url + path, timeout=10)
    assert r.status_code in (400, 403, 404, 405), (r.status_code, r.text[:200])
    assert content not in r.text


@pytest.mark.slow
def test_uploads_are_refused(hostile):
    r = httpx.post(hostile.url + "gradio_api/upload", files={"files": ("visitor-upload-7f3a.txt", b"x" * 1000)},
                   timeout=10)
    assert r.status_code == 413, r.text[:200]
    assert not files_named("/tmp", "visitor-upload-7f3a.txt")


def files_named(root: str, name: str) -> list[str]:
    """Every file called `name` under `root`. A folder that vanishes while the walk reads it (another test's server
    removing its temporary folder: Path.glob raised FileNotFoundError in CI) is passed over, not an error."""
    return [os.path.join(folder, name) for folder, _, files in os.walk(root, onerror=lambda e: None) if name in files]


@pytest.mark.slow
def test_what_a_visitor_makes_stays_in_the_process_temporary_folder(hostile):
    """A Compare run writes its CSV and JSON downloads, which Gradio copies into its cache:
    both under the one per-process folder (TMPDIR is this test's, so nothing else writes there)."""
    with RawSession(hostile.url) as page:
        msg = page.call(hostile.fns["ui_compare"], ["shakespeare-gpt2", ["cpu/float32"], 2, "en"])
    assert msg["success"], msg
    exports = list(hostile.tmpdir.glob("playground-exports-*"))
    assert len(exports) == 1
    written = [p for p in hostile.tmpdir.rglob("*") if p.is_file()]
    assert written, "the Compare downloads were not written"
    assert all(exports[0] in p.parents for p in written), written
    assert any(p.suffix == ".csv" for p in written) and any("gradio" in p.parts for p in written)


def test_the_synthetic_size_cap_holds_in_the_api_and_the_page(monkeypatch):
    """PLAYGROUND_SYNTHETIC_MAX is read at each request: the API's load and estimate and the
    page's Load refuse a larger synthetic model, saying which variable decides."""
    from playground.web import handlers
    from playground.web.tabs import play

    monkeypatch.setenv("PLAYGROUND_SYNTHETIC_MAX", "synthetic/gpt2-small")
    calls = [lambda: handlers.load_model("synthetic/gpt2-medium", "cpu", "float32"),
             lambda: handlers.estimate("synthetic/gpt2-medium", "float32"),
             ]
    for call in calls:
        with pytest.raises(Exception) as e:
            call()
        assert "PLAYGROUND_SYNTHETIC_MAX" in str(e.value) and "synthetic/gpt2-small" in str(e.value)
    said = play.ui_load("synthetic/gpt2-medium", "cpu", "float32", "en")["load_note"]  # the page: in the Load panel
    assert "PLAYGROUND_SYNTHETIC_MAX" in said and "synthetic/gpt2-small" in said
    assert not synthetic.folder("synthetic/gpt2-medium").with_name(".tmp-gpt2-medium").exists()


# ---------------------------------------------------------------- the memory guard

class PeakRSS(threading.Thread):
    def __init__(self, pid: int, hz: float = 20) -> None:
        super().__init__(daemon=True)
        self.proc, self.every, self.peak, self.halt = psutil.Process(pid), 1 / hz, 0, threading.Event()

    def run(self) -> None:
        while not self.halt.is_set():
            self.peak = max(self.peak, self.proc.memory_info().rss)
            self.halt.wait(self.every)

    def __enter__(self) -> "PeakRSS":
        self.peak = self.proc.memory_info().rss
        self.start()
        return self

    def __exit__(self, *exc) -> None:
        self.halt.set()
        self.join(timeout=5)


TOO_BIG = [("synthetic/gpt2-xl", "bfloat16"), ("synthetic/gpt2-xl", "float32"), ("synthetic/llama-1b", "bfloat16"),
           ("synthetic/llama-7b", "bfloat16"), ("meta-llama/Llama-2-7b-hf", "auto"),
           ("meta-llama/Llama-2-7b-hf", "float32")]


def _synthetic_folders() -> set[str]:
    return {p.name for p in synthetic.root().iterdir()} if synthetic.root().exists() else set()


@pytest.mark.slow
def test_models_over_the_budget_are_refused_before_anything_is_allocated(hostile):
    c = hostile.client
    built_before = _synthetic_folders()
    with PeakRSS(hostile.server.proc.pid) as rss:
        for model, dtype in TOO_BIG:
            t0 = time.perf_counter()
            with pytest.raises(Exception) as e:
                c.predict(model, "cpu", dtype, api_name="/load_model")
            msg = str(e.value)
            assert f"Not loading {model}" in msg, msg
            assert re.search(r"needs [\d.]+ GiB", msg) and re.search(r"[\d.]+ [GM]iB available", msg), msg
            assert "PLAYGROUND_MEMORY_BUDGET" in msg, msg
            assert time.perf_counter() - t0 < 30
            est = c.predict(model, dtype, api_name="/estimate")
            assert est["fits"] is False and est["required_bytes"] > est["available_bytes"]
            assert est["available_bytes"] <= BUDGET + 50 * 2**20  # the budget (+ the bundled model it would free)
            _text, stats = c.predict("ROMEO:", 4, 0.0, 1.0, 0, api_name="/generate")
            assert stats["model"] == "shakespeare-gpt2"  # refused before the loaded model was touched
    print(f"server peak RSS while refusing: {rss.peak / 2**20:.0f} MiB (budget {BUDGET / 2**20:.0f} MiB)")
    assert rss.peak < BUDGET
    assert _synthetic_folders() == built_before  # nothing built, not even a temporary folder


@pytest.mark.slow
def test_the_guard_refuses_in_process_without_allocating(monkeypatch):
    from playground.load import loader
    from playground.run.pool import ModelPool

    monkeypatch.setenv("PLAYGROUND_MEMORY_BUDGET", "1GB")
    pool = ModelPool()
    built_before = _synthetic_folders()
    me = psutil.Process()
    with PeakRSS(me.pid) as rss:
        start = me.memory_info().rss
        for name in ("synthetic/llama-7b", "synthetic/gpt2-xl"):
            with pytest.raises(estimate.DoesNotFit) as e:
                pool.load(*loader.parse(name, "cpu", "bfloat16"))
            msg = str(e.value)
            assert re.search(r"needs [\d.]+ GiB", msg) and "953.7 MiB available" in msg, msg
            assert "PLAYGROUND_MEMORY_BUDGET=1GB" in msg
            assert isinstance(e.value, UserError)
    assert rss.peak - start < 200 * 2**20, f"RSS rose {(rss.peak - start) / 2**20:.0f} MiB while refusing"
    assert not pool.status()["loaded"] and pool.status()["models"] == 0
    assert _synthetic_folders() == built_before
