"""Inspect: one row per module, read from the tensors; mixed placement is flagged."""

from __future__ import annotations

import copy

import pytest
import torch

from playground.core.errors import UserError
from playground.hw.census import weights_bytes
from playground.lab import harness
from playground.lab.inspect import inspect
from playground.lab.render import inspect_markdown


@pytest.fixture(scope="module")
def model():
    return harness.bundled()[0]


def test_a_whole_model_on_one_device_has_no_flags(model):
    rep = inspect(model)
    assert rep.flagged == [] and not rep.fake
    assert rep.majority_device == "cpu" and rep.majority_dtype == "float32"
    assert sum(s["bytes"] for s in rep.summary) == rep.total_bytes == weights_bytes(model)
    assert sum(r.params for r in rep.rows) >= sum(p.numel() for p in model.parameters())


def test_counts_side_by_side_explain_the_tied_head(model):
    rep = inspect(model)
    c = rep.counts
    assert c["parameters()"] == c["named_parameters()"] == len(list(model.parameters()))
    assert c["state_dict()"] == c["named_parameters()"] + 1  # lm_head.weight is transformer.wte.weight
    assert ["transformer.wte.weight", "lm_head.weight"] in rep.tied
    head = next(r for r in rep.rows if r.name == "lm_head")
    assert head.bytes == 0 and head.shared == ["lm_head.weight = transformer.wte.weight"]


def test_half_moved_fake_model_flags_the_block_left_behind(model):
    rep = inspect(harness.half_moved_model(model))
    assert rep.fake and rep.majority_device == "cuda:0"
    assert "transformer.h.0.ln_1" in rep.flagged
    assert all(name.startswith("transformer.h.0") for name in rep.flagged)
    row = next(r for r in rep.rows if r.name == "transformer.h.0.attn.c_attn")
    assert row.flags == [{"kind": "device", "device": "cpu", "majority": "cuda:0"}]
    assert {s["device"] for s in rep.summary} == {"cpu", "cuda:0"}


def test_dtype_split_is_flagged_on_real_tensors(model):
    split = copy.deepcopy(model)
    harness.blocks(split)[1][0].to(torch.bfloat16)  # a half-converted model: its first block cast alone
    rep = inspect(split)
    assert not rep.fake
    row = next(r for r in rep.rows if r.name == "transformer.h.0.mlp.c_fc")
    assert row.flags == [{"kind": "dtype", "dtype": "bfloat16", "majority": "float32"}]
    assert not any(n.startswith("transformer.h.1") for n in rep.flagged)


def test_mixed_devices_inside_one_module_and_buffers():
    lin = torch.nn.Linear(4, 4)
    lin.bias = torch.nn.Parameter(torch.zeros(4, device="meta"))
    net = torch.nn.Sequential(lin, torch.nn.BatchNorm1d(4))
    rep = inspect(net)
    row = next(r for r in rep.rows if r.name == "0")
    assert row.flags[0]["kind"] == "mixed" and set(row.devices) == {"cpu", "meta"}
    bn = next(r for r in rep.rows if r.name == "1")
    assert bn.buffers == 4 + 4 + 1 and "running_mean" in bn.tensors
    assert rep.counts["buffers()"] == 3
    # integer buffers (num_batches_tracked) never count as a dtype split
    assert not any(f["kind"] == "dtype" for f in bn.flags)


def test_device_map_is_reported():
    net = torch.nn.Sequential(torch.nn.Linear(2, 2))
    net.hf_device_map = {"0": "cpu", "1": "disk"}
    rep = inspect(net)
    assert rep.hf_device_map == {"0": "cpu", "1": "disk"}
    assert "disk" in inspect_markdown(rep, "en")


def test_markdown_in_both_languages(model):
    rep = inspect(harness.half_moved_model(model))
    en, zh = inspect_markdown(rep, "en"), inspect_markdown(rep, "zh")
    assert "⚠" in en and "transformer.h.0.ln_1" in en and "state_dict()" in en
    assert "most of the model is on cuda:0" in en
    assert "设备" in zh and "⚠" in zh
    assert en.index("transformer.h.0.ln_1") < en.index("transformer.h.1.ln_1")  # flagged rows first
    assert "rows shown" in inspect_markdown(rep, "en", max_rows=3)


def test_not_a_model_is_a_user_error():
    with pytest.raises(UserError):
        inspect("gpt2")


@pytest.mark.slow
def test_a_model_offloaded_by_its_plan_is_not_mixed_placement(pool, private_checkpoint, monkeypatch, one_thread):
    """The walk found Inspect flagging Accelerate's deliberate offload as "mixed placement", a warning on every
    module in RAM (the majority of the bytes sat on `meta`). A dispatched model is judged against its own plan:
    nothing is flagged, and the modules on `meta` are said to be offloaded to the disk by design."""
    from playground.core.inputs import check_limits
    from playground.lab.render import inspect_markdown
    from playground.load import loader

    monkeypatch.setenv("PLAYGROUND_MODEL_DIRS", str(private_checkpoint.parent))
    pool.load(*loader.parse(str(private_checkpoint), "auto", "float32"), placement=check_limits("cpu=16MB,disk"))
    with pool.held() as lm:
        found = inspect(lm.model, lm.offload_folder)
    assert found.flagged == []
    assert found.offloaded and all(n.startswith(("transformer.h.1.", "transformer.h.2.", "transformer.h.3.",
                                                 "transformer.ln_f")) for n in found.offloaded)
    text = inspect_markdown(found, "en")
    assert "Mixed placement" not in text and "offloaded to disk, by design" in text
    assert "按设计卸载到磁盘" in inspect_markdown(found, "zh")


def test_a_quantized_weight_shows_its_class_its_layout_and_its_real_bytes_and_is_no_dtype_mistake():
    """torchao's Int8Tensor says float32 [out, in]: Inspect names the class, lists the tensors inside it and counts
    their bytes; the float tensors beside it are not flagged for differing from it."""
    from playground.lab import render
    from playground.load import quantize

    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Embedding(50, 64), torch.nn.Linear(64, 64), torch.nn.LayerNorm(64))
    quantize.torchao().quantize_(model, quantize.config("int8"), filter_fn=lambda m, fqn: fqn == "1")
    r = inspect(model)
    row = next(x for x in r.rows if x.name == "1")
    assert row.dtypes == ["Int8Tensor", "float32"]  # the weight, then the bias
    assert row.layouts == ["weight: Int8Tensor: qdata int8 [64, 64] · scale float32 [64, 1] · zero_point int8 [64, 1]"]
    assert row.bytes == 64 * 64 + 64 * 4 + 64 + 64 * 4 and r.total_bytes == weights_bytes(model)
    assert r.flagged == [] and r.majority_dtype == "float32"
    assert r.quantized == [dict(tensor="Int8Tensor", count=1, bytes=64 * 64 + 64 * 4 + 64, float_bytes=64 * 64 * 4,
                                layout=row.layouts[0].split(": ", 1)[1])]
    en, zh = render.inspect_markdown(r, "en"), render.inspect_markdown(r, "zh")
    assert "1 tensor is `Int8Tensor` (torchao)" in en and "the quantized weights apart" in en
    assert "same device with the same dtype" not in en and "`Int8Tensor`（torchao）" in zh
