"""What the page's events and the API's endpoints do: check what was sent, once, then call the core.

Each handler is an edge: it turns what a visitor sent into typed values (a
`ModelSource`, a `DeviceInfo`, a torch dtype, `GenerationParams`, a `Scenario`)
with one device discovery, passes them inward, and turns a `UserError` into
`gr.Error` in the visitor's language (the API answers in English). Nothing here
measures anything; the views render what comes back.
"""

from __future__ import annotations

import html
from typing import Iterator

from playground.web import exports  # noqa: F401  (first: it points Gradio's temporary folder inside its own)

import gradio as gr

from playground.core import inputs, settings
from playground.core.errors import UserError
from playground.core.i18n import t
from playground.core.inputs import GenerationParams
from playground.hw import devices, zerogpu
from playground.lab import diagnose, factcheck, harness, render, scenarios
from playground.lab.factcheck import render as facts_render
from playground.lab.inspect import inspect
from playground.load import catalog, estimate as sizing, loader
from playground.run import compare as matrix
from playground.run.slot import SLOT, check_engine
from playground.web import snippet as code, views


def error(e: UserError, lang: object = "en") -> gr.Error:
    """gr.Error renders its message as HTML: escape it, since it may quote what a visitor typed.
    A UserError is an expected answer, not a crash: no traceback in the server log. The page
    shows it in the visitor's language; the API answers in English."""
    lang = page_lang(lang)
    return gr.Error(html.escape(e.text(lang), quote=False), title=t("ui.error", lang), print_exception=False)


def session_of(request: gr.Request | None) -> str:
    return getattr(request, "session_hash", None) or ""


def page_lang(lang: object) -> str:
    return "zh" if lang == "zh" else "en"


# ---------------------------------------------------------------- API endpoints (the documented contract)

def load_model(model: str, device: str, dtype: str) -> dict:
    """Load a model: from_pretrained onto the CPU, then model.to(device), then eval(); returns the timed report."""
    try:
        return SLOT.load(*loader.parse(model, device, dtype)).to_dict()
    except UserError as e:
        raise error(e) from None


@zerogpu.gpu
def generate_on_gpu(prompt: str, max_new_tokens: int, temperature: float, top_p: float, seed: int,
                    session: str = "", engine: str = "generate") -> Iterator[tuple[str, dict]]:
    """The GPU work, with checked plain arguments and plain results: on ZeroGPU it runs inside
    @spaces.GPU, in a worker process that pickles what crosses over (the same function elsewhere)."""
    params = GenerationParams(max_new_tokens, temperature, top_p, seed)
    for text, stats in SLOT.generate(prompt, params, session=session, engine=engine):
        yield text, stats.to_dict()


def _checked_generation(prompt, max_new_tokens, temperature, top_p, seed) -> tuple[str, GenerationParams]:
    params = inputs.generation_params(max_new_tokens, temperature, top_p, seed)
    return inputs.check_prompt(prompt), params


def generate(prompt: str, max_new_tokens: int, temperature: float, top_p: float, seed: int,
             request: gr.Request = None) -> tuple[str, dict]:
    """Stream a continuation of the prompt; each update is (text so far, stats so far). temperature 0 is greedy."""
    try:
        prompt, p = _checked_generation(prompt, max_new_tokens, temperature, top_p, seed)
        yield from generate_on_gpu(prompt, p.max_new_tokens, p.temperature, p.top_p, p.seed, session_of(request))
    except UserError as e:
        raise error(e) from None


def break_it_scenarios() -> list[dict]:
    """The break-it lab's mistakes: id, title in English and Chinese, whether a GPU is involved."""
    return scenarios.listing()


def break_it(scenario: str) -> dict:
    """Run one mistake on the loaded model (or the bundled one), live, then its fix."""
    try:
        return run_lab(scenarios.get(scenario)).to_dict()
    except UserError as e:
        raise error(e) from None


def diagnose_error(text: str) -> dict:
    """Name the mistake(s) behind a pasted traceback or error line, best first, with explanations."""
    try:
        return diagnose.diagnose(inputs.check_diagnose_text(text)).to_dict()
    except UserError as e:
        raise error(e) from None


