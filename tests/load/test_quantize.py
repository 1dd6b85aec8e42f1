"""int8 and int4 as dtypes: which layers quantize and why the others are skipped, the bytes counted from the
tensors and estimated on meta alike, torchao's refusals here, and torchao kept off the float path."""

from __future__ import annotations

import subprocess
import sys

import pytest
import torch
from transformers import AutoModelForCausalLM

from playground.core.i18n import t
from playground.hw import census
from playground.load import catalog, estimate, quantize, synthetic
from tests.conftest import ROOT, load


def _tiny(model_type: str, **kw):
    from transformers import AutoConfig

    cfg = AutoConfig.for_model(model_type, vocab_size=128, **kw)
    return AutoModelForCausalLM.from_config(cfg)


def test_layers_quantize_linear_and_skip_embeddings_tied_heads_conv1d_and_ragged_groups():
    gpt2 = {c.name: c.reason for c in quantize.layers(_tiny("gpt2", n_embd=64, n_layer=1, n_head=2), "int8")}
    assert gpt2["transformer.wte"] == gpt2["transformer.wpe"] == "embedding"
    assert gpt2["lm_head"] == "tied"  # one Parameter with the embedding: a quantized copy would add bytes
    assert gpt2["transformer.h.0.attn.c_attn"] == gpt2["transformer.h.0.mlp.c_fc"] == "not_linear"  # Conv1D
    assert "quantized" not in gpt2.values()
    llama = _tiny("llama", hidden_size=64, intermediate_size=80, num_hidden_layers=1, num_attention_heads=2,
                  tie_word_embeddings=False)
    int8 = {c.name: c.reason for c in quantize.layers(llama, "int8")}
    assert int8["lm_head"] == int8["model.layers.0.self_attn.q_proj"] == int8["model.layers.0.mlp.down_proj"] == "quantized"
    int4 = {c.name: c.reason for c in quantize.layers(llama, "int4")}  # groups of 32: down_proj's 80 inputs are not
    assert int4["model.layers.0.mlp.down_proj"] == "group" and int4["model.layers.0.mlp.up_proj"] == "quantized"
    said = quantize.reason(quantize.QuantReport("int8", "", "", "float32", 0, 0, quantize.summary(
        quantize.layers(_tiny("gpt2", n_embd=64, n_layer=1, n_head=2), "int8")), 10, 10))
    assert said.key == "quant.reason_none" and "Conv1D" in said.text("en") and "Conv1D" in said.text("zh")


@pytest.mark.slow
@pytest.mark.parametrize("dtype", ["int8", "int4"])
def test_a_llama_loads_quantized_its_ledger_weights_are_the_quantized_tensors_and_the_estimate_knew(dtype):
    lm = load("synthetic/llama-42m", "cpu", dtype)
    r, q = lm.report, lm.report.quantized
    from torchao.utils import get_model_size_in_bytes

    # torchao's count walks modules, so the head tied to the embedding is counted under both: once here
    emb = lm.model.get_input_embeddings().weight
    assert lm.model.get_output_embeddings().weight is emb
    measured = get_model_size_in_bytes(lm.model) - emb.nbytes
    weights = next(p for p in r.ledger if p.part == "weights")
    assert abs(weights.bytes - measured) <= 0.01 * measured and r.weights_bytes == q.weights_after == measured
    cfg = catalog.read_config(catalog.resolve("synthetic/llama-42m")).config
    assert weights.estimate_bytes == estimate.quantized_bytes(cfg, dtype) == measured  # built on meta, counted alike
    assert [p.name for p in r.phases][-3:] == ["migrate", "quantize", "eval"] and r.dtype == dtype
    assert q.quantized == 8 * 7 and q.tensor in ("Int8Tensor", "IntxUnpackedToInt8Tensor")
    assert {s["reason"]: s["count"] for s in q.skipped} == {"embedding": 1, "tied": 1}
    assert q.weights_after < q.weights_before / 2
    f32 = synthetic.config("synthetic/llama-42m")
    assert q.weights_before == estimate.meta_facts(f32, torch.float32).total
    assert {type(lm.model.get_submodule(n).weight).__name__ for n in q.layer_names} == {q.tensor}
    text = r.dtype_reason.text("en")
    assert f"{q.quantized} weight matrices" in text and "tied" in text and r.dtype_reason.text("zh") != text


@pytest.mark.slow
@pytest.mark.parametrize("name", ["shakespeare-gpt2", "synthetic/gpt2-small"])
def test_gpt2_loads_in_int8_and_says_nothing_could_be_quantized(name):
    """GPT-2's projections are Conv1D and its head is the embedding's own tensor: int8 loads, quantizes nothing,
    and the ledger's weights are float32's, counted from the tensors."""
    lm = load(name, "cpu", "int8")
    q = lm.report.quantized
    assert q.quantized == 0 and q.weights_after == q.weights_before == census.weights_bytes(lm.model)
    assert {s["reason"] for s in q.skipped} == {"embedding", "tied", "not_linear"}
    assert next(s for s in q.skipped if s["reason"] == "not_linear")["kinds"] == ["Conv1D"]
    weights = next(p for p in lm.report.ledger if p.part == "weights")
    assert abs(weights.bytes - q.weights_after) <= 0.01 * q.weights_after
    assert lm.report.dtype_reason.key == "quant.reason_none"


@pytest.mark.slow
def test_packed_int4_is_refused_here_with_torchaos_own_words():
    refused = quantize.refused()
    assert {r.format for r in refused} == set(quantize.PACKED_INT4)  # none of them runs on this CPU build
    # the package's text, but the diagnoser's patterns (which quote wordings to recognise them, by design)
    sources = "\n".join(p.read_text(encoding="utf-8") for p in (ROOT / "playground").rglob("*.py")
                        if p.name not in ("diagnose.py", "diagnoses.py"))
    for r in refused:
        assert ": " in r.error and r.error.split(": ", 1)[1] not in sources, r  # raised live, not typed here
    assert t("quant.refused", "en", format="plain", error="x")


FLOAT_THEN_INT8 = """
import sys
from tests.conftest import load
load("shakespeare-gpt2", "cpu", "float32")
print("after float32:", "torchao" in sys.modules)
load("shakespeare-gpt2", "cpu", "int8")
print("after int8:", "torchao" in sys.modules)
"""


@pytest.mark.slow
def test_a_float_load_never_imports_torchao_and_an_int8_load_prints_none_of_its_lines():
    """Transformers imports torchao as it builds its first model wherever torchao is installed (half a second to
    three, and "Failed to load ... .so" lines): the load layer's gate keeps a float32 load free of it; an int8 load
    imports it, its lines kept off the console."""
    out = subprocess.run([sys.executable, "-c", FLOAT_THEN_INT8], cwd=ROOT, capture_output=True, text=True,
                         timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    assert "after float32: False" in out.stdout and "after int8: True" in out.stdout
    for noise in ("Failed to load", "register_constant", "_C_cutlass"):
        assert noise not in out.stderr, out.stderr[-2000:]
