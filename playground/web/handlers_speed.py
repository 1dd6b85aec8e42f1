"""The Speed tab's events and its API endpoints (`bandwidth`, `kv_growth`, `engines`): check once, call the core.

The same contract as `playground.web.handlers`: what a visitor sent becomes typed
values here (a token budget, a flag), with one device discovery; the measuring
runs in the core, in a fresh thread (`playground.core.threads`), on the visitor's
own model held in use (nothing unloads it meanwhile), and each result says how many
visitors were waiting; a `UserError` becomes `gr.Error` in the visitor's language
(the API answers in English). The page keeps each result as data (sentences still
`Said`) so that a language switch re-renders it.
"""

from __future__ import annotations

import time
from contextlib import contextmanager
from dataclasses import asdict
from typing import Iterator

import gradio as gr

from playground.core import inputs, threads
from playground.core.errors import UserError, shown
from playground.core.i18n import as_text, in_lang, said, t
from playground.hw import bandwidth as rates, busy, devices, pcie, zerogpu
from playground.hw.devices import DeviceInfo
from playground.load import migration
from playground.load.loader import LoadedModel
from playground.run import engines as decode_engines, kvcache
from playground.run.pool import POOL
from playground.web import views_speed as views
from playground.web.handlers import gr_errors
from playground.web.page import waiting
from playground.web.results import page_lang, session_of

ENGINE_MAX_TOKENS = 256  # the cache-less loop costs O(n^2): beyond this it takes minutes on a big model
KV_TOKENS = 256  # how far the KV-cache measurement decodes (less where the context is shorter)
# Which measured rate each bound divides by (the API's `bounds`).
BOUNDS = {
    "decode": "cpu.read for weights in RAM (gpu.devices[].read for weights in a GPU's memory): a decode step "
              "only reads the weights, once per token",
    "to_cpu_copy": "cpu.memcpy: a .to() that copies within RAM reads and writes every byte",
    "to_dtype_on_cpu": "cpu.cast: model.to(torch.bfloat16) on the CPU",
    "to_gpu": "gpu.devices[].h2d_pageable: model.to('cuda') copies from pageable memory; h2d_pinned is the "
              "ceiling and gpu.links[].theoretical_gbps the link's theoretical rate",
}


# ---------------------------------------------------------------- checks (the edge)

def check_engine_tokens(value: object) -> int:
    n = inputs.check_max_new_tokens(value)
    if n < 2 or n > ENGINE_MAX_TOKENS:
        raise UserError.of("err.engine_tokens", lo=2, hi=ENGINE_MAX_TOKENS, got=shown(value, 40))
    return n


# ---------------------------------------------------------------- the measurements, as data

def on_this_host(devs: list[DeviceInfo]) -> list[DeviceInfo]:
    """The devices a measurement here may use. On ZeroGPU a GPU exists only inside a `@spaces.GPU`
    call, so a copy timed outside one would time an emulation: the GPU is listed as absent, with why."""
    if not zerogpu.active():
        return devs
    return [d for d in devs if d.kind not in ("cuda", "mps")] + [
        DeviceInfo(id="cuda", kind="cuda", available=False, name="ZeroGPU", reason=said("speed.zerogpu"))]


@contextmanager
def measurable(session: str) -> Iterator[LoadedModel]:
    """Hold the session's model in use (nothing unloads it while it is measured) and yield it; refused when
    the session has none, or when it sits on ZeroGPU's GPU, which exists only inside a `@spaces.GPU` call."""
    with POOL.held(session) as lm:
        if lm is None:
            raise UserError.of("err.not_loaded")
        if zerogpu.active() and not lm.device.startswith("cpu"):
            raise UserError.of("err.zerogpu_speed", device=lm.device)
        yield lm


def measure_bandwidth(session: str) -> dict:
    """The survey, every GPU's PCIe link, and the session's model's `.to()` against them (Said kept)."""
    devs = on_this_host(devices.discover())
    with POOL.held(session) as lm:  # the lane: no other run shares the machine with the copies timed here
        survey = threads.run(rates.survey, devs, name="bandwidth")
        links = [] if zerogpu.active() else pcie.links()[0]
        gap = None
        if lm is not None:
            link = next((x.theoretical_gbps for x in links if f"cuda:{x.ordinal}" == lm.report.device), None)
            gap = asdict(migration.gap(lm.report, lm.model, survey, link))
    return dict(cpu=survey["cpu"], gpu=dict(survey["gpu"], links=[asdict(x) for x in links]), migrate=gap,
                bounds=BOUNDS, waiting=waiting(session))


