"""Start-up: the address is checked and named by its variable; dead servers' temporary folders are swept."""

from __future__ import annotations

import socket
import subprocess
import sys
import tempfile
import time

import pytest

from playground.core import leftovers, listen, settings
from playground.load import placement, synthetic
from playground.web import exports, serve
from tests.conftest import ROOT


def test_a_port_in_use_names_the_variable_that_set_it_and_a_free_one():
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        line = listen.problem(settings.read({"PLAYGROUND_PORT": str(port), "PLAYGROUND_HOST": "127.0.0.1"}))
    assert line.startswith(f"app.py: cannot start: PLAYGROUND_PORT='{port}' cannot be listened on: port {port} on "
                           "127.0.0.1 is already in use")
    assert "GRADIO_SERVER_PORT" not in line and "\n" not in line
    suggested = int(line.split("e.g. PLAYGROUND_PORT=")[1].split(",")[0])
    assert suggested != port and 0 < suggested < 65536


def test_an_address_not_of_this_machine_names_the_host_variable():
    line = listen.problem(settings.read({"PLAYGROUND_HOST": "192.0.2.1"}))  # TEST-NET-1: nobody's
    assert line.startswith("app.py: cannot start: PLAYGROUND_HOST='192.0.2.1' cannot be listened on")
    assert "e.g. PLAYGROUND_HOST=127.0.0.1" in line


def test_a_free_address_and_gradio_defaults_pass():
    assert listen.problem(settings.read({})) == ""
    assert listen.problem(settings.read({"PLAYGROUND_PORT": str(listen.free_port())})) == ""


def test_startup_sweep_removes_what_dead_servers_left(tmp_path, monkeypatch):
    monkeypatch.setenv("TMPDIR", str(tmp_path / "tmp"))
    monkeypatch.setenv("PLAYGROUND_SYNTHETIC_DIR", str(tmp_path / "synthetic"))
    monkeypatch.setattr(tempfile, "tempdir", None)  # gettempdir() reads TMPDIR again
    (tmp_path / "tmp").mkdir()
    (tmp_path / "synthetic").mkdir()
    # a server that made both kinds of folder, then died without cleaning (as SIGKILL leaves them)
    code = ("from playground.core import leftovers; "
            f"leftovers.make('{exports.PREFIX}', {str(tmp_path / 'tmp')!r}); "
            f"leftovers.make('{synthetic.TMP_PREFIX}', {str(tmp_path / 'synthetic')!r}); "
            f"leftovers.make('{placement.OFFLOAD_PREFIX}', {str(tmp_path / 'tmp')!r})")  # an offload folder too
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)
    mine = leftovers.make(synthetic.TMP_PREFIX, tmp_path / "synthetic")  # a build of this process: kept
    left = sorted(p.name for p in (tmp_path / "tmp").iterdir()) + sorted(p.name for p in (tmp_path / "synthetic").iterdir())
    assert len(left) == 4
    t0 = time.perf_counter()
    removed = serve.sweep()
    assert len(removed) == 3 and time.perf_counter() - t0 < 1
    assert list((tmp_path / "tmp").iterdir()) == [] and list((tmp_path / "synthetic").iterdir()) == [mine]


def test_a_launch_failure_without_our_variables_still_says_which_to_set():
    line = listen.refusal(settings.read({}), OSError("Cannot find empty port in range: 7860-7959."))
    assert line.startswith("app.py: cannot start: no free port for the server") and "PLAYGROUND_PORT=" in line


def test_a_connection_cut_at_shutdown_is_not_logged_as_an_error():
    """CI: SIGTERM mid-build, the client's event stream still open after uvicorn's 1 s grace: uvicorn logged its
    cancellation as "Exception in ASGI application" with a traceback. That end is intended; other errors stay."""
    import asyncio
    import logging

    def record(exc):
        return logging.LogRecord("uvicorn.error", logging.ERROR, __file__, 1, "Exception in ASGI application", None,
                                 (type(exc), exc, None))
    assert serve._cut_at_shutdown(record(asyncio.CancelledError("Task cancelled, timeout graceful shutdown exceeded"))) is False
    assert serve._cut_at_shutdown(record(RuntimeError("a real one"))) is True
    assert serve._cut_at_shutdown(logging.LogRecord("uvicorn.error", logging.INFO, __file__, 1, "Shutting down", None, None))


def test_a_busy_default_port_is_said_on_the_console_with_the_port_taken(monkeypatch):
    """The walk: a busy 7860 silently moved the server to 7861 (Gradio prints only the URL). The console says
    which port it took, why, and the variable that chooses it; nothing when it is where it was asked to be."""
    from gradio import http_server

    monkeypatch.setattr(http_server, "INITIAL_PORT_VALUE", 7860)
    line = serve.port_moved(settings.read({}), 7861)
    assert line.startswith("playground: port 7860 is taken (another server?), so this one listens on port 7861")
    assert "http://127.0.0.1:7861/" in line and "PLAYGROUND_PORT" in line and "\n" not in line
    assert serve.port_moved(settings.read({}), 7860) == ""
    assert serve.port_moved(settings.read({"PLAYGROUND_PORT": "7861"}), 7861) == ""  # asked for: nothing moved


@pytest.mark.slow
def test_python_app_py_says_which_port_it_took_when_the_default_is_busy(tmp_path):
    """`python app.py` as the README runs it, its first choice of port held by another listener."""
    import os
    import select

    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        taken = busy.getsockname()[1]
        env = {k: v for k, v in os.environ.items() if k != "PLAYGROUND_PORT"}
        env.update(GRADIO_SERVER_PORT=str(taken), GRADIO_ANALYTICS_ENABLED="False",
                   PLAYGROUND_SYNTHETIC_DIR=str(tmp_path / "synthetic"), PLAYGROUND_HOST="127.0.0.1")
        proc = subprocess.Popen([sys.executable, "app.py"], cwd=str(ROOT), env=env, stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT)
        try:
            said, deadline = "", time.monotonic() + 120
            while time.monotonic() < deadline and "so this one listens" not in said and proc.poll() is None:
                if select.select([proc.stdout], [], [], 1.0)[0]:  # a server that says nothing more never blocks this
                    # what the pipe holds, read raw: readline() would keep a second line in its buffer, unseen by select
                    said += os.read(proc.stdout.fileno(), 65536).decode(errors="replace")
                if "Running on local URL" in said:
                    deadline = min(deadline, time.monotonic() + 30)  # up: its line follows launch(), seconds later on a busy machine
        finally:
            proc.terminate()
            proc.wait(timeout=30)
    assert f"playground: port {taken} is taken (another server?), so this one listens on port {taken + 1}" in said, said


PAGE_ONLY = """
import sys
from playground.web.ui import build
build()
print("after the page:", "transformers.models.auto.modeling_auto" in sys.modules)
from playground.load import catalog
catalog.import_model_classes()
print("after the server's import:", "transformers.models.auto.modeling_auto" in sys.modules)
"""


@pytest.mark.slow
def test_the_page_is_built_without_transformers_model_classes_which_the_server_imports_once_it_answers():
    """`python app.py` took 1.5x the bare imports to answer: ~1.1 s of it was Transformers reading every model
    folder it ships, at the first import of its Auto classes, before the page was built. The page needs none of
    them; the server imports them after `launch()` (playground.web.serve), so a first load does not wait."""
    out = subprocess.run([sys.executable, "-c", PAGE_ONLY], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    assert "after the page: False" in out.stdout, out.stdout
    assert "after the server's import: True" in out.stdout, out.stdout
