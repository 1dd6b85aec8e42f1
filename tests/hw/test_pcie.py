"""The PCIe link: which NVML device is cuda:N (by bus id), and the link's theoretical rate.

The matching and the rates are pure functions, fed here with recorded readings (a two-GPU box
whose CUDA order differs from NVML's); on a CPU-only machine `links()` itself says why it has none,
and on each GPU present the device test matches it to NVML for real.
"""

import os

import pytest
import torch

from playground.hw import memory, pcie


@pytest.mark.parametrize("gen, width, gbps", [
    (1, 1, 0.25),  # 2.5 GT/s, 8b/10b
    (2, 16, 8.0),
    (3, 16, 15.754),  # the tutorials' "~16 GB/s"
    (4, 16, 31.508),
    (5, 16, 63.015),
    (4, 8, 15.754),
])
def test_link_rate_from_generation_and_width(gen, width, gbps):
    assert pcie.link_gbps(gen, width) == pytest.approx(gbps, abs=1e-3)


def test_unknown_generation_or_no_lanes_has_no_rate():
    assert pcie.link_gbps(9, 16) is None and pcie.link_gbps(3, 0) is None


@pytest.mark.parametrize("text, bid", [
    ("00000000:01:00.0", (0, 1, 0, 0)),
    ("0000:3B:00.0", (0, 0x3B, 0, 0)),  # NVML's busIdLegacy: 4-digit domain, upper case
    (b"00000001:86:00.0\x00\x00\x00", (1, 0x86, 0, 0)),  # as a C char array comes back
    ("3b:00.1", (0, 0x3B, 0, 1)),
])
def test_bus_ids_in_their_spellings(text, bid):
    assert pcie.parse_bus_id(text) == bid
    assert pcie.parse_bus_id(pcie.bus_id_text(bid)) == bid


@pytest.mark.parametrize("junk", ["", "cuda:0", "0000:zz:00.0", "00000000:01:00.9"])
def test_not_a_bus_id(junk):
    assert pcie.parse_bus_id(junk) is None


def test_matching_by_bus_id_follows_the_gpu_not_the_index():
    # CUDA_VISIBLE_DEVICES=2,0 on a box with three GPUs: cuda:0 is NVML's device 2, cuda:1 is device 0
    nvml = {0: (0, 0x01, 0, 0), 1: (0, 0x3B, 0, 0), 2: (0, 0x86, 0, 0)}
    cuda = {0: (0, 0x86, 0, 0), 1: (0, 0x01, 0, 0)}
    assert pcie.match_by_bus_id(cuda, nvml) == {0: 2, 1: 0}
    # a GPU NVML does not list (a driver/runtime mismatch) stays unmatched rather than taking an index
    assert pcie.match_by_bus_id({0: (0, 0xAF, 0, 0)}, nvml) == {0: None}
    # the PCI function is not part of a GPU's identity
    assert pcie.match_by_bus_id({0: (0, 0x3B, 0, 1)}, nvml) == {0: 1}


def test_without_cuda_links_say_why(monkeypatch):
    import torch

    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)  # any machine, seen as one without CUDA
    links, reason = pcie.links()
    assert links == [] and "CUDA" in reason.text("en")


@pytest.mark.device(kinds=("cuda",))
def test_each_gpu_is_matched_to_nvml_by_bus_id(device, figures):
    """Each `cuda:N` is matched to its NVML device by PCI bus id, not by index (which `CUDA_VISIBLE_DEVICES`
    and `CUDA_DEVICE_ORDER` change); the matched device's memory agrees with torch's."""
    nvml, reason = memory.nvml_module()
    if nvml is None:
        pytest.skip(reason.text("en") if reason else "NVML is not available")
    n = torch.device(device).index
    cuda = pcie.cuda_bus_ids()
    assert n in cuda, "torch reports no PCI bus id for this GPU"
    found, _ = pcie.nvml_bus_ids()
    i = pcie.match_by_bus_id(cuda, found)[n]
    figures.update(nvml_index=i, bus_id=pcie.bus_id_text(cuda[n]), name=torch.cuda.get_device_name(n),
                   cuda_visible_devices=os.environ.get("CUDA_VISIBLE_DEVICES"))
    assert i is not None, "no NVML device at this GPU's bus id"
    info = nvml.nvmlDeviceGetMemoryInfo(nvml.nvmlDeviceGetHandleByIndex(i))
    total = torch.cuda.get_device_properties(n).total_memory
    assert abs(int(info.total) - total) <= 0.05 * total, f"NVML total {info.total} vs torch {total}"
