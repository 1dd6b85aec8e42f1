"""The lesson's edges: break_it's scripts and groups, the scripts' code boxes, the fact-check endpoints."""

from __future__ import annotations

import gradio as gr
import pytest

from playground.lab.harness import GROUPS
from playground.web import handlers


def test_break_it_scenarios_carry_their_group():
    listed = handlers.break_it_scenarios()
    assert {s["group"] for s in listed} <= set(GROUPS)
    assert sum(s["group"] == "training" for s in listed) >= 8


def test_break_it_returns_both_scripts_and_the_real_gpu_message():
    d = handlers.break_it("cuda-mixed-to")
    assert d["raised"] and d["error_type"] == "AssertionError" and d["fix_ok"]
    assert "labels.cuda()" in d["broken_code"] and "labels.to(device)" in d["fix_code"]
    assert d["real_gpu_message"] == "" and d["group"] == "training"  # live here: nothing simulated


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
