"""The cost of offloading: the loaded offloaded model against its all-in-RAM self, and the cliff, measured."""

from __future__ import annotations

import time

import pytest
import torch
from transformers import AutoTokenizer

from playground.core.inputs import check_limits
from playground.hw import disk
from playground.load import loader
from playground.run import cliff


@pytest.mark.slow
def test_the_cost_of_a_placed_model_is_measured_warm_cold_and_against_ram(pool, private_checkpoint, monkeypatch,
                                                                           one_thread):
    monkeypatch.setenv("PLAYGROUND_MODEL_DIRS", str(private_checkpoint.parent))
    src, dev, dt = loader.parse(str(private_checkpoint), "auto", "float32")
    pool.load(src, dev, dt, placement=check_limits("cpu=16MB,disk"))
    with pool.held() as lm:
        c = cliff.cost(lm, "private", n=8)
    assert c.offloaded_blocks == 4 and c.offloaded_bytes == 9479168  # h.1-h.3 and ln_f, read from the tensors
    assert c.warm.moved_bytes_per_token == c.offloaded_bytes and c.warm.new_tokens == c.ram.new_tokens == 8
    assert c.same_tokens_warm and c.first_difference_warm is None and c.slowdown_warm > 0
    b = c.breakdown_warm
    assert b.total_ms == pytest.approx(1e3 / c.warm.tokens_per_second) and b.compute_ms > 0
    assert b.total_ms == pytest.approx(b.compute_ms + b.hooks_ms + b.other_ms)  # the parts add up to the whole
    if disk.can_evict() and c.cold.disk_bytes_per_token is not None:
        assert c.same_tokens_cold and c.cold.disk_bytes_per_token > 0.9 * c.offloaded_bytes
        assert c.rate["read_bytes"] > 0 and c.disk_bound_tokens_per_second > 0
        assert c.percent_of_disk_bound == pytest.approx(100 * c.cold.tokens_per_second / c.disk_bound_tokens_per_second)
    d = c.to_dict()
    assert d["warm"]["moved_bytes_per_token"] > 0 and isinstance(d["notes"], list)


@pytest.mark.slow
def test_the_cliff_of_the_bundled_model_counts_every_point_and_keeps_the_tokens(private_checkpoint, one_thread):
    t0 = time.perf_counter()
    c = cliff.cliff(str(private_checkpoint), "private", torch.float32, AutoTokenizer.from_pretrained(private_checkpoint),
                    max_blocks=4)
    assert time.perf_counter() - t0 < 60
    rows = c.rows
    assert [r.blocks_offloaded for r in rows] == [0, 1, 2, 3, 4] and c.blocks == 4
    assert all(r.new_tokens == cliff.TOKENS and r.same_tokens for r in rows)
    block = 3159040  # one GPT-2 block of the bundled model in float32: 789,760 parameters
    assert [r.moved_bytes_per_token for r in rows] == [k * block for k in range(5)]
    assert [r.offloaded_bytes for r in rows] == [k * block for k in range(5)]
    if c.cold and rows[1].disk_bytes_per_token is not None:
        assert all(r.disk_bytes_per_token > 0.9 * r.moved_bytes_per_token for r in rows[1:])
        assert c.rate["gbps"] > 0 and all(r.disk_bound_tokens_per_second > 0 for r in rows[1:])
        assert all(r.cold_new_tokens == cliff.TOKENS for r in rows[1:])


@pytest.mark.slow
def test_the_cliff_of_gpt2_small_runs_in_under_a_minute(one_thread):
    lm = loader.load(loader.prepare(*loader.parse("synthetic/gpt2-small", "cpu", "float32")))
    folder, tok = lm.model.name_or_path, lm.tokenizer
    del lm
    t0 = time.perf_counter()
    c = cliff.cliff(folder, "synthetic/gpt2-small", torch.float32, tok, max_blocks=4)
    assert time.perf_counter() - t0 < 60
    assert len(c.rows) >= 4 and all(r.same_tokens and r.new_tokens == cliff.TOKENS for r in c.rows)
    assert c.rows[-1].moved_bytes_per_token == 4 * 28351488
