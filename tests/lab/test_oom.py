"""Out-of-memory messages as people pasted them in public issue threads (each text's thread beside it), read to
their numbers in every wording since PyTorch 1.0 (CUDA), MPS's and the CPU allocator's; the remedy each
message's numbers point at, said in English and Chinese."""

from __future__ import annotations

import pytest

from playground.lab import oom
from playground.lab.diagnose import diagnose
from playground.lab.render import diagnose_markdown

KiB, MiB, GiB = 2**10, 2**20, 2**30


def size(x: float, unit: int) -> int:
    return int(x * unit)


# (text, kind, device, requested, total, free, this process, allocated, reserved, other processes, remedy first)
CASES = [
    # PyTorch 2.2+: this process's figure, "expandable_segments"
    # https://github.com/pytorch/pytorch/issues/16417 (comment of 2024-03-13)
    ("torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 22.00 MiB. GPU 0 has a total capacity of "
     "23.65 GiB of which 11.06 MiB is free. Including non-PyTorch memory, this process has 23.60 GiB memory in use. "
     "Of the allocated memory 22.90 GiB is allocated by PyTorch, and 194.87 MiB is reserved by PyTorch but "
     "unallocated. If reserved but unallocated memory is large try setting "
     "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.  See documentation for Memory "
     "Management  (https://pytorch.org/docs/stable/notes/cuda.html#environment-variables)",
     "cuda", "cuda:0", size(22, MiB), size(23.65, GiB), size(11.06, MiB), size(23.60, GiB), size(22.90, GiB),
     size(22.90, GiB) + size(194.87, MiB), size(23.65, GiB) - size(11.06, MiB) - size(23.60, GiB), "expandable"),
    # https://github.com/murong-xu/CADS/issues/4: 9.35 GiB held in PyTorch's cache, a 22.78 GiB request
    ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 22.78 GiB. GPU 0 has a total capacity of 31.47 "
     "GiB of which 12.73 GiB is free. Including non-PyTorch memory, this process has 18.73 GiB memory in use. Of the "
     "allocated memory 9.08 GiB is allocated by PyTorch, and 9.35 GiB is reserved by PyTorch but unallocated. If "
     "reserved but unallocated memory is large try setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid "
     "fragmentation.",
     "cuda", "cuda:0", size(22.78, GiB), size(31.47, GiB), size(12.73, GiB), size(18.73, GiB), size(9.08, GiB),
     size(9.08, GiB) + size(9.35, GiB), size(31.47, GiB) - size(12.73, GiB) - size(18.73, GiB), "expandable"),
    # PyTorch 2.1 spelled it "capacty" and advised max_split_size_mb
    # https://github.com/Synthintel0/MyGirlGPT/issues/11: 4 GiB, 3.44 GiB of it this process's
    ("torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 32.00 MiB. GPU 0 has a total capacty of "
     "4.00 GiB of which 41.56 MiB is free. Including non-PyTorch memory, this process has 3.44 GiB memory in use. Of "
     "the allocated memory 2.58 GiB is allocated by PyTorch, and 1.90 MiB is reserved by PyTorch but unallocated. If "
     "reserved but unallocated memory is large try setting max_split_size_mb to avoid fragmentation.  See "
     "documentation for Memory Management and PYTORCH_CUDA_ALLOC_CONF",
     "cuda", "cuda:0", size(32, MiB), size(4, GiB), size(41.56, MiB), size(3.44, GiB), size(2.58, GiB),
     size(2.58, GiB) + size(1.90, MiB), size(4, GiB) - size(41.56, MiB) - size(3.44, GiB), "fragmented"),
    # 2.1 without the process's clause: 2.80 GiB free and a 2 GiB request refused
    # https://github.com/levihsu/OOTDiffusion/issues/167
    ("torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacty of 4.00 "
     "GiB of which 2.80 GiB is free. Of the allocated memory 0 bytes is allocated by PyTorch, and 0 bytes is reserved "
     "by PyTorch but unallocated.",
     "cuda", "cuda:0", 2 * GiB, 4 * GiB, size(2.80, GiB), None, 0, 0, None, "fragmented"),
    # PyTorch 1.4-1.13: "(GPU 0; T total capacity; A already allocated; F free; R reserved in total by PyTorch)"
    # https://github.com/CompVis/stable-diffusion/issues/702
    ("OutOfMemoryError: CUDA out of memory. Tried to allocate 192.00 MiB (GPU 0; 4.00 GiB total capacity; 3.08 GiB "
     "already allocated; 0 bytes free; 3.47 GiB reserved in total by PyTorch) If reserved memory is >> allocated "
     "memory try setting max_split_size_mb to avoid fragmentation. See documentation for Memory Management and "
     "PYTORCH_CUDA_ALLOC_CONF",
     "cuda_1x", "cuda:0", size(192, MiB), 4 * GiB, 0, None, size(3.08, GiB), size(3.47, GiB),
     4 * GiB - size(3.47, GiB), "expandable"),
    # https://github.com/pytorch/pytorch/issues/59778: 3.03 GiB free, a 2.26 GiB request refused
    ("CUDA out of memory. Tried to allocate 2.26 GiB (GPU 0; 6.00 GiB total capacity; 781.59 MiB already allocated; "
     "3.03 GiB free; 1.24 GiB reserved in total by PyTorch)",
     "cuda_1x", "cuda:0", size(2.26, GiB), 6 * GiB, size(3.03, GiB), None, size(781.59, MiB), size(1.24, GiB),
     6 * GiB - size(3.03, GiB) - size(1.24, GiB), "fragmented"),
    # PyTorch 1.0-1.3: the cache alone, as "cached"
    # https://github.com/shllln/GenerativeGraph/issues/5
    ("RuntimeError: CUDA out of memory. Tried to allocate 1024.00 KiB (GPU 0; 11.17 GiB total capacity; 10.90 GiB "
     "already allocated; 576.00 KiB free; 30.96 MiB cached)",
     "cuda_1x", "cuda:0", 1024 * KiB, size(11.17, GiB), 576 * KiB, None, size(10.90, GiB),
     size(10.90, GiB) + size(30.96, MiB), size(11.17, GiB) - 576 * KiB - size(10.90, GiB) - size(30.96, MiB),
     "expandable"),
    # MPS: its allocator's own figures, in binary "GB" (and GiB in later versions)
    # https://github.com/Comfy-Org/ComfyUI/issues/7440: 17.35 GiB held by other allocations
    ("MPS backend out of memory (MPS allocated: 9.57 GiB, other allocations: 17.35 GiB, max allowed: 27.20 GiB). "
     "Tried to allocate 292.50 MiB on private pool. Use PYTORCH_MPS_HIGH_WATERMARK_RATIO=0.0 to disable upper limit "
     "for memory allocations (may cause system failure).",
     "mps", "mps", size(292.50, MiB), size(27.20, GiB),
     size(27.20, GiB) - size(9.57, GiB) - size(17.35, GiB), None, size(9.57, GiB), None, size(17.35, GiB), "others"),
    # https://github.com/lllyasviel/Fooocus/issues/1139
    ("RuntimeError: MPS backend out of memory (MPS allocated: 8.89 GB, other allocations: 172.98 MB, max allowed: "
     "9.07 GB). Tried to allocate 6.25 MB on private pool. Use PYTORCH_MPS_HIGH_WATERMARK_RATIO=0.0 to disable upper "
     "limit for memory allocations (may cause system failure).",
     "mps", "mps", size(6.25, MiB), size(9.07, GiB), size(9.07, GiB) - size(8.89, GiB) - size(172.98, MiB), None,
     size(8.89, GiB), None, size(172.98, MiB), "watermark"),
    # the CPU: the operating system refused one tensor
    # https://github.com/mxfold/mxfold2/issues/20
    ("RuntimeError: [enforce fail at alloc_cpu.cpp:75] err == 0. DefaultCPUAllocator: can't allocate memory: you "
     "tried to allocate 132426121216 bytes. Error code 12 (Cannot allocate memory)",
     "cpu", "cpu", 132426121216, None, None, None, None, None, None, "cpu_size"),
    # Windows' wording: https://github.com/MaximeVandegar/Papers-in-100-Lines-of-Code/issues/10
    ("RuntimeError: [enforce fail at C:\\b\\abs_bao0hdcrdh\\croot\\pytorch_1675190257512\\work\\c10\\core\\impl\\"
     "alloc_cpu.cpp:81] data. DefaultCPUAllocator: not enough memory: you tried to allocate 1981808640 bytes.",
     "cpu", "cpu", 1981808640, None, None, None, None, None, None, "cpu_size"),
]


