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
    # the step's window (the meter's) and the rate's (the tokens' stamps) cover the same decode passes
    assert b.total_ms == pytest.approx(1e3 / c.warm.tokens_per_second, rel=0.25) and b.ram_ms > 0
    assert b.total_ms == pytest.approx(b.hooks_ms + b.forward_ms)  # the parts add up to the whole
    assert 0 <= b.hooks_ms <= b.total_ms and 0 <= b.forward_ms <= b.total_ms  # and none exceeds it
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


def _run(tps: float, step_ms: float, hook_ms: float, cold: bool = False, disk: float | None = None):
    from playground.run.offload import OffloadRun

    return OffloadRun(cold=cold, new_tokens=16, prompt_tokens=8, ttft_seconds=0.1, decode_seconds=15 / tps,
                      tokens_per_second=tps, decode_passes=15, moved_bytes_per_token=1e8, copied_bytes_per_token=0.0,
                      disk_bytes_per_token=disk, hook_ms_per_token=hook_ms, step_ms_per_token=step_ms,
                      evict_ms_per_token=0.0, minor_faults_per_token=0.0, major_faults_per_token=0.0)


def test_the_breakdowns_parts_never_exceed_the_whole_and_its_sentence_follows_them():
    """The walk found "229.8 of 179.2 ms per token (128%)", "the rest" at -56.4 and -124.4 ms, and "the all-in-RAM
    run was slower per token" beside an all-in-RAM run of 24.4 ms against 179.2 (gpt2-small, cpu=200MB,disk): the
    parts came from different runs and overlapped. The parts are now the hooks' time and the rest of the same
    step, in the same window; the all-in-RAM copy and the disk are references beside them."""
    from playground.web.views_placement import holds_back

    ram = _run(1e3 / 24.4, 24.4, 0.0)
    b = cliff.Breakdown.of(_run(1e3 / 179.2, 179.2, 229.8), ram, None)  # a hook clock past its window, rounded off
    assert b.hooks_ms + b.forward_ms == pytest.approx(b.total_ms) and max(b.hooks_ms, b.forward_ms) <= b.total_ms
    b = cliff.Breakdown.of(_run(1e3 / 179.2, 179.2, 20.0, cold=True, disk=3e8), ram, 2.0)
    said = holds_back(b.__dict__, 40.0, "en")
    assert "159.2 of 179.2 ms" in said and "24.4 ms" in said and "134.8 ms" in said and "150.0 ms" in said
    assert "slower" not in said and "longer" not in said
    slow_ram = _run(1e3 / 200.0, 200.0, 0.0)  # the reference run, at another moment, took longer than this step
    said = holds_back(cliff.Breakdown.of(_run(1e3 / 179.2, 179.2, 20.0), slow_ram, None).__dict__, None, "en")
    assert "200.0 ms per token, longer than this step outside its hooks" in said
