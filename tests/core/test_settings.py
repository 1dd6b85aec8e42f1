"""The settings: every PLAYGROUND_* variable parsed strictly, a malformed one named in one line with an example."""

from __future__ import annotations

import socket
import subprocess
import sys

import pytest

from playground.core import settings
from tests.conftest import ROOT

# (variable, a malformed value, what a valid example must look like)
MALFORMED = [
    ("PLAYGROUND_MEMORY_BUDGET", "lots", "PLAYGROUND_MEMORY_BUDGET=2GB"),
    ("PLAYGROUND_MEMORY_BUDGET", "-1GB", "PLAYGROUND_MEMORY_BUDGET=2GB"),
    ("PLAYGROUND_PORT", "abc", "PLAYGROUND_PORT=7860"),
    ("PLAYGROUND_PORT", "99999", "PLAYGROUND_PORT=7860"),
    ("PLAYGROUND_PORT", "0", "PLAYGROUND_PORT=7860"),
    ("PLAYGROUND_HOST", "local host", "PLAYGROUND_HOST=127.0.0.1"),
    ("PLAYGROUND_MAX_NEW_TOKENS", "lots", "PLAYGROUND_MAX_NEW_TOKENS=512"),
    ("PLAYGROUND_MAX_NEW_TOKENS", "0", "PLAYGROUND_MAX_NEW_TOKENS=512"),
    ("PLAYGROUND_MAX_PROMPT_CHARS", "1e4", "PLAYGROUND_MAX_PROMPT_CHARS=20000"),
    ("PLAYGROUND_MAX_DIAGNOSE_CHARS", "-5", "PLAYGROUND_MAX_DIAGNOSE_CHARS=4000000"),
    ("PLAYGROUND_MAX_QUEUE", "many", "PLAYGROUND_MAX_QUEUE=32"),
    ("PLAYGROUND_MAX_SESSIONS", "2.5", "PLAYGROUND_MAX_SESSIONS=200"),
    ("PLAYGROUND_MAX_COMPARE_PAIRS", "x", "PLAYGROUND_MAX_COMPARE_PAIRS=8"),
    ("PLAYGROUND_MODEL_DIRS", "/no/such/folder-7f3a", "PLAYGROUND_MODEL_DIRS=/data/models"),
    ("PLAYGROUND_DEBUG", "maybe", "PLAYGROUND_DEBUG=1"),
]


@pytest.mark.parametrize("name, value, example", MALFORMED, ids=[f"{n}={v}" for n, v, _ in MALFORMED])
def test_a_malformed_variable_is_named_with_its_value_and_an_example(name, value, example):
    with pytest.raises(settings.Malformed) as e:
        settings.read({name: value})
    line = settings.refusal(e.value)
    assert e.value.name == name and e.value.value == value
    assert f"{name}={value!r}" in line and example in line
    assert "\n" not in line


def test_a_file_given_as_the_synthetic_folder_is_refused(tmp_path):
    f = tmp_path / "a-file"
    f.write_text("x")
    with pytest.raises(settings.Malformed, match="PLAYGROUND_SYNTHETIC_DIR=.*is a file"):
        settings.read({"PLAYGROUND_SYNTHETIC_DIR": str(f)})


def test_valid_values_are_parsed(tmp_path):
    s = settings.read({"PLAYGROUND_MEMORY_BUDGET": "2GB", "PLAYGROUND_PORT": " 7861 ", "PLAYGROUND_HOST": "0.0.0.0",
                       "PLAYGROUND_MODEL_DIRS": f"{tmp_path}:{tmp_path}", "PLAYGROUND_DEBUG": "true",
                       "PLAYGROUND_MAX_QUEUE": "5", "PLAYGROUND_SYNTHETIC_DIR": str(tmp_path / "new")})
    assert s.memory_budget_bytes == 2 * 10**9 and s.memory_budget == "2GB"
    assert (s.port, s.host, s.debug, s.max_queue) == ("7861", "0.0.0.0", True, 5)
    assert s.model_dirs == (tmp_path, tmp_path) and s.synthetic_dir == tmp_path / "new"


def test_empty_values_count_as_unset():
    s = settings.read({k: "" for k, _v, _e in MALFORMED})
    d = settings.read({})
    assert s == d and s.memory_budget_bytes is None and s.debug is False


def test_check_or_exit_prints_one_line_and_exits_2(capsys):
    with pytest.raises(SystemExit) as e:
        settings.check_or_exit("app.py", {"PLAYGROUND_MEMORY_BUDGET": "lots"})
    assert e.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("app.py: cannot start: PLAYGROUND_MEMORY_BUDGET='lots'")


def test_python_app_py_refuses_before_importing_torch():
    """The check is the first thing app.py does: the refusal comes in a fraction of the time torch takes."""
    rc, lines, imported = _refusal_and_imports({"PLAYGROUND_PORT": "abc"})
    assert rc == 2
    assert lines == ["app.py: cannot start: PLAYGROUND_PORT='abc' is not a TCP port (a whole number from 1 to "
                     "65535); set it to e.g. PLAYGROUND_PORT=7860, or unset it for the default."]
    assert "torch" not in imported and "gradio" not in imported


def _refusal_and_imports(env_extra: dict) -> tuple[int, list[str], set[str]]:
    env = {"PATH": "/usr/bin:/bin", **env_extra}
    r = subprocess.run([sys.executable, "-X", "importtime", "app.py"], cwd=ROOT, env=env, capture_output=True,
                       text=True, timeout=60)
    lines = [ln for ln in r.stderr.splitlines() if not ln.startswith("import time:")]
    imported = {ln.split("|")[-1].strip() for ln in r.stderr.splitlines() if ln.startswith("import time:")}
    return r.returncode, lines, imported


def test_a_taken_port_is_refused_before_importing_torch():
    """Whether the address can be listened on is asked with the variables, not after ~9 s of imports."""
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        rc, lines, imported = _refusal_and_imports({"PLAYGROUND_PORT": str(port), "PLAYGROUND_HOST": "127.0.0.1"})
    assert rc == 2 and len(lines) == 1 and f"PLAYGROUND_PORT='{port}'" in lines[0], lines
    assert "torch" not in imported and "gradio" not in imported


@pytest.mark.slow
def test_an_unknown_synthetic_cap_is_refused_before_importing_gradio():
    """The cap's names are the synthetic models' (load/synthetic.py, which needs torch): asked before the page's
    libraries load."""
    rc, lines, imported = _refusal_and_imports({"PLAYGROUND_SYNTHETIC_MAX": "gpt2-huge"})
    assert rc == 2 and len(lines) == 1 and lines[0].startswith("app.py: cannot start: PLAYGROUND_SYNTHETIC_MAX="), lines
    assert "gradio" not in imported
