"""The Placement tab's events and its API endpoints (`plan_placement`, `load_placed`, `offload_cost`, `offload_cliff`,
`load_straight`): check once, call the core.

The same contract as `playground.web.handlers`: what a visitor sent becomes typed values here (a
`ModelSource`, a dtype, a `Placement`, a block count), the work runs in the core, in a fresh thread
(`playground.core.threads`), holding the slot (or borrowing it, for the cliff), and a `UserError` becomes
`gr.Error` in the visitor's language (the API answers in English). The page keeps each result as data.
"""

from __future__ import annotations

from dataclasses import asdict

import gradio as gr

from playground.core import inputs, threads
from playground.core.errors import UserError
from playground.core.i18n import in_lang, plain
from playground.core.inputs import Placement
from playground.hw import devices
from playground.load import catalog, placemap, placement, straight
from playground.load.catalog import ModelSource
from playground.run import cliff
from playground.run.slot import SLOT
from playground.web import views, views_placement as pv
from playground.web.handlers import gr_errors, page_lang

CLIFF_MAX = 48  # the most blocks one cliff offloads (GPT-2 XL has 48): each point is a load and three generations


# ---------------------------------------------------------------- checks (the edge)

def check_blocks(value: object) -> int:
    """How many blocks the cliff may take off the RAM: a whole number from 1 to CLIFF_MAX."""
    return inputs.check_whole(value, "max_blocks", 1, CLIFF_MAX)


def parse_placed(model: object, dtype: object, limits: object) -> tuple[ModelSource, object, Placement]:
    """What a visitor asked to place: the model, the dtype, the limits (one device discovery)."""
    dt = devices.parse_dtype(dtype)
    return catalog.resolve(model), dt, inputs.check_limits(limits)


def limits_from(names: list[str], values: list[object], disk: object) -> str:
    """The page's fields (one per device here, and the disk tier) as one limits string, as the API takes it."""
    items = [f"{d}={v.strip()}" for d, v in zip(names, values) if isinstance(v, str) and v.strip()]
    return ",".join(items + (["disk"] if disk is True else []))


# ---------------------------------------------------------------- the work, as data

def make_plan(src: ModelSource, dtype, pl: Placement) -> placement.PlacementPlan:
    """From config.json alone. Building on meta switches process-wide state (see slot.load): the slot is held."""
    with SLOT.held():
        return threads.run(placement.plan, catalog.read_config(src), dtype, pl, name="plan")


def plan_result(p: placement.PlacementPlan) -> dict:
    """The API's plan: `blocks` (name, bytes, intended: the plan's tier, actual: None before a load)."""
    d = p.to_dict()
    d["blocks"] = [dict(b, intended=b["tier"], actual=None) for b in d["blocks"]]
    d["load"] = None
    return d


def loaded_map() -> tuple[placemap.PlacementMap, dict | None]:
    """The loaded model's placement map, and its plan (as data) when it was loaded with limits."""
    with SLOT.held() as lm:
        if lm is None:
            raise UserError.of("err.not_loaded")
        limits = str(SLOT.placement()) if SLOT.placement() is not None else None
        found = threads.run(placemap.read, lm.model, lm.placed, lm.report.model, limits, lm.offload_folder,
                            name="placement-map")
        return found, lm.placed.to_dict() if lm.placed else None


def place(src: ModelSource, dtype, pl: Placement, progress=None) -> dict:
    report = SLOT.load(src, devices.parse_device("auto"), dtype, progress=progress, placement=pl)
    found, planned = loaded_map()
    return dict(found.to_dict(), plan=planned, load=report.to_dict())


def measure_cost(progress=None) -> dict:
    with SLOT.held() as lm:
        if lm is None:
            raise UserError.of("err.not_loaded")
        if not placemap.offload_homes(lm.model):
            raise UserError.of("place.err.not_offloaded", model=lm.report.model)
        report = threads.run(cliff.cost, lm, lm.report.model, progress=progress or (lambda f, d: None), name="offload")
    return asdict(report)


def run_cliff(max_blocks: int, progress=None) -> tuple[dict, object]:
    """The cliff on the loaded model's checkpoint; the slot is lent meanwhile (the visitor's model, freed, would
    hold the checkpoint's pages in the page cache) and loaded back after (`Return`)."""
    with SLOT.held() as lm:
        if lm is None:
            raise UserError.of("err.not_loaded")
        folder, name, tok = lm.model.name_or_path, lm.report.model, lm.tokenizer
        dtype = next(p for p in lm.model.parameters()).dtype
    say = progress or (lambda f, d: None)
    with SLOT.lent() as back:
        report = threads.run(cliff.cliff, folder, name, dtype, tok, max_blocks, progress=say, name="cliff")
    return report.to_dict(), back


def run_straight(device: str, dtype) -> dict:
    dev = devices.parse_device(device)
    straight.check(dev, dtype)
    with SLOT.held() as lm:
        if lm is None:
            raise UserError.of("err.not_loaded")
        report = threads.run(straight.compare, lm.model.name_or_path, lm.report.model, dev, dtype, name="straight")
    return report.to_dict()


