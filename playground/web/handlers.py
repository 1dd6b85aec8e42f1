"""What the page's events and the API's endpoints do: check what was sent, once, then call the core.

Each handler is an edge: it turns what a visitor sent into typed values (a
`ModelSource`, a `DeviceInfo`, a torch dtype, `GenerationParams`, a `Scenario`)
with one device discovery, passes them inward with the visitor's session (whose
model the pool uses). A `UserError` becomes `gr.Error` for the API (in English); a
page event answers it in an error toast and in the panel of the button that sent it
(`refused`, in the visitor's language), leaving every other result on show. Nothing here measures anything; each
figure gets the count of visitors waiting when it was taken; the views render it.
"""

from __future__ import annotations

import html
from contextlib import contextmanager
from dataclasses import replace
from typing import Iterator

from playground.web import exports  # noqa: F401  (first: it points Gradio's temporary folder inside its own)

import gradio as gr

from playground.core import inputs, settings
from playground.core.errors import UserError
from playground.core.i18n import as_text, t
from playground.core.inputs import GenerationParams
from playground.hw import devices, zerogpu
from playground.lab import diagnose, factcheck, harness, render, scenarios
from playground.lab.factcheck import render as facts_render
from playground.lab.inspect import inspect
from playground.load import catalog, estimate as sizing, loader
from playground.run.pool import POOL
# the load report and the generation's stats are rendered where the CLI prints them from too
from playground.run.render import ledger_markdown, per_token_markdown, stats_markdown
from playground.web import snippet as code, views
from playground.web.lab_runs import run_lab
from playground.web.results import page_lang, refused, session_of
from playground.web.page import waiting


def error(e: UserError, lang: object = "en") -> gr.Error:
    """gr.Error renders its message as HTML: escape it, since it may quote what a visitor typed.
    A UserError is an expected answer, not a crash: no traceback in the server log. The page
    shows it in the visitor's language; the API answers in English."""
    lang = page_lang(lang)
    return gr.Error(html.escape(e.text(lang), quote=False), title=t("ui.error", lang), print_exception=False)


@contextmanager
def gr_errors(lang: object = "en") -> Iterator[None]:
    """The edge's one conversion: a UserError raised inside the block leaves it as `error(e, lang)`
    (the page's language; the API's English by default), not chained to the UserError."""
    try:
        yield
    except UserError as e:
        raise error(e, lang) from None


# ---------------------------------------------------------------- API endpoints (the documented contract)

def load_model(model: str, device: str, dtype: str, request: gr.Request = None) -> dict:
    """Load a model for this client: from_pretrained onto the CPU, then model.to(device), then eval(); returns the
    timed report. A model another client holds already is shared, not loaded again (`shared` says so)."""
    session = session_of(request)
    with gr_errors():
        report = POOL.load(*loader.parse(model, device, dtype), session=session)
    return replace(report, waiting=waiting(session)).to_dict()


def status(request: gr.Request = None) -> dict:
    """This client's model (or why it has none: `gone`), and how many models the server holds for how many
    visitors, with their RAM and how many evictions were told."""
    return as_text(POOL.status(session_of(request)))


@zerogpu.gpu
def generate_on_gpu(prompt: str, max_new_tokens: int, temperature: float, top_p: float, seed: int,
                    session: str = "", engine: str = "generate", chat_template: bool = True) -> Iterator[tuple[str, dict]]:
    """The GPU work, with checked plain arguments and plain results: on ZeroGPU it runs inside
    @spaces.GPU, in a worker process that pickles what crosses over (the same function elsewhere)."""
    params = GenerationParams(max_new_tokens, temperature, top_p, seed, chat_template)
    for text, stats in POOL.generate(prompt, params, session=session, engine=engine):
        yield text, stats.to_dict()


def checked_generation(prompt, max_new_tokens, temperature, top_p, seed,
                        chat_template: object = True) -> tuple[str, GenerationParams]:
    params = inputs.generation_params(max_new_tokens, temperature, top_p, seed, chat_template)
    return inputs.check_prompt(prompt), params


