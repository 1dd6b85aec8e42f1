"""Devices and dtypes: discovery with reasons, parsing what a visitor sent once, hints on costs."""

import subprocess
import sys

import pytest
import torch

from playground.core.errors import UserError
from playground.hw import devices
from tests.conftest import present


def test_cpu_always_available_and_auto_listed():
    devs = {d.id: d for d in devices.discover()}
    assert devs["cpu"].available and devs["cpu"].name
    assert devs["auto"].available


@pytest.mark.device
def test_every_device_is_found_or_absent_with_its_reason(figures):
    """Every device the picker lists is found (as torch itself counts them) or absent with its reason in
    English and Chinese; the CPU is usable."""
    devs = devices.discover()
    cpu = next(d for d in devs if d.id == "cpu")
    figures.update(devices={d.id: "available" if d.available else d.reason and d.reason.text("en") for d in devs},
                   cpu_name=cpu.name, threads=torch.get_num_threads(), bf16_native=cpu.bf16, fp16_native=cpu.fp16)
    assert cpu.available and cpu.name
    assert [d.id for d in devs if d.available and d.kind != "auto"] == present()
    assert {d.kind for d in devs} == {"cpu", "cuda", "mps", "auto"}  # a kind this machine lacks is listed, absent
    for d in devs:
        if not d.available:
            assert d.reason is not None, f"{d.id} is absent without a reason"
            assert d.reason.text("en") and d.reason.text("zh") != d.reason.text("en")
            assert d.to_dict()["reason"] == d.reason.text("en")  # the API's English


FIRST_CALL = ("import time, torch; t = time.perf_counter(); torch.zeros(1, device={dev!r}); "
              "torch.cuda.synchronize({dev!r}); print(time.perf_counter() - t)")


