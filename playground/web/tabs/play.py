"""The Playground tab: pick, estimate and load a model; generate, or break it; the code to copy. Its layout,
and its events with many outputs (Load, Generate, a load made on another tab, the language switch).

Every result is kept as data in a `gr.State` (the load report, the estimate and its fit, the timeline, the
final stats, the lab result, the memory ledger) and rendered by a view in the page's language, so that switching the language
says it again instead of wiping it.

Adding an output to the Playground touches this file alone: make the component in `build` and name it in its
`ui` table, add that name to the `@answers(...)` of each event that sets it, and answer it by name there
(`"name": value`). The events answer by name (`playground.web.page.answers`): an output an answer leaves out
keeps what it shows, so nothing is counted by position.
"""

from __future__ import annotations

from dataclasses import replace

import gradio as gr

from playground.core import settings
from playground.core.errors import UserError
from playground.core.i18n import in_lang, t
from playground.core.inputs import DEFAULT_PROMPT, SAMPLED
from playground.core.paths import BUNDLED_NAME
from playground.hw import devices
from playground.lab import render, scenarios
from playground.load import catalog, loader
from playground.run.decode import check_engine
from playground.run.pool import POOL
from playground.run.render import report_markdown, stats_markdown
from playground.web import handlers as h, handlers_memory as hm, lab_runs, views
from playground.web.model_lists import model_choices
from playground.web.pace import Pace
from playground.web.results import (model_for_run, page_lang, refused, retranslate_stale, session_of, ui_stale,
                                    ui_timeline, ui_timeline_data)
from playground.web.tabs import lab_scripts
from playground.web.page import LANE, PRIVATE, Page, answering, answers, waiting, working

# What a load leaves on show, said by every event that loads (or finds a model loaded elsewhere)
LOADED = ("report_md", "report_json", "timeline", "peaks_md", "report_s", "timeline_s",
          "ledger_proc", "ledger_dev", "ledger_md", "ledger_s", "load_note")
# What a run (a generation, or a mistake from the lab) leaves on show
RAN = ("output", "stats_md", "snippet_code", "lab_md", "timeline", "peaks_md", "stats_s", "lab_s", "timeline_s",
       "ledger_proc", "ledger_dev", "ledger_md", "ledger_s", "run_note", "made_with_s", "stale_md", "results")


def _mistakes(lang: str) -> list[tuple[str, str]]:
    return [(f"{s['number']}. {s['title_zh' if lang == 'zh' else 'title_en']}", s["id"]) for s in scenarios.listing()]


