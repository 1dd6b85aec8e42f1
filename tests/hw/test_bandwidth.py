"""Copy bandwidth: the reference speeds a migration and a decode step are compared with, measured."""

import pytest
import torch

from playground.hw import bandwidth, devices, pcie


def test_host_memcpy_is_a_plausible_measured_limit():
    bw = bandwidth.host_memcpy()
    assert bw.bytes == bandwidth.LIMIT_BYTES and bw.seconds > 0
    assert bw.gbps == pytest.approx(2 * bw.bytes / bw.seconds / 1e9)
    assert 0.5 < bw.gbps < 2000  # any real machine's RAM, from a phone to an HBM server
    print(f"\nhost memcpy {bw.gbps:.1f} GB/s ({torch.get_num_threads()} threads)")


def test_streaming_read_over_a_buffer_much_larger_than_the_caches():
    llc = bandwidth.last_level_cache_bytes()
    if llc is not None:
        assert bandwidth.READ_BYTES >= 8 * llc  # otherwise the cache, not the RAM, would be measured
    r = bandwidth.host_read()
    assert r.kind == "read" and r.bytes == bandwidth.READ_BYTES
    assert r.gbps == pytest.approx(r.bytes / r.seconds / 1e9)  # bytes read only: nothing is written
    assert 0.5 < r.gbps < 5000


def test_cast_rate_counts_float32_bytes_converted():
    c = bandwidth.host_cast()
    assert c.kind == "cast" and "bfloat16" in c.name
    assert c.gbps == pytest.approx(c.bytes / c.seconds / 1e9)


@pytest.mark.slow
@pytest.mark.device
def test_survey_measures_the_host_and_says_why_a_gpu_kind_is_absent(figures):
    """The host's memcpy, streaming-read and float32 -> bfloat16 cast rates are measured (the rates the decode
    bound and `.to()` are judged by); a kind of GPU this machine lacks is given with its reason."""
    absent = [d for d in devices.discover() if not d.available]
    s = bandwidth.survey(absent)
    cpu = s["cpu"]
    figures.update({f"{k}_gbps": cpu[k]["gbps"] for k in ("memcpy", "read", "cast")},
                   last_level_cache_bytes=cpu["last_level_cache_bytes"], threads=cpu["threads"])
    for k in ("memcpy", "read", "cast"):
        assert 0.05 < cpu[k]["gbps"] < 5000, f"{k}: {cpu[k]['gbps']} GB/s is not a plausible rate"
    assert cpu["threads"] == torch.get_num_threads()
    assert s["gpu"]["devices"] == []  # only absent ones were asked for
    assert set(s["gpu"]["reasons"]) == {d.kind for d in absent if d.kind in ("cuda", "mps")}
    assert all(r.text("en") for r in s["gpu"]["reasons"].values())


@pytest.mark.slow
def test_survey_measures_the_host_and_says_why_there_is_no_gpu(monkeypatch):
    from playground.hw import devices

    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)  # any machine, seen as one without CUDA
    monkeypatch.setattr(torch.backends.mps, "is_available", lambda: False)
    s = bandwidth.survey(devices.discover())
    assert {"memcpy", "read", "cast"} <= set(s["cpu"]) and s["cpu"]["threads"] == torch.get_num_threads()
    assert s["gpu"]["devices"] == []
    assert "CUDA" in s["gpu"]["reasons"]["cuda"].text("en")
    assert bandwidth.read_bandwidth("cpu").kind == "read"  # the decode bound's rate, cached for the process


@pytest.mark.device(kinds=("cuda",))
def test_gpu_copies_are_measured_against_the_pcie_link(device, figures):
    """Pinned and pageable copies host -> device and device -> host, against the PCIe link's theoretical rate
    from NVML (generation x width); a pinned copy faster than its own link fails it."""
    info = next(d for d in devices.discover() if d.id == device)
    g = bandwidth.survey([info])["gpu"]["devices"][0]
    links, reason = pcie.links()
    link = next((x for x in links if x.ordinal == torch.device(device).index), None)
    rate = link.theoretical_gbps if link else None
    figures.update({k: g[k]["gbps"] for k in ("h2d_pinned", "h2d_pageable", "d2h_pinned", "d2h_pageable", "read")},
                   link_theoretical_gbps=rate,
                   link=link.to_dict() if link else (reason.text("en") if reason else None),
                   pinned_share_of_link=g["h2d_pinned"]["gbps"] / rate if rate else None)
    assert all(g[k]["gbps"] > 0 for k in ("h2d_pinned", "h2d_pageable", "d2h_pinned", "d2h_pageable", "read"))
    if rate:  # faster than its own link: the link reading, or the bus-id match, is wrong
        assert g["h2d_pinned"]["gbps"] <= 1.15 * rate, f"pinned H2D beats the link's {rate:.1f} GB/s"
