"""The PCIe link between RAM and a GPU: which GPU NVML means, and how fast its link can be.

`links()` reads NVML and is the only function here that needs a GPU: each `cuda:N` matched to
its NVML device by PCI bus id, with its link's generation and width. The functions on recorded
values (`parse_bus_id`, `match_by_bus_id`, `link_gbps`) are pure. Why the bus id, and how a
generation and a width make a rate: docs/hardware.md.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass

import torch

from playground.core.i18n import Said, as_text, said
from playground.hw import devices, memory

# Transfer rate per lane (gigatransfers/s) and the share of it that is data, by generation.
GENERATIONS: dict[int, tuple[float, float]] = {
    1: (2.5, 8 / 10),
    2: (5.0, 8 / 10),
    3: (8.0, 128 / 130),
    4: (16.0, 128 / 130),
    5: (32.0, 128 / 130),
    6: (64.0, 242 / 256),
}

BusId = tuple[int, int, int, int]  # domain, bus, device, function


def link_gbps(generation: int, width: int) -> float | None:
    """The link's theoretical data rate in one direction, GB/s (10^9 bytes): GT/s x data share
    x lanes / 8 bits. None for a generation this table does not know."""
    if generation not in GENERATIONS or width <= 0:
        return None
    gts, share = GENERATIONS[generation]
    return gts * share * width / 8


def parse_bus_id(text: str | bytes) -> BusId | None:
    """'00000000:01:00.0', '0000:01:00.0' (legacy) or '01:00.0' -> (domain, bus, device, function)."""
    if isinstance(text, bytes):
        text = text.decode("ascii", "replace")
    m = re.fullmatch(r"\s*(?:([0-9a-fA-F]{1,8}):)?([0-9a-fA-F]{1,2}):([0-9a-fA-F]{1,2})\.([0-7])\s*", text.rstrip("\x00"))
    if not m:
        return None
    dom, bus, dev, fn = m.groups()
    return int(dom or "0", 16), int(bus, 16), int(dev, 16), int(fn)


def bus_id_text(bid: BusId) -> str:
    """NVML's own spelling: 8 hex digits of domain, then bus, device and function."""
    return f"{bid[0]:08x}:{bid[1]:02x}:{bid[2]:02x}.{bid[3]:x}"


def match_by_bus_id(cuda: dict[int, BusId], nvml: dict[int, BusId]) -> dict[int, int | None]:
    """For each cuda:N ordinal, the NVML index at the same PCI address (function ignored: a GPU is
    function 0), or None when NVML has no device there."""
    where = {b[:3]: i for i, b in nvml.items()}
    return {n: where.get(b[:3]) for n, b in cuda.items()}


@dataclass
class Link:
    ordinal: int  # cuda:N
    bus_id: str  # as NVML spells it
    nvml_index: int | None
    generation_max: int | None
    width_max: int | None
    generation_now: int | None
    width_now: int | None
    theoretical_gbps: float | None  # from the maximum generation and width
    reason: Said | None = None  # why a figure is missing

    def to_dict(self) -> dict:
        return as_text(asdict(self))


def cuda_bus_ids() -> dict[int, BusId]:
    """Every visible cuda:N's PCI address, as torch reports it."""
    out = {}
    for n in range(torch.cuda.device_count()):
        p = torch.cuda.get_device_properties(n)
        bus = getattr(p, "pci_bus_id", None)
        if bus is not None:
            out[n] = (getattr(p, "pci_domain_id", 0), bus, getattr(p, "pci_device_id", 0), 0)
    return out


def nvml_bus_ids() -> tuple[dict[int, BusId], Said | None]:
    """Every NVML device's PCI address by NVML index, or ({}, why not)."""
    nvml, reason = memory.nvml_module()
    if nvml is None:
        return {}, reason
    out = {}
    for i in range(nvml.nvmlDeviceGetCount()):
        info = nvml.nvmlDeviceGetPciInfo(nvml.nvmlDeviceGetHandleByIndex(i))
        bid = parse_bus_id(info.busId)
        if bid is not None:
            out[i] = bid
    return out, None


def links() -> tuple[list[Link], Said | None]:
    """The PCIe link of every cuda:N, matched to NVML by bus id; ([], why) where there is none."""
    if not torch.cuda.is_available():
        return [], devices.no_cuda_reason()
    nvml, reason = memory.nvml_module()
    if nvml is None:
        return [], reason
    cuda = cuda_bus_ids()
    by_index, _ = nvml_bus_ids()
    matched = match_by_bus_id(cuda, by_index)
    out = []
    for n, bid in cuda.items():
        i = matched[n]
        if i is None:
            out.append(Link(n, bus_id_text(bid), None, None, None, None, None, None, said("pcie.no_match")))
            continue
        h = nvml.nvmlDeviceGetHandleByIndex(i)
        figures = []
        for fn in ("nvmlDeviceGetMaxPcieLinkGeneration", "nvmlDeviceGetMaxPcieLinkWidth",
                   "nvmlDeviceGetCurrPcieLinkGeneration", "nvmlDeviceGetCurrPcieLinkWidth"):
            try:
                figures.append(int(getattr(nvml, fn)(h)))
            except Exception:  # NVML_ERROR_NOT_SUPPORTED on some boards (and on vGPUs)
                figures.append(None)
        gen, width = figures[0], figures[1]
        rate = link_gbps(gen, width) if gen and width else None
        out.append(Link(n, bus_id_text(bid), i, *figures, rate, None if rate else said("pcie.no_link")))
    return out, None
