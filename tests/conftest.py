"""Shared fixtures: the bundled model loaded once, one OpenMP thread, the device targets present, a live
server for end-to-end tests."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
import torch

from playground.hw import devices
from playground.lab import target
from playground.load import catalog, estimate, loader
from playground.tools import server as our_server

ROOT = Path(__file__).resolve().parent.parent


def pytest_configure(config):
    config.addinivalue_line("markers", "slow: takes more than a few seconds (still runs in CI)")
    config.addinivalue_line("markers", "browser: drives a real Chromium through Playwright")
    config.addinivalue_line("markers", "device: a path of the playground run on each device target present "
                                       "(the self-check: pytest -m device)")


def load(model: str, device: str = "cpu", dtype: str = "float32") -> loader.LoadedModel:
    """A model loaded through the playground's own path (checked as the page checks it, then timed phases)."""
    return loader.load(loader.prepare(*loader.parse(model, device, dtype)))


@pytest.fixture(scope="session")
def bundled():
    """The bundled model, loaded through the playground's own path (cpu, float32)."""
    return load("shakespeare-gpt2", "cpu", "float32")


@pytest.fixture(params=[pytest.param(t, id=str(t), marks=pytest.mark.device) for t in target.targets()])
def device_target(request) -> target.Target:
    """Each device target present: the simulated one, then every real GPU (`cuda:N`, `mps`). A test that
    takes it runs once per target, marked `device`, and takes its expectations from the scenarios' data."""
    return request.param


@pytest.fixture
def one_thread():
    # For tests that check bytes, tokens and consistency, not speed: on a 2-core machine shared with
    # other processes, two OpenMP threads spin against each other and a generation runs ~6x slower.
    n = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(n)


class Server:
    def __init__(self, proc: subprocess.Popen, url: str, log: Path):
        self.proc, self.url, self.log = proc, url, log

    def log_text(self) -> str:
        return self.log.read_text(errors="replace")


def start_server(tmp: Path, env_extra: dict | None = None, timeout: float = 120) -> Server:
    """Run `python app.py` exactly as the README says, on a free port; wait for HTTP 200
    (the soak's and the bench's starter too: one way to start the server for all three)."""
    return Server(*our_server.start_server(tmp, env_extra, timeout))


def stop_server(server: Server) -> None:
    our_server.stop_server(server.proc)


def estimate_of(model: str, dtype: str, device: str = "cpu", **kw):
    """The estimate of a model named as a visitor names it (checked first, as the page does)."""
    return estimate.estimate_model(catalog.read_config(catalog.resolve(model)), devices.parse_device(device),
                                   devices.parse_dtype(dtype), **kw)


def guard_of(model: str, device: str, dtype: str, **kw):
    """The memory guard on a model named as a visitor names it."""
    return estimate.guard(catalog.read_config(catalog.resolve(model)), devices.parse_device(device),
                          devices.parse_dtype(dtype), **kw)


# A chat template in the bundled model's own voice: the visitor's words, then JULIET answers. Enough to
# see that the prompt went in through the template (its token count and its continuation change).
CHAT_TEMPLATE = ("{% for m in messages %}{{ m['role'] | upper }}:\n{{ m['content'] }}\n\n{% endfor %}"
                 "{% if add_generation_prompt %}JULIET:\n{% endif %}")


@pytest.fixture(scope="session")
def chat_model(tmp_path_factory) -> Path:
    """A copy of the bundled model given a chat template (chat_template.jinja, as Transformers 5 saves it),
    in a folder of its own: list its parent in PLAYGROUND_MODEL_DIRS to load it."""
    import shutil

    from playground.core.paths import BUNDLED_DIR

    folder = tmp_path_factory.mktemp("models") / "shakespeare-chat"
    shutil.copytree(BUNDLED_DIR, folder)
    (folder / "chat_template.jinja").write_text(CHAT_TEMPLATE, encoding="utf-8")
    return folder