def build(page: Page) -> None:
    en, w = "en", page.words
    devs = devices.discover()
    usable = [d.id for d in devs if d.available]
    with w(gr.Tab(t("page.tab.play", en), id="play"), "label", "page.tab.play"):
        with gr.Row():
            with gr.Column(scale=1):
                model = w(gr.Dropdown(
                    choices=catalog.choices(en), value=BUNDLED_NAME,
                    allow_custom_value=True, label=t("page.model", en), info=t("page.model.info", en),
                    elem_id="model"), "label", "page.model", info="page.model.info")
                device = w(gr.Radio(usable, value="cpu", label=t("page.device", en), elem_id="device"),
                           "label", "page.device")
                dtype = w(gr.Radio(list(devices.DTYPES), value="float32", label=t("page.dtype", en),
                                   elem_id="dtype"), "label", "page.dtype")
                hint = gr.Markdown(h.ui_hint("cpu", "float32"), elem_id="hint")
                with gr.Row():
                    load_btn = w(gr.Button(t("page.load", en), variant="primary", elem_id="load"),
                                 "value", "page.load")
                    est_btn = w(gr.Button(t("page.estimate", en), elem_id="estimate"), "value", "page.estimate")
                # "will it fit?": the estimate at this context and batch, on each device
                w(gr.Markdown(t("fit.heading", en), elem_id="fit-heading"), "value", "fit.heading")
                with gr.Row():
                    fit_ctx = w(gr.Number(256, precision=0, minimum=1, label=t("fit.context", en),
                                          elem_id="fit-context", min_width=120), "label", "fit.context")
                    fit_batch = w(gr.Number(1, precision=0, minimum=1, label=t("fit.batch", en),
                                            elem_id="fit-batch", min_width=100), "label", "fit.batch")
                # a refused Load says why here (and in its toast); the results of the model still loaded stay
                load_note = gr.Markdown(elem_id="load-note")
                est_md = gr.Markdown(elem_id="estimate-out")
                with w(gr.Accordion(t("page.devices", en), open=False), "label", "page.devices"):
                    devices_md = gr.HTML(views.devices_html(devs), elem_id="devices")
            with gr.Column(scale=2):
                report_md = gr.Markdown(t("page.report.empty", en), elem_id="report")
                with w(gr.Accordion(t("page.report.json", en), open=False), "label", "page.report.json"):
                    report_json = gr.JSON(elem_id="report-json")
                with w(gr.Accordion(t("timeline.title", en), open=True), "label", "timeline.title"):
                    # height: room for the plot and, under it, the legend of every phase's colour
                    # a Vega-Lite chart drawn whole each time (playground.web.views_timeline)
                    timeline = w(gr.Plot(elem_id="timeline", label=t("timeline.y", en), show_label=False),
                                 "label", "timeline.y")
                    peaks_md = gr.Markdown(elem_id="peaks")
                with w(gr.Accordion(t("ledger.title", en), open=True), "label", "ledger.title"):
                    # stacked bars (Gradio stacks a bar plot's colours): the process part by part, and each device;
                    # one above the other: Gradio draws a legend in one line, and a half-width plot cuts the
                    # process's (up to eight parts) after four
                    ledger_proc = gr.BarPlot(x="device", y="MiB", color="part", elem_id="ledger-process",
                                             **views.ledger_words(en, "process"))
                    ledger_dev = gr.BarPlot(x="device", y="MiB", color="part", elem_id="ledger-device",
                                            **views.ledger_words(en, "device"))
                    ledger_md = gr.Markdown(elem_id="ledger")
        w(gr.Markdown(t("page.generate.title", en)), "value", "page.generate.title")
        prompt = w(gr.Textbox(DEFAULT_PROMPT, label=t("page.prompt", en), lines=2, elem_id="prompt"),
                   "label", "page.prompt")
        chat = w(gr.Checkbox(True, label=t("page.chat", en), info=t("page.chat.info", en), elem_id="chat"),
                 "label", "page.chat", info="page.chat.info")
        decoding = w(gr.Radio(views.decoding_choices(en), value="sampled", label=t("page.decoding", en),
                              elem_id="decoding"), "label", "page.decoding")
        with gr.Row(elem_id="gen-settings"):
            max_new = w(gr.Slider(1, settings.read().max_new_tokens, value=64, step=1, label=t("page.max_new", en),
                                  elem_id="max-new", min_width=260), "label", "page.max_new")
            temperature = w(gr.Slider(0, 2, value=SAMPLED["temperature"], step=0.05, label=t("page.temperature", en),
                                      elem_id="temperature", min_width=220), "label", "page.temperature")
            top_p = w(gr.Slider(0.05, 1, value=SAMPLED["top_p"], step=0.05, label=t("page.top_p", en),
                                elem_id="top-p", min_width=200), "label", "page.top_p")
            seed = w(gr.Number(SAMPLED["seed"], precision=0, label=t("page.seed", en), elem_id="seed", min_width=120),
                     "label", "page.seed")
        engine = w(gr.Radio(views.engine_choices(en), value="generate",
                            label=t("page.engine", en), info=t("page.engine.info", en), elem_id="engine"),
                   "label", "page.engine", info="page.engine.info")
        with gr.Row():
            break_on = w(gr.Checkbox(False, label=t("page.breakit", en), info=t("page.breakit.info", en),
                                     elem_id="breakit"), "label", "page.breakit", info="page.breakit.info")
            mistake = w(gr.Dropdown(_mistakes(en), value=scenarios.listing()[0]["id"], label=t("page.mistake", en),
                                    elem_id="mistake"), "label", "page.mistake")
        with gr.Row():
            # its words follow the language and the Break it box (a hook below): it runs a mistake when ticked
            gen_btn = gr.Button(t("page.generate", en), variant="primary", elem_id="generate")
            stop_btn = w(gr.Button(t("page.stop", en), variant="stop", elem_id="stop"), "value", "page.stop")
        run_note = gr.Markdown(elem_id="run-note")  # a refused run says why here (and in its toast)
        scripts = lab_scripts.build(page, mistake)  # shown while Break it is ticked
        # the results of the last run, greyed under a line saying so once another model is loaded
        with gr.Column(elem_id="results", elem_classes=["results"]) as results:
            stale_md = gr.Markdown(elem_id="stale")
            lab_md = gr.Markdown(elem_id="lab")
            output = w(gr.Textbox(label=t("page.output", en), lines=8, elem_id="output"), "label", "page.output")
            stats_md = gr.Markdown(elem_id="stats")
            snippet_code = w(gr.Code(t("page.snippet.none", en), language="python", label=t("page.snippet", en),
                                     interactive=False, buttons=["copy"], elem_id="snippet"), "label", "page.snippet")
        # results as data, said again in the page's language when it changes (inside the tab: a child of
        # gr.Tabs that is not a tab shifts the tabs' labels)
        report_s, est_s, timeline_s, stats_s, lab_s, prompt_context_s, ledger_s = (gr.State(None) for _ in range(7))
        # the model the results were made with, and (it, the model loaded now) for the stale line
        made_with_s, stale_s = gr.State(None), gr.State(None)
        # set by a load made on another tab (Placement's "Load with these limits"): what was picked there
        loaded_elsewhere = gr.State(None)
    # the components the events below answer by name
    ui = dict(model=model, device=device, dtype=dtype, report_md=report_md, report_json=report_json,
              status=page.status, timeline=timeline, peaks_md=peaks_md, ledger_proc=ledger_proc,
              ledger_dev=ledger_dev, ledger_md=ledger_md, load_note=load_note, est_md=est_md, devices_md=devices_md,
              max_new=max_new, decoding=decoding, engine=engine, run_note=run_note, results=results,
              stale_md=stale_md, lab_md=lab_md, output=output, stats_md=stats_md, snippet_code=snippet_code,
              report_s=report_s, est_s=est_s, timeline_s=timeline_s, stats_s=stats_s, lab_s=lab_s,
              ledger_s=ledger_s, made_with_s=made_with_s)
    page.shared.update(mistake=mistake, break_on=break_on)  # the Diagnose tab opens a mistake here
    page.shared.update(loaded_elsewhere=loaded_elsewhere)  # the Placement tab's load replaces the visitor's model
    page.shared.update(play_model=model)  # its list marked once the page is open (ui.py)

    for comp in (device, dtype, page.lang):
        comp.change(h.ui_hint, [device, dtype, page.lang], hint, **PRIVATE)
    def after_a_load(event) -> None:
        """What follows a load, here or on another tab: the slider's top, the ledger's plots, the stale line."""
        event.then(h.ui_prompt_changed, [prompt, chat, max_new, page.lang], [max_new, prompt_context_s], **PRIVATE
                   ).then(h.ui_ledger_plots, [ledger_s, page.lang], [ledger_proc, ledger_dev], **PRIVATE
                          ).then(ui_stale, [made_with_s, page.lang], [stale_md, results, stale_s], **PRIVATE)

    after_a_load(load_btn.click(**answering(ui_load, ui), inputs=[model, device, dtype, page.lang],
                                api_visibility="undocumented", **working(report_md)))
    # Another tab's load replaced the model: the selection and the load's results follow it, as after Load
    after_a_load(loaded_elsewhere.change(**answering(ui_loaded_elsewhere, ui), inputs=[loaded_elsewhere, page.lang],
                                         **PRIVATE))
    # The estimate builds the model on the meta device, which switches process-wide state
    # (torch's default dtype, Accelerate's init_empty_weights): it takes the model lane too.
    est_btn.click(hm.ui_estimate, [model, device, dtype, fit_ctx, fit_batch, page.lang], [est_md, est_s],
                  api_visibility="private", **working(est_md))
    # an estimate made for another selection says so, as soon as the selection changes
    for comp in (model, device, dtype, fit_ctx, fit_batch):
        comp.change(hm.ui_estimate_follows, [est_s, model, device, dtype, fit_ctx, fit_batch, page.lang],
                    [est_md, est_s], **PRIVATE)
    # max_new_tokens' top follows what the prompt leaves of the context, as the visitor types
    for comp in (prompt, chat):
        comp.change(h.ui_prompt_changed, [prompt, chat, max_new, page.lang], [max_new, prompt_context_s],
                    trigger_mode="always_last", **PRIVATE)
    # greedy is one click away, and the switch follows the sliders
    decoding.input(h.ui_decoding, decoding, [temperature, top_p, seed], **PRIVATE)
    for comp in (temperature, top_p, seed):
        comp.input(h.ui_decoding_of, [temperature, top_p, seed], decoding, **PRIVATE)
    gen_btn.click(**answering(ui_generate, ui),
                  inputs=[prompt, max_new, temperature, top_p, seed, break_on, mistake, engine, page.lang, chat],
                  # no overlay: the text streaming in and the stats' "generating…" (a mistake's "running…") say it
                  # works, and Gradio's tracker, redrawn while the model decodes, takes the cores the model decodes on
                  api_visibility="undocumented", show_progress="hidden", **LANE
                  ).then(h.ui_ledger_plots, [ledger_s, page.lang], [ledger_proc, ledger_dev], **PRIVATE)
    stop_btn.click(h.ui_stop, None, None, **PRIVATE)
    break_on.change(h.ui_run_button, [break_on, page.lang], gen_btn, **PRIVATE)
    break_on.change(lambda on: gr.update(visible=bool(on)), break_on, scripts, **PRIVATE)
    page.on_language(lambda lang, on: [h.ui_run_button(on, lang)], [gen_btn], [break_on])
    page.on_language(lambda lang: [gr.update(choices=_mistakes(lang))], [mistake])
    page.on_language(**answering(retranslate_play, ui),
                     inputs=[report_s, est_s, timeline_s, stats_s, lab_s, prompt_context_s, max_new, ledger_s])
    page.on_language(retranslate_stale, [stale_md, results], [stale_s])
    page.on_language(lambda lang: ["", ""], [load_note, run_note])  # a refusal answered a click: its toast said it
    page.after_language(lambda lang, moment: h.ui_ledger_plots(moment, lang), [ledger_proc, ledger_dev], [ledger_s])


