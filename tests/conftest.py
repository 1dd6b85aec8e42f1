"""Shared fixtures: the bundled model loaded once, one OpenMP thread, a live server for end-to-end tests,
the device tests' parametrisation (each device present; `--device X` keeps one) and the lab's device targets."""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

# The suite runs a test file per core (`-n 2`), and each process it starts (a CLI run, a lab script, the GPU run's
# steps) runs beside the other worker's. torch gives every process one OpenMP thread per core, and libgomp's
# threads spin at each barrier: two processes with two threads each on two cores wait for each other's time
# slices (measured: tests/tools, tests/lab and tests/load 243 s -> 224 s with one thread). So one thread per
# process, here and in every process started from here, unless a test sets its own; the servers the tests start
# choose their own as the README's `python app.py` does (SUITE_ENV is dropped from their environment).
SUITE_ENV = {} if "OMP_NUM_THREADS" in os.environ else {"OMP_NUM_THREADS": "1"}
os.environ.update(SUITE_ENV)

# torch and the playground are imported where they are used, in the process that runs the tests: under
# `-n 2` this file is also read by xdist's controller, which only hands out tests, and importing them there
# (~5 s) delayed both workers' start.
from playground.tools import server as our_server  # noqa: E402  (no torch: the servers' starter)
from tests import schedule  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
pytest_plugins = ("pytester",)  # tests/tools/test_selfcheck.py runs the self-check's collector on small suites


def pytest_addoption(parser):
    parser.addoption("--device", default=None, metavar="DEVICE",
                     help="run the device tests (-m device) on this device only: cpu, cuda, cuda:N or mps "
                          "(device_map='auto' tests run too); one absent here skips, saying why")


def pytest_configure(config):
    config.addinivalue_line("markers", "slow: a second or more here (still runs in CI; "
                                       "-m \"not slow\" is the quick subset)")
    config.addinivalue_line("markers", "browser: drives a real Chromium through Playwright")
    config.addinivalue_line("markers", "device: a path of the playground run on each device target present "
                                       "(the self-check: pytest -m device)")
    schedule.keep_our_order(config)
    chosen = config.getoption("device")
    if chosen is not None and not re.fullmatch(r"cpu|mps|cuda(:\d{1,3})?", chosen):
        raise pytest.UsageError(f"--device must be cpu, cuda, cuda:N or mps; got {chosen!r}")


def pytest_collection_finish(session):
    # every test module imported: the libraries are frozen out of the collector, as the server does once it is up
    # (an unload's gc.collect() walked them all: 0.24 s each, paid by every pool test's teardown)
    from playground.hw import memory

    memory.freeze_startup_objects()


# ---------------------------------------------------------------- the device tests
# A test marked `device` that takes a `device` argument runs once on each device present: "cpu", every
# "cuda:N", "mps". A kind this machine lacks is one item that skips with the playground's own reason
# ("this PyTorch build has no CUDA"), so the self-check shows what it could not run. The marker's `kinds`
# narrows the kinds (`@pytest.mark.device(kinds=("cuda",))`); "auto" is device_map="auto", always present.
# A device test without a `device` argument runs on the CPU.

KINDS = ("cpu", "cuda", "mps")
WEB_LAYER = ("gradio", "gradio_client")  # what tests/web and tests/e2e import; a bare GPU image has neither


def need_web_layer(folder: str) -> None:
    """Called at the top of a folder's conftest: where the web layer's packages are absent (a bare CUDA image,
    which runs the device tests through `python -m playground selfcheck`), the folder's tests skip, naming what
    is missing, instead of failing to collect. Under .ci/run (PLAYGROUND_REQUIRE_BROWSER=1) it is a failure."""
    missing = [m for m in WEB_LAYER if importlib.util.find_spec(m) is None]
    if not missing:
        return
    reason = (f"{folder} needs the web layer: {' and '.join(missing)} not installed "
              "(pip install -r tests/requirements.txt)")
    if os.environ.get("PLAYGROUND_REQUIRE_BROWSER") == "1":
        pytest.fail(reason, pytrace=False)
    pytest.skip(reason, allow_module_level=True)


def chosen_device(config) -> str | None:
    d = config.getoption("device")
    return "cuda:0" if d == "cuda" else d


def present() -> list[str]:
    """The devices this machine has, asked of torch itself (not of the discovery under test)."""
    import torch

    cuda = [f"cuda:{i}" for i in range(torch.cuda.device_count())] if torch.cuda.is_available() else []
    return ["cpu", *cuda, *(["mps"] if torch.backends.mps.is_available() else [])]


def absent_reason(device: str) -> str:
    from playground.core.errors import UserError
    from playground.hw import devices

    try:
        devices.parse_device(device)
    except UserError as e:
        return str(e)
    return f"{device} is not visible to torch"  # discovery lists it: the device tests say which is right


def pytest_generate_tests(metafunc):
    if "device_target" in metafunc.fixturenames:
        from playground.lab import target

        metafunc.parametrize("device_target", [pytest.param(t, id=str(t), marks=pytest.mark.device)
                                               for t in target.targets()], indirect=True)
    marker = metafunc.definition.get_closest_marker("device")
    if marker is None or "device" not in metafunc.fixturenames:
        return
    here, chosen = present(), chosen_device(metafunc.config)
    params = []
    for kind in marker.kwargs.get("kinds", KINDS):
        found = [d for d in here if d.split(":")[0] == kind] if kind != "auto" else ["auto"]
        if chosen and chosen.split(":")[0] == kind and chosen not in found:
            found.append(chosen)  # asked for, not here: it runs and skips, saying why
        for d in found or [kind]:
            skip = () if d in here or d == "auto" else pytest.mark.skip(reason=absent_reason(d))
            params.append(pytest.param(d, id=d, marks=skip))
    metafunc.parametrize("device", params)


