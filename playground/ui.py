"""The page and the API: Gradio components wired to the core functions.

Nothing is measured here. Every number comes from the core modules through the
shared slot; `playground.views` turns reports into Markdown; this module wires
components to functions, switches the language, and turns UserErrors into
`gr.Error`. The named API endpoints call the same functions as the page.
"""

from __future__ import annotations

import atexit
import html
import os
import shutil
import tempfile
import threading
from pathlib import Path
from typing import Iterator

# Downloads (the Compare table) are written under one temporary folder per process,
# removed at exit. Gradio keeps the files it serves, and anything POSTed to its /upload
# route, under GRADIO_TEMP_DIR (default /tmp/gradio, never cleaned): it is pointed inside
# that folder too, before Gradio is imported (Gradio reads it at import). Set, not
# defaulted: a value inherited from a parent process would point at the parent's folder.
EXPORTS = Path(tempfile.mkdtemp(prefix="playground-exports-"))
atexit.register(shutil.rmtree, EXPORTS, ignore_errors=True)
os.environ["GRADIO_TEMP_DIR"] = str(EXPORTS / "gradio")

import gradio as gr  # noqa: E402

from playground import breakit, compare as matrix, devices, diagnose, estimate as sizing, inspect_model, models, views, zerogpu
from playground import snippet as code
from playground.i18n import t
from playground.inputs import MAX_NEW_TOKENS, MAX_QUEUE, MAX_SESSIONS, UserError
from playground.slot import ENGINES, SLOT

# Load, generate and the lab share one queue lane: one runs at a time, the others
# wait their turn (they share one model and, on a Space, two CPU cores).
LANE = dict(concurrency_id="model", concurrency_limit=1)
LANGS = [("English", "en"), ("中文", "zh")]


def _error(e: UserError, lang: object = "en") -> gr.Error:
    """gr.Error renders its message as HTML: escape it, since it may quote what a visitor typed.
    A UserError is an expected answer, not a crash: no traceback in the server log. The page
    shows it in the visitor's language; the API answers in English."""
    lang = _lang(lang)
    return gr.Error(html.escape(e.text(lang), quote=False), title=t("ui.error", lang), print_exception=False)


def _session(request: gr.Request | None) -> str:
    return getattr(request, "session_hash", None) or ""


def _lang(lang: object) -> str:
    return "zh" if lang == "zh" else "en"


# ---------------------------------------------------------------- API endpoints (the documented contract)

def load_model(model: str, device: str, dtype: str) -> dict:
    """Load a model: from_pretrained onto the CPU, then model.to(device), then eval(); returns the timed report."""
    try:
        return SLOT.load(model, device, dtype).to_dict()
    except UserError as e:
        raise _error(e) from None


def _generate_plain(prompt, max_new_tokens, temperature, top_p, seed, session: str = "") -> Iterator[tuple[str, dict]]:
    """The GPU work, with plain arguments and plain results: on ZeroGPU it runs inside
    @spaces.GPU, in a worker process that pickles what crosses over."""
    for text, stats in SLOT.generate(prompt, max_new_tokens, temperature, top_p, seed, session=session):
        yield text, stats.to_dict()


_generate_on_gpu = zerogpu.gpu(_generate_plain)  # the same function off ZeroGPU


def generate(prompt: str, max_new_tokens: int, temperature: float, top_p: float, seed: int,
             request: gr.Request = None) -> tuple[str, dict]:
    """Stream a continuation of the prompt; each update is (text so far, stats so far). temperature 0 is greedy."""
    try:
        yield from _generate_on_gpu(prompt, max_new_tokens, temperature, top_p, seed, session=_session(request))
    except UserError as e:
        raise _error(e) from None


def break_it_scenarios() -> list[dict]:
    """The break-it lab's mistakes: id, title in English and Chinese, whether a GPU is involved."""
    return breakit.scenarios()


def break_it(scenario: str) -> dict:
    """Run one mistake on the loaded model (or the bundled one), live, then its fix."""
    try:
        return _run_lab(scenario).to_dict()
    except UserError as e:
        raise _error(e) from None