def _estimate(model: object, dtype: object, device: object = "cpu") -> sizing.Estimate:
    dt = devices.parse_dtype(dtype)
    dev = devices.parse_device(device)
    return sizing.estimate_model(catalog.read_config(catalog.resolve(model)), dev, dt)


def estimate(model: str, dtype: str) -> dict:
    """Size a model from its config alone (built on the meta device), and say whether it fits here."""
    try:
        return _estimate(model, dtype).to_dict()
    except UserError as e:
        raise error(e) from None


def _compare_request(model: object, pairs: object, max_new_tokens: object):
    return catalog.resolve(model), matrix.parse_pairs(pairs), inputs.check_max_new_tokens(max_new_tokens)


def compare(model: str, pairs: list[str], max_new_tokens: int) -> list[dict]:
    """Run each 'device/dtype' pair through load, migrate, one prompt and greedy tokens; one row per pair."""
    try:
        src, todo, n = _compare_request(model, pairs, max_new_tokens)
        return [r.to_dict() for r in matrix.run(src, todo, n, slot=SLOT)]
    except UserError as e:
        raise error(e) from None


def run_lab(sc: harness.Scenario):
    # Hold the slot while the lab copies the model: a load must not swap it mid-copy.
    with SLOT.held() as lm:
        if lm is None:
            return harness.run(sc)
        return harness.run(sc, model=lm.model, tokenizer=lm.tokenizer)


# ---------------------------------------------------------------- page handlers

def ui_load(model: str, device: str, dtype: str, lang: str, progress=gr.Progress()):
    lang = page_lang(lang)
    try:
        report = SLOT.load(*loader.parse(model, device, dtype), progress=lambda f, d: progress(f, desc=d))
    except UserError as e:
        raise error(e, lang) from None
    # The slider's top is the model's context minus one prompt token (at most the cap).
    cap = settings.read().max_new_tokens
    top = min(cap, report.context_length - 1) if report.context_length else cap
    slider = gr.Slider(maximum=top, info=f"context: {report.context_length or '?'} tokens, prompt included")
    return (views.report_markdown(report, lang), report.to_dict(), views.status_markdown(SLOT.status(), lang), slider,
            *ui_timeline(lang))


def ui_timeline(lang: str) -> tuple:
    rows, peaks = SLOT.timeline()
    return views.timeline_frame(rows), views.peaks_markdown(peaks, page_lang(lang))


def ui_estimate(model: str, device: str, dtype: str, lang: str) -> str:
    try:
        return views.estimate_markdown(_estimate(model, dtype, device), page_lang(lang))
    except UserError as e:
        raise error(e, lang) from None


def ui_compare(model: str, pairs: list[str], max_new_tokens, lang: str, request: gr.Request, progress=gr.Progress()):
    lang = page_lang(lang)
    try:
        src, todo, n = _compare_request(model, pairs, max_new_tokens)
        with SLOT.session("compare:" + session_of(request)) as stop:
            rows = matrix.run(src, todo, n, slot=SLOT, stop=stop, progress=lambda f, d: progress(f, desc=d))
    except UserError as e:
        raise error(e, lang) from None
    paths = matrix.export(rows, exports.new_folder())
    frame = views.compare_frame(rows)
    # bars start at zero, so their heights compare honestly
    charts = [gr.BarPlot(value=frame, y_lim=[0, float(frame[col].max()) * 1.15 or 1.0]) for col, _ in views.COMPARE_CHARTS]
    return (*charts, views.compare_table(rows, lang), [str(paths["csv"]), str(paths["json"])],
            views.status_markdown(SLOT.status(), lang))


def ui_compare_stop(request: gr.Request):
    SLOT.stop("compare:" + session_of(request))


def ui_snippet(prompt: str, params: GenerationParams) -> str:
    """The code to copy for the loaded model and these (checked) settings; '' before a load."""
    current = SLOT.current()
    if current is None:
        return ""
    report, src = current
    return code.snippet(src, report.device, report.dtype_requested, prompt, params)


