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