# ---------------------------------------------------------------- the events that answer by name

def loaded(report: loader.LoadReport, session: str, lang: str) -> dict:
    """What a load leaves on show (LOADED): its report, the timeline, the ledger after it, each with its data."""
    timeline = ui_timeline_data(session)
    d = report.to_dict()
    ledger_moment = (d["ledger"], "after_load")
    return dict(report_md=report_markdown(report, lang), report_json=d, **timeline_panel(timeline, lang),
                report_s=report, timeline_s=timeline, **ledger_panel(ledger_moment, lang), ledger_s=ledger_moment,
                load_note="")


def timeline_panel(data: tuple | None, lang: str) -> dict:
    plot, peaks = ui_timeline(data, lang)
    return dict(timeline=plot, peaks_md=peaks)


def ledger_panel(ledger_moment: tuple | None, lang: str) -> dict:
    proc, dev, table = h.ui_ledger(ledger_moment, lang)
    return dict(ledger_proc=proc, ledger_dev=dev, ledger_md=table)


@answers("status", *LOADED)
def ui_load(model: str, device: str, dtype: str, lang: str, request: gr.Request = None, progress=gr.Progress()):
    """The Load button (its inputs as every caller sends them; max_new_tokens' slider follows in a .then). A
    refused load changes only its message line (and the banner): the results of the model still loaded stay."""
    lang, session = page_lang(lang), session_of(request)
    try:
        report = POOL.load(*loader.parse(model, device, dtype), session=session,
                           progress=lambda f, d: progress(f, desc=in_lang(d, lang)))
    except UserError as e:
        return dict(status=h.ui_status(lang, request), load_note=refused(e, lang))
    return dict(loaded(replace(report, waiting=waiting(session)), session, lang), status=h.ui_status(lang, request))


