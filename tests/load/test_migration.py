"""Anatomy of a migration: the weights a load leaves memory-mapped, and the loaded model's .to() beside the rates."""

from __future__ import annotations

import sys

import pytest
import torch
from transformers import AutoModelForCausalLM

from playground.core.paths import BUNDLED_DIR
from playground.hw import census
from playground.load import migration


def _fresh_bundled():
    # A private copy: the test casts it in place.
    return AutoModelForCausalLM.from_pretrained(BUNDLED_DIR, dtype=torch.float32).eval()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/self/maps")
def test_same_dtype_load_is_memory_mapped_and_a_cast_is_not():
    m = _fresh_bundled()
    w = census.weights_bytes(m)
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


def test_weights_still_mapped_from_the_checkpoint_are_named_in_a_gpu_moves_gap(bundled):
    """The pageable rate is measured on anonymous memory already in RAM; float32 weights loaded as float32 are still
    memory-mapped from the checkpoint when .to('cuda') starts, and the copy reads them through page faults (from the
    disk when cold). The gap says so, with the mapped bytes the loader read just before the move."""
    from dataclasses import replace

    w = bundled.report.weights_bytes
    report = replace(bundled.report, device="cuda:0", migrate_code="copied", migrate_seconds=0.050,
                     migrate_fields={"src": "cpu", "dst": "cuda:0", "mapped_bytes": w})
    g = migration.gap(report, bundled.model, SURVEY)
    assert g.why.key == "gap.cuda_mapped" and g.mapped_bytes == w
    assert f"{w / 1e6:.0f} MB of these weights were still memory-mapped" in g.why.text("en")
    assert "page faults" in g.why.text("en") and "缺页" in g.why.text("zh")
    assert g.predicted_seconds == pytest.approx(w / 12.5e9)  # the rate's prediction, beside the faults it leaves out

