"""Shared fixtures: the bundled model loaded once, and a live server for end-to-end tests."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def pytest_configure(config):
    config.addinivalue_line("markers", "slow: takes more than a few seconds (still runs in CI)")
    config.addinivalue_line("markers", "browser: drives a real Chromium through Playwright")


@pytest.fixture(scope="session")
def bundled():
    """The bundled model, loaded through the playground's own path (cpu, float32)."""
    from playground import models

    return models.load(models.BUNDLED_NAME, "cpu", "float32")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    def __init__(self, proc: subprocess.Popen, url: str, log: Path):
        self.proc, self.url, self.log = proc, url, log

    def log_text(self) -> str:
        return self.log.read_text(errors="replace")


def start_server(tmp: Path, env_extra: dict | None = None, timeout: float = 120) -> Server:
    """Run `python app.py` exactly as the README says, on a free port; wait for HTTP 200."""
    port = free_port()
    env = dict(os.environ, PLAYGROUND_PORT=str(port), PLAYGROUND_HOST="127.0.0.1",
               GRADIO_ANALYTICS_ENABLED="False", HF_HUB_DISABLE_TELEMETRY="1")
    env.update(env_extra or {})
    log = tmp / f"server-{port}.log"
    fh = open(log, "wb")
    proc = subprocess.Popen([sys.executable, "app.py"], cwd=ROOT, env=env, stdout=fh, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}/"
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"server exited early:\n{log.read_text(errors='replace')[-3000:]}")
        try:
            with urllib.request.urlopen(url, timeout=2) as r:
                if r.status == 200:
                    return Server(proc, url, log)
        except OSError:
            time.sleep(0.5)
    proc.kill()
    raise RuntimeError(f"server did not answer within {timeout}s:\n{log.read_text(errors='replace')[-3000:]}")


def stop_server(server: Server) -> None:
    server.proc.terminate()
    try:
        server.proc.wait(timeout=15)
    except subprocess.TimeoutExpired:
        server.proc.kill()
