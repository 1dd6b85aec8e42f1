"""Shared fixtures: the bundled model loaded once, and a live server for end-to-end tests."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from playground import soak

ROOT = Path(__file__).resolve().parent.parent


def pytest_configure(config):
    config.addinivalue_line("markers", "slow: takes more than a few seconds (still runs in CI)")
    config.addinivalue_line("markers", "browser: drives a real Chromium through Playwright")


@pytest.fixture(scope="session")
def bundled():
    """The bundled model, loaded through the playground's own path (cpu, float32)."""
    from playground import models

    return models.load(models.BUNDLED_NAME, "cpu", "float32")


class Server:
    def __init__(self, proc: subprocess.Popen, url: str, log: Path):
        self.proc, self.url, self.log = proc, url, log

    def log_text(self) -> str:
        return self.log.read_text(errors="replace")


def start_server(tmp: Path, env_extra: dict | None = None, timeout: float = 120) -> Server:
    """Run `python app.py` exactly as the README says, on a free port; wait for HTTP 200
    (the soak command's own starter: one way to start the server for both)."""
    return Server(*soak.start_server(tmp, env_extra, timeout))


def stop_server(server: Server) -> None:
    soak.stop_server(server.proc)
