"""The Placement tab's events and its API endpoints (`plan_placement`, `load_placed`, `offload_cost`, `offload_cliff`,
`load_straight`): check once, call the core.

The same contract as `playground.web.handlers`: what a visitor sent becomes typed values here (a
`ModelSource`, a dtype, a `Placement`, a block count), the work runs in the core, in a fresh thread
(`playground.core.threads`), on the visitor's own model held in use (`POOL.held`: nothing unloads it, no other
run shares the machine meanwhile), and a `UserError` becomes `gr.Error` in the visitor's language (the API answers
in English). The page keeps each result as data.
"""

from __future__ import annotations

import time
from dataclasses import asdict

import gradio as gr

from playground.core import inputs, threads
from playground.core.errors import UserError
from playground.core.i18n import as_text, in_lang
from playground.core.inputs import Placement
from playground.hw import devices
from playground.load import catalog, placemap, placement, straight
from playground.load.catalog import ModelSource
from playground.run import cliff
from playground.run.pool import POOL
from playground.web import views_placement as pv
from playground.web.handlers import gr_errors, ui_status
from playground.web.page import answers, waiting
from playground.web.results import page_lang, session_of

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
    """From config.json alone. Building on meta switches process-wide state (see loader.prepare): in the lane."""
    with POOL.exclusive():
        return threads.run(placement.plan, catalog.read_config(src), dtype, pl, name="plan")


def plan_result(p: placement.PlacementPlan) -> dict:
    """The API's plan: `blocks` (name, bytes, intended: the plan's tier, actual: None before a load)."""
    d = p.to_dict()
    d["blocks"] = [dict(b, intended=b["tier"], actual=None) for b in d["blocks"]]
    d["load"] = None
    return d


def loaded_map(session: str) -> tuple[placemap.PlacementMap, dict | None]:
    """The session's model's placement map, and its plan (as data) when it was loaded with limits."""
    with POOL.held(session) as lm:
        if lm is None:
            raise UserError.of("err.not_loaded")
        limits = lm.placed.limits if lm.placed is not None else None
        found = threads.run(placemap.read, lm.model, lm.placed, lm.report.model, limits, lm.offload_folder,
                            name="placement-map")
        return found, lm.placed.to_dict() if lm.placed else None


def place(src: ModelSource, dtype, pl: Placement, session: str, progress=None) -> dict:
    report = POOL.load(src, devices.parse_device("auto"), dtype, progress=progress, session=session, placement=pl)
    found, planned = loaded_map(session)
    return dict(found.to_dict(), plan=planned, load=report.to_dict())


def measure_cost(session: str, progress=None) -> dict:
    with POOL.held(session) as lm:
        if lm is None:
            raise UserError.of("err.not_loaded")
        if not placemap.offload_homes(lm.model):
            raise UserError.of("place.err.not_offloaded", model=lm.report.model)
        report = threads.run(cliff.cost, lm, lm.report.model, progress=progress or (lambda f, d: None), name="offload")
    return dict(asdict(report), waiting=waiting(session))


def run_cliff(max_blocks: int, session: str, progress=None) -> dict:
    """The cliff on a private copy of the session's model's checkpoint (`placement.private_copy`: the visitor's model,
    and any other visitor's holding the same checkpoint, map its pages, which no eviction can then drop), in the lane."""
    with POOL.held(session) as lm:
        if lm is None:
            raise UserError.of("err.not_loaded")
        name, tok = lm.report.model, lm.tokenizer
        dtype = next(p for p in lm.model.parameters()).dtype
        folder = threads.run(placement.private_copy, lm.model.name_or_path, name="cliff-copy")
        try:
            report = threads.run(cliff.cliff, str(folder), name, dtype, tok, max_blocks,
                                 progress=progress or (lambda f, d: None), name="cliff")
        finally:
            placement.remove_folder(folder)
    return dict(report.to_dict(), waiting=waiting(session))


def run_straight(device: str, dtype, session: str) -> dict:
    dev = devices.parse_device(device)
    straight.check(dev, dtype)
    with POOL.held(session) as lm:
        if lm is None:
            raise UserError.of("err.not_loaded")
        report = threads.run(straight.compare, lm.model.name_or_path, lm.report.model, dev, dtype, name="straight")
    return dict(report.to_dict(), waiting=waiting(session))


# ---------------------------------------------------------------- API endpoints

def plan_placement(model: str, dtype: str, limits: str, request: gr.Request = None) -> dict:
    """Where Accelerate would put each block under these limits ('cpu=120MB,disk', 'cuda:0=2GB,cpu=8GB,disk'), from
    config.json alone: blocks (name, bytes, intended, actual=None), offloaded_bytes, by_tier, the planner's warnings."""
    with gr_errors():
        return plan_result(make_plan(*parse_placed(model, dtype, limits)))