# ---------------------------------------------------------------- API endpoints

def plan_placement(model: str, dtype: str, limits: str) -> dict:
    """Where Accelerate would put each block under these limits ('cpu=120MB,disk', 'cuda:0=2GB,cpu=8GB,disk'), from
    config.json alone: blocks (name, bytes, intended, actual=None), offloaded_bytes, by_tier, the planner's warnings."""
    with gr_errors():
        return plan_result(make_plan(*parse_placed(model, dtype, limits)))


def load_placed(model: str, dtype: str, limits: str) -> dict:
    """Load with device_map='auto', max_memory and an offload folder from these limits; the placement read from
    the loaded tensors and hooks: blocks (name, bytes, planned, intended, actual, store, ...), offloaded_bytes,
    the plan, and the load report (`load`)."""
    with gr_errors():
        return plain(place(*parse_placed(model, dtype, limits)))


def offload_cost() -> dict:
    """The loaded offloaded model, warm and cold, against an all-in-RAM copy: bytes moved and read per token,
    tokens/s, where the time went, the same greedy tokens or not."""
    with gr_errors():
        return plain(measure_cost())


def offload_cliff(max_blocks: int) -> list[dict]:
    """0, 1, ... max_blocks blocks of the loaded model on the disk: one row each (blocks_offloaded,
    tokens_per_second, new_tokens, moved_bytes_per_token, disk_bytes_per_token, same_tokens, cold and bound figures)."""
    with gr_errors():
        rows = run_cliff(check_blocks(max_blocks))[0]["rows"]
        return rows


def load_straight(device: str, dtype: str) -> dict:
    """The loaded model's checkpoint loaded straight onto `device` in `dtype` against loaded then moved (on the CPU:
    loaded in `dtype` against loaded in float32 then cast): both timed, with peak RSS."""
    with gr_errors():
        return run_straight(device, devices.parse_dtype(dtype))


# ---------------------------------------------------------------- page events

def ui_plan(model, dtype, limits, lang: str):
    lang = page_lang(lang)
    with gr_errors(lang):
        p = make_plan(*parse_placed(model, dtype, limits))
    d = p.to_dict()
    return pv.plan_html(d, lang), pv.plan_markdown(d, lang), {"plan": d}


def ui_load_placed(model, dtype, limits, lang: str, progress=gr.Progress()):
    lang = page_lang(lang)
    with gr_errors(lang):
        d = place(*parse_placed(model, dtype, limits),
                  progress=lambda f, desc: progress(f, desc=in_lang(desc, lang)))
    d.pop("load")
    return pv.map_html(d, lang), pv.map_markdown(d, lang), views.status_markdown(SLOT.status(), lang), {"map": d}


def ui_map(lang: str):
    lang = page_lang(lang)
    with gr_errors(lang):
        found, planned = loaded_map()
    d = dict(found.to_dict(), plan=planned)
    return pv.map_html(d, lang), pv.map_markdown(d, lang), {"map": d}


def ui_cost(lang: str, progress=gr.Progress()):
    lang = page_lang(lang)
    with gr_errors(lang):
        d = measure_cost(lambda f, desc: progress(f, desc=in_lang(desc, lang)))
    return pv.cost_markdown(d, lang), d


def ui_cliff(max_blocks, lang: str, progress=gr.Progress()):
    lang = page_lang(lang)
    with gr_errors(lang):
        d, back = run_cliff(check_blocks(max_blocks), lambda f, desc: progress(f, desc=in_lang(desc, lang)))
    d["returned"] = {"seconds": back.seconds, "error": back.error.said if back.error else None}
    return pv.cliff_plot(d, lang), cliff_text(d, lang), views.status_markdown(SLOT.status(), lang), d


def cliff_text(d: dict, lang: str) -> str:
    back = d.get("returned")
    note = ""
    if back and back.get("error") is not None:
        note = "\n\n⚠️ " + in_lang(back["error"], lang)
    return pv.cliff_markdown(d, lang) + note


def ui_straight(device, dtype, lang: str):
    lang = page_lang(lang)
    with gr_errors(lang):
        d = run_straight(device, devices.parse_dtype(dtype))
    return pv.straight_markdown(d, lang), d


def rerender(lang: str, shown_: dict | None, cost: dict | None, cliff_: dict | None, straight_: dict | None) -> list:
    """Every result of the tab, kept as data, said again in the page's new language."""
    lang = page_lang(lang)
    skip = gr.skip()
    if shown_ and "plan" in shown_ and "map" not in shown_:
        picture, text = pv.plan_html(shown_["plan"], lang), pv.plan_markdown(shown_["plan"], lang)
    elif shown_ and "map" in shown_:
        picture, text = pv.map_html(shown_["map"], lang), pv.map_markdown(shown_["map"], lang)
    else:
        picture = text = skip
    return [picture, text, pv.cost_markdown(cost, lang) if cost else skip,
            pv.cliff_plot(cliff_, lang), cliff_text(cliff_, lang) if cliff_ else skip,
            pv.straight_markdown(straight_, lang) if straight_ else skip]