def diagnose_error(text: str) -> dict:
    """Name the mistake(s) behind a pasted traceback or error line, best first, with explanations."""
    try:
        return diagnose.diagnose(text).to_dict()
    except UserError as e:
        raise _error(e) from None


def estimate(model: str, dtype: str) -> dict:
    """Size a model from its config alone (built on the meta device), and say whether it fits here."""
    try:
        return sizing.estimate(model, dtype)
    except UserError as e:
        raise _error(e) from None


def compare(model: str, pairs: list[str], max_new_tokens: int) -> list[dict]:
    """Run each 'device/dtype' pair through load, migrate, one prompt and greedy tokens; one row per pair."""
    try:
        return matrix.compare(model, pairs, max_new_tokens, slot=SLOT)
    except UserError as e:
        raise _error(e) from None


def _run_lab(scenario: str) -> breakit.BreakResult:
    # Hold the slot while the lab copies the model: a load must not swap it mid-copy.
    with SLOT.lock:
        lm = SLOT.loaded
        if lm is None:
            return breakit.run(scenario)
        return breakit.run(scenario, model=lm.model, tokenizer=lm.tokenizer)


# ---------------------------------------------------------------- page handlers

def ui_load(model: str, device: str, dtype: str, lang: str, progress=gr.Progress()):
    try:
        report = SLOT.load(model, device, dtype, progress=lambda f, d: progress(f, desc=d))
    except UserError as e:
        raise _error(e, lang) from None
    # The slider's top is the model's context minus one prompt token (at most the cap).
    top = min(MAX_NEW_TOKENS, report.context_length - 1) if report.context_length else MAX_NEW_TOKENS
    slider = gr.Slider(maximum=top, info=f"context: {report.context_length or '?'} tokens, prompt included")
    lang = _lang(lang)
    return (views.report_markdown(report, lang), report.to_dict(), views.status_markdown(SLOT.status(), lang), slider,
            *ui_timeline(lang))


def ui_timeline(lang: str) -> tuple:
    rows, peaks = SLOT.timeline()
    return views.timeline_frame(rows), views.peaks_markdown(peaks, _lang(lang))


def ui_estimate(model: str, device: str, dtype: str, lang: str) -> str:
    try:
        return views.estimate_markdown(sizing.estimate(model, dtype, device), _lang(lang))
    except UserError as e:
        raise _error(e, lang) from None


def ui_compare(model: str, pairs: list[str], max_new_tokens, lang: str, request: gr.Request, progress=gr.Progress()):
    stop = threading.Event()
    SLOT.stops["compare:" + _session(request)] = stop
    try:
        rows = matrix.run(model, pairs, max_new_tokens, slot=SLOT, stop=stop,
                          progress=lambda f, d: progress(f, desc=d))
    except UserError as e:
        raise _error(e, lang) from None
    finally:
        SLOT.stops.pop("compare:" + _session(request), None)
    folder = Path(tempfile.mkdtemp(dir=EXPORTS))
    paths = matrix.export(rows, folder)
    frame = views.compare_frame(rows)
    # bars start at zero, so their heights compare honestly
    charts = [gr.BarPlot(value=frame, y_lim=[0, float(frame[col].max()) * 1.15 or 1.0]) for col, _ in views.COMPARE_CHARTS]
    return (*charts, views.compare_table(rows, _lang(lang)),
            [str(paths["csv"]), str(paths["json"])], views.status_markdown(SLOT.status(), _lang(lang)))


def ui_compare_stop(request: gr.Request):
    SLOT.stop("compare:" + _session(request))


def ui_snippet(prompt, max_new_tokens, temperature, top_p, seed) -> str:
    """The code to copy for the loaded model and these settings ('' before a load or on bad input)."""
    lm, requested = SLOT.loaded, SLOT.requested
    if lm is None or requested is None:
        return ""
    try:
        return code.snippet(requested, lm.report.device, lm.report.dtype_requested, prompt,
                            max_new_tokens, temperature, top_p, seed)
    except UserError:
        return ""  # the generation reports the same problem


