"""The break-it lab: every mistake does on each device target what its data says, its fix runs, silent
ones are measured, every script runs.

The scenarios run once per device target present (`device_target`: the simulated one, then each real
GPU; tests/lab/conftest.py), on the model the loader loaded, as the page runs them; each test then
checks one property of those live results. What a scenario should raise on a target of each kind is
declared with the scenario (`expect=` in its decorator, `playground.lab.outcome`), never here: the
messages themselves must come from the libraries, never from the playground's source. The scripts the
page shows are run as files, with `python`, from the repository root.
"""

from __future__ import annotations

import concurrent.futures
import html
import os
import queue
import re
from pathlib import Path

import pytest
import torch

from playground.core.errors import UserError
from playground.core.i18n import said, t
from playground.core.paths import PACKAGE
from playground.lab import harness, render, scenarios, scripts, target
from playground.lab.diagnose import diagnose
from tests.conftest import ROOT, load
from tests.lab.conftest import results_on
from tests.script_runner import Zygote

# The package's text, but the diagnoser's patterns (which quote wordings to recognise them, by design).
SOURCES = "\n".join(p.read_text(encoding="utf-8") for p in PACKAGE.rglob("*.py") if p.name != "diagnose.py")
DEVICE_FAMILY = ("inputs-on-cpu", "model-on-cpu", "block-left-behind")


def run(sid: str, *a, **kw):
    return harness.run(scenarios.get(sid), *a, **kw)


def on(sid: str, t: target.Target) -> target.Target:
    """The target scenario `sid` runs on when the suite gives it `t`."""
    return target.for_scenario(scenarios.get(sid), t)


def test_at_least_24_scenarios_8_training_listed_with_titles_in_both_languages():
    listed = scenarios.listing()
    ids = [s["id"] for s in listed]
    assert len(ids) >= 24 and len(set(ids)) == len(ids) and set(ids) == set(scenarios.SCENARIOS)
    assert {s["group"] for s in listed} <= set(harness.GROUPS)
    assert sum(s["group"] == "training" for s in listed) >= 8
    assert [s["number"] for s in listed] == sorted(s["number"] for s in listed)
    for s in listed:
        assert s["title_en"] and s["title_zh"] and s["title_en"] != s["title_zh"]
        assert re.search(r"[\u4e00-\u9fff]", s["title_zh"])
        sc = scenarios.get(s["id"])
        assert s["simulated_here"] == (sc.needs_gpu and target.for_scenario(sc).simulated)
    assert sum(s["needs_gpu"] for s in listed) >= 12


@pytest.mark.slow
@pytest.mark.parametrize("sid", sorted(scenarios.SCENARIOS))
def test_each_scenario_does_live_what_its_data_expects(results, device_target, sid):
    r, t = results[sid], on(sid, device_target)
    expected = scenarios.get(sid).expected(t.kind)
    assert expected is not None, (sid, t.kind)
    assert expected.problems(r.raised, r.error_type, r.error_bases, r.error_message, r.warnings) == [], r.to_dict()
    assert not r.cannot_run, r.cannot_run
    if expected.raises is None:
        return
    assert r.error_message not in SOURCES  # the message is the library's, not a string of ours
    assert r.frame and r.frame.startswith(("playground/lab/", "<broken script>")), r.frame
    assert r.tensors, "the table of tensors involved is empty"
    assert r.explanation.text("en") and r.explanation.text("zh") and r.fix_before and r.fix_after


@pytest.mark.slow
@pytest.mark.parametrize("sid", sorted(scenarios.SCENARIOS))
def test_each_fix_runs_and_succeeds(results, sid):
    r = results[sid]
    assert r.fix_ok, (r.fix_error, r.fix_output)
    assert r.fix_seconds is not None and r.fix_seconds > 0
    assert not r.cannot_run