def load_placed(model: str, dtype: str, limits: str, request: gr.Request = None) -> dict:
    """Load with device_map='auto', max_memory and an offload folder from these limits; the placement read from
    the loaded tensors and hooks: blocks (name, bytes, planned, intended, actual, store, ...), offloaded_bytes,
    the plan, and the load report (`load`)."""
    with gr_errors():
        return as_text(place(*parse_placed(model, dtype, limits), session_of(request)))


def offload_cost(request: gr.Request = None) -> dict:
    """The loaded offloaded model, warm and cold, against an all-in-RAM copy: bytes moved and read per token,
    tokens/s, where the time went, the same greedy tokens or not."""
    with gr_errors():
        return as_text(measure_cost(session_of(request)))


def offload_cliff(max_blocks: int, request: gr.Request = None) -> list[dict]:
    """0, 1, ... max_blocks blocks of the loaded model on the disk: one row each (blocks_offloaded,
    tokens_per_second, new_tokens, moved_bytes_per_token, disk_bytes_per_token, same_tokens, cold and bound figures)."""
    with gr_errors():
        return run_cliff(check_blocks(max_blocks), session_of(request))["rows"]


def load_straight(device: str, dtype: str, request: gr.Request = None) -> dict:
    """The loaded model's checkpoint loaded straight onto `device` in `dtype` against loaded then moved (on the CPU:
    loaded in `dtype` against loaded in float32 then cast): both timed, with peak RSS."""
    with gr_errors():
        return run_straight(device, devices.parse_dtype(dtype), session_of(request))


# ---------------------------------------------------------------- page events

def ui_plan(model, dtype, limits, lang: str):
    lang = page_lang(lang)
    with gr_errors(lang):
        p = make_plan(*parse_placed(model, dtype, limits))
    d = p.to_dict()
    return pv.plan_html(d, lang), pv.plan_markdown(d, lang), {"plan": d}


def ui_load_placed(model, dtype, limits, lang: str, request: gr.Request, progress=gr.Progress()):
    lang = page_lang(lang)
    with gr_errors(lang):
        d = place(*parse_placed(model, dtype, limits), session_of(request),
                  progress=lambda f, desc: progress(f, desc=in_lang(desc, lang)))
    d.pop("load")
    # the visitor's model was replaced: the Playground tab's selection and load report follow (tabs/play.py)
    return (pv.map_html(d, lang), pv.map_markdown(d, lang), ui_status(lang, request), {"map": d},
            dict(model=model, at=time.time()))


def ui_map(lang: str, request: gr.Request):
    lang = page_lang(lang)
    with gr_errors(lang):
        found, planned = loaded_map(session_of(request))
    d = dict(found.to_dict(), plan=planned)
    return pv.map_html(d, lang), pv.map_markdown(d, lang), {"map": d}


def ui_cost(lang: str, request: gr.Request, progress=gr.Progress()):
    lang = page_lang(lang)
    with gr_errors(lang):
        d = measure_cost(session_of(request), lambda f, desc: progress(f, desc=in_lang(desc, lang)))
    return pv.cost_markdown(d, lang), d


def ui_cliff(max_blocks, lang: str, request: gr.Request, progress=gr.Progress()):
    """The cliff, said as it runs: the last run's plot cleared at once (it no longer answers this press) and
    what is running said where the result will be, with each point's progress over it."""
    lang = page_lang(lang)
    with gr_errors(lang):
        n = check_blocks(max_blocks)
        if POOL.current(session_of(request)) is None:
            raise UserError.of("err.not_loaded")
    yield pv.cliff_plot(None, lang), pv.cliff_running(n, lang), gr.skip(), None
    with gr_errors(lang):
        d = run_cliff(n, session_of(request), lambda f, desc: progress(f, desc=in_lang(desc, lang)))
    yield pv.cliff_plot(d, lang), pv.cliff_markdown(d, lang), ui_status(lang, request), d


def ui_straight(device, dtype, lang: str, request: gr.Request):
    lang = page_lang(lang)
    with gr_errors(lang):
        d = run_straight(device, devices.parse_dtype(dtype), session_of(request))
    return pv.straight_markdown(d, lang), d


@answers("picture", "out", "cost_md", "plot", "cliff_md", "s_md")
def rerender(lang: str, shown_: dict | None, cost: dict | None, cliff_: dict | None, straight_: dict | None) -> dict:
    """Every result of the tab, kept as data, said again in the page's new language (one not made yet stays)."""
    lang = page_lang(lang)
    answer: dict = dict(plot=pv.cliff_plot(cliff_, lang))
    if shown_ and "plan" in shown_ and "map" not in shown_:
        answer.update(picture=pv.plan_html(shown_["plan"], lang), out=pv.plan_markdown(shown_["plan"], lang))
    elif shown_ and "map" in shown_:
        answer.update(picture=pv.map_html(shown_["map"], lang), out=pv.map_markdown(shown_["map"], lang))
    if cost:
        answer.update(cost_md=pv.cost_markdown(cost, lang))
    if cliff_:
        answer.update(cliff_md=pv.cliff_markdown(cliff_, lang))
    if straight_:
        answer.update(s_md=pv.straight_markdown(straight_, lang))
    return answer
