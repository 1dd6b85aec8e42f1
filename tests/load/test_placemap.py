"""The placement map reads where weights are from the tensors and Accelerate's hooks, not from hf_device_map alone."""

from __future__ import annotations

import tempfile

from transformers import AutoModelForCausalLM

from playground.core.paths import BUNDLED_DIR
from playground.load import placemap, placement
from tests.conftest import load

EMBEDDING_OFF = {"transformer.wte": "disk", "lm_head": "disk", "transformer.wpe": "cpu", "transformer.drop": "cpu",
                 "transformer.h": "cpu", "transformer.ln_f": "cpu"}  # the embedding (tied to the head) on the disk


def placed(device_map: dict):
    return AutoModelForCausalLM.from_pretrained(BUNDLED_DIR, device_map=device_map, offload_folder=tempfile.mkdtemp())


def test_an_offloaded_embedding_puts_model_device_on_meta_and_the_inputs_go_where_it_runs():
    model = placed(EMBEDDING_OFF)
    found = placemap.read(model)
    assert found.model_device == "meta" and str(model.device) == "meta"  # what Transformers says
    assert found.main_device == "cpu" and placement.input_device(model) == "cpu"  # where the embedding's hook runs it
    wte = found.blocks[0]
    assert (wte.name, wte.actual, wte.store, wte.tensor_devices) == ("transformer.wte", "disk", placemap.CHECKPOINT, ["meta"])
    assert found.offloading_hooks > 0 and found.hooks >= found.offloading_hooks


def test_a_weight_on_meta_with_no_hook_holding_its_values_is_flagged():
    model = placed({**EMBEDDING_OFF, "transformer.wte": "cpu", "lm_head": "cpu", "transformer.h": "disk"})
    block = model.transformer.h[1].mlp.c_fc
    del block._hf_hook  # its values are now nowhere: a forward pass would compute on meta
    found = placemap.read(model)
    h1 = next(b for b in found.blocks if b.name == "transformer.h.1")
    assert h1.actual == "mixed" and h1.store == "mixed" and h1.differs  # the block's other modules are still hooked
    assert found.differences == 1


def test_a_model_loaded_whole_has_no_intent_no_hooks_and_agrees_with_itself():
    found = placemap.read(load("shakespeare-gpt2").model)
    assert {b.actual for b in found.blocks} == {"cpu"} and {b.intended for b in found.blocks} == {None}
    assert found.hooks == 0 and found.offloaded_bytes == 0 and found.differences == 0
    assert [b.name for b in found.blocks] == ["transformer.wte", "transformer.wpe", *[f"transformer.h.{i}" for i in range(4)],
                                              "transformer.ln_f", "lm_head"]
    assert sum(b.bytes for b in found.blocks) == 21288960  # each weight once: the head is tied to the embedding


def test_the_offloaded_byte_ranges_are_the_checkpoints_own():
    model = placed({"transformer.wte": "cpu", "lm_head": "cpu", "transformer.wpe": "cpu", "transformer.drop": "cpu",
                    "transformer.h.0": "cpu", "transformer.h.1": "cpu", "transformer.h.2": "cpu",
                    "transformer.h.3": "disk", "transformer.ln_f": "cpu"})
    ranges = placemap.offloaded_ranges(model)
    assert {f for f, _, _ in ranges} == {str(BUNDLED_DIR / "model.safetensors")}
    assert sum(n for _, _, n in ranges) == sum(p.numel() * 4 for p in model.transformer.h[3].parameters())