def generate(prompt: str, max_new_tokens: int, temperature: float, top_p: float, seed: int,
             request: gr.Request = None) -> tuple[str, dict]:
    """Stream a continuation of the prompt from this client's model; each update is (text so far, stats so far).
    temperature 0 is greedy. When the tokenizer has a chat template the prompt goes in as the user's message; the
    stats say so (`chat_template_applied`). (Five arguments, as every script sends them: the raw-prompt switch is
    the page's.)"""
    session = session_of(request)
    with gr_errors():
        prompt, p = checked_generation(prompt, max_new_tokens, temperature, top_p, seed)
        for text, d in generate_on_gpu(prompt, p.max_new_tokens, p.temperature, p.top_p, p.seed, session):
            yield text, with_waiting(d, session)


def with_waiting(d: dict, session: str) -> dict:
    """A generation's stats; the last update says how many other visitors were waiting when it ended."""
    return d if d.get("finish_reason") == "running" else dict(d, waiting=waiting(session))


def break_it_scenarios() -> list[dict]:
    """The break-it lab's mistakes: id, title in English and Chinese, whether a GPU is involved."""
    return scenarios.listing()


def break_it(scenario: str, request: gr.Request = None) -> dict:
    """Run one mistake on this client's model (the bundled one before a load), live, then its fix."""
    with gr_errors():
        return run_lab(scenarios.get(scenario), session_of(request)).to_dict()


def diagnose_error(text: str) -> dict:
    """Name the mistake(s) behind a pasted traceback or error line, best first, with explanations."""
    with gr_errors():
        return diagnose.diagnose(inputs.check_diagnose_text(text)).to_dict()


def estimate_of(model: object, dtype: object, device: object = "cpu") -> sizing.Estimate:
    dt = devices.parse_dtype(dtype)
    dev = devices.parse_device(device)
    return sizing.estimate_model(catalog.read_config(catalog.resolve(model)), dev, dt)


def estimate(model: str, dtype: str) -> dict:
    """Size a model from its config alone (built on the meta device), and say whether it fits here."""
    with gr_errors():
        return estimate_of(model, dtype).to_dict()


# ---------------------------------------------------------------- page handlers
# Each returns its result twice: rendered in the page's language, and as data for a gr.State, so that
# switching the language renders it again (the `retranslate_*` functions) instead of wiping it.

def ui_ledger(ledger_moment: tuple | None, lang: str) -> tuple:
    """The ledger's table in `lang`, and its two plots emptied: `ui_ledger_plots` draws them next, in an event
    chained after this one (Gradio 6's bar plot, given new data and new words at once, draws the data it had
    before; emptied first, it draws the new)."""
    parts, moment = ledger_moment or ([], "after_load")
    return gr.BarPlot(value=None), gr.BarPlot(value=None), ledger_markdown(parts, page_lang(lang), moment)


def ui_ledger_plots(ledger_moment: tuple | None, lang: str) -> tuple:
    """The ledger's two stacked-bar plots in `lang`; `ledger_moment`: (part dicts, moment)."""
    lang = page_lang(lang)
    proc, whole = views.ledger_frames((ledger_moment or ([], ""))[0], lang)
    return (gr.BarPlot(value=proc, **views.ledger_words(lang, "process")),
            gr.BarPlot(value=whole, **views.ledger_words(lang, "device")))


def ui_status(lang: str, request: gr.Request = None) -> str:
    """The banner: this visitor's own model, and how many models the server holds for how many visitors."""
    return views.status_markdown(POOL.status(session_of(request)), page_lang(lang))


def ui_release(request: gr.Request) -> None:
    """The visitor's tab (or API client) is gone: its runs stop and its hold on its model goes."""
    session = session_of(request)
    POOL.stop(session)
    POOL.stop("compare:" + session)
    POOL.release(session)


def prompt_and_context(prompt: object, chat_template: object, session: str) -> tuple[int | None, int | None]:
    """(prompt tokens, context) of the visitor's model for this prompt; the prompt's count is None when there is
    no prompt to count or the prompt is refused (the Generate button says why, when pressed); (None, None) before
    a load. Anything else that fails is an error, and the page shows it."""
    current = POOL.current(session)
    try:
        prompt = inputs.check_prompt(prompt)
    except UserError:
        return None, current[0].context_length if current else None
    return POOL.prompt_and_context(session, prompt, bool(chat_template))


