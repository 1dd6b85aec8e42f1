"""The Space bundle: it builds, its front matter is valid and matches requirements.txt,
every module the app imports is in it, it serves offline; and the Space caps."""

from __future__ import annotations

import ast
import os
import re
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest
import yaml  # PyYAML: a dependency of gradio, transformers and huggingface_hub

from playground.core import settings
from playground.core.errors import UserError
from playground.load import synthetic
from playground.tools import space
from tests.conftest import ROOT as REPO  # noqa: E402

HF_COLORS = {"red", "yellow", "green", "blue", "indigo", "purple", "pink", "gray"}
PORTS = range(7920, 7940)


def _clean_env(**extra: str) -> dict:
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "SPACE_ID", "SYSTEM", "SPACES_ZERO_GPU")
           and not k.startswith(("PLAYGROUND_", "GRADIO_"))}
    env.update(HF_HUB_OFFLINE="1", GRADIO_ANALYTICS_ENABLED="False", **extra)
    return env


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("space") / "device-playground"
    # The command as documented, run from the repository root.
    proc = subprocess.run([sys.executable, "-m", "playground.space", "build", str(out)], cwd=REPO,
                          env=_clean_env(), capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert f"Built {out}" in proc.stdout
    return out


def _front_matter(readme: Path) -> dict:
    text = readme.read_text(encoding="utf-8")
    m = re.match(r"---\n(.*?)\n---\n", text, re.S)
    assert m, "README.md must open with a --- front matter block ---"
    return yaml.safe_load(m.group(1))


def _pins(requirements: Path) -> dict[str, str]:
    pins = {}
    for line in requirements.read_text(encoding="utf-8").splitlines():
        line = line.split("#", 1)[0].strip()
        if line and not line.startswith("-"):
            name, _, version = line.partition("==")
            pins[name.strip().lower().replace("_", "-")] = version.strip()
    return pins


@pytest.mark.slow
def test_front_matter_is_valid_and_matches_requirements(built):
    fm = _front_matter(built / "README.md")
    assert (built / "README.md").read_bytes() == (REPO / "spaces" / "README.md").read_bytes()
    assert fm["sdk"] == "gradio"
    assert fm["sdk_version"] == _pins(REPO / "requirements.txt")["gradio"]
    assert isinstance(fm["sdk_version"], str)  # 6.31.0 parses as a string; 6.31 would not
    assert (built / fm["app_file"]).is_file() and fm["app_file"] == "app.py"
    assert fm["python_version"] == "3.11"  # quoted: an unquoted 3.10 would read as 3.1
    assert isinstance(fm["title"], str) and 0 < len(fm["title"]) <= 30
    assert isinstance(fm["emoji"], str) and len(fm["emoji"]) <= 2
    assert fm["colorFrom"] in HF_COLORS and fm["colorTo"] in HF_COLORS
    assert isinstance(fm["short_description"], str) and 0 < len(fm["short_description"]) <= 60
    assert fm["suggested_hardware"] == "cpu-basic"
    assert fm["license"] == "mit"
    assert isinstance(fm["tags"], list) and fm["tags"] and all(isinstance(t, str) for t in fm["tags"])
    body = (built / "README.md").read_text(encoding="utf-8").split("---", 2)[2]
    assert "t4-small" in body and "PLAYGROUND_MAX_NEW_TOKENS" in body and "PLAYGROUND_SYNTHETIC_MAX" in body
    assert str(settings.SPACE_MAX_NEW_TOKENS) in body and settings.SPACE_SYNTHETIC_MAX in body


@pytest.mark.slow
def test_requirements_are_the_runtime_ones_without_test_tools(built):
    assert _pins(built / "requirements.txt") == _pins(REPO / "requirements.txt")
    test_tools = {"pytest", "playwright", "pytest-timeout", "pytest-xdist"}
    for extra in [*REPO.glob("requirements-*.txt"), *REPO.glob("tests/requirements*.txt")]:  # test requirements
        test_tools |= set(_pins(extra)) - set(_pins(REPO / "requirements.txt"))
    built_names = set(_pins(built / "requirements.txt"))
    assert "torch" in built_names and "gradio" in built_names
    assert not test_tools & built_names


def _local_module_file(root: Path, dotted: str) -> Path | None:
    base = root.joinpath(*dotted.split("."))
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


def _imports(path: Path, root: Path) -> set[str]:
    """Every module named by an import statement in the file (lazy ones inside functions too)."""
    names: set[str] = set()
    package = ".".join(path.relative_to(root).with_suffix("").parts[:-1])
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(p for p in [*parts, base] if p)
            names.add(base)
            names.update(f"{base}.{a.name}" for a in node.names)  # `from pkg import module`
    return names


@pytest.mark.slow
def test_every_module_the_app_imports_is_in_the_bundle(built):
    local_tops = {p.stem if p.suffix == ".py" else p.name for p in REPO.iterdir()
                  if (p.suffix == ".py") or (p / "__init__.py").is_file()}
    seen: set[str] = set()
    todo = [built / "app.py"]
    while todo:
        path = todo.pop()
        rel = str(path.relative_to(built))
        if rel in seen:
            continue
        seen.add(rel)
        for name in _imports(path, built):
            if name.split(".")[0] not in local_tops:
                continue  # a library (torch, gradio, ...), installed from requirements.txt
            in_repo = _local_module_file(REPO, name)
            if in_repo is None:
                continue  # `from playground.x import SomeClass`: an attribute, not a module
            in_bundle = _local_module_file(built, name)
            assert in_bundle is not None, f"{rel} imports {name}, which the bundle lacks"
            todo.append(in_bundle)
            # importing a.b.c runs a/__init__.py and a/b/__init__.py too
            for i in range(1, name.count(".") + 1):
                todo.append(_local_module_file(built, ".".join(name.split(".")[:i])))
    # The walk must have reached the core, or it proves nothing.
    for core in ("playground/web/ui.py", "playground/run/pool.py", "playground/load/loader.py",
                 "playground/run/generation.py", "playground/hw/devices.py", "playground/hw/memory.py",
                 "playground/core/inputs.py", "playground/lab/scenarios/devices.py", "playground/__init__.py"):
        assert core in seen, f"the import walk never reached {core}"


@pytest.mark.slow
def test_bundle_holds_the_model_and_leaves_out_the_corpus(built):
    model_src = REPO / "playground" / "assets" / "shakespeare-gpt2"
    model_out = built / "playground" / "assets" / "shakespeare-gpt2"
    src_files = sorted(p.name for p in model_src.iterdir() if p.is_file())
    assert {"config.json", "model.safetensors", "tokenizer.json"} <= set(src_files)
    assert sorted(p.name for p in model_out.iterdir()) == src_files
    assert (model_out / "model.safetensors").stat().st_size == (model_src / "model.safetensors").stat().st_size
    assert (REPO / "playground" / "assets" / "corpus").is_dir()
    assert not (built / "playground" / "assets" / "corpus").exists()
    assert not list(built.rglob("__pycache__")) and not list(built.rglob("*.pyc"))
    assert not (built / "tests").exists() and not (built / "spaces").exists()
    py_src = {p.name for p in (REPO / "playground").glob("*.py")}
    assert py_src <= {p.name for p in (built / "playground").glob("*.py")}
    assert "*.safetensors filter=lfs" in (built / ".gitattributes").read_text(encoding="utf-8")
    size = sum(p.stat().st_size for p in built.rglob("*") if p.is_file())
    assert size < 40 * 2**20, f"the bundle is {size / 2**20:.1f} MiB"


def test_build_refuses_unsafe_targets_and_rebuilds_in_place(tmp_path):
    stranger = tmp_path / "full"
    stranger.mkdir()
    (stranger / "notes.txt").write_text("mine", encoding="utf-8")
    with pytest.raises(UserError, match="notes.txt"):
        space.build(stranger)
    assert (stranger / "notes.txt").read_text(encoding="utf-8") == "mine"
    for source in (REPO, REPO / "spaces", REPO / "playground" / "assets" / "out"):
        with pytest.raises(UserError, match="build somewhere else"):
            space.build(source)
    assert (REPO / "spaces" / "README.md").is_file()

    clone = tmp_path / "clone"
    (clone / ".git").mkdir(parents=True)
    (clone / ".git" / "HEAD").write_text("ref: refs/heads/main\n", encoding="utf-8")
    (clone / "playground").mkdir()
    (clone / "playground" / "stale.py").write_text("", encoding="utf-8")  # from an older build
    report = space.build(clone)
    assert (clone / ".git" / "HEAD").is_file()
    assert not (clone / "playground" / "stale.py").exists()
    assert "app.py" in report.files and "README.md" in report.files
    assert not any(f.startswith(".git/") for f in report.files)
    assert report.total_bytes == sum((clone / f).stat().st_size for f in report.files)


def _free_port() -> int:
    for port in PORTS:
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
                return port
            except OSError:
                continue
    pytest.fail(f"no free port in {PORTS.start}-{PORTS.stop - 1}")


@pytest.mark.slow
def test_built_space_serves_offline(built):
    env = _clean_env(PLAYGROUND_HOST="127.0.0.1", SPACE_ID="test/device-playground")
    # The built folder's own copy of the package is the one that imports from there.
    where = subprocess.run([sys.executable, "-c", "import playground; print(playground.__file__)"], cwd=built,
                           env=env, capture_output=True, text=True, timeout=60)
    assert Path(where.stdout.strip()).resolve() == (built / "playground" / "__init__.py").resolve(), where.stderr

    port = _free_port()
    env["PLAYGROUND_PORT"] = str(port)
    proc = subprocess.Popen([sys.executable, "app.py"], cwd=built, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    url = f"http://127.0.0.1:{port}/"
    try:
        deadline = time.monotonic() + 90
        status = None
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                pytest.fail(f"app.py exited with {proc.returncode}:\n{proc.stdout.read()[-3000:]}")
            try:
                with urllib.request.urlopen(url, timeout=5) as r:
                    status = r.status
                    page = r.read().decode("utf-8", "replace")
                break
            except (urllib.error.URLError, ConnectionError, TimeoutError):
                time.sleep(0.5)
        assert status == 200, f"no HTTP 200 from {url} within 90 s"
        assert "gradio" in page.lower()
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


# ---------------------------------------------------------------- the caps

class View:
    """The settings dict `python -m playground.space settings` prints, read as attributes."""

    def __init__(self, env: dict) -> None:
        self.__dict__.update(space.space_settings(env))


def test_settings_off_a_space():
    s = View({})
    assert not s.on_space and s.space_id == ""
    assert s.max_new_tokens == settings.LOCAL_MAX_NEW_TOKENS
    assert s.synthetic_allowed == synthetic.by_size() and set(s.synthetic_allowed) == set(synthetic.CONFIGS)
    assert "SPACE_ID unset" in s.max_new_tokens_reason


def test_settings_on_a_space_cap_tokens_and_synthetic_sizes():
    s = View({"SPACE_ID": "someone/device-playground"})
    assert s.on_space and s.space_id == "someone/device-playground"
    assert s.max_new_tokens == settings.SPACE_MAX_NEW_TOKENS == 256
    assert s.synthetic_max == "synthetic/gpt2-medium"
    assert s.synthetic_allowed == ["synthetic/llama-42m", "synthetic/gpt2-small", "synthetic/gpt2-medium"]
    assert "someone/device-playground" in s.max_new_tokens_reason
    assert set(vars(s)) >= {"on_space", "max_new_tokens", "synthetic_allowed", "zero_gpu"}


def test_settings_follow_the_environment_variables():
    on = {"SPACE_ID": "a/b"}
    s = View(on | {"PLAYGROUND_MAX_NEW_TOKENS": "64", "PLAYGROUND_SYNTHETIC_MAX": "gpt2-large"})
    assert s.max_new_tokens == 64 and "PLAYGROUND_MAX_NEW_TOKENS=64" in s.max_new_tokens_reason
    assert s.synthetic_allowed == ["synthetic/llama-42m", "synthetic/gpt2-small", "synthetic/gpt2-medium",
                                   "synthetic/gpt2-large"]
    # llama-1b (1.2B) is smaller than gpt2-xl (1.5B): the order is by size, not by name
    s = View(on | {"PLAYGROUND_SYNTHETIC_MAX": "synthetic/llama-1b"})
    assert "synthetic/llama-1b" in s.synthetic_allowed and "synthetic/gpt2-xl" not in s.synthetic_allowed
    assert View(on | {"PLAYGROUND_SYNTHETIC_MAX": "none"}).synthetic_allowed == []
    assert len(View(on | {"PLAYGROUND_SYNTHETIC_MAX": "all"}).synthetic_allowed) == len(synthetic.CONFIGS)
    assert View({"PLAYGROUND_SYNTHETIC_MAX": "none"}).synthetic_allowed == []


@pytest.mark.parametrize("name, value", [("PLAYGROUND_MAX_NEW_TOKENS", "lots"), ("PLAYGROUND_MAX_NEW_TOKENS", "0"),
                                         ("PLAYGROUND_MAX_NEW_TOKENS", "-5"), ("PLAYGROUND_SYNTHETIC_MAX", "gpt2-huge"),
                                         ("PLAYGROUND_SYNTHETIC_MAX", "synthetic/")])
def test_bad_values_are_refused_naming_the_variable(name, value):
    """An operator's mistake is not papered over with the default: the settings refuse it, naming it
    (python app.py refuses to start on it: tests/core/test_settings.py, tests/e2e/test_faults.py)."""
    with pytest.raises(settings.Malformed) as e:
        View({"SPACE_ID": "a/b", name: value})
    assert e.value.name == name and f"{name}={value!r}" in str(e.value) and f"e.g. {name}=" in str(e.value)


def test_synthetic_sizes_the_space_does_not_allow_are_refused(monkeypatch):
    monkeypatch.setenv("SPACE_ID", "a/b")
    synthetic.check_allowed("synthetic/gpt2-small")
    with pytest.raises(UserError, match="gpt2-xl is too large.*synthetic/gpt2-small, synthetic/gpt2-medium"):
        synthetic.check_allowed("synthetic/gpt2-xl")
    monkeypatch.delenv("SPACE_ID")
    monkeypatch.setenv("PLAYGROUND_SYNTHETIC_MAX", "none")
    with pytest.raises(UserError, match="switched off"):
        synthetic.check_allowed("synthetic/gpt2-small")
