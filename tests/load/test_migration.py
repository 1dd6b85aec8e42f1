"""Anatomy of a migration: bytes moved, synced time, GB/s against this machine's measured limit."""

from __future__ import annotations

import sys

import pytest
import torch
from transformers import AutoModelForCausalLM

from playground.core.errors import UserError
from playground.core.paths import BUNDLED_DIR
from playground.hw import devices, memory
from playground.load import catalog, migration


def _fresh_bundled():
    # A private copy: migrate() changes the model in place.
    return AutoModelForCausalLM.from_pretrained(BUNDLED_DIR, dtype=torch.float32).eval()


def test_plan_counts_what_a_cast_reads_and_writes():
    m = _fresh_bundled()
    w = memory.weights_bytes(m)
    n, moved, read, written = migration.plan(m, None, torch.bfloat16)
    assert moved == n and read == w and written == w // 2
    assert migration.plan(m, "cpu", None)[1:] == (0, 0, 0)  # already there: nothing to move


def test_plan_leaves_integer_buffers_alone():
    m = torch.nn.Linear(4, 4)
    m.register_buffer("ids", torch.arange(10))
    n, moved, read, written = migration.plan(m, None, torch.float16)
    assert n == 3 and moved == 2  # weight and bias cast; the int64 buffer keeps its dtype
    m.to(torch.float16)
    assert m.ids.dtype == torch.int64  # as Module.to does


def test_a_cast_is_timed_and_compared_with_the_limit():
    m = _fresh_bundled()
    w = memory.weights_bytes(m)
    r = migration.migrate(m, tdtype=torch.bfloat16)
    assert next(m.parameters()).dtype == torch.bfloat16
    assert r.tensors_moved == r.tensors and r.bytes_read == w and r.bytes_written == w // 2
    assert r.seconds > 0 and r.gbps == pytest.approx((r.bytes_read + r.bytes_written) / r.seconds / 1e9)
    assert r.percent_of_limit == pytest.approx(100 * r.gbps / r.limit["gbps"])
    assert r.limit["name"] == "host memcpy"
    assert f"{r.percent_of_limit:.0f}% of what this machine's memory can move" in r.note
    print(f"\n{r.call}: {r.bytes_read + r.bytes_written:,} B in {r.seconds * 1e3:.1f} ms = {r.gbps:.2f} GB/s, "
          f"{r.percent_of_limit:.0f}% of memcpy")


def test_a_noop_move_says_so():
    m = _fresh_bundled()
    ptr = next(m.parameters()).data_ptr()
    r = migration.migrate(m, device="cpu")
    assert r.tensors_moved == 0 and r.gbps is None and "no-op" in r.note
    assert next(m.parameters()).data_ptr() == ptr


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/self/maps")
def test_same_dtype_load_is_memory_mapped_and_a_cast_is_not():
    m = _fresh_bundled()
    w = memory.weights_bytes(m)
    # Transformers 5 points each float32 tensor into the mapped checkpoint (zero-copy)
    assert migration.file_backed_bytes(m) == w
    m.to(torch.bfloat16)
    assert migration.file_backed_bytes(m) == 0


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/self/maps")
def test_borrowed_memory_that_is_not_a_mapped_file_is_not_counted():
    import numpy as np

    # torch.from_numpy borrows the array's memory: not resizable, like a mapped tensor, but no file
    m = torch.nn.Linear(4, 4)
    m.weight = torch.nn.Parameter(torch.from_numpy(np.ones((4, 4), dtype=np.float32)))
    assert not m.weight.untyped_storage().resizable()
    assert migration.file_backed_bytes(m) == 0


def test_device_map_against_load_then_move_on_cpu():
    d = migration.compare_placement(catalog.resolve("shakespeare-gpt2"), devices.parse_device("cpu"), torch.float32)
    a, b = d["runs"]
    assert (a["method"], b["method"]) == ("device_map", "load then .to()")
    assert a["weights_bytes"] == b["weights_bytes"] > 0
    assert a["seconds"] > 0 and b["seconds"] >= b["load_seconds"] > 0
    assert a["move_seconds"] == 0.0
    assert all(r["rss_peak"] >= max(r["rss_start"], r["rss_end"]) for r in d["runs"])
    assert "no-op" in d["meaning"]
    print(f"\ndevice_map {a['seconds'] * 1e3:.1f} ms (peak RSS +{(a['rss_peak'] - a['rss_start']) / 2**20:.1f} MiB); "
          f"load+.to {b['seconds'] * 1e3:.1f} ms (+{(b['rss_peak'] - b['rss_start']) / 2**20:.1f} MiB)")


def test_auto_is_not_a_place():
    with pytest.raises(UserError, match="placement plan"):
        migration.compare_placement(catalog.resolve("shakespeare-gpt2"), devices.parse_device("auto"), torch.float32)


# -- the loaded model's .to() against the rates (recorded rates: nothing here is shown as measured) ------
SURVEY = {  # a recorded bandwidth.survey of a GPU machine: only the fields gap() reads
    "cpu": {"memcpy": {"gbps": 40.0}, "read": {"gbps": 60.0}, "cast": {"gbps": 3.0}},
    "gpu": {"devices": [{"device": "cuda:0", "h2d_pageable": {"gbps": 12.5}, "h2d_pinned": {"gbps": 25.0}}],
            "reasons": {}},
}


def test_gap_of_a_noop_move_predicts_nothing_and_sets_the_tutorials_arithmetic_beside_it(bundled):
    g = migration.gap(bundled.report, bundled.model, SURVEY)
    w = bundled.report.weights_bytes
    assert not g.moved and g.predicted_seconds == 0 and g.rate is None
    assert g.tensors == len(list(bundled.model.parameters())) + len(list(bundled.model.buffers()))
    assert g.tutorial_seconds == pytest.approx(w / 16e9)  # 16 GB/s, PCIe 3.0 x16 as the tutorials say
    assert g.cast_seconds == pytest.approx(w / 3e9)  # float32 weights: .to(bfloat16) at the cast rate
    assert g.why.key == "gap.noop" and "Nothing moved" in g.why.text("en") and "什么也没有搬" in g.why.text("zh")
    assert g.to_dict()["why"].startswith("Nothing moved")


def test_gap_of_a_copy_to_a_gpu_uses_the_pageable_rate_and_names_the_rest(bundled):
    from dataclasses import replace

    w = bundled.report.weights_bytes
    report = replace(bundled.report, device="cuda:0", migrate_code="copied", migrate_seconds=0.050)
    g = migration.gap(report, bundled.model, SURVEY, link_gbps=15.754)
    assert g.moved and g.predicted_seconds == pytest.approx(w / 12.5e9)
    assert g.pinned_seconds == pytest.approx(w / 25e9) and g.link_seconds == pytest.approx(w / 15.754e9)
    extra_ms = (0.050 - w / 12.5e9) * 1e3
    assert g.why.key == "gap.cuda" and f"{extra_ms:.1f} ms" in g.why.text("en")
    # no rate measured for that GPU: it says so instead of predicting
    other = migration.gap(replace(report, device="cuda:1"), bundled.model, SURVEY)
    assert other.why.key == "gap.no_rates" and other.predicted_seconds == 0