@pytest.mark.slow
def test_gpu_mistakes_say_where_they_ran_and_simulated_ones_say_so(results, device_target):
    for sid, sc in scenarios.SCENARIOS.items():
        r, t = results[sid], on(sid, device_target)
        assert r.simulated is (sc.needs_gpu and t.simulated), sid
        assert (r.simulation is not None) is r.simulated, sid
        if r.simulated:
            assert r.simulation.text("en") and re.search(r"[\u4e00-\u9fff]", r.simulation.text("zh")), sid
    for sid in DEVICE_FAMILY:
        r, t = results[sid], on(sid, device_target)
        assert r.device == t.label
        assert any(row.fake is (t.stand_in == "fake") and row.device == t.tensor_device for row in r.tensors), sid
    r, t = results["cuda-mixed-to"], on("cuda-mixed-to", device_target)
    assert r.device == t.label and t.devices == 2 and {row.device for row in r.tensors} == {"cuda:0", t.tensor_device}
    assert r.measured["cuda_call_here"]  # what .cuda() does on this machine, measured


@pytest.mark.slow
def test_tensor_tables_name_the_devices_that_clash(results, device_target):
    devs = lambda sid: {row.name: row.device for row in results[sid].tensors}
    gpu = on("inputs-on-cpu", device_target).tensor_device
    assert devs("inputs-on-cpu") == {"input_ids": "cpu", "transformer.wte.weight": gpu}
    assert devs("model-on-cpu") == {"input_ids": gpu, "transformer.wte.weight": "cpu"}
    d3 = devs("block-left-behind")
    assert d3["transformer.h.0.ln_1.weight"] == "cpu" and d3["transformer.h.1.ln_1.weight"] == gpu
    assert devs("meta-weights-run")["transformer.wte.weight"] == "meta"


@pytest.mark.slow
def test_generate_warning_is_captured_live_and_nothing_raises(results, device_target):
    r, t = results["generate-device-type"], on("generate-device-type", device_target)
    assert any("device type different" in w for w in r.warnings), r.warnings
    assert not any(w in SOURCES for w in r.warnings)
    assert not r.raised and not r.cannot_run and r.fix_ok
    assert f"`input_ids` is on {torch.device(t.device).type}," in r.warnings[0]
    assert "Stopped at the check" in r.notes[0].text("en")  # stopped there on every target
    # beside a simulated run, the warning as a GPU host prints it, from the template in the installed Transformers
    assert ("`input_ids` is on cuda, whereas the model is on cpu" in r.real_gpu_message) is t.simulated
    md = render.result_markdown(r, "en")
    assert "No exception" in md and "**Error:**" not in md


@pytest.mark.slow
def test_offloaded_model_shows_its_device_map(results):
    r = results["offloaded-moved"]
    assert r.hf_device_map and "disk" in r.hf_device_map.values() and "cpu" in r.hf_device_map.values()
    assert any(row.device == "meta" for row in r.tensors)  # offloaded weights are meta until a forward


@pytest.mark.slow
def test_checkpoint_really_records_cuda_storages(results):
    r = results["cuda-checkpoint"]
    # cuda:0 without a GPU; one past the last GPU on a GPU host (where cuda:0 would load)
    assert r.measured["storage_locations_in_file"] == [f"cuda:{target.Host.here().cuda}"]
    assert r.measured["checkpoint_bytes"] > 1_000_000


def test_ordinary_saves_are_not_tagged_after_the_lab(tmp_path):
    run("cuda-checkpoint")
    path = tmp_path / "x.pt"
    torch.save({"w": torch.ones(3)}, path)
    assert torch.load(path, weights_only=True)["w"].device.type == "cpu"


@pytest.mark.slow
def test_half_moved_model_is_flagged(results, device_target):
    flagged = results["block-left-behind"].flagged_modules
    assert "transformer.h.0.ln_1" in flagged
    assert not any(name.startswith("transformer.h.1") for name in flagged)


