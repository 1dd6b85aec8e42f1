"""The Playground tab: pick, estimate and load a model; generate, or break it; the code to copy."""

from __future__ import annotations

import gradio as gr

from playground.core import settings
from playground.core.i18n import t
from playground.core.inputs import DEFAULT_PROMPT
from playground.core.paths import BUNDLED_NAME
from playground.hw import devices
from playground.lab import scenarios
from playground.load import catalog
from playground.web import handlers as h, views
from playground.web.tabs import lab_scripts
from playground.web.page import LANE, PRIVATE, Page


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
                    choices=[(e.label, e.id) for e in catalog.catalog()], value=BUNDLED_NAME,
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
                est_md = gr.Markdown(elem_id="estimate-out")
                with w(gr.Accordion(t("page.devices", en), open=False), "label", "page.devices"):
                    gr.HTML(views.devices_html(devs), elem_id="devices")
            with gr.Column(scale=2):
                report_md = w(gr.Markdown(t("page.report.empty", en), elem_id="report"), "value", "page.report.empty")
                with w(gr.Accordion(t("page.report.json", en), open=False), "label", "page.report.json"):
                    report_json = gr.JSON(elem_id="report-json")
                with w(gr.Accordion(t("timeline.title", en), open=True), "label", "timeline.title"):
                    timeline = gr.LinePlot(x="seconds", y="MiB", color="phase", height=260,
                                           elem_id="timeline", label="process RSS (MiB)")
                    peaks_md = gr.Markdown(elem_id="peaks")
        w(gr.Markdown(t("page.generate.title", en)), "value", "page.generate.title")
        prompt = w(gr.Textbox(DEFAULT_PROMPT, label=t("page.prompt", en), lines=2, elem_id="prompt"),
                   "label", "page.prompt")
        with gr.Row():
            max_new = w(gr.Slider(1, settings.read().max_new_tokens, value=64, step=1, label=t("page.max_new", en),
                                  elem_id="max-new"), "label", "page.max_new")
            temperature = w(gr.Slider(0, 2, value=0, step=0.05, label=t("page.temperature", en),
                                      elem_id="temperature"), "label", "page.temperature")
            top_p = w(gr.Slider(0.05, 1, value=1, step=0.05, label=t("page.top_p", en), elem_id="top-p"),
                      "label", "page.top_p")
            seed = w(gr.Number(0, precision=0, label=t("page.seed", en), elem_id="seed"), "label", "page.seed")
        engine = w(gr.Radio([("generate()", "generate"), ("manual loop + KV cache", "manual"),
                             ("manual loop, no cache", "manual-nocache")], value="generate",
                            label=t("page.engine", en), info=t("page.engine.info", en), elem_id="engine"),
                   "label", "page.engine", info="page.engine.info")
        with gr.Row():
            break_on = w(gr.Checkbox(False, label=t("page.breakit", en), info=t("page.breakit.info", en),
                                     elem_id="breakit"), "label", "page.breakit", info="page.breakit.info")
            mistake = w(gr.Dropdown(_mistakes(en), value=scenarios.listing()[0]["id"], label=t("page.mistake", en),
                                    elem_id="mistake"), "label", "page.mistake")
        with gr.Row():
            gen_btn = w(gr.Button(t("page.generate", en), variant="primary", elem_id="generate"),
                        "value", "page.generate")
            stop_btn = w(gr.Button(t("page.stop", en), variant="stop", elem_id="stop"), "value", "page.stop")
        lab_md = gr.Markdown(elem_id="lab")
        lab_scripts.build(page, mistake)
        output = w(gr.Textbox(label=t("page.output", en), lines=8, elem_id="output"), "label", "page.output")
        stats_md = gr.Markdown(elem_id="stats")
        snippet_code = w(gr.Code(language="python", label=t("page.snippet", en), interactive=False,
                                 buttons=["copy"], elem_id="snippet"), "label", "page.snippet")

    for comp in (device, dtype, page.lang):
        comp.change(h.ui_hint, [device, dtype, page.lang], hint, **PRIVATE)
    load_btn.click(h.ui_load, [model, device, dtype, page.lang],
                   [report_md, report_json, page.status, max_new, timeline, peaks_md],
                   api_visibility="undocumented", **LANE)
    # The estimate builds the model on the meta device, which switches process-wide state
    # (torch's default dtype, Accelerate's init_empty_weights): it takes the model lane too.
    est_btn.click(h.ui_estimate, [model, device, dtype, page.lang], est_md, api_visibility="private", **LANE)
    gen_btn.click(h.ui_generate, [prompt, max_new, temperature, top_p, seed, break_on, mistake, engine, page.lang],
                  [output, stats_md, snippet_code, lab_md, timeline, peaks_md], api_visibility="undocumented", **LANE)
    stop_btn.click(h.ui_stop, None, None, **PRIVATE)
    page.on_language(lambda lang: [gr.update(choices=_mistakes(lang))], [mistake])