def ui_generate(prompt, max_new_tokens, temperature, top_p, seed, break_on, mistake, engine, lang,
                request: gr.Request):
    lang = _lang(lang)
    skip2 = (gr.skip(), gr.skip())
    if break_on:
        yield "", "", gr.skip(), t("lab.running", lang), *skip2
        try:
            r = _run_lab(mistake)
        except UserError as e:
            raise _error(e, lang) from None
        yield "", "", gr.skip(), breakit.result_markdown(r, lang), *skip2
        return
    snippet = ui_snippet(prompt, max_new_tokens, temperature, top_p, seed)  # for the model this run uses
    try:
        if engine == "generate":
            updates = _generate_on_gpu(prompt, max_new_tokens, temperature, top_p, seed, session=_session(request))
        else:
            updates = ((text, st.to_dict()) for text, st in SLOT.generate(
                prompt, max_new_tokens, temperature, top_p, seed, session=_session(request), engine=engine))
        for text, d in updates:
            stats = views.stats_from_dict(d)
            if stats.finish_reason == "running":
                yield text, views.stats_markdown(stats, lang), gr.skip(), "", *skip2
            else:
                yield (text, views.stats_markdown(stats, lang) + views.per_token_markdown(d, lang),
                       snippet if engine == "generate" else gr.skip(), "", *ui_timeline(lang))
    except UserError as e:
        raise _error(e, lang) from None


def ui_stop(request: gr.Request):
    SLOT.stop(_session(request))


def ui_hint(device: str, dtype: str, lang: str = "en") -> str:
    try:
        dev = devices.check_device(device)
    except UserError as e:
        return f"⚠️ {e}"
    hint = devices.dtype_hint(dev, dtype, _lang(lang))
    return f"💡 {hint}" if hint else ""


def ui_inspect(which: str, lang: str) -> str:
    lang = _lang(lang)
    if which == "half":
        model = breakit.half_moved_model()
    else:
        with SLOT.lock:
            if SLOT.loaded is None:
                raise _error(UserError.of("err.not_loaded"), lang)
            return inspect_model.inspect_markdown(inspect_model.inspect(SLOT.loaded.model), lang)
    return inspect_model.inspect_markdown(inspect_model.inspect(model), lang)


def ui_diagnose(text: str, lang: str) -> str:
    try:
        return diagnose.diagnose_markdown(diagnose.diagnose(text), _lang(lang))
    except UserError as e:
        raise _error(e, lang) from None


def browser_lang(request: gr.Request) -> str:
    """Default the page's language to the browser's (Accept-Language), English otherwise."""
    accept = (request.headers.get("accept-language", "") if request else "").lower()
    first = accept.split(",")[0].strip()
    return "zh" if first.startswith("zh") else "en"