@pytest.mark.slow
def test_fp16_slowdown_is_measured_and_the_sentence_follows_it(results):
    r = results["fp16-on-cpu"]
    m = r.measured
    assert not r.raised
    for k in ("float32_ms", "float16_ms", "bfloat16_ms", "float16_vs_float32", "bfloat16_vs_float32"):
        assert m[k] > 0, k
    assert m["prompt_tokens"] > 0 and m["timed_runs_per_dtype"] >= 7
    assert isinstance(m["cpu_native_fp16"], bool)
    for finding, key in zip(r.findings, ("float16_vs_float32", "bfloat16_vs_float32")):
        low, high = (float(x) for x in m[key + "_interval"].split("–"))
        assert low <= m[key] <= high
        said = finding.text("en")
        expected = "timing.slower" if low > 1.1 else "timing.faster" if high < 1 / 1.1 else "timing.same"
        assert finding.key == expected, (said, m)
        assert f"{finding.fields['median']}" in said and str(finding.fields["rounds"]) in said


@pytest.mark.slow
def test_forgotten_eval_and_inference_mode_are_measured(results):
    r = results["eval-inference-forgotten"]
    m = r.measured
    assert not r.raised
    assert m["dropout_p"] > 0 and m["train_mode_logits_max_abs_diff"] > 0  # two runs of one prompt differ
    assert m["no_inference_mode_saved_tensors"] > 0 and m["no_inference_mode_saved_bytes"] > 0
    assert m["fixed_logits_max_abs_diff"] == 0 and m["fixed_saved_bytes"] == 0
    assert m["timed_runs_per_dtype"] >= 7 and r.findings and r.findings[0].key.startswith("timing.")


# The same message names several mistakes: for these the scenario is among the matches, not first.
SHARED_WORDING = {"tensor-in-forward", "unregistered-tensor", "to-not-reassigned", "labels-on-cpu",
                  "loss-weight-not-moved", "optimizer-state-from-gpu", "autocast-outside"}


@pytest.mark.slow
def test_lab_messages_are_diagnosed_as_their_own_mistake(results):
    for sid, r in results.items():
        if not r.raised:
            continue
        d = diagnose(r.diagnose_text())
        assert d.recognised, sid
        if sid in SHARED_WORDING:
            assert sid in d.ids(), (sid, d.ids(), r.error_message)
        else:
            assert d.ids()[0] == sid, (sid, d.ids(), r.error_message)


@pytest.mark.slow
@pytest.mark.device
def test_simulated_errors_show_the_real_gpu_message_and_the_diagnoser_knows_both(bundled):
    """On every host: the simulated target's results, each beside the sentence a real GPU raises there."""
    sim = results_on(target.SIMULATED, bundled)
    for sid, sc in scenarios.SCENARIOS.items():
        r = sim[sid]
        if not sc.needs_gpu or sid == "generate-device-type" or sc.silent:
            continue
        # a wording-only simulation raises nothing: the real device's words stand beside what the stand-in accepted
        assert r.simulated and r.raised is not sc.wording_only and r.real_gpu_message, sid
        assert r.real_gpu_message not in SOURCES  # built from the library's template, not typed
        d = diagnose(r.real_gpu_message)
        top = d.ids() if sid in SHARED_WORDING else d.ids()[:3]
        assert d.recognised and sid in top, (sid, r.real_gpu_message, d.ids())
    # the sentence a real GPU raises, as measured on a GPU with this torch (NOTES.md)
    assert sim["inputs-on-cpu"].real_gpu_message == (
        "Expected all tensors to be on the same device, but got index is on cpu, different from other tensors "
        "on cuda:0 (when checking argument in method wrapper_CUDA__index_select)")
    assert diagnose(sim["labels-on-cpu"].real_gpu_message).ids()[0] == "labels-on-cpu"
    assert diagnose(sim["loss-weight-not-moved"].real_gpu_message).ids()[0] == "loss-weight-not-moved"
    assert diagnose(sim["cuda-mixed-to"].real_gpu_message).ids()[0] == "cuda-mixed-to"
    md = render.result_markdown(sim["labels-on-cpu"], "zh")
    assert "真实 GPU 会抛出的消息" in md and "nll_loss_forward" in md