def measure_kv(session: str) -> dict:
    with measurable(session) as lm:
        n_prompt = len(lm.tokenizer(decode_engines.PROMPT)["input_ids"])
        ctx = lm.report.context_length or (n_prompt + KV_TOKENS)
        new = max(2, min(KV_TOKENS, ctx - n_prompt))
        g = threads.run(kvcache.kv_growth, lm.model, lm.tokenizer, lm.device, decode_engines.PROMPT, new,
                        lm.report.model, name="kv-growth")
    return dict(g.to_dict(), waiting=waiting(session))


def run_engines(n: int, with_compiled: bool, session: str, progress=None) -> decode_engines.EnginesReport:
    with measurable(session) as lm:
        return decode_engines.run(lm.model, lm.tokenizer, lm.device, n, with_compiled, lm.report.model,
                                  progress=progress, location=lm.report.location)


# ---------------------------------------------------------------- API endpoints

def bandwidth(request: gr.Request = None) -> dict:
    """Measure now: host memcpy, streaming-read and float32->bfloat16 cast rates; each GPU's pinned and
    pageable copies both ways with its PCIe link (or why there is none); this client's model's .to() beside them."""
    with gr_errors():
        return as_text(measure_bandwidth(session_of(request)))


def kv_growth(request: gr.Request = None) -> dict:
    """This client's model's KV cache, read from the real cache object at several lengths, against the
    estimate (2 x layers x KV heads x head dim x dtype bytes per token), and the time per step with and without it."""
    with gr_errors():
        return measure_kv(session_of(request))


def engines(max_new_tokens: int, compiled: bool = False, request: gr.Request = None) -> list[dict]:
    """generate(), the manual loop with and without the KV cache, and (compiled=True) a static cache under
    torch.compile, on this client's model: one row each, against the memory-bandwidth bound."""
    session = session_of(request)
    with gr_errors():
        n, c = check_engine_tokens(max_new_tokens), inputs.check_flag(compiled, "compiled")
        rows = as_text(run_engines(n, c, session).to_dict()["rows"])
    n_waiting = waiting(session)
    return [dict(r, waiting=n_waiting) for r in rows]


# ---------------------------------------------------------------- page events

def ui_bandwidth(lang: str, request: gr.Request = None):
    lang = page_lang(lang)
    with gr_errors(lang):
        d = measure_bandwidth(session_of(request))
    return views.bandwidth_markdown(d, lang), d


def ui_kv(lang: str, request: gr.Request = None):
    lang = page_lang(lang)
    with gr_errors(lang):
        g = measure_kv(session_of(request))
    return (views.kv_markdown(g, lang), *views.kv_plots(g, lang), g)


def ui_engines(max_new_tokens, with_compiled, lang: str, request: gr.Request = None, progress=gr.Progress()):
    """Yields (markdown, data): the engines that need no compiling first, then the compiled one, its
    compile phase announced while it runs. The model is held in use throughout: it cannot go between."""
    lang, session = page_lang(lang), session_of(request)
    with gr_errors(lang):
        n, c = check_engine_tokens(max_new_tokens), inputs.check_flag(with_compiled, "compiled")
        yield t("speed.running", lang), gr.skip()
        say = (lambda f, d: progress(f, desc=in_lang(d, lang)))
        with measurable(session) as lm:
            report = decode_engines.run(lm.model, lm.tokenizer, lm.device, n, False, lm.report.model, progress=say,
                                        location=lm.report.location)
            d = asdict(report)
            if c:
                yield (views.engines_markdown(d, lang) + "\n\n"
                       + t("speed.compiling", lang, at=time.strftime("%H:%M:%S")), d)
                try:
                    decode_engines.add_compiled(report, lm.model, lm.tokenizer, say)
                    d = asdict(report)
                except UserError as e:  # the other engines' rows stand; the reason is kept with them
                    d = dict(asdict(report), compile_error=e.said)
        # how busy the machine was when the runs ended (hw.busy): a rate measured then may have shared the CPU
        d = dict(d, waiting=waiting(session), load_average=busy.load_average(), cores=busy.cores())
        yield views.engines_markdown(d, lang), d


def rerender(lang: str, bw: dict | None, kv: dict | None, eng: dict | None) -> list:
    """The three results, kept as data, said again in the page's new language."""
    lang = page_lang(lang)
    frames = views.kv_plots(kv, lang)
    return [views.bandwidth_markdown(bw, lang) if bw else gr.skip(),
            views.kv_markdown(kv, lang) if kv else gr.skip(), frames[0] if kv else gr.skip(),
            frames[1] if kv else gr.skip(), views.engines_markdown(eng, lang) if eng else gr.skip()]
