"""The break-it lab: every mistake raises live, its fix runs, silent ones are measured.

The scenarios run once per module (they share the cached bundled model); each
test then checks one property of those live results. Expected fragments are
our expectations about the installed libraries' wording: the messages
themselves must come from the libraries, never from the playground's source.
"""

from __future__ import annotations

import re

import pytest
import torch

from playground.core.errors import UserError
from playground.core.paths import PACKAGE
from playground.lab import harness, render, scenarios
from playground.lab.diagnose import diagnose
from tests.conftest import load

GPU = torch.cuda.is_available()
SOURCES = "\n".join(p.read_text(encoding="utf-8") for p in PACKAGE.rglob("*.py"))

# scenario -> (exception class, pattern that its live message must contain)
EXPECTED = {
    "inputs-on-cpu": (RuntimeError, r"Expected all tensors to be on the same device.*cuda:0 and cpu"),
    "model-on-cpu": (RuntimeError, r"Expected all tensors to be on the same device.*cpu and cuda:0"),
    "block-left-behind": (RuntimeError, r"Expected all tensors to be on the same device.*cuda:0 and cpu"),
    "dtype-mismatch": (RuntimeError, r"dtype|scalar type"),
    "meta-weights-run": (RuntimeError, r"Tensor on device meta is not on the expected device cpu"),
    "meta-weights-moved": (NotImplementedError, r"Cannot copy out of meta tensor.*to_empty"),
    "offloaded-moved": (RuntimeError, r"move a model that has some modules offloaded to cpu or disk"),
    "cuda-checkpoint": (RuntimeError, r"Attempting to deserialize object on (a )?CUDA device"),
    "conv-devices": (RuntimeError, r"Input type \(.+\) and weight type \(.+\) should be the same"),
}
if not GPU:  # on a GPU host Transformers 5 only warns (it moves the inputs itself): no exception to check
    EXPECTED["generate-device-type"] = (RuntimeError, r"meta tensors")
SILENT = ("fp16-on-cpu", "eval-inference-forgotten")


def run(sid: str, *a, **kw):
    return harness.run(scenarios.get(sid), *a, **kw)


@pytest.fixture(scope="module")
def results():
    return {sid: run(sid) for sid in scenarios.SCENARIOS}


def test_twelve_scenarios_listed_with_titles_in_both_languages():
    listed = scenarios.listing()
    ids = [s["id"] for s in listed]
    assert len(ids) >= 12 and len(set(ids)) == len(ids)
    assert set(EXPECTED) | set(SILENT) <= set(ids)
    assert [s["number"] for s in listed] == sorted(s["number"] for s in listed)
    for s in listed:
        assert s["title_en"] and s["title_zh"] and s["title_en"] != s["title_zh"]
        assert re.search(r"[\u4e00-\u9fff]", s["title_zh"])
    needs = {s["id"] for s in listed if s["needs_gpu"]}
    assert needs == {"inputs-on-cpu", "model-on-cpu", "block-left-behind", "conv-devices", "generate-device-type"}


@pytest.mark.slow
@pytest.mark.parametrize("sid", sorted(EXPECTED))
def test_each_mistake_raises_the_library_error_live(results, sid):
    r = results[sid]
    exc_class, pattern = EXPECTED[sid]
    assert r.raised, r.to_dict()
    assert exc_class.__name__ in [r.error_type, *r.error_bases]
    assert re.search(pattern, r.error_message, re.S), r.error_message
    # the message is the library's, not a string of ours
    assert r.error_message not in SOURCES
    assert r.frame and r.frame.startswith("playground/lab/"), r.frame
    assert r.tensors, "the table of tensors involved is empty"
    assert r.explanation_en and r.explanation_zh and r.fix_before and r.fix_after


@pytest.mark.slow
@pytest.mark.parametrize("sid", sorted(set(EXPECTED) | {"generate-device-type"}) + list(SILENT))
def test_each_fix_runs_and_succeeds(results, sid):
    r = results[sid]
    assert r.fix_ok, (r.fix_error, r.fix_output)
    assert r.fix_seconds is not None and r.fix_seconds > 0
    assert not r.cannot_run


@pytest.mark.slow
def test_gpu_mistakes_are_simulated_and_labelled_on_a_cpu_host(results):
    for sid in ("inputs-on-cpu", "model-on-cpu", "block-left-behind", "conv-devices", "generate-device-type"):
        r = results[sid]
        assert r.fix_ok, sid
        assert r.simulated is (not GPU), sid
        if not GPU:
            assert r.simulation_en and r.simulation_zh
    if not GPU:
        for sid in ("inputs-on-cpu", "model-on-cpu", "block-left-behind"):
            r = results[sid]
            assert "fake cuda:0" in r.simulation_en and r.device == "fake cuda:0"
            assert any(row.fake and row.device == "cuda:0" for row in r.tensors)
    for sid in ("dtype-mismatch", "meta-weights-run", "cuda-checkpoint", "offloaded-moved", *SILENT):
        assert results[sid].simulated is False


@pytest.mark.slow
def test_tensor_tables_name_the_devices_that_clash(results):
    if GPU:
        pytest.skip("checks the CPU-host simulation")
    devs = lambda sid: {row.name: row.device for row in results[sid].tensors}
    assert devs("inputs-on-cpu") == {"input_ids": "cpu", "transformer.wte.weight": "cuda:0"}
    assert devs("model-on-cpu") == {"input_ids": "cuda:0", "transformer.wte.weight": "cpu"}
    d3 = devs("block-left-behind")
    assert d3["transformer.h.0.ln_1.weight"] == "cpu" and d3["transformer.h.1.ln_1.weight"] == "cuda:0"
    assert devs("meta-weights-run")["transformer.wte.weight"] == "meta"