# ---------------------------------------------------------------- the page

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
                            choices=[(e.label, e.id) for e in models.catalog()], value=models.BUNDLED_NAME,
                            allow_custom_value=True, label=t("page.model", en), info=t("page.model.info", en),
                            elem_id="model"), "label", "page.model", info="page.model.info")
                        device = L(gr.Radio(usable, value="cpu", label=t("page.device", en), elem_id="device"),
                                   "label", "page.device")
                        dtype = L(gr.Radio(list(devices.DTYPES), value="float32", label=t("page.dtype", en),
                                           elem_id="dtype"), "label", "page.dtype")
                        hint = gr.Markdown(ui_hint("cpu", "float32"), elem_id="hint")
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
                prompt = L(gr.Textbox("ROMEO:", label=t("page.prompt", en), lines=2, elem_id="prompt"), "label", "page.prompt")
                with gr.Row():
                    max_new = L(gr.Slider(1, MAX_NEW_TOKENS, value=64, step=1, label=t("page.max_new", en),
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
                        [(f"{s['number']}. {s['title_en']}", s["id"]) for s in breakit.scenarios()],
                        value=breakit.scenarios()[0]["id"], label=t("page.mistake", en), elem_id="mistake"),
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
                    cmp_model = L(gr.Dropdown(choices=[(e.label, e.id) for e in models.catalog()],
                                              value=models.BUNDLED_NAME, allow_custom_value=True,
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
            comp.change(ui_hint, [device, dtype, lang], hint, **private)
        load_btn.click(ui_load, [model, device, dtype, lang], [report_md, report_json, status, max_new, timeline, peaks_md],
                       api_visibility="undocumented", **LANE)
        # The estimate builds the model on the meta device, which switches process-wide state
        # (torch's default dtype, Accelerate's init_empty_weights): it takes the model lane too.
        est_btn.click(ui_estimate, [model, device, dtype, lang], est_md, api_visibility="private", **LANE)
        gen_btn.click(ui_generate, [prompt, max_new, temperature, top_p, seed, break_on, mistake, engine, lang],
                      [output, stats_md, snippet_code, lab_md, timeline, peaks_md], api_visibility="undocumented", **LANE)
        cmp_run.click(ui_compare, [cmp_model, cmp_pairs, cmp_tokens, lang], [*charts, cmp_md, cmp_files, status],
                      api_visibility="private", **LANE)
        cmp_stop.click(ui_compare_stop, None, None, **private)
        stop_btn.click(ui_stop, None, None, **private)
        insp_loaded.click(lambda lg: ui_inspect("loaded", lg), lang, insp_md, api_visibility="private", **LANE)
        insp_half.click(lambda lg: ui_inspect("half", lg), lang, insp_md, api_visibility="private", **LANE)
        diag_btn.click(ui_diagnose, [diag_box, lang], diag_md, api_visibility="private")

        # Language: every localized component, the banner, and the mistake titles follow the selector.
        def relabel(lg):
            lg = _lang(lg)
            titles = [(f"{s['number']}. {s['title_zh' if lg == 'zh' else 'title_en']}", s["id"]) for s in breakit.scenarios()]
            return [*L.updates(lg), views.status_markdown(SLOT.status(), lg), gr.update(choices=titles)]

        lang.change(relabel, lang, L.components() + [status, mistake], **private)
        demo.load(browser_lang, None, lang, **private)
        # Another visitor may swap the model: keep the banner true.
        gr.Timer(5).tick(lambda lg: views.status_markdown(SLOT.status(), _lang(lg)), lang, status, **private)

        gr.api(load_model, api_name="load_model", **LANE)
        gr.api(generate, api_name="generate", **LANE)
        gr.api(break_it_scenarios, api_name="break_it_scenarios", queue=False)
        gr.api(break_it, api_name="break_it", **LANE)
        gr.api(diagnose_error, api_name="diagnose")
        gr.api(estimate, api_name="estimate", **LANE)
        gr.api(compare, api_name="compare", **LANE)
    # max_size: at most PLAYGROUND_MAX_QUEUE events wait; one more is answered "queue is full" at once.
    demo.queue(default_concurrency_limit=1, max_size=MAX_QUEUE)
    return demo


def launch_kwargs() -> dict:
    """Serve on PLAYGROUND_HOST/PORT (or Gradio's own defaults); no file serving beyond the app's,
    no uploads (the page takes no file: max_file_size=0 refuses any upload with HTTP 413), and
    page state for at most PLAYGROUND_MAX_SESSIONS visitors (Gradio's default, 10,000 copies of
    the page's configuration, would hold 1.7 GB)."""
    kw: dict = {"allowed_paths": [], "show_error": True, "max_file_size": 0,
                "state_session_capacity": MAX_SESSIONS}
    if os.environ.get("PLAYGROUND_HOST"):
        kw["server_name"] = os.environ["PLAYGROUND_HOST"]
    if os.environ.get("PLAYGROUND_PORT"):
        kw["server_port"] = int(os.environ["PLAYGROUND_PORT"])
    return kw