@pytest.mark.slow
@pytest.mark.device
def test_the_real_gpu_expectations_match_what_the_library_says_a_gpu_raises(bundled):
    """Without a GPU, the data's real-GPU forms are checked against the sentences the installed library's
    templates give for a real GPU (beside each simulated result): the two must agree."""
    sim = results_on(target.SIMULATED, bundled)
    checked = []
    for sid, sc in scenarios.SCENARIOS.items():
        r = sim[sid]
        if not r.real_gpu_message:
            continue
        kind = "cuda2" if sc.devices == 2 else "cuda" if "cuda" in sc.real_on else sc.real_on[0]
        expected = sc.expected(kind)
        assert expected is not None and expected.matches(r.real_gpu_message), (sid, kind, r.real_gpu_message)
        checked.append(sid)
    assert len(checked) >= 12 and "cuda-mixed-to" in checked, checked


@pytest.mark.slow
def test_to_dict_has_the_api_keys(results):
    for r in results.values():
        d = r.to_dict()
        for k in ("scenario", "raised", "error_type", "error_message", "simulated", "explanation_en",
                  "explanation_zh", "fix_ok", "measured", "tensors", "frame", "warnings", "group", "broken_code",
                  "fix_code", "real_gpu_message", "title_en", "title_zh", "simulation_en", "simulation_zh"):
            assert k in d
        # said from the scenario's keys, in both languages
        assert d["title_en"] == t(f"scenario.{r.scenario}.title", "en") and re.search(r"[\u4e00-\u9fff]", d["title_zh"])
        assert bool(d["simulation_en"]) is r.simulated and bool(d["simulation_zh"]) is r.simulated
        assert d["broken_code"] and d["fix_code"] and d["group"] in harness.GROUPS
        assert "exc" not in d


@pytest.mark.slow
def test_shared_model_is_never_changed(results, bundled):
    for model in (harness.bundled()[0], bundled.model):  # the lab's own copy, and the loaded one it was given
        assert not model.training
        assert {p.dtype for p in model.parameters()} == {torch.float32}
        assert {p.device.type for p in model.parameters()} == {"cpu"}
        assert model.lm_head.weight is model.transformer.wte.weight


@pytest.mark.slow
def test_markdown_in_both_languages(results):
    r = results["inputs-on-cpu"]
    en, zh = render.result_markdown(r, "en"), render.result_markdown(r, "zh")
    assert r.title.text("en") in en and r.title.text("zh") in zh
    assert "<table>" in en and en.count("<pre>") >= 3  # message + before + after (+ output)
    assert r.error_message.split(",")[0] in en  # the live message is on the page
    assert re.search(r"[\u4e00-\u9fff]", zh) and "修复" in zh
    silent = render.result_markdown(results["fp16-on-cpu"], "en")
    assert "float16_vs_float32" in silent and "float16 time ÷ float32 time" in silent and "<table>" in silent


@pytest.mark.slow
def test_every_result_shows_code_as_written_and_a_simulation_under_its_message(results):
    from tests.lab.test_render import ascii_after_chinese, entities_in_code

    for sid, r in results.items():
        for lang in ("en", "zh"):
            md = render.result_markdown(r, lang)
            assert entities_in_code(md) == [], (sid, lang, entities_in_code(md))
            if r.simulated and r.simulation and r.raised:
                how = t("punct.labelled", lang, label=t("ui.simulated", lang), text="").strip()
                assert md.index("<pre>" + html.escape(r.error_message)) < md.index(how), (sid, lang)
        assert ascii_after_chinese(render.result_markdown(r, "zh")) == [], sid


