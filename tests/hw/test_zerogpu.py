"""ZeroGPU awareness: detection, wrapping with a duration that fits, the emulated label.

A stand-in `spaces` module records what `spaces.GPU` was asked for; the real
`spaces` package is not installed here, and its absence is tested as it is.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import inspect
import sys
import types
from pathlib import Path

import pytest
import torch

from playground.hw import devices, zerogpu


class FakeSpaces(types.ModuleType):
    """What the playground uses of `spaces`: GPU(duration=...)(fn) -> a wrapped fn."""

    def __init__(self) -> None:
        super().__init__("spaces")
        self.decorated: list[dict] = []  # one entry per decorated function
        self.calls: list[dict] = []  # one entry per call of a decorated function

    def GPU(self, fn=None, duration=60):  # noqa: N802  (the real name)
        if fn is not None:  # used bare: @spaces.GPU
            return self.GPU(duration=duration)(fn)

        def decorate(f):
            self.decorated.append({"fn": f, "duration": duration})

            def wrapper(*args, **kwargs):
                seconds = duration(*args, **kwargs) if callable(duration) else duration
                self.calls.append({"fn": f, "seconds": seconds, "args": args, "kwargs": kwargs})
                return f(*args, **kwargs)

            wrapper.__wrapped__ = f
            return wrapper

        return decorate


@pytest.fixture
def on_zerogpu(monkeypatch):
    fake = FakeSpaces()
    monkeypatch.setitem(sys.modules, "spaces", fake)
    monkeypatch.setenv("SPACES_ZERO_GPU", "true")
    return fake


@pytest.fixture
def off_zerogpu(monkeypatch):
    monkeypatch.delenv("SPACES_ZERO_GPU", raising=False)


def generate(prompt: str, max_new_tokens: int, temperature: float = 0.0):
    return f"{prompt}:{max_new_tokens}:{temperature}"


def stream(prompt: str, max_new_tokens: int):
    yield from (f"{prompt}{i}" for i in range(max_new_tokens))


def test_detected_with_the_flag_and_the_package(on_zerogpu):
    st = zerogpu.status()
    assert st.active and "SPACES_ZERO_GPU" in st.reason
    assert zerogpu.active()


def test_gpu_work_is_wrapped_with_a_duration_that_fits_the_tokens(on_zerogpu):
    wrapped = zerogpu.gpu(generate)
    assert wrapped is not generate and inspect.unwrap(wrapped) is generate
    assert [inspect.unwrap(d["fn"]) for d in on_zerogpu.decorated] == [generate]

    assert wrapped("ROMEO", 32) == "ROMEO:32:0.0"  # the real function still runs
    assert wrapped("ROMEO", max_new_tokens=1000, temperature=0.5) == "ROMEO:1000:0.5"
    short, long = (c["seconds"] for c in on_zerogpu.calls)
    assert short == zerogpu.seconds_for_tokens(32)
    assert long == zerogpu.seconds_for_tokens(1000)
    assert zerogpu.MIN_SECONDS <= short < long <= zerogpu.MAX_SECONDS


def test_duration_grows_with_tokens_within_bounds():
    secs = [zerogpu.seconds_for_tokens(n) for n in (1, 64, 256, 512, 1024, 10**6)]
    assert secs == sorted(secs)
    assert secs[0] == zerogpu.MIN_SECONDS and secs[-1] == zerogpu.MAX_SECONDS
    # enough for the tokens at the assumed decode rate, on top of the fixed start-up time
    assert zerogpu.seconds_for_tokens(512) >= zerogpu.BASE_SECONDS + 512 / zerogpu.TOKENS_PER_SECOND


def test_generators_are_wrapped_and_still_stream(on_zerogpu):
    wrapped = zerogpu.gpu(stream)
    assert list(wrapped("t", 3)) == ["t0", "t1", "t2"]
    assert on_zerogpu.calls[0]["seconds"] == zerogpu.seconds_for_tokens(3)


def test_explicit_durations_and_decorator_forms(on_zerogpu):
    fixed = zerogpu.gpu(lambda: "x", duration=30)
    assert fixed() == "x" and on_zerogpu.calls[-1]["seconds"] == 30

    @zerogpu.gpu(duration=lambda prompt, max_new_tokens: 7)
    def f(prompt, max_new_tokens):
        return prompt

    assert f("p", 5) == "p" and on_zerogpu.calls[-1]["seconds"] == 7

    @zerogpu.gpu
    def no_tokens():
        return 1

    assert no_tokens() == 1 and on_zerogpu.calls[-1]["seconds"] == 60


def test_unreadable_token_count_asks_for_the_longest(on_zerogpu):
    duration = zerogpu.tokens_duration(generate)
    assert duration("p", "lots") == zerogpu.MAX_SECONDS
    assert duration("p") == zerogpu.MAX_SECONDS
    assert duration("p", "48") == zerogpu.seconds_for_tokens(48)  # a Number box may send text
    with pytest.raises(TypeError):
        zerogpu.tokens_duration(lambda prompt: prompt)


def test_sync_waits_for_the_gpu_inside_a_decorated_call_and_not_outside(on_zerogpu, monkeypatch):
    """ZeroGPU's main process only emulates CUDA, so devices.sync returns at once there; inside a @spaces.GPU call
    (ZeroGPU runs it in a worker holding the GPU) CUDA is real: sync returned early there too, and timings read
    in a decorated call stopped before the kernels did."""
    waited = []
    monkeypatch.setattr(torch.cuda, "synchronize", lambda d=None: waited.append(str(d)))
    devices.sync("cuda:0")
    assert waited == []  # the main process: nothing real to wait for

    def timed(max_new_tokens):
        devices.sync("cuda:0")

    def streamed(max_new_tokens):
        devices.sync("cuda:0")
        yield max_new_tokens

    zerogpu.gpu(timed)(8)
    assert waited == ["cuda:0"]
    assert list(zerogpu.gpu(streamed)(8)) == [8] and waited == ["cuda:0", "cuda:0"]
    devices.sync("cuda:0")
    assert waited == ["cuda:0", "cuda:0"]  # outside again
    assert zerogpu.gpu(lambda max_new_tokens: zerogpu.in_gpu_call())(1) and not zerogpu.in_gpu_call()


def test_labels_say_emulated_on_zerogpu(on_zerogpu):
    label = zerogpu.timing_label()
    assert "emulated" in label and "@spaces.GPU" in label
    assert "\n" not in label


@pytest.mark.parametrize("flag", ["", "0", "false", "no"])
def test_off_without_the_flag_nothing_is_wrapped_and_no_label(monkeypatch, flag):
    fake = FakeSpaces()
    monkeypatch.setitem(sys.modules, "spaces", fake)  # present, but the flag says no
    monkeypatch.setenv("SPACES_ZERO_GPU", flag)
    assert not zerogpu.active()
    assert zerogpu.gpu(generate) is generate
    assert zerogpu.timing_label() == ""
    assert fake.decorated == []


def _real_spaces_installed() -> bool:
    try:
        importlib.metadata.distribution("spaces")
        return True
    except importlib.metadata.PackageNotFoundError:
        return False


def test_flag_without_the_package_is_handled(monkeypatch):
    # The real absence of `spaces`, not a mock of it.
    if _real_spaces_installed():
        pytest.fail("the `spaces` package is installed here; this test needs it absent")
    monkeypatch.delitem(sys.modules, "spaces", raising=False)
    monkeypatch.setenv("SPACES_ZERO_GPU", "true")

    # From the repository root, the spaces/ folder (the Space's README) imports as an
    # empty namespace package: detection must not mistake it for Hugging Face's.
    repo_on_path = importlib.util.find_spec("spaces") is not None
    if repo_on_path:
        st = zerogpu.status()
        assert not st.active and "no GPU decorator" in st.reason
        assert zerogpu.gpu(generate) is generate and zerogpu.timing_label() == ""
        monkeypatch.delitem(sys.modules, "spaces", raising=False)

    # Without that folder on the path, `import spaces` fails outright.
    monkeypatch.setattr(sys, "path", [p for p in sys.path if not (Path(p or ".") / "spaces").is_dir()])
    importlib.invalidate_caches()
    assert importlib.util.find_spec("spaces") is None
    st = zerogpu.status()
    assert not st.active and "does not import" in st.reason
    assert zerogpu.gpu(generate) is generate
    assert zerogpu.timing_label() == ""
    monkeypatch.delitem(sys.modules, "spaces", raising=False)


def test_nothing_changes_off_zerogpu(off_zerogpu):
    assert not zerogpu.active()
    assert "not set" in zerogpu.status().reason
    assert zerogpu.gpu(stream) is stream and zerogpu.gpu(generate, duration=5) is generate
    assert zerogpu.timing_label() == ""
    assert "spaces" not in sys.modules or not isinstance(sys.modules["spaces"], FakeSpaces)
