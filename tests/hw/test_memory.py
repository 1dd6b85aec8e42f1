import torch

from playground.core.i18n import said
from playground.hw import memory


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
    assert memory.weights_bytes(m) == 100 * 8 * 4 + 10 * 2
    m.half()
    assert memory.weights_bytes(m) == 100 * 8 * 2 + 10 * 2


def test_nvml_absence_is_explained(monkeypatch):
    # without CUDA: the reason is the missing CUDA (the build, or no device), in both languages
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    status = memory.nvml_status()
    assert status.key in ("vram.no_cuda_build", "vram.no_device") and status.text("en") and status.text("zh")
    # with CUDA but no NVIDIA driver to ask: NVML's own error, said as the reason
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setitem(memory._NVML_STATE, "mod", None)
    monkeypatch.setitem(memory._NVML_STATE, "reason", said("vram.no_driver", error="NVML Shared Library Not Found"))
    status = memory.nvml_status()
    assert status.key == "vram.no_driver" and "NVML Shared Library Not Found" in status.text("en")
    # NVML initialised: no reason
    monkeypatch.setitem(memory._NVML_STATE, "mod", object())
    monkeypatch.setitem(memory._NVML_STATE, "reason", None)
    assert memory.nvml_status() is None