@answers("model", "device", "dtype", *LOADED)
def ui_loaded_elsewhere(placed: dict | None, lang: str, request: gr.Request = None) -> dict:
    """A load made on another tab (Placement's "Load with these limits") replaced the visitor's model: the
    Playground's selection (model, device, dtype) and its load results (report, timeline, ledger) now describe
    that model, as its own Load would have. `placed`: what was picked there ({"model": ...})."""
    lang, session = page_lang(lang), session_of(request)
    current = POOL.current(session)
    if not placed or current is None:
        return {}
    report = current[0]
    return dict(loaded(report, session, lang), model=gr.update(value=placed["model"]),
                device=gr.update(value=report.device), dtype=gr.update(value=report.dtype_requested))


@answers(*RAN)
def ui_generate(prompt, max_new_tokens, temperature, top_p, seed, break_on, mistake, engine, lang,
                request: gr.Request = None, chat_template=True):
    """Generate (or, with Break it ticked, run the chosen mistake). A refused run changes only its message
    line: the results on show stay. The results of a run say the model they were made with (`made_with_s`)."""
    lang, session = page_lang(lang), session_of(request)
    stale_md, results = retranslate_stale(lang, None)  # the stale line cleared, the results' column not greyed
    try:
        if break_on:
            # The output box, the stats and the code to copy belong to a generation: a lab run clears them and
            # hides the two boxes (an empty output box under every lab result says nothing)
            sc = scenarios.get(mistake)
            hidden = dict(output=gr.update(value="", visible=False), stats_md="",
                          snippet_code=gr.update(value=t("page.snippet.none", lang), visible=False))
            for result in lab_runs.ticking(sc, session):  # a tick a second while it runs, then its result
                if isinstance(result, lab_runs.Tick):
                    yield dict(hidden, lab_md=views.lab_running(result.elapsed, result.expected, lang),
                               stats_s=None, lab_s=None, run_note="")
            yield dict(hidden, lab_md=render.result_markdown(result, lang), stats_s=None, lab_s=result, run_note="",
                       made_with_s=model_for_run(session), stale_md=stale_md, results=results)
            return
        prompt, p = h.checked_generation(prompt, max_new_tokens, temperature, top_p, seed, chat_template)
        engine = check_engine(engine)
        final, text, first, pace = None, "", True, Pace(quiet_start=True)  # not drawn during the decode's start
        for text, d in h.generate_on_gpu(prompt, p.max_new_tokens, p.temperature, p.top_p, p.seed,
                                         session, engine, p.chat_template):
            if d["finish_reason"] != "running":
                final = h.with_waiting(d, session)
            elif pace.due():  # four updates a second from the click, not one per token: the browser renders each on these cores
                # the box shows again (a lab run hid it) with the first token; after it, the text alone
                out = gr.update(value=text, visible=True) if first else text
                first = False
                yield dict(output=out, stats_md=stats_markdown(views.stats_from_dict(d), lang), lab_md="",
                           lab_s=None, run_note="")
    except UserError as e:
        yield dict(run_note=refused(e, lang))
        return
    # the code to copy, for the visitor's model (the one the stats name) and the engine that ran
    snippet = h.ui_snippet(prompt, p, engine, bool(final.get("chat_template_applied")), session)
    timeline = ui_timeline_data(session)
    ledger_moment = (final.get("ledger") or [], "after_generation")
    yield dict(output=gr.update(value=text, visible=True), stats_md=h.final_stats_markdown(lang, final),
               snippet_code=gr.update(value=snippet, visible=True), lab_md="", **timeline_panel(timeline, lang),
               stats_s=final, lab_s=None, timeline_s=timeline, **ledger_panel(ledger_moment, lang),
               ledger_s=ledger_moment,
               run_note="", made_with_s=views.made_with(final), stale_md=stale_md, results=results)


@answers("report_md", "est_md", "timeline", "peaks_md", "stats_md", "lab_md", "max_new", "model", "engine",
         "decoding", "devices_md", "ledger_proc", "ledger_dev", "ledger_md")
def retranslate_play(lang: str, report, estimate_, timeline, stats, lab, prompt_context, max_new,
                ledger_moment) -> dict:
    """Every result of the Playground tab, said again in `lang`."""
    return dict(report_md=report_markdown(report, lang) if report is not None else t("page.report.empty", lang),
                est_md=views.estimate_fit_markdown(estimate_, lang), **timeline_panel(timeline, lang),
                stats_md=h.final_stats_markdown(lang, stats),
                lab_md=render.result_markdown(lab, lang) if lab is not None else "",
                max_new=h.slider_update(prompt_context or (None, None), max_new, lang),
                model=gr.update(choices=model_choices(lang)), engine=gr.update(choices=views.engine_choices(lang)),
                decoding=gr.update(choices=views.decoding_choices(lang)),
                devices_md=views.devices_html(devices.discover(), lang), **ledger_panel(ledger_moment, lang))
