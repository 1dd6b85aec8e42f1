"""The page: Gradio components wired to the handlers, and the named API endpoints.

Nothing is measured or checked here: `playground.web.handlers` checks what was sent
and calls the core; `playground.web.views` renders what comes back. This module
lays the page out, wires each event to its handler, switches the language, and
registers the API (the same functions the page uses).
"""

from __future__ import annotations

from playground.web import exports  # noqa: F401  (first: it points Gradio's temporary folder inside its own)

import gradio as gr

from playground.core import settings
from playground.core.i18n import t
from playground.core.inputs import DEFAULT_PROMPT
from playground.core.paths import BUNDLED_NAME
from playground.hw import devices
from playground.lab import scenarios
from playground.load import catalog
from playground.run import compare as matrix
from playground.run.slot import SLOT
from playground.web import handlers as h, views

# Load, generate and the lab share one queue lane: one runs at a time, the others
# wait their turn (they share one model and, on a Space, two CPU cores).
LANE = dict(concurrency_id="model", concurrency_limit=1)
LANGS = [("English", "en"), ("中文", "zh")]


class Localized:
    """Components whose words follow the language selector: component -> {property: (key, format)}."""

    def __init__(self) -> None:
        self.items: list[tuple[gr.components.Component, dict[str, tuple[str, str]]]] = []

    def __call__(self, component, prop: str, key: str, fmt: str = "{}", **more: str):
        props = {prop: (key, fmt), **{p: (k, "{}") for p, k in more.items()}}
        self.items.append((component, props))
        return component

    def components(self) -> list:
        return [c for c, _ in self.items]

    def updates(self, lang: str) -> list:
        return [gr.update(**{p: fmt.format(t(key, lang)) for p, (key, fmt) in props.items()})
                for _, props in self.items]


