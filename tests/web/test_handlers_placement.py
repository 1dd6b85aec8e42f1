"""The Placement tab's edge and its API, on the page's own pool (the API's session without a request): the contract the issue names (plan_placement,
load_placed, offload_cliff with their keys), refusals in English for the API and Chinese for the page, and the
views saying the same data in both languages."""

from __future__ import annotations

import re

import gradio as gr
import pytest

from playground.load import placement
from playground.run.pool import POOL
from playground.web import handlers_placement as hp, views_placement as pv

CJK = re.compile(r"[\u4e00-\u9fff]")


@pytest.fixture
def emptied():
    yield
    POOL.unload()


def test_limits_from_the_page_fields_are_the_string_the_api_takes():
    assert hp.limits_from(["cuda:0", "cpu"], ["2GB", " "], True) == "cuda:0=2GB,disk"
    assert hp.limits_from(["cpu"], [""], False) == ""
    assert hp.limits_from(["cpu"], ["200MB"], True) == "cpu=200MB,disk"


def test_plan_placement_carries_blocks_with_intended_and_actual_and_offloaded_bytes():
    d = hp.plan_placement("shakespeare-gpt2", "float32", "cpu=16MB,disk")
    assert d["offloaded_bytes"] == 9479168 and d["load"] is None and d["limits"] == "cpu=16MB,disk"
    assert {"name", "bytes", "intended", "actual"} <= set(d["blocks"][0])
    assert [b["intended"] for b in d["blocks"]].count("disk") == 4 and all(b["actual"] is None for b in d["blocks"])


def test_load_placed_carries_the_map_read_from_the_tensors_and_the_load_report(emptied):
    d = hp.load_placed("shakespeare-gpt2", "float32", "cpu=16MB,disk")
    assert d["load"]["device"] == "auto" and d["load"]["hf_device_map"] and d["load"]["load_seconds"] > 0
    assert d["offloaded_bytes"] == 9479168 and d["differences"] == 0 and d["plan"]["limits"] == "cpu=16MB,disk"
    h3 = next(b for b in d["blocks"] if b["name"] == "transformer.h.3")
    assert (h3["intended"], h3["actual"], h3["planned"], h3["tensor_devices"]) == ("disk", "disk", "disk", ["meta"])


@pytest.mark.parametrize("call, args, words", [
    (hp.plan_placement, ("shakespeare-gpt2", "float32", "cpu=1MB,disk"), "below one block"),
    (hp.plan_placement, ("shakespeare-gpt2", "float32", "gpu=1GB"), "is not a limit"),
    (hp.load_placed, ("shakespeare-gpt2", "float32", "cpu=12MB"), "Add the disk tier"),
    (hp.offload_cliff, (0,), "max_blocks must be a whole number from 1 to 48"),
    (hp.offload_cliff, ("lots",), "max_blocks"),
    (hp.load_straight, ("cpu", "float32"), "the question is the dtype's"),
])
def test_the_api_refuses_in_english_saying_what_to_do(call, args, words):
    with pytest.raises(gr.Error) as e:
        call(*args)
    assert words in e.value.message


def test_the_page_refuses_in_chinese():
    with pytest.raises(gr.Error) as e:
        hp.ui_plan("shakespeare-gpt2", "float32", "cpu=1MB,disk", "zh")
    assert CJK.search(e.value.message) and "transformer.wte" in e.value.message


def test_measuring_needs_an_offloaded_model(emptied):
    POOL.unload()
    with pytest.raises(gr.Error, match="Load a model first|No model is loaded"):
        hp.offload_cost()
    hp.load_placed("shakespeare-gpt2", "float32", "cpu=30MB")  # everything fits: nothing offloaded
    with pytest.raises(gr.Error, match="has no offloaded block"):
        hp.offload_cost()


@pytest.mark.slow
def test_offload_cliff_rows_carry_the_issues_keys_and_the_model_stays(emptied):
    hp.load_placed("shakespeare-gpt2", "float32", "cpu=16MB,disk")
    rows = hp.offload_cliff(3)
    assert [r["blocks_offloaded"] for r in rows] == [0, 1, 2, 3]
    for r in rows:
        assert {"blocks_offloaded", "tokens_per_second", "new_tokens", "moved_bytes_per_token", "disk_bytes_per_token",
                "same_tokens"} <= set(r) and r["new_tokens"] == 16 and r["same_tokens"]
    with POOL.held() as lm:  # the visitor's model stayed loaded, with its limits (the cliff ran on a private copy)
        assert lm.placed.limits == "cpu=16MB,disk" and lm.model.name_or_path.endswith("shakespeare-gpt2")
        # the private copy went with the cliff: the model's own offload folder is the only one left
        assert [str(f) for f in placement.offload_parent().glob(placement.OFFLOAD_PREFIX + "*")] == [lm.offload_folder]


@pytest.mark.slow
def test_the_views_say_a_plan_and_a_map_in_both_languages(emptied):
    d = hp.plan_placement("shakespeare-gpt2", "float32", "cpu=16MB,disk")
    plan = {k: v for k, v in d.items() if k != "load"}
    plan["blocks"] = [{k: b[k] for k in ("name", "bytes", "tier", "tied_to")} for b in d["blocks"]]
    for lang in ("en", "zh"):
        html, md = pv.plan_html(plan, lang), pv.plan_markdown(plan, lang)
        assert html.count("<code") == len(plan["blocks"]) and "`transformer.h.1` … `ln_f` (4" in md.replace("（", " (")
    assert CJK.search(pv.plan_markdown(plan, "zh")) and not CJK.search(pv.plan_markdown(plan, "en"))
    found = hp.load_placed("shakespeare-gpt2", "float32", "cpu=16MB,disk")
    for lang in ("en", "zh"):
        assert pv.map_html(found, lang).count("display:flex;flex:1") == 3  # plan, intended, actual
        assert "`disk`" in pv.map_markdown(found, lang)


def test_the_cliff_says_it_is_running_and_empties_the_old_plot_before_it_measures(emptied, monkeypatch):
    """The walk saw a 16 s cliff run under the last run's plot with nothing saying it ran: the page's event first
    empties the plot and says what runs (the model staying loaded, as the tab's text says), then the result."""
    from types import SimpleNamespace

    from playground.core.i18n import t

    hp.load_placed("shakespeare-gpt2", "float32", "cpu=16MB,disk")
    seen = []
    monkeypatch.setattr(hp, "run_cliff", lambda n, session, progress=None: seen.append(POOL.current(session)) or
                        dict(model="m", dtype="float32", new_tokens=16, prompt="p", seconds=1.0, rate=None, rows=[], cold=True,
                                                                          blocks=4, load_average=0.0))
    for i, lang in enumerate(("en", "zh")):
        events = hp.ui_cliff(2, lang, SimpleNamespace(session_hash=""))
        plot, md, _status, kept = next(events)
        assert plot["value"].empty and kept is None and len(seen) == i  # nothing measured yet: the old plot gone
        assert md == pv.cliff_running(2, lang) and "3" in md and ("stays loaded" in md or CJK.search(md))
        *_, last = events
        assert last[3]["model"] == "m" and seen[-1] is not None  # the visitor's model stayed loaded
    intro = t("place.cliff.intro", "en")
    assert "banner" not in intro and "stays loaded" in intro
