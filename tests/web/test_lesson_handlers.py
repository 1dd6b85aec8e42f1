"""The lesson's edges: break_it's scripts and groups, the scripts' code boxes, the fact-check endpoints."""

from __future__ import annotations

import gradio as gr
import pytest

from playground.lab import scenarios, target
from playground.lab.harness import GROUPS
from playground.web import handlers


def test_break_it_scenarios_carry_their_group():
    listed = handlers.break_it_scenarios()
    assert {s["group"] for s in listed} <= set(GROUPS)
    assert sum(s["group"] == "training" for s in listed) >= 8


def test_break_it_returns_both_scripts_and_the_real_gpu_message(device_target, monkeypatch):
    # the page's target is each one present in turn; .cuda() among .to(device) needs two GPUs to show
    monkeypatch.setattr(target, "page", lambda host=None: device_target)
    sc = scenarios.get("cuda-mixed-to")
    t = target.for_scenario(sc, device_target)
    d = handlers.break_it("cuda-mixed-to")
    assert sc.expected(t.kind).problems(d["raised"], d["error_type"], d["error_bases"], d["error_message"],
                                        d["warnings"]) == [], d
    assert d["fix_ok"] and d["group"] == "training" and d["simulated"] is t.simulated and d["device"] == t.label
    assert "labels.cuda()" in d["broken_code"] and "labels.to(device)" in d["fix_code"]
    assert d["measured"]["cuda_call_here"]  # what .cuda() does on this machine, measured live
    # beside a simulated run, what two real GPUs raise there (built from the library's template); none beside a real one
    assert ("different from other tensors on cuda:1" in d["real_gpu_message"]) is t.simulated


def test_the_code_boxes_follow_the_mistake():
    broken, fixed = handlers.ui_scripts("labels-on-cpu")
    assert broken != fixed and "loss.backward()" in broken and "optimizer.step()" in fixed
    assert handlers.ui_scripts("no-such-mistake") == ("", "") and handlers.ui_scripts(None) == ("", "")


def test_fact_check_endpoint_and_its_refusal():
    d = handlers.fact_check("backends-cuda-synchronize")
    for k in ("id", "claim_en", "claim_zh", "source", "verdict", "evidence_en", "evidence_zh", "live"):
        assert k in d
    assert d["verdict"] == "false" and d["live"] is True
    with pytest.raises(gr.Error) as e:
        handlers.fact_check("no-such-claim")
    assert "Unknown claim" in e.value.message and "backends-cuda-synchronize" in e.value.message


def test_the_page_says_a_fact_check_in_its_language():
    md, results = handlers.ui_fact_check("to-verifies-parameters", "zh")
    assert "错误" in md and "证据" in md and results[0].id == "to-verifies-parameters"
    with pytest.raises(gr.Error) as e:
        handlers.ui_fact_check("nope", "zh")
    assert e.value.title == "错误" and "未知的说法 'nope'" in e.value.message  # the refusal too, not only its title


def test_the_code_boxes_of_a_harmless_order_are_not_called_a_mistake_and_its_fix():
    broken, fixed = handlers.ui_script_labels("optimizer-before-to", "en")
    assert (broken["label"], fixed["label"]) == ("The order the tutorials warn against (script)", "The tutorials' order (script)")
    broken, fixed = handlers.ui_script_labels("labels-on-cpu", "zh")
    assert (broken["label"], fixed["label"]) == ("错误写法（出错的脚本）", "修复写法（修复后的脚本）")


def test_the_run_button_says_what_it_runs():
    """With Break it ticked the button runs a mistake: it said "Generate" all the same."""
    assert handlers.ui_run_button(False, "en")["value"] == "Generate"
    assert handlers.ui_run_button(True, "en")["value"] == "Run the mistake"
    assert handlers.ui_run_button(True, "zh")["value"] == "运行这个错误"


def test_a_diagnosis_links_to_the_mistake_in_the_lab():
    """Diagnose named a match by its internal id ("scenario `inputs-on-cpu`"): it names it as the lab lists it, and
    its button opens it there (the Playground tab, Break it ticked, the mistake chosen)."""
    line = "RuntimeError: Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu!"
    md, _bar, found, button = handlers.ui_diagnose(line, "en")
    first = found.matches[0]
    number = scenarios.get(first.id).number
    assert f"mistake {number} of **Break it**" in md and f"`{first.id}`" not in md
    assert button["visible"] and button["value"] == f"Run mistake {number} in the lab: {first.title.text('en')}"
    tabs, mistake, ticked = handlers.ui_open_in_lab(found)
    assert tabs.selected == "play" and mistake["value"] == first.id and ticked is True
    _, _bar, nothing, hidden = handlers.ui_diagnose("all good here", "en")
    assert hidden["visible"] is False and handlers.ui_open_in_lab(nothing)[2] == gr.update()