def ui_generate(prompt, max_new_tokens, temperature, top_p, seed, break_on, mistake, engine, lang,
                request: gr.Request):
    lang = page_lang(lang)
    skip2 = (gr.skip(), gr.skip())
    try:
        if break_on:
            sc = scenarios.get(mistake)
            yield "", "", gr.skip(), t("lab.running", lang), *skip2
            yield "", "", gr.skip(), render.result_markdown(run_lab(sc), lang), *skip2
            return
        prompt, p = _checked_generation(prompt, max_new_tokens, temperature, top_p, seed)
        engine = check_engine(engine)
        snippet = ui_snippet(prompt, p)  # for the model this run uses
        for text, d in generate_on_gpu(prompt, p.max_new_tokens, p.temperature, p.top_p, p.seed,
                                       session_of(request), engine):
            stats = views.stats_from_dict(d)
            if stats.finish_reason == "running":
                yield text, views.stats_markdown(stats, lang), gr.skip(), "", *skip2
            else:
                yield (text, views.stats_markdown(stats, lang) + views.per_token_markdown(d, lang),
                       snippet if engine == "generate" else gr.skip(), "", *ui_timeline(lang))
    except UserError as e:
        raise error(e, lang) from None


def ui_stop(request: gr.Request):
    SLOT.stop(session_of(request))


def ui_hint(device: str, dtype: str, lang: str = "en") -> str:
    lang = page_lang(lang)
    try:
        said = devices.hint(devices.parse_device(device), devices.parse_dtype(dtype))
    except UserError as e:
        return f"⚠️ {e.text(lang)}"
    return f"💡 {said.text(lang)}" if said else ""


def ui_inspect(which: str, lang: str) -> str:
    lang = page_lang(lang)
    if which == "half":
        return render.inspect_markdown(inspect(harness.half_moved_model()), lang)
    with SLOT.held() as lm:
        if lm is None:
            raise error(UserError.of("err.not_loaded"), lang)
        return render.inspect_markdown(inspect(lm.model), lang)


def ui_diagnose(text: str, lang: str) -> str:
    try:
        return render.diagnose_markdown(diagnose.diagnose(inputs.check_diagnose_text(text)), page_lang(lang))
    except UserError as e:
        raise error(e, lang) from None


def browser_lang(request: gr.Request) -> str:
    """Default the page's language to the browser's (Accept-Language), English otherwise."""
    accept = (request.headers.get("accept-language", "") if request else "").lower()
    first = accept.split(",")[0].strip()
    return "zh" if first.startswith("zh") else "en"


# ---------------------------------------------------------------- the lesson: scripts and the fact-check

def fact_checks() -> list[dict]:
    """Every claim quoted from the tutorials, each decided now by its experiment: verdict, evidence, live."""
    return [r.to_dict() for r in factcheck.check_all()]


def fact_check(claim: str) -> dict:
    """One claim from the tutorials, decided now: claim_en, claim_zh, source, verdict, evidence_en/zh, live."""
    try:
        return factcheck.check(factcheck.get(claim)).to_dict()
    except UserError as e:
        raise error(e) from None


def ui_scripts(mistake: str) -> tuple[str, str]:
    """A mistake's two complete scripts, for the page's code boxes ('' for an unknown id: nothing to show)."""
    sc = scenarios.SCENARIOS.get(mistake) if isinstance(mistake, str) else None
    return (sc.script.text("broken"), sc.script.text("fix")) if sc else ("", "")


def ui_fact_check(claim: str, lang: str) -> tuple[str, list[dict]]:
    lang = page_lang(lang)
    try:
        results = [factcheck.check(factcheck.get(claim)).to_dict()]
    except UserError as e:
        raise error(e, lang) from None
    return facts_render.many(results, lang), results


def ui_fact_checks(lang: str) -> tuple[str, list[dict]]:
    results = fact_checks()
    return facts_render.many(results, page_lang(lang)), results
