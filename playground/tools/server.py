"""Our own server in a child process: `python app.py` on a free port, for the soak, the bench and the tests.

One way to start and stop it, so the three measure the same thing: the app exactly as
the README runs it, its output in a log file whose tracebacks can be counted.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from urllib.parse import urlparse

import psutil

from playground.core.paths import REPO


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(log_dir: Path, env_extra: dict | None = None, timeout: float = 180,
                 poll: float = 0.5) -> tuple[subprocess.Popen, str, Path]:
    """`python app.py` on a free port, as the README runs it; returns (process, url, log path) once
    the page answers HTTP 200 (asked every `poll` seconds: the bench's cold start asks often)."""
    port = free_port()
    env = child_env(port, env_extra)
    log = log_dir / f"server-{port}.log"
    with open(log, "wb") as fh:
        proc = subprocess.Popen([sys.executable, "app.py"], cwd=REPO, env=env, stdout=fh, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}/"
    deadline = time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                raise RuntimeError(f"the server exited early:\n{log.read_text(errors='replace')[-3000:]}")
            try:
                with urllib.request.urlopen(url, timeout=2) as r:
                    if r.status == 200:
                        return proc, url, log
            except OSError:
                pass
            time.sleep(poll)
        raise RuntimeError(f"the server did not answer within {timeout:.0f} s:\n{log.read_text(errors='replace')[-3000:]}")
    except BaseException:  # not answering, or interrupted while waiting (Ctrl-C): no server left behind
        stop_server(proc)
        raise


def child_env(port: int, extra: dict | None = None) -> dict:
    """The server's environment: this one's, on `port` at 127.0.0.1, then `extra` (the caller's settings win;
    a None removes that variable)."""
    env = dict(os.environ, PLAYGROUND_PORT=str(port), PLAYGROUND_HOST="127.0.0.1", GRADIO_ANALYTICS_ENABLED="False",
               HF_HUB_DISABLE_TELEMETRY="1")
    for key, value in (extra or {}).items():
        if value is None:
            env.pop(key, None)
        else:
            env[key] = value
    return env


def stop_server(proc: subprocess.Popen) -> None:
    proc.terminate()
    try:
        proc.wait(timeout=20)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(timeout=10)


def server_pid(url: str) -> int | None:
    """The pid listening on the URL's port, if it is a process this user may inspect."""
    port = urlparse(url).port
    try:
        for conn in psutil.net_connections(kind="tcp"):
            if conn.status == psutil.CONN_LISTEN and conn.laddr and conn.laddr.port == port and conn.pid:
                return conn.pid
    except (psutil.AccessDenied, PermissionError):
        pass
    return None


def log_exceptions(text: str) -> list[str]:
    """The last line of every traceback in a server log ("TypeError: ..."), in order."""
    out = []
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if not line.startswith("Traceback (most recent call last)"):
            continue
        last = ""
        for nxt in lines[i + 1:]:
            if nxt.startswith(("  ", "\t")) or not nxt.strip():
                continue
            last = nxt.strip()  # the first unindented line after the frames
            break
        out.append(last[:300])
    return out