@pytest.mark.parametrize("case", CASES, ids=[f"{c[1]}-{i}" for i, c in enumerate(CASES)])
def test_each_wording_is_read_to_its_numbers(case):
    text, kind, device, requested, total, free, process, allocated, reserved, others, remedy = case
    o = oom.read(text)
    assert o is not None, text[:80]
    got = (o.kind, o.device, o.requested, o.total, o.free, o.process, o.allocated, o.reserved, o.other_processes)
    assert got == (kind, device, requested, total, free, process, allocated, reserved, others)
    assert o.remedies()[0].key == f"oom.fix.{remedy}", [r.key for r in o.remedies()]


def test_at_least_six_wordings_across_cuda_versions_mps_and_cpu():
    assert len({(c[1], "capacty" in c[0], "cached)" in c[0], "Including" in c[0]) for c in CASES}) >= 6
    assert {c[1] for c in CASES} == {"cuda", "cuda_1x", "mps", "cpu"}


def test_the_bar_holds_every_byte_of_the_gpu():
    o = oom.read(CASES[1][0])
    parts = dict(o.parts())
    # allocated + cache + the rest of the process = the process; + others + free = the GPU
    assert parts["allocated"] + parts["allocator_cache"] + parts["non_pytorch"] == o.process
    assert o.process + parts["other_processes"] + parts["free"] == o.total
    assert parts["requested"] == o.requested > parts["free"]  # it did not fit in what was free


def test_the_diagnoser_names_it_and_says_the_numbers_and_remedies_in_both_languages():
    d = diagnose(CASES[0][0])
    assert d.ids()[0] == "out-of-memory" and d.oom is not None
    api = d.to_dict()["oom"]
    assert api["requested"] == CASES[0][3] and api["allocator_cache"] == size(194.87, MiB)
    assert {p["part"] for p in api["parts"]} == set(oom.PARTS)
    assert "expandable_segments" in api["remedies_en"][0] and "碎片" in api["remedies_zh"][0]
    en, zh = diagnose_markdown(d, "en"), diagnose_markdown(d, "zh")
    assert "22.9 GiB" in en and "allocated by PyTorch" in en and "expandable_segments" in en
    assert "PyTorch 已分配" in zh and "22.9 GiB" in zh and "碎片化" in zh


def test_a_cut_off_message_is_still_named_without_numbers():
    d = diagnose("torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB (GPU 0; 1.96 GiB")
    assert d.ids()[0] == "out-of-memory" and d.oom is None


def test_a_message_that_only_mentions_memory_is_not_an_oom():
    assert not diagnose("RuntimeError: CUDA error: an illegal memory access was encountered").ids()[:1] == ["out-of-memory"]
    assert oom.read("memory usage is fine") is None