@pytest.mark.slow
def test_a_checkpoints_tensors_are_shown_where_the_file_records_them(results):
    """Scenario 20's table said the saved optimizer state was on cpu (where the lab held it) while its output
    said it was saved on cuda:0: a checkpoint's row is the file's record, read back with its storage's location."""
    ckpt = results["cuda-checkpoint"]
    assert [row.device for row in ckpt.tensors] == ckpt.measured["storage_locations_in_file"]
    resume = results["optimizer-state-from-gpu"]
    saved_on = re.search(r"saved on (\S+)", resume.fix_output).group(1)
    assert [(row.name, row.device) for row in resume.tensors] == [("exp_avg", saved_on)]
    assert resume.tensors[0].note == said("ui.row.in_file")


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


# ---------------------------------------------------------------- the scripts the page shows

def test_the_lab_runs_the_fix_script_as_shown():
    """In-process, a script's text is run with only the lines that load the model (and the setup) blanked:
    every line that runs is the shown script's line, at the same line number."""
    for sid, sc in scenarios.SCENARIOS.items():
        for which in ("broken", "fix"):
            shown, ran = sc.script.text(which).splitlines(), sc.script.in_process(which).splitlines()
            assert len(shown) == len(ran), sid
            blanked = [a for a, b in zip(shown, ran) if a != b]
            assert all(b == "" for a, b in zip(shown, ran) if a != b), sid
            provided = scripts.LOAD.splitlines() + sc.script.setup.strip("\n").splitlines() + [scripts.DEVICE.strip()]
            assert set(blanked) <= set(provided) | {""}, (sid, set(blanked) - set(provided))
            text = sc.script.text(which)
            assert 'device = "cuda" if torch.cuda.is_available() else "cpu"' in text, sid
            assert text.startswith("import torch") and compile(text, sid, "exec")


def _run_files(paths: list[Path]) -> list:
    """Each file run as `python FILE` from the repository root, two at a time (this machine has two cores), each
    with one OpenMP thread; the scripts are unchanged. Each runs in a fork of a Python that has imported torch
    and Transformers already (tests/script_runner.py), which saves their import per script."""
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    with Zygote(ROOT, env) as a, Zygote(ROOT, env) as b:
        idle = queue.Queue()
        idle.put(a), idle.put(b)

        def one(path):
            zygote = idle.get()
            try:
                return zygote.run(path)
            finally:
                idle.put(zygote)

        with concurrent.futures.ThreadPoolExecutor(2) as pool:
            return list(pool.map(one, paths))


@pytest.mark.slow
def test_every_script_runs_as_written_from_the_repository_root(bundled, tmp_path):
    """Every fix script exits 0; every broken script of a mistake this machine raises for real (on the page's
    target) raises the same exception. A two-GPU mistake is left out: the script's `device` is `cuda`, the
    current GPU, the very one `.cuda()` picks, so as written it shows the mistake only where `device` is another."""
    results = results_on(target.page(), bundled)
    jobs = []
    for sid, sc in scenarios.SCENARIOS.items():
        jobs.append((sid, "fix", None))
        r = results[sid]
        if r.raised and not r.simulated and sc.devices == 1:
            jobs.append((sid, "broken", r))
    for sid, which, _ in jobs:
        (tmp_path / f"{sid}.{which}.py").write_text(scenarios.get(sid).script.text(which))
    done = list(zip(jobs, _run_files([tmp_path / f"{sid}.{which}.py" for sid, which, _ in jobs])))
    assert sum(which == "broken" for (_, which, _), _p in done) >= 8
    for (sid, which, r), proc in done:
        if which == "fix":
            assert proc.returncode == 0, (sid, proc.stderr[-2000:])
            continue
        assert proc.returncode != 0, (sid, "the broken script did not raise")
        last = [ln for ln in proc.stderr.splitlines() if re.match(r"^[\w.]+(Error|Exception)\b", ln)]
        assert last and last[-1].split(":")[0].split(".")[-1] == r.error_type, (sid, proc.stderr[-1500:])
        assert (r.error_message or "").splitlines()[0][:50] in proc.stderr, (sid, r.error_message, proc.stderr[-800:])
