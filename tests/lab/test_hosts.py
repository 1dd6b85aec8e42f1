"""The lab on GPU hosts this machine is not, as data: a `Host` profile, and what torch reaches on it.

A fake `cuda:1` on a one-GPU host reached the driver: where CUDA is available, FakeTensor makes a real
tensor on each fake CUDA device it meets (torch 2.11's `init_gpu_context`, recorded below), and "invalid
device ordinal" took every scenario of that target down with it (tests/lab/conftest.py's `results_on`).
"""

from __future__ import annotations

import functools
from types import SimpleNamespace

import pytest
import torch
import torch._subclasses.fake_tensor as ft

from playground.lab import harness, scenarios, target
from tests.lab import conftest as lab_conftest

# torch 2.11's torch/_subclasses/fake_tensor.py (recorded from its source; 2.13 asks torch.accelerator instead,
# and skips the call only through a bug that a pending PyTorch fix removes)
TORCH_2_11_INIT = '''
@functools.cache
def init_gpu_context(device: torch.device) -> None:
    # Backward will error with cuda Fake Tensors if no cuda tensors have been initialized first
    if torch.cuda.is_available() or torch.xpu.is_available():
        (
            torch.empty(1, device=device)
            if torch.version.hip is None
            else torch.zeros(1, device=device)
        )
'''


class OneGpuTorch:
    """What the recorded function reaches on a host with one CUDA device: CUDA available, cuda:0 allocates,
    any other ordinal is the driver's "invalid device ordinal"."""

    cuda = SimpleNamespace(is_available=lambda: True)
    xpu = SimpleNamespace(is_available=lambda: False)
    version = SimpleNamespace(hip=None)

    def __init__(self) -> None:
        self.made: list[str] = []

    def empty(self, *size, device):
        d = torch.device(device)
        self.made.append(str(d))
        if (d.index or 0) >= 1:
            raise RuntimeError("CUDA error: invalid device ordinal")


@pytest.fixture
def one_gpu_host(monkeypatch) -> OneGpuTorch:
    gpu = OneGpuTorch()
    ns = {"functools": functools, "torch": gpu}
    exec(compile(TORCH_2_11_INIT, "fake_tensor.py (torch 2.11)", "exec"), ns)
    monkeypatch.setattr(ft, "init_gpu_context", ns["init_gpu_context"])
    monkeypatch.setattr(target.Host, "here", classmethod(lambda cls: target.Host(cuda=1)))
    return gpu


def test_a_second_gpu_is_simulated_on_a_one_gpu_host_without_reaching_the_driver(one_gpu_host):
    sc = scenarios.get("cuda-mixed-to")
    one_gpu = target.Target("cuda:0", devices=1)
    assert target.for_scenario(sc, one_gpu) == target.Target("cuda:1", simulated=True, stand_in="fake", devices=2)
    r = harness.run(sc, target=one_gpu)
    assert r.simulated and r.raised and not r.cannot_run, r.cannot_run
    assert sc.expected("simulated").problems(r.raised, r.error_type, r.error_bases, r.error_message, r.warnings) == []
    assert {row.device for row in r.tensors} == {"cuda:0", "cuda:1"}
    assert "cuda:1" not in one_gpu_host.made  # the simulated GPU never reached the driver
    assert one_gpu_host.made == ["cuda:0"]  # the one present was initialised, as FakeTensor does it


def test_one_scenario_that_crashes_fails_alone(monkeypatch):
    """results_on lost every scenario of a target when one raised; now only that scenario's tests fail."""
    real = harness.run

    def crash_one(sc, *a, **kw):
        if sc.id == "cuda-mixed-to":
            raise RuntimeError("CUDA error: invalid device ordinal")
        return sc.id

    monkeypatch.setattr(harness, "run", crash_one)
    t = target.Target("cuda:7", simulated=True, stand_in="fake")  # a target of this test's own
    try:
        results = lab_conftest.results_on(t, SimpleNamespace(model=None, tokenizer=None))
    finally:
        lab_conftest._RESULTS.pop(t, None)
        monkeypatch.setattr(harness, "run", real)
    assert results["inputs-on-cpu"] == "inputs-on-cpu" and len(results) == len(scenarios.SCENARIOS)
    with pytest.raises(AssertionError, match="scenario cuda-mixed-to did not run to a result: RuntimeError: CUDA"):
        results["cuda-mixed-to"]


def test_dataparallel_is_a_two_gpu_mistake_and_says_what_one_gpu_does():
    """With one visible GPU, nn.DataParallel's constructor moves the module itself: the lab "raised for real" on a
    one-GPU host an error no one-GPU user gets (and its broken script exited 0). It is a two-GPU mistake now,
    simulated where fewer are present, and the result says what one GPU does, from the installed source."""
    sc = scenarios.get("dataparallel-not-moved")
    one_gpu = target.Target("cuda:0", devices=1)  # a one-GPU host's page target
    assert target.for_scenario(sc, one_gpu).simulated
    r = harness.run(sc, target=one_gpu)
    assert r.simulated and r.raised and "on device cuda:0 (device_ids[0])" in r.error_message, r.error_message
    assert r.measured["one_gpu_constructor"].endswith("self.module.to(self.src_device_obj)")
    assert r.measured["one_gpu_constructor"].startswith("torch/nn/parallel/data_parallel.py:")
    note = next(n for n in r.notes if n.key == "scenario.dataparallel-not-moved.one_gpu")
    assert "moves the module to that GPU itself" in note.text("en") and "构造函数自己" in note.text("zh")
    assert r.fix_ok, r.fix_error


def test_dataparallel_on_a_one_gpu_host_runs_to_a_result_where_its_constructor_moves_a_meta_module(monkeypatch):
    """On the H200 (2026-11-27) the scenario crashed before its mistake: measuring `nn.DataParallel(model.to('meta'))`
    let the one-GPU constructor move the meta module to the GPU ("Cannot copy out of meta tensor"). Here a
    constructor that moves the module as the one-GPU one does (to the CPU, the only device present) stands in."""
    real = torch.nn.DataParallel

    class MovesTheModule(real):
        def __init__(self, module, *args, **kwargs):
            super().__init__(module, *args, **kwargs)
            self.module.to(torch.device("cpu"))  # what `self.module.to(self.src_device_obj)` does with one GPU

    monkeypatch.setattr(torch.nn, "DataParallel", MovesTheModule)
    r = harness.run(scenarios.get("dataparallel-not-moved"))
    assert r.measured["to_meta_then_wrap"].startswith("raises NotImplementedError: Cannot copy out of meta tensor")
    assert r.measured["wrap_then_to_meta"] == "meta"
    assert r.raised and r.fix_ok, r.fix_error
