"""The PCIe link: which NVML device is cuda:N (by bus id), and the link's theoretical rate.

The matching and the rates are pure functions, fed here with recorded readings (a two-GPU box
whose CUDA order differs from NVML's); on this CPU-only machine `links()` itself says why it has none.
"""

import pytest

from playground.hw import pcie


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