def slider_update(prompt_context: tuple, value: object, lang: str):
    """max_new_tokens' slider: capped at what the prompt leaves of the context (and the server's cap). Its value
    is set only when it must change (above the new top, or not a number): `value` is what the slider held when
    the event started, and sent back unchanged it would undo what the visitor set meanwhile (an update chained
    after a load lands when it lands, after any typing in between)."""
    n, ctx = prompt_context
    cap = settings.read().max_new_tokens
    top = max(1, min(cap, ctx - (n or 1))) if ctx else cap
    info = views.context_info(ctx, n, lang)
    try:
        held = int(float(value))
    except (TypeError, ValueError):
        return gr.update(maximum=top, value=min(64, top), info=info)
    if 1 <= held <= top:
        return gr.update(maximum=top, info=info)
    return gr.update(maximum=top, value=min(max(held, 1), top), info=info)


def ui_prompt_changed(prompt: str, chat_template: bool, max_new: object, lang: str, request: gr.Request = None):
    """As the prompt (or the chat switch) changes: the slider's top follows what the prompt leaves."""
    counted = prompt_and_context(prompt, chat_template, session_of(request))
    return slider_update(counted, max_new, page_lang(lang)), counted


def ui_snippet(prompt: str, params: GenerationParams, engine: str, chat_template: bool, session: str) -> str:
    """The code to copy for the visitor's model, these (checked) settings and this engine; '' before a load."""
    current = POOL.current(session)
    if current is None:
        return ""
    report, src = current
    return code.snippet(src, report.device, report.dtype_requested, prompt, params, engine, chat_template)


def final_stats_markdown(lang: str, d: dict | None) -> str:
    if not d:
        return ""
    return stats_markdown(views.stats_from_dict(d), lang) + per_token_markdown(d, lang)


def ui_decoding(mode: str):
    """The decoding switch: sampled (the page's defaults) or greedy; temperature, top_p and seed follow."""
    if mode == "greedy":
        return gr.update(value=0), gr.skip(), gr.skip()
    if mode == "sampled":
        return (gr.update(value=inputs.SAMPLED["temperature"]), gr.update(value=inputs.SAMPLED["top_p"]),
                gr.update(value=inputs.SAMPLED["seed"]))
    return gr.skip(), gr.skip(), gr.skip()


def ui_decoding_of(temperature: object, top_p: object, seed: object) -> str:
    """Which decoding the sliders now say: the switch follows them."""
    try:
        temp, p, s = float(temperature), float(top_p), int(float(seed))
    except (TypeError, ValueError):
        return "custom"
    if temp == 0:
        return "greedy"
    same = (temp, p, s) == (inputs.SAMPLED["temperature"], inputs.SAMPLED["top_p"], inputs.SAMPLED["seed"])
    return "sampled" if same else "custom"


def ui_stop(request: gr.Request):
    POOL.stop(session_of(request))


def ui_run_button(break_on: bool, lang: str):
    """The run button says what it runs: a generation, or, with Break it ticked, the chosen mistake."""
    return gr.update(value=t("page.run_mistake" if break_on else "page.generate", page_lang(lang)))


def ui_open_in_lab(found):
    """Diagnose's link to the lab: the Playground tab, Break it ticked, the first match's mistake chosen."""
    sid = next((m.id for m in found.matches if m.scenario), None) if found is not None else None
    if sid is None:
        return gr.update(), gr.update(), gr.update()
    return gr.Tabs(selected="play"), gr.update(value=sid), True


def ui_hint(device: str, dtype: str, lang: str = "en") -> str:
    lang = page_lang(lang)
    try:
        said = devices.hint(devices.parse_device(device), devices.parse_dtype(dtype))
    except UserError as e:
        return f"⚠️ {e.text(lang)}"
    return f"💡 {said.text(lang)}" if said else ""


def ui_inspect_half(lang: str):
    """Inspect a half-moved model (the lab's own, built for it)."""
    found = inspect(harness.half_moved_model())
    return render.inspect_markdown(found, page_lang(lang)), found


