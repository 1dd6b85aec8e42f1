import torch

from playground.hw import memory


def test_snapshot_reads_real_numbers():
    s = memory.snapshot()
    assert s.rss > 10 * 2**20
    assert s.available > 0
    if not torch.cuda.is_available():
        assert s.gpus == [] and s.vram_reason  # says why, never zeros


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
