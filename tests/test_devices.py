import pytest
import torch

from playground import devices
from playground.inputs import UserError


def test_cpu_always_available_and_auto_listed():
    devs = {d.id: d for d in devices.discover()}
    assert devs["cpu"].available and devs["cpu"].name
    assert devs["auto"].available


def test_absent_gpu_is_listed_with_reason():
    devs = devices.discover()
    cuda = [d for d in devs if d.kind == "cuda"]
    assert cuda, "CUDA must be listed even when absent"
    if not torch.cuda.is_available():
        assert all(not d.available and d.reason for d in cuda)
        assert "CUDA" in cuda[0].reason or "cuda" in cuda[0].reason.lower()
    mps = [d for d in devs if d.kind == "mps"]
    assert len(mps) == 1 and (mps[0].available or mps[0].reason)


@pytest.mark.parametrize("bad", ["gpu", "", "   ", "cpu; rm -rf /", "cuda:99", "CPU", "cuda:0:1", "metal"])
def test_check_device_rejects_with_reason(bad):
    with pytest.raises(UserError) as e:
        devices.check_device(bad)
    assert "cpu" in str(e.value)  # always names what is available


def test_check_device_accepts_cpu():
    assert devices.check_device("cpu").id == "cpu"
    assert devices.check_device(" auto ").id == "auto"


@pytest.mark.parametrize("bad", ["int8", "float64", "fp32", "", "half", None, 3])
def test_check_dtype_rejects(bad):
    with pytest.raises(UserError) as e:
        devices.check_dtype(bad)
    assert "float32" in str(e.value)


def test_fp16_hint_depends_on_cpu_flags(monkeypatch):
    cpu = devices.DeviceInfo(id="cpu", kind="cpu", available=True, name="x")
    monkeypatch.setattr(devices, "cpu_flags", lambda: {"avx2"})
    assert "slower" in devices.dtype_hint(cpu, "float16")
    monkeypatch.setattr(devices, "cpu_flags", lambda: {"avx2", "avx512_fp16"})
    assert devices.dtype_hint(cpu, "float16") == ""


def test_native_flags():
    assert devices.cpu_native_fp16({"asimdhp"}) and not devices.cpu_native_fp16({"avx2"})
    assert devices.cpu_native_bf16({"amx_bf16"}) and not devices.cpu_native_bf16(set())


def test_bf16_hint_on_old_gpu():
    old = devices.DeviceInfo(id="cuda:0", kind="cuda", available=True, name="Tesla T4", bf16=False, capability="7.5")
    assert "bfloat16" in devices.dtype_hint(old, "bfloat16")


def test_sync_is_safe_on_cpu():
    devices.sync("cpu")
    devices.sync(None)