@pytest.mark.slow
def test_generate_warning_is_captured_live(results):
    r = results["generate-device-type"]
    assert any("device type different" in w for w in r.warnings), r.warnings
    assert not any(w in SOURCES for w in r.warnings)


@pytest.mark.slow
def test_offloaded_model_shows_its_device_map(results):
    r = results["offloaded-moved"]
    assert r.hf_device_map and "disk" in r.hf_device_map.values() and "cpu" in r.hf_device_map.values()
    assert any(row.device == "meta" for row in r.tensors)  # offloaded weights are meta until a forward


@pytest.mark.slow
def test_checkpoint_really_records_cuda_storages(results):
    r = results["cuda-checkpoint"]
    expected = f"cuda:{torch.cuda.device_count()}" if GPU else "cuda:0"
    assert r.measured["storage_locations_in_file"] == [expected]
    assert r.measured["checkpoint_bytes"] > 1_000_000


def test_ordinary_saves_are_not_tagged_after_the_lab(tmp_path):
    run("cuda-checkpoint")
    path = tmp_path / "x.pt"
    torch.save({"w": torch.ones(3)}, path)
    assert torch.load(path, weights_only=True)["w"].device.type == "cpu"


@pytest.mark.slow
def test_half_moved_model_is_flagged(results):
    flagged = results["block-left-behind"].flagged_modules
    assert "transformer.h.0.ln_1" in flagged
    assert not any(name.startswith("transformer.h.1") for name in flagged)


@pytest.mark.slow
def test_fp16_slowdown_is_measured(results):
    m = results["fp16-on-cpu"].measured
    assert not results["fp16-on-cpu"].raised
    for k in ("float32_ms", "float16_ms", "bfloat16_ms", "float16_vs_float32", "bfloat16_vs_float32"):
        assert m[k] > 0, k
    assert m["prompt_tokens"] > 0 and m["timed_runs_per_dtype"] >= 1
    assert isinstance(m["cpu_native_fp16"], bool)


@pytest.mark.slow
def test_forgotten_eval_and_inference_mode_are_measured(results):
    r = results["eval-inference-forgotten"]
    m = r.measured
    assert not r.raised
    assert m["dropout_p"] > 0 and m["train_mode_logits_max_abs_diff"] > 0  # two runs of one prompt differ
    assert m["no_inference_mode_saved_tensors"] > 0 and m["no_inference_mode_saved_bytes"] > 0
    assert m["fixed_logits_max_abs_diff"] == 0 and m["fixed_saved_bytes"] == 0


@pytest.mark.slow
def test_lab_messages_are_diagnosed_as_their_own_mistake(results):
    for sid in EXPECTED:
        r = results[sid]
        d = diagnose(r.diagnose_text())
        assert d.recognised, sid
        assert d.ids()[0] == sid, (sid, d.ids(), r.error_message)


@pytest.mark.slow
def test_to_dict_has_the_api_keys(results):
    for r in results.values():
        d = r.to_dict()
        for k in ("scenario", "raised", "error_type", "error_message", "simulated", "explanation_en",
                  "explanation_zh", "fix_ok", "measured", "tensors", "frame", "warnings"):
            assert k in d
        assert "exc" not in d


@pytest.mark.slow
def test_shared_model_is_never_changed(results):
    model, _ = harness.bundled()
    assert not model.training
    assert {p.dtype for p in model.parameters()} == {torch.float32}
    assert {p.device.type for p in model.parameters()} == {"cpu"}
    assert model.lm_head.weight is model.transformer.wte.weight


@pytest.mark.slow
def test_markdown_in_both_languages(results):
    r = results["inputs-on-cpu"]
    en, zh = render.result_markdown(r, "en"), render.result_markdown(r, "zh")
    assert r.title_en in en and r.title_zh in zh
    assert "<table>" in en and en.count("<pre>") >= 3  # message + before + after (+ output)
    assert "same device" in en  # the live message is on the page
    assert re.search(r"[\u4e00-\u9fff]", zh) and "修复" in zh
    silent = render.result_markdown(results["fp16-on-cpu"], "en")
    assert "float16_vs_float32" in silent and "float16 time ÷ float32 time" in silent and "<table>" in silent


def test_unknown_scenario_lists_the_valid_ids():
    with pytest.raises(UserError) as e:
        scenarios.get("no-such-mistake")
    assert "inputs-on-cpu" in str(e.value) and "fp16-on-cpu" in str(e.value)


def test_something_other_than_a_model_is_refused():
    with pytest.raises(UserError):
        run("dtype-mismatch", model=object(), tokenizer=None)


def test_a_passed_model_is_used_and_left_untouched():
    loaded = load("shakespeare-gpt2", "cpu", "float32")
    r = run("eval-inference-forgotten", loaded.model, loaded.tokenizer)
    assert r.fix_ok and r.measured["weights_bytes"] > 0
    assert not loaded.model.training
    r = run("dtype-mismatch", loaded.model, loaded.tokenizer, prompt="JULIET:")
    assert r.raised and r.fix_ok
    assert {p.dtype for p in loaded.model.parameters()} == {torch.float32}
