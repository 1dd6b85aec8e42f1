"""The census counts a model's bytes from its tensors: a quantized weight from the tensors inside it."""

from __future__ import annotations

import torch

from playground.hw import census
from playground.load import quantize


def _int8_layer() -> torch.nn.Module:
    m = torch.nn.Sequential(torch.nn.Linear(256, 256), torch.nn.LayerNorm(256))
    quantize.torchao().quantize_(m, quantize.config("int8"))
    return m


def test_a_quantized_weight_is_counted_from_its_inner_tensors_scales_included():
    """torchao's Int8Tensor says it is a float32 [256, 256] matrix (its own nbytes: 262,144); its bytes are an
    int8 matrix, a scale per row and a zero point: the census counts those, as torchao's own count does."""
    m = _int8_layer()
    w = m[0].weight
    inner = [getattr(w, n) for n in w.__tensor_flatten__()[0] if getattr(w, n, None) is not None]
    assert type(w).__name__ == "Int8Tensor" and w.nbytes == 256 * 256 * 4
    assert census.nbytes(w) == sum(x.nbytes for x in inner) == 256 * 256 + 256 * 4 + 256  # values, scales, zeros
    from torchao.utils import get_model_size_in_bytes

    assert census.census(m).total == census.weights_bytes(m) == get_model_size_in_bytes(m)
    assert census.census(m).by_device == {"cpu": get_model_size_in_bytes(m)}


def test_plain_tensors_are_their_own_bytes():
    t = torch.zeros(3, 5, dtype=torch.bfloat16)
    assert census.leaves(t) == [t] and census.nbytes(t) == 30
    assert census.nbytes(torch.nn.Parameter(torch.zeros(4))) == 16


def test_one_walk_counts_what_parameters_and_buffers_count_a_tied_weight_once():
    # the census walks the modules once; it must find what parameters() and buffers() find, in their order
    from transformers import GPT2Config, GPT2LMHeadModel
    model = GPT2LMHeadModel(GPT2Config(n_embd=32, n_layer=2, n_head=2, vocab_size=64, n_positions=32))
    model.register_buffer("scratch", torch.zeros(3), persistent=False)
    assert model.lm_head.weight is model.transformer.wte.weight  # tied: one tensor under two names
    expected = list(model.parameters()) + list(model.buffers())
    assert [id(t) for t in census.tensors(model)] == [id(t) for t in expected]
    counted = census.census(model)
    assert counted.tensors == len(expected)
    assert counted.parameters == sum(p.numel() for p in model.parameters())
    assert counted.buffers == len(list(model.buffers())) >= 1
    assert counted.total == sum(t.nbytes for t in expected)


def test_the_module_walk_is_modules_order_a_shared_module_once():
    shared = torch.nn.Linear(2, 2)
    inner = torch.nn.Sequential(shared, torch.nn.ReLU())
    model = torch.nn.Sequential(inner, shared, torch.nn.Sequential(torch.nn.Identity(), inner))
    assert [id(m) for m in census._modules(model)] == [id(m) for m in model.modules()]


def test_an_accelerate_hook_is_seen_in_the_walk():
    from accelerate.hooks import ModelHook, add_hook_to_module
    model = torch.nn.Sequential(torch.nn.Linear(2, 2), torch.nn.Linear(2, 2))
    assert not census.census(model).hooked
    add_hook_to_module(model[1], ModelHook())
    assert census.census(model).hooked


def test_a_copied_model_still_sees_the_other_models_checkpoint_mappings(tmp_path):
    # the ledger counts the resident pages of every checkpoint mapping apart from the libraries': a model whose
    # weights were all copied (a cast) must still list the mappings another model holds
    from safetensors.torch import load_file, save_file
    path = tmp_path / "other.safetensors"
    save_file({"w": torch.ones(4096, 64)}, path)
    other = load_file(path)  # held while the census runs: its file stays mapped
    counted = census.census(torch.nn.Linear(8, 8))
    assert counted.mapped == 0 and counted.ranges == []
    assert str(path) in [p for _, _, p in counted.maps]
    del other