def ui_inspect_loaded(lang: str, request: gr.Request = None):
    """Inspect the visitor's own model, held in use meanwhile."""
    lang = page_lang(lang)
    try:
        with POOL.held(session_of(request)) as lm:
            if lm is None:
                raise UserError.of("err.not_loaded")
            found = inspect(lm.model, lm.offload_folder)
    except UserError as e:
        return refused(e, lang), None
    return render.inspect_markdown(found, lang), found


def ui_diagnose(text: str, lang: str):
    """The diagnosis, the out-of-memory bar (shown only when the text holds one), the diagnosis as data, and the
    button that opens its first reproducible match in the lab."""
    with gr_errors(lang):
        found = diagnose.diagnose(inputs.check_diagnose_text(text))
    return (*retranslate_diagnose(page_lang(lang), found), found, ui_open_button(found, lang))


def retranslate_diagnose(lang: str, found) -> tuple:
    """The diagnosis in `lang`, and its out-of-memory bar emptied (`ui_oom_bar` draws it next: see `ui_ledger`)."""
    return (render.diagnose_markdown(found, lang) if found is not None else ""), gr.BarPlot(value=None)


def ui_oom_bar(found, lang: str):
    """An out-of-memory message's numbers as one stacked bar, shown only when the text held one."""
    o = found.oom if found is not None else None
    lang = page_lang(lang)
    return gr.BarPlot(value=views.oom_frame(o, lang), visible=o is not None and o.kind != "cpu", **views.oom_words(lang))


def ui_open_button(found, lang: str):
    """The button under a diagnosis that opens its first reproducible match in the lab, named by number and title."""
    first = next((m for m in found.matches if m.scenario), None) if found is not None else None
    if first is None:
        return gr.update(visible=False)
    lang = page_lang(lang)
    return gr.update(visible=True, value=t("page.diagnose.open", lang, number=scenarios.get(first.id).number,
                                           title=first.title.text(lang)))


def browser_lang(kept: object = None, request: gr.Request = None) -> str:
    """The page's language when it opens: the one the visitor chose last in this browser (`kept`, from its
    storage), else the browser's (Accept-Language), English otherwise."""
    if kept in ("en", "zh"):
        return kept
    accept = (request.headers.get("accept-language", "") if request else "").lower()
    first = accept.split(",")[0].strip()
    return "zh" if first.startswith("zh") else "en"


# ---------------------------------------------------------------- the lesson: scripts and the fact-check

def fact_checks() -> list[dict]:
    """Every claim quoted from the tutorials, each decided now by its experiment: verdict, evidence, live."""
    return [r.to_dict() for r in factcheck.check_all()]


def fact_check(claim: str) -> dict:
    """One claim from the tutorials, decided now: claim_en, claim_zh, source, verdict, evidence_en/zh, live."""
    with gr_errors():
        return factcheck.check(factcheck.get(claim)).to_dict()


def ui_scripts(mistake: str) -> tuple[str, str]:
    """A mistake's two complete scripts, for the page's code boxes ('' for an unknown id: nothing to show)."""
    sc = scenarios.SCENARIOS.get(mistake) if isinstance(mistake, str) else None
    return (sc.script.text("broken"), sc.script.text("fix")) if sc else ("", "")


def ui_script_labels(mistake: str, lang: str) -> tuple:
    """The two code boxes' labels: the mistake and the fix, or, for a harmless order, the two orders."""
    sc = scenarios.SCENARIOS.get(mistake) if isinstance(mistake, str) else None
    keys = ("ui.broken_script_harmless", "ui.fix_script_harmless") if sc and sc.harmless else (
        "ui.broken_script", "ui.fix_script")
    return tuple(gr.update(label=t(k, page_lang(lang))) for k in keys)


def ui_fact_check(claim: str, lang: str) -> tuple[str, list]:
    lang = page_lang(lang)
    with gr_errors(lang):
        results = [factcheck.check(factcheck.get(claim))]
    return facts_render.many(results, lang), results


def ui_fact_checks(lang: str) -> tuple[str, list]:
    results = factcheck.check_all()
    return facts_render.many(results, page_lang(lang)), results
