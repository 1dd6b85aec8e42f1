"""Copy bandwidth: the reference speeds a migration and a decode step are compared with, measured."""

import pytest
import torch

from playground.hw import bandwidth


def test_host_memcpy_is_a_plausible_measured_limit():
    bw = bandwidth.host_memcpy()
    assert bw.bytes == bandwidth.LIMIT_BYTES and bw.seconds > 0
    assert bw.gbps == pytest.approx(2 * bw.bytes / bw.seconds / 1e9)
    assert 0.5 < bw.gbps < 2000  # any real machine's RAM, from a phone to an HBM server
    fresh = bandwidth.host_clone()
    assert fresh.gbps < bw.gbps  # faulting in new pages costs more than copying into touched ones
    print(f"\nhost memcpy {bw.gbps:.1f} GB/s, clone into fresh pages {fresh.gbps:.1f} GB/s "
          f"({torch.get_num_threads()} threads)")


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


def test_survey_measures_the_host_and_says_why_there_is_no_gpu(monkeypatch):
    from playground.hw import devices

    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)  # any machine, seen as one without CUDA
    monkeypatch.setattr(torch.backends.mps, "is_available", lambda: False)
    s = bandwidth.survey(devices.discover())
    assert {"memcpy", "read", "cast"} <= set(s["cpu"]) and s["cpu"]["threads"] == torch.get_num_threads()
    assert s["gpu"]["devices"] == []
    assert "CUDA" in s["gpu"]["reasons"]["cuda"].text("en")
    assert bandwidth.read_bandwidth("cpu").kind == "read"  # the decode bound's rate, cached for the process