@pytest.mark.device(kinds=("cuda",))
def test_a_fresh_processs_first_cuda_call_is_timed_apart(device, figures):
    """A fresh process's first CUDA call (it creates the CUDA context: what the first `.to("cuda")` pays on
    top of the copy) runs and is timed apart."""
    proc = subprocess.run([sys.executable, "-c", FIRST_CALL.format(dev=device)], capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    figures["first_cuda_call_seconds"] = seconds = float(proc.stdout.split()[-1])
    assert seconds > 0


def test_every_kind_is_listed_available_or_with_its_reason():
    devs = devices.discover()
    for kind in ("cuda", "mps"):
        listed = [d for d in devs if d.kind == kind]
        assert listed, f"{kind} must be listed even when absent"
        assert all(d.available or d.reason for d in listed)
    assert [d.id for d in devs if d.kind == "cuda" and d.available] == [f"cuda:{i}" for i in range(
        sum(d.kind == "cuda" and d.available for d in devs))]  # cuda:0, cuda:1, ... in order


def test_absent_gpu_is_listed_with_reason(monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)  # any machine, seen as one without CUDA
    cuda = [d for d in devices.discover() if d.kind == "cuda"]
    assert len(cuda) == 1 and not cuda[0].available and cuda[0].id == "cuda"
    assert "CUDA" in cuda[0].reason.text("en") and "CUDA" in cuda[0].reason.text("zh")
    assert cuda[0].to_dict()["reason"] == cuda[0].reason.text("en")  # the API's English


@pytest.mark.parametrize("bad", ["gpu", "", "   ", "cpu; rm -rf /", "cuda:99", "CPU", "cuda:0:1", "metal"])
def test_parse_device_rejects_with_reason(bad):
    with pytest.raises(UserError) as e:
        devices.parse_device(bad)
    assert "cpu" in str(e.value)  # always names what is available


def test_parse_device_accepts_cpu_and_discovers_once(monkeypatch):
    assert devices.parse_device("cpu").id == "cpu"
    calls = []
    real = devices.discover
    monkeypatch.setattr(devices, "discover", lambda: calls.append(1) or real())
    assert devices.parse_device(" auto ").id == "auto" and calls == [1]


@pytest.mark.parametrize("bad", ["int16", "float64", "fp32", "", "half", None, 3, "int4 "[:3]])
def test_parse_dtype_rejects(bad):
    with pytest.raises(UserError) as e:
        devices.parse_dtype(bad)
    assert "float32" in str(e.value)


def test_parse_dtype_gives_a_torch_dtype_or_auto():
    assert devices.parse_dtype(" bfloat16") is torch.bfloat16 and devices.parse_dtype("auto") == "auto"
    assert devices.dtype_name(torch.float16) == "float16" and devices.dtype_name("auto") == "auto"


def test_quantized_dtypes_are_names_loaded_in_the_base_dtype():
    """int8 and int4 are dtypes of the choice: kept as their names (quantized after loading), from_pretrained
    given the base dtype."""
    assert devices.parse_dtype(" int8 ") == "int8" and devices.parse_dtype("int4") == "int4"
    assert devices.load_dtype("int8") is devices.QUANTIZED_BASE is torch.float32
    assert devices.load_dtype(torch.bfloat16) is torch.bfloat16 and devices.dtype_name("int4") == "int4"
    cpu = devices.DeviceInfo(id="cpu", kind="cpu", available=True, name="x")
    assert devices.hint(cpu, "int8") == ("hint.quantized", {"dtype": "int8"})


def test_fp16_hint_depends_on_cpu_flags(monkeypatch):
    cpu = devices.DeviceInfo(id="cpu", kind="cpu", available=True, name="x")
    monkeypatch.setattr(devices, "cpu_flags", lambda: {"avx2"})
    hint = devices.hint(cpu, torch.float16)
    assert "no native float16" in hint.text("en") and "没有原生 float16" in hint.text("zh")  # said, with no factor
    monkeypatch.setattr(devices, "cpu_flags", lambda: {"avx2", "avx512_fp16"})
    assert devices.hint(cpu, torch.float16) is None


def test_native_flags():
    assert devices.cpu_native_fp16({"asimdhp"}) and not devices.cpu_native_fp16({"avx2"})
    assert devices.cpu_native_bf16({"amx_bf16"}) and not devices.cpu_native_bf16(set())


def test_bf16_hint_on_old_gpu():
    old = devices.DeviceInfo(id="cuda:0", kind="cuda", available=True, name="Tesla T4", bf16=False, capability="7.5")
    assert "Tesla T4" in devices.hint(old, torch.bfloat16).text("en")


def test_sync_waits_for_the_named_device_only(monkeypatch):
    waited = []
    monkeypatch.delenv("SPACES_ZERO_GPU", raising=False)
    monkeypatch.setattr(torch.cuda, "synchronize", lambda device=None: waited.append(("cuda", str(device))))
    monkeypatch.setattr(torch.mps, "synchronize", lambda: waited.append(("mps", None)))
    devices.sync("cpu")
    devices.sync(None)
    devices.sync(torch.device("cpu"))
    assert waited == []  # the CPU runs synchronously: nothing to wait for
    devices.sync("cuda:1")
    devices.sync("mps")
    assert waited == [("cuda", "cuda:1"), ("mps", None)]  # the GPU named, not the current one


@pytest.mark.slow
def test_the_hardware_layer_turns_cudnns_attention_off_for_the_whole_process():
    """cuDNN's SDPA graphs are cached per thread and the server generates in a fresh thread per request: on an H200
    every float16/bfloat16 decode step paid a graph build (docs/gpu.md, 2026-11-28). Importing the layer that owns the
    device APIs turns the backend off; a fresh interpreter shows PyTorch's default beside it."""
    code = ("import torch; before = torch.backends.cuda.cudnn_sdp_enabled(); import playground.hw.devices; "
            "print(before, torch.backends.cuda.cudnn_sdp_enabled())")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    assert out.stdout.split() == ["True", "False"], out.stdout + out.stderr


def test_cudnn_attention_sets_the_flag_inside_the_block_and_restores_it():
    was = torch.backends.cuda.cudnn_sdp_enabled()
    with devices.cudnn_attention(not was):
        assert torch.backends.cuda.cudnn_sdp_enabled() is (not was)
    assert torch.backends.cuda.cudnn_sdp_enabled() is was