def build() -> gr.Blocks:
    limits = settings.read()
    devs = devices.discover()
    usable = [d.id for d in devs if d.available]
    en = "en"
    L = Localized()
    # delete_cache: the files Gradio served (Compare downloads) are removed after an hour, so a
    # server that runs for weeks does not fill its disk.
    with gr.Blocks(title="The device playground", delete_cache=(3600, 3600)) as demo:
        with gr.Row():
            L(gr.Markdown(f"# {t('page.title', en)}", elem_id="title"), "value", "page.title", "# {}")
            lang = gr.Radio(LANGS, value="en", label="Language / 语言", elem_id="lang", scale=0, min_width=220)
        L(gr.Markdown(t("page.intro", en), elem_id="intro"), "value", "page.intro")
        status = gr.Markdown(views.status_markdown(SLOT.status(), en), elem_id="status")
        with gr.Tabs():
            with L(gr.Tab(t("page.tab.play", en), id="play"), "label", "page.tab.play"):
                with gr.Row():
                    with gr.Column(scale=1):
                        model = L(gr.Dropdown(
                            choices=[(e.label, e.id) for e in catalog.catalog()], value=BUNDLED_NAME,
                            allow_custom_value=True, label=t("page.model", en), info=t("page.model.info", en),
                            elem_id="model"), "label", "page.model", info="page.model.info")
                        device = L(gr.Radio(usable, value="cpu", label=t("page.device", en), elem_id="device"),
                                   "label", "page.device")
                        dtype = L(gr.Radio(list(devices.DTYPES), value="float32", label=t("page.dtype", en),
                                           elem_id="dtype"), "label", "page.dtype")
                        hint = gr.Markdown(h.ui_hint("cpu", "float32"), elem_id="hint")
                        with gr.Row():
                            load_btn = L(gr.Button(t("page.load", en), variant="primary", elem_id="load"),
                                         "value", "page.load")
                            est_btn = L(gr.Button(t("page.estimate", en), elem_id="estimate"), "value", "page.estimate")
                        est_md = gr.Markdown(elem_id="estimate-out")
                        with L(gr.Accordion(t("page.devices", en), open=False), "label", "page.devices"):
                            gr.HTML(views.devices_html(devs), elem_id="devices")
                    with gr.Column(scale=2):
                        report_md = L(gr.Markdown(t("page.report.empty", en), elem_id="report"), "value", "page.report.empty")
                        with L(gr.Accordion(t("page.report.json", en), open=False), "label", "page.report.json"):
                            report_json = gr.JSON(elem_id="report-json")
                        with L(gr.Accordion(t("timeline.title", en), open=True), "label", "timeline.title"):
                            timeline = gr.LinePlot(x="seconds", y="MiB", color="phase", height=260,
                                                   elem_id="timeline", label="process RSS (MiB)")
                            peaks_md = gr.Markdown(elem_id="peaks")
                L(gr.Markdown(t("page.generate.title", en)), "value", "page.generate.title")
                prompt = L(gr.Textbox(DEFAULT_PROMPT, label=t("page.prompt", en), lines=2, elem_id="prompt"), "label", "page.prompt")
                with gr.Row():
                    max_new = L(gr.Slider(1, limits.max_new_tokens, value=64, step=1, label=t("page.max_new", en),
                                          elem_id="max-new"), "label", "page.max_new")
                    temperature = L(gr.Slider(0, 2, value=0, step=0.05, label=t("page.temperature", en),
                                              elem_id="temperature"), "label", "page.temperature")
                    top_p = L(gr.Slider(0.05, 1, value=1, step=0.05, label=t("page.top_p", en), elem_id="top-p"),
                              "label", "page.top_p")
                    seed = L(gr.Number(0, precision=0, label=t("page.seed", en), elem_id="seed"), "label", "page.seed")
                engine = L(gr.Radio([("generate()", "generate"), ("manual loop + KV cache", "manual"),
                                     ("manual loop, no cache", "manual-nocache")], value="generate",
                                    label=t("page.engine", en), info=t("page.engine.info", en), elem_id="engine"),
                           "label", "page.engine", info="page.engine.info")
                with gr.Row():
                    break_on = L(gr.Checkbox(False, label=t("page.breakit", en), info=t("page.breakit.info", en),
                                             elem_id="breakit"), "label", "page.breakit", info="page.breakit.info")
                    mistake = L(gr.Dropdown(
                        [(f"{s['number']}. {s['title_en']}", s["id"]) for s in scenarios.listing()],
                        value=scenarios.listing()[0]["id"], label=t("page.mistake", en), elem_id="mistake"),
                        "label", "page.mistake")
                with gr.Row():
                    gen_btn = L(gr.Button(t("page.generate", en), variant="primary", elem_id="generate"),
                                "value", "page.generate")
                    stop_btn = L(gr.Button(t("page.stop", en), variant="stop", elem_id="stop"), "value", "page.stop")
                lab_md = gr.Markdown(elem_id="lab")
                output = L(gr.Textbox(label=t("page.output", en), lines=8, elem_id="output"), "label", "page.output")
                stats_md = gr.Markdown(elem_id="stats")
                snippet_code = L(gr.Code(language="python", label=t("page.snippet", en), interactive=False,
                                         buttons=["copy"], elem_id="snippet"), "label", "page.snippet")
            with L(gr.Tab(t("page.tab.compare", en), id="compare", elem_id="tab-compare"), "label", "page.tab.compare"):
                L(gr.Markdown(t("page.compare.intro", en)), "value", "page.compare.intro")
                with gr.Row():
                    cmp_model = L(gr.Dropdown(choices=[(e.label, e.id) for e in catalog.catalog()],
                                              value=BUNDLED_NAME, allow_custom_value=True,
                                              label=t("page.model", en), elem_id="cmp-model"), "label", "page.model")
                    cmp_pairs = L(gr.CheckboxGroup(matrix.available_pairs(), value=matrix.available_pairs(),
                                                   label=t("page.compare.pairs", en), elem_id="cmp-pairs"),
                                  "label", "page.compare.pairs")
                    cmp_tokens = L(gr.Slider(2, 128, value=16, step=1, label=t("page.compare.tokens", en),
                                             elem_id="cmp-tokens"), "label", "page.compare.tokens")
                with gr.Row():
                    cmp_run = L(gr.Button(t("page.compare.run", en), variant="primary", elem_id="cmp-run"),
                                "value", "page.compare.run")
                    cmp_stop = L(gr.Button(t("page.compare.stop", en), variant="stop", elem_id="cmp-stop"),
                                 "value", "page.compare.stop")
                with gr.Row(elem_id="cmp-charts"):
                    charts = [gr.BarPlot(x="pair", y=col, title=title, height=220, elem_classes=["cmp-chart"])
                              for col, title in views.COMPARE_CHARTS]
                cmp_md = gr.Markdown(elem_id="cmp-table")
                cmp_files = L(gr.File(label=t("page.compare.files", en), file_count="multiple", elem_id="cmp-files"),
                              "label", "page.compare.files")
            with L(gr.Tab(t("page.tab.inspect", en), id="inspect"), "label", "page.tab.inspect"):
                L(gr.Markdown(t("page.inspect.intro", en)), "value", "page.inspect.intro")
                with gr.Row():
                    insp_loaded = L(gr.Button(t("page.inspect.loaded", en), elem_id="inspect-loaded"),
                                    "value", "page.inspect.loaded")
                    insp_half = L(gr.Button(t("page.inspect.half", en), elem_id="inspect-half"),
                                  "value", "page.inspect.half")
                insp_md = gr.Markdown(elem_id="inspect")
            with L(gr.Tab(t("page.tab.diagnose", en), id="diagnose"), "label", "page.tab.diagnose"):
                L(gr.Markdown(t("page.diagnose.intro", en)), "value", "page.diagnose.intro")
                diag_box = L(gr.Textbox(label=t("page.diagnose.box", en), lines=8, elem_id="diagnose-box"),
                             "label", "page.diagnose.box")
                diag_btn = L(gr.Button(t("page.diagnose.run", en), elem_id="diagnose-run"), "value", "page.diagnose.run")
                diag_md = gr.Markdown(elem_id="diagnose")

        private = dict(queue=False, api_visibility="private")
        for comp in (device, dtype, lang):
            comp.change(h.ui_hint, [device, dtype, lang], hint, **private)
        load_btn.click(h.ui_load, [model, device, dtype, lang], [report_md, report_json, status, max_new, timeline, peaks_md],
                       api_visibility="undocumented", **LANE)
        # The estimate builds the model on the meta device, which switches process-wide state
        # (torch's default dtype, Accelerate's init_empty_weights): it takes the model lane too.
        est_btn.click(h.ui_estimate, [model, device, dtype, lang], est_md, api_visibility="private", **LANE)
        gen_btn.click(h.ui_generate, [prompt, max_new, temperature, top_p, seed, break_on, mistake, engine, lang],
                      [output, stats_md, snippet_code, lab_md, timeline, peaks_md], api_visibility="undocumented", **LANE)
        cmp_run.click(h.ui_compare, [cmp_model, cmp_pairs, cmp_tokens, lang], [*charts, cmp_md, cmp_files, status],
                      api_visibility="private", **LANE)
        cmp_stop.click(h.ui_compare_stop, None, None, **private)
        stop_btn.click(h.ui_stop, None, None, **private)
        insp_loaded.click(lambda lg: h.ui_inspect("loaded", lg), lang, insp_md, api_visibility="private", **LANE)
        insp_half.click(lambda lg: h.ui_inspect("half", lg), lang, insp_md, api_visibility="private", **LANE)
        diag_btn.click(h.ui_diagnose, [diag_box, lang], diag_md, api_visibility="private")

        # Language: every localized component, the banner, and the mistake titles follow the selector.
        def relabel(lg):
            lg = h.page_lang(lg)
            titles = [(f"{s['number']}. {s['title_zh' if lg == 'zh' else 'title_en']}", s["id"]) for s in scenarios.listing()]
            return [*L.updates(lg), views.status_markdown(SLOT.status(), lg), gr.update(choices=titles)]

        lang.change(relabel, lang, L.components() + [status, mistake], **private)
        demo.load(h.browser_lang, None, lang, **private)
        # Another visitor may swap the model: keep the banner true.
        gr.Timer(5).tick(lambda lg: views.status_markdown(SLOT.status(), h.page_lang(lg)), lang, status, **private)

        gr.api(h.load_model, api_name="load_model", **LANE)
        gr.api(h.generate, api_name="generate", **LANE)
        gr.api(h.break_it_scenarios, api_name="break_it_scenarios", queue=False)
        gr.api(h.break_it, api_name="break_it", **LANE)
        gr.api(h.diagnose_error, api_name="diagnose")
        gr.api(h.estimate, api_name="estimate", **LANE)
        gr.api(h.compare, api_name="compare", **LANE)
    # max_size: at most PLAYGROUND_MAX_QUEUE events wait; one more is answered "queue is full" at once.
    demo.queue(default_concurrency_limit=1, max_size=limits.max_queue)
    return demo


def launch_kwargs() -> dict:
    """Serve on PLAYGROUND_HOST/PORT (or Gradio's own defaults); no file serving beyond the app's,
    no uploads (the page takes no file: max_file_size=0 refuses any upload with HTTP 413), and
    page state for at most PLAYGROUND_MAX_SESSIONS visitors (Gradio's default, 10,000 copies of
    the page's configuration, would hold 1.7 GB)."""
    s = settings.read()
    kw: dict = {"allowed_paths": [], "show_error": True, "max_file_size": 0, "state_session_capacity": s.max_sessions}
    if s.host:
        kw["server_name"] = s.host
    if s.port:
        kw["server_port"] = int(s.port)
    return kw
