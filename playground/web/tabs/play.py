"""The Playground tab: pick, estimate and load a model; generate, or break it; the code to copy.

Every result is kept as data in a `gr.State` (the load report, the estimate and its fit, the timeline, the
final stats, the lab result, the memory ledger) and rendered by a view in the page's language, so that switching the language
says it again instead of wiping it.
"""

from __future__ import annotations

import gradio as gr

from playground.core import settings
from playground.core.i18n import t
from playground.core.inputs import DEFAULT_PROMPT, SAMPLED
from playground.core.paths import BUNDLED_NAME
from playground.hw import devices
from playground.lab import scenarios
from playground.load import catalog
from playground.web import handlers as h, handlers_memory as hm, handlers_placement as hp, views
from playground.web.tabs import lab_scripts
from playground.web.page import LANE, PRIVATE, Page, working


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
                    # one above the other: side by side, the process's legend (up to eight parts in one line, as
                    # Gradio draws it) was cut after four
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
        report_s, est_s, timeline_s, stats_s, lab_s, room_s, ledger_s = (gr.State(None) for _ in range(7))
        # the model the results were made with, and (it, the model loaded now) for the stale line
        made_s, stale_s = gr.State(None), gr.State(None)
        # set by a load made on another tab (Placement's "Load with these limits"): what was picked there
        loaded_elsewhere = gr.State(None)
    page.shared.update(mistake=mistake, break_on=break_on)  # the Diagnose tab opens a mistake here
    page.shared.update(loaded_elsewhere=loaded_elsewhere)  # the Placement tab's load replaces the visitor's model
    page.shared.update(play_model=model)  # its list marked once the page is open (ui.py)

    for comp in (device, dtype, page.lang):
        comp.change(h.ui_hint, [device, dtype, page.lang], hint, **PRIVATE)
    load_btn.click(h.ui_load, [model, device, dtype, page.lang],
                   [report_md, report_json, page.status, timeline, peaks_md, report_s, timeline_s,
                    ledger_proc, ledger_dev, ledger_md, ledger_s, load_note],
                   api_visibility="undocumented", **working(report_md)
                   ).then(h.ui_prompt_changed, [prompt, chat, max_new, page.lang], [max_new, room_s], **PRIVATE
                          ).then(h.ui_ledger_plots, [ledger_s, page.lang], [ledger_proc, ledger_dev], **PRIVATE
                                 ).then(h.ui_stale, [made_s, page.lang], [stale_md, results, stale_s], **PRIVATE)
    # Another tab's load replaced the model: the selection and the load's results follow it, as after Load
    loaded_elsewhere.change(hp.ui_loaded_elsewhere, [loaded_elsewhere, page.lang],
                            [model, device, dtype, report_md, report_json, timeline, peaks_md, report_s, timeline_s,
                             ledger_proc, ledger_dev, ledger_md, ledger_s, load_note], **PRIVATE
                            ).then(h.ui_prompt_changed, [prompt, chat, max_new, page.lang], [max_new, room_s], **PRIVATE
                                   ).then(h.ui_ledger_plots, [ledger_s, page.lang], [ledger_proc, ledger_dev], **PRIVATE
                                          ).then(h.ui_stale, [made_s, page.lang], [stale_md, results, stale_s], **PRIVATE)
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
        comp.change(h.ui_prompt_changed, [prompt, chat, max_new, page.lang], [max_new, room_s],
                    trigger_mode="always_last", **PRIVATE)
    # greedy is one click away, and the switch follows the sliders
    decoding.input(h.ui_decoding, decoding, [temperature, top_p, seed], **PRIVATE)
    for comp in (temperature, top_p, seed):
        comp.input(h.ui_decoding_of, [temperature, top_p, seed], decoding, **PRIVATE)
    gen_btn.click(h.ui_generate,
                  [prompt, max_new, temperature, top_p, seed, break_on, mistake, engine, page.lang, chat],
                  [output, stats_md, snippet_code, lab_md, timeline, peaks_md, stats_s, lab_s, timeline_s,
                   ledger_proc, ledger_dev, ledger_md, ledger_s, run_note, made_s, stale_md, results],
                  # no overlay: the text streaming in and the stats' "generating…" (a mistake's "running…") say it
                  # works, and Gradio's tracker, redrawn while the model decodes, cost the page a third of its rate
                  api_visibility="undocumented", show_progress="hidden", **LANE
                  ).then(h.ui_ledger_plots, [ledger_s, page.lang], [ledger_proc, ledger_dev], **PRIVATE)
    stop_btn.click(h.ui_stop, None, None, **PRIVATE)
    break_on.change(h.ui_run_button, [break_on, page.lang], gen_btn, **PRIVATE)
    break_on.change(lambda on: gr.update(visible=bool(on)), break_on, scripts, **PRIVATE)
    page.on_language(lambda lang, on: [h.ui_run_button(on, lang)], [gen_btn], [break_on])
    page.on_language(lambda lang: [gr.update(choices=_mistakes(lang))], [mistake])
    page.on_language(h.relang_play,
                     [report_md, est_md, timeline, peaks_md, stats_md, lab_md, max_new, model, engine, decoding,
                      devices_md, ledger_proc, ledger_dev, ledger_md],
                     [report_s, est_s, timeline_s, stats_s, lab_s, room_s, max_new, ledger_s])
    page.on_language(h.relang_stale, [stale_md, results], [stale_s])
    page.on_language(lambda lang: ["", ""], [load_note, run_note])  # a refusal answered a click: its toast said it
    page.after_language(lambda lang, book: h.ui_ledger_plots(book, lang), [ledger_proc, ledger_dev], [ledger_s])
