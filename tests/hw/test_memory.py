"""Memory readings: RSS and available RAM from /proc, weight bytes, and NVML against torch's allocator."""

import pytest
import torch

from playground.hw import census, memory

MiB = 2**20


def test_snapshot_reads_real_numbers():
    s = memory.snapshot()
    assert s.rss > 10 * 2**20
    assert s.available > 0
    assert s.gpus or s.vram_reason  # GPU readings, or why there are none: never an empty panel
    assert all(g.name and g.index == i for i, g in enumerate(s.gpus))


def test_without_cuda_the_snapshot_says_why_instead_of_zeros(monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)  # any machine, seen as one without CUDA
    s = memory.snapshot()
    assert s.gpus == [] and "CUDA" in s.vram_reason.text("en") and "CUDA" in s.vram_reason.text("zh")


def test_rss_grows_with_a_real_allocation():
    memory.release_memory()  # freed pages an earlier test left in the heap would be reused, not faulted in
    before = memory.rss_bytes()
    t = torch.ones(64 * 2**20 // 4)  # 64 MiB, written so the pages are resident
    after = memory.rss_bytes()
    assert after - before > 48 * 2**20
    del t


def test_proc_readings_agree_with_psutil():
    # memory reads /proc directly (cheaper than psutil on every snapshot): same numbers
    import psutil

    assert abs(memory.rss_bytes() - psutil.Process().memory_info().rss) < 8 * 2**20
    assert abs(memory.available_bytes() - psutil.virtual_memory().available) < 256 * 2**20


def test_weights_bytes_counts_tied_tensor_once_and_buffers():
    m = torch.nn.Module()
    m.emb = torch.nn.Embedding(100, 8)
    m.head = torch.nn.Linear(8, 100, bias=False)
    m.head.weight = m.emb.weight  # tied, as GPT-2's LM head
    m.register_buffer("scale", torch.ones(10, dtype=torch.float16))
    assert census.weights_bytes(m) == 100 * 8 * 4 + 10 * 2
    m.half()
    assert census.weights_bytes(m) == 100 * 8 * 2 + 10 * 2


@pytest.mark.parametrize("nvml, reserved, allocated, ok", [
    (256 << 20, 256 << 20, 256 << 20, True),          # the driver sees exactly what the allocator reserved
    ((256 + 2) << 20, 256 << 20, 256 << 20, True),    # page granularity
    (0, 256 << 20, 256 << 20, False),                 # reserved but the driver saw nothing: the wrong GPU
    (256 << 20, 256 << 20, 300 << 20, False),         # live tensors beyond the reservation: impossible
    ((256 + 512) << 20, 256 << 20, 256 << 20, False), # 512 MiB more: another process, or a new CUDA context
])
def test_nvml_and_the_allocator_tell_one_story_on_recorded_readings(nvml, reserved, allocated, ok):
    assert memory.memory_consistent(nvml, reserved, allocated) is ok


def reading(n: int) -> memory.GpuReading:
    return next(g for g in memory.gpu_readings()[0] if g.index == n)


@pytest.mark.device(kinds=("cuda",))
def test_nvml_and_the_allocator_tell_one_story(device, figures):
    """NVML's used memory and torch's `memory_allocated` / `memory_reserved` tell one story: a 256 MiB tensor
    grows all three by it, and freeing it (`empty_cache`) gives it back."""
    nvml, reason = memory.nvml_module()
    if nvml is None:
        pytest.skip(reason.text("en") if reason else "NVML is not available")
    n, dev = torch.device(device).index, torch.device(device)
    torch.zeros(1, device=dev)  # the CUDA context exists before the baseline
    torch.cuda.synchronize(dev)
    torch.cuda.empty_cache()
    a = reading(n)
    x = torch.ones(256 * MiB, dtype=torch.uint8, device=dev)
    torch.cuda.synchronize(dev)
    b = reading(n)
    del x
    torch.cuda.synchronize(dev)
    torch.cuda.empty_cache()
    c = reading(n)
    grow = dict(nvml=b.nvml_used - a.nvml_used, reserved=b.reserved - a.reserved, allocated=b.allocated - a.allocated)
    figures.update(growth=grow, nvml_used_after_free=c.nvml_used, reserved_after_free=c.reserved)
    assert grow["allocated"] == 256 * MiB
    assert memory.memory_consistent(grow["nvml"], grow["reserved"], grow["allocated"]), grow
    assert memory.memory_consistent(b.nvml_used - c.nvml_used, b.reserved - c.reserved, b.allocated - c.allocated)


def test_a_missing_gpu_is_explained_in_both_languages(monkeypatch):
    # without CUDA: no readings, and the reason is the missing CUDA (the build, or no device)
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)  # any machine, seen as one without CUDA
    gpus, reason = memory.gpu_readings()
    assert gpus == [] and reason.key in ("vram.no_cuda_build", "vram.no_device")
    assert reason.text("en") and reason.text("zh") != reason.text("en")


def test_a_peak_is_reset_and_read_on_the_device_named(monkeypatch):
    """Compare reset the current GPU's peak (`torch.cuda.reset_peak_memory_stats()`, no device) and read the row's:
    a cuda:1 row's peak held earlier work on it. The allocator's peak is reset and read on the device named; the
    CUDA runtime is simulated here (recorded calls), its behaviour is data."""
    calls = []
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "synchronize", lambda d=None: calls.append(("sync", str(d))))
    monkeypatch.setattr(torch.cuda, "reset_peak_memory_stats", lambda d=None: calls.append(("reset", str(d))))
    monkeypatch.setattr(torch.cuda, "max_memory_allocated", lambda d=None: calls.append(("peak", str(d))) or 123)
    memory.reset_peak("cuda:1")
    assert memory.peak_allocated("cuda:1") == 123
    assert calls == [("sync", "cuda:1"), ("reset", "cuda:1"), ("sync", "cuda:1"), ("peak", "cuda:1")]
    calls.clear()
    memory.reset_peak("cpu")
    assert memory.peak_allocated("cpu") is None and calls == []  # no allocator peak on the CPU: nothing asked
