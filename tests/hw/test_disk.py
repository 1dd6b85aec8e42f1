"""The disk under offloaded weights: eviction from the page cache, this process's I/O counters, a cold read rate."""

from __future__ import annotations

import os

import pytest

from playground.hw import disk

needs_fadvise = pytest.mark.skipif(not disk.can_evict(), reason="this OS has no posix_fadvise (no page cache to drop)")


def test_the_counters_are_this_processes_and_only_grow():
    a = disk.io()
    with open(__file__, "rb") as fh:
        fh.read()
    b = disk.io()
    d = b - a
    assert d.minor_faults >= 0 and d.major_faults >= 0 and (d.read_bytes is None or d.read_bytes >= 0)


@needs_fadvise
def test_a_file_evicted_is_read_from_the_disk_and_a_cached_one_is_not(tmp_path):
    path = tmp_path / "blob"
    with open(path, "wb") as fh:
        fh.write(os.urandom(16 * 2**20))
        fh.flush()
        os.fsync(fh.fileno())  # written back: clean pages, which DONTNEED may drop
    cold = disk.read_rate([(str(path), 0, 16 * 2**20)])
    if cold.read_bytes is None:
        pytest.skip("this OS keeps no count of the bytes a process reads from storage")
    assert cold.requested_bytes == 16 * 2**20
    assert cold.read_bytes >= 0.9 * cold.requested_bytes and cold.gbps and cold.gbps > 0  # from the disk
    assert cold.cached_bytes <= 0.1 * cold.requested_bytes
    before = disk.io()
    with open(path, "rb") as fh:
        fh.read()  # now in the page cache
    assert (disk.io() - before).read_bytes < 2**20


@needs_fadvise
def test_a_mapped_file_stays_cached_through_the_eviction(tmp_path):
    """What makes a cold run warm: a page some process maps is kept, whatever is evicted."""
    import mmap

    path = tmp_path / "blob"
    path.write_bytes(os.urandom(8 * 2**20))
    with open(path, "rb") as fh, mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) as m:
        sum(m[i] for i in range(0, len(m), 4096))  # every page touched: mapped and resident
        rate = disk.read_rate([(str(path), 0, 8 * 2**20)])
    if rate.read_bytes is None:
        pytest.skip("this OS keeps no count of the bytes a process reads from storage")
    assert rate.cached_bytes >= 0.9 * rate.requested_bytes and rate.gbps is None