def device_of(item) -> str:
    """The device a device test runs on: its `device` argument, a real lab target's device (a simulated
    target runs on the CPU), else the CPU."""
    params = getattr(item, "callspec", None) and item.callspec.params or {}
    lab_target = params.get("device_target")
    if lab_target is not None:
        return "cpu" if lab_target.simulated else lab_target.device
    return params.get("device") or "cpu"


def pytest_collection_modifyitems(config, items):
    """Each device test carries its device (the self-check's summary reads it); `--device X` keeps X's
    (and device_map="auto"'s) and deselects the other devices' tests. Tests not marked `device` stay."""
    chosen = chosen_device(config)
    keep, drop = [], []
    for item in items:
        if item.get_closest_marker("device") is not None:
            item.user_properties.append(("device", device_of(item)))
            if chosen is not None and device_of(item) not in (chosen, "auto"):
                drop.append(item)
                continue
        keep.append(item)
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = keep
    schedule.sort_items(items)  # the longest-running folders first (tests/schedule.py)



@pytest.fixture
def figures(request) -> dict:
    """What a device test measured (fill it): the self-check's summary carries it, beside the verdict."""
    found: dict = {}
    request.node.user_properties.append(("figures", found))
    return found


@pytest.fixture
def pool():
    """A model pool of the test's own (the page's class, not its instance), emptied afterwards."""
    from playground.run.pool import ModelPool

    p = ModelPool()
    yield p
    p.clear()


def load(model: str, device: str = "cpu", dtype: str = "float32") -> loader.LoadedModel:
    """A model loaded through the playground's own path (checked as the page checks it, then timed phases)."""
    from playground.load import loader

    return loader.load(loader.prepare(*loader.parse(model, device, dtype)))


@pytest.fixture(scope="session")
def bundled():
    """The bundled model, loaded through the playground's own path (cpu, float32)."""
    return load("shakespeare-gpt2", "cpu", "float32")


@pytest.fixture
def device_target(request) -> target.Target:
    """Each device target present: the simulated one, then every real GPU (`cuda:N`, `mps`). A test that
    takes it runs once per target (pytest_generate_tests), marked `device`, and takes its expectations from the
    scenarios' data."""
    return request.param


@pytest.fixture
def one_thread():
    # For tests that check bytes, tokens and consistency, not speed: on a 2-core machine shared with
    # other processes, two OpenMP threads spin against each other and a generation runs ~6x slower.
    import torch

    n = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(n)


HEARTBEAT = {"GRADIO_HEARTBEAT_INTERVAL": "2"}


class Server:
    def __init__(self, proc: subprocess.Popen, url: str, log: Path):
        self.proc, self.url, self.log = proc, url, log

    def log_text(self) -> str:
        return self.log.read_text(errors="replace")


def start_server(tmp: Path, env_extra: dict | None = None, timeout: float = 120) -> Server:
    """Run `python app.py` exactly as the README says, on a free port; wait for HTTP 200
    (the soak's and the bench's starter too: one way to start the server for all three)."""
    # Gradio notices a closed tab or client when its heartbeat stream next writes (every 15 s by default),
    # then runs the unload event that releases the visitor's model: 2 s here, so tests that close a visitor
    # wait seconds, not tens of seconds, for what they check.
    unset = {k: None for k in SUITE_ENV}  # the server as `python app.py` runs: torch threads of its own choosing
    return Server(*our_server.start_server(tmp, {**unset, **HEARTBEAT, **(env_extra or {})}, timeout))


def fresh_torch_threads() -> int:
    """torch's own thread count in a fresh process that was not told one, as a server the tests start has it."""
    global _FRESH_THREADS
    if _FRESH_THREADS is None:
        env = {k: v for k, v in os.environ.items() if k not in SUITE_ENV}
        done = subprocess.run([sys.executable, "-c", "import torch; print(torch.get_num_threads())"], env=env,
                              capture_output=True, text=True, check=True, timeout=120)
        _FRESH_THREADS = int(done.stdout)
    return _FRESH_THREADS


_FRESH_THREADS: int | None = None


def stop_server(server: Server) -> None:
    our_server.stop_server(server.proc)


def estimate_of(model: str, dtype: str, device: str = "cpu", **kw):
    """The estimate of a model named as a visitor names it (checked first, as the page does)."""
    from playground.hw import devices
    from playground.load import catalog, estimate

    return estimate.estimate_model(catalog.read_config(catalog.resolve(model)), devices.parse_device(device),
                                   devices.parse_dtype(dtype), **kw)


def guard_of(model: str, device: str, dtype: str, **kw):
    """The memory guard on a model named as a visitor names it."""
    from playground.hw import devices
    from playground.load import catalog, estimate

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


@pytest.fixture(scope="session")
def private_checkpoint(tmp_path_factory) -> Path:
    """A copy of the bundled model in a folder of its own (list its parent in PLAYGROUND_MODEL_DIRS to load it). A cold
    run needs a checkpoint no other process maps: a mapped page stays in the page cache whatever is evicted, and the
    lab's copy of the bundled model (and other processes on this machine) map the bundled file."""
    import shutil

    from playground.core.paths import BUNDLED_DIR

    folder = tmp_path_factory.mktemp("private") / "shakespeare-private"
    shutil.copytree(BUNDLED_DIR, folder)
    return folder
