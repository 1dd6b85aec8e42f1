"""The page: its header, its tabs (one module each in `playground.web.tabs`), and the named API.

Nothing is measured or checked here: `playground.web.handlers` checks what was sent
and calls the core, `playground.web.views` renders what comes back, and each tab
module lays out its components and wires their events. The API registered below
calls the same handlers the page uses.
"""

from __future__ import annotations

from playground.web import exports  # noqa: F401  (first: it points Gradio's temporary folder inside its own)

import gradio as gr

from playground.core import settings
from playground.core.i18n import t
from playground.run.pool import POOL
from playground.web import (handlers as h, handlers_compare as hc, handlers_lesson as hl, handlers_memory as hm,
                            handlers_placement as hp, handlers_speed as hs, model_lists, style, views)
from playground.web.page import LANE, PRIVATE, Page
from playground.web.tabs import compare, diagnose, factcheck, inspect, placement, play, speed, start

LANGS = [("English", "en"), ("中文", "zh")]
TABS = (start, play, compare, inspect, placement, diagnose, speed, factcheck)


def build() -> gr.Blocks:
    en = "en"
    # delete_cache: the files Gradio served (Compare downloads) are removed after an hour, so a
    # server that runs for weeks does not fill its disk.
    with gr.Blocks(title="The device playground", delete_cache=(3600, 3600)) as demo:
        with gr.Row():
            title = gr.Markdown(f"# {t('page.title', en)}", elem_id="title")
            lang = gr.Radio(LANGS, value="en", label=t("page.lang", en), elem_id="lang", scale=0, min_width=220)
        intro = gr.Markdown(t("page.intro", en), elem_id="intro")
        status = gr.Markdown(views.status_markdown(POOL.status(None), en), elem_id="status")
        page = Page(lang=lang, status=status)
        page.words(title, "value", "page.title", "# {}")
        page.words(intro, "value", "page.intro")
        with gr.Tabs() as page.tabs:
            for tab in TABS:
                tab.build(page)
        # A Vega chart as wide as its box (the timeline) measures its box when the window resizes: one drawn or
        # resized while its tab was hidden keeps a width of 0. A tab shown is told, in the browser alone.
        page.tabs.select(None, None, None, js="() => { setTimeout(() => window.dispatchEvent(new Event('resize')), 50); }",
                         **PRIVATE)
        # <html lang> follows the switch, in the browser alone: the browser picks CJK glyphs by it, screen readers
        # their voice, and the page's CSS the Chinese heading of Gradio's error toast (playground.web.style). Wired
        # first: Gradio's client runs a trigger's events in the order they were wired, and the page's
        # re-translation below takes the browser ~1.5 s to draw.
        lang.change(None, lang, None, js="(l) => { document.documentElement.lang = l === 'zh' ? 'zh-CN' : 'en'; }",
                    **PRIVATE)
        # The banner says the visitor's own model and, apart, how many models the server holds for how
        # many visitors: those change with other visitors' loads, so it is asked again every few seconds.
        page.wire_language()
        lang.change(h.ui_status, lang, status, **PRIVATE)
        # The language chosen is kept in the browser, as the guided path's step is: a reload opens in it
        kept_lang = gr.BrowserState("", storage_key="playground-lang")
        # Once the page is open, in its language: the model lists mark a model that can never load here (worked
        # out once per process: building on meta takes a second for the largest, too long for the start-up)
        models = [page.shared[k] for k in ("play_model", "compare_model", "place_model")]
        demo.load(h.browser_lang, kept_lang, lang, **PRIVATE).then(model_lists.ui_model_choices, lang, models,
                                                                   **PRIVATE)
        lang.change(lambda chosen: chosen if chosen in ("en", "zh") else "", lang, kept_lang, **PRIVATE)
        gr.Timer(5).tick(h.ui_status, lang, status, **PRIVATE)
        # A visitor's session ends when their tab (or their API client) disconnects: their hold goes, and a
        # model no visitor holds any more is unloaded (Gradio calls this with the session's request).
        demo.unload(h.ui_release)

        gr.api(h.load_model, api_name="load_model", **LANE)
        gr.api(h.status, api_name="status", queue=False)
        gr.api(h.generate, api_name="generate", **LANE)
        gr.api(h.break_it_scenarios, api_name="break_it_scenarios", queue=False)
        gr.api(h.break_it, api_name="break_it", **LANE)
        gr.api(h.diagnose_error, api_name="diagnose")
        gr.api(h.estimate, api_name="estimate", **LANE)
        gr.api(hm.fit, api_name="fit", **LANE)
        gr.api(hc.compare, api_name="compare", **LANE)
        gr.api(h.fact_checks, api_name="fact_checks", **LANE)
        gr.api(h.fact_check, api_name="fact_check", **LANE)
        gr.api(hs.bandwidth, api_name="bandwidth", **LANE)
        gr.api(hs.kv_growth, api_name="kv_growth", **LANE)
        gr.api(hs.engines, api_name="engines", **LANE)
        gr.api(hp.plan_placement, api_name="plan_placement", **LANE)
        gr.api(hp.load_placed, api_name="load_placed", **LANE)
        gr.api(hp.offload_cost, api_name="offload_cost", **LANE)
        gr.api(hp.offload_cliff, api_name="offload_cliff", **LANE)
        gr.api(hp.load_straight, api_name="load_straight", **LANE)
        gr.api(hl.lesson_steps, api_name="lesson_steps", queue=False)
        gr.api(hl.lesson_step, api_name="lesson_step", **LANE)
    # max_size: at most PLAYGROUND_MAX_QUEUE events wait; one more is answered "queue is full" at once.
    demo.queue(default_concurrency_limit=1, max_size=settings.read().max_queue)
    idle_polls(demo)
    return demo


# Gradio's queue looks for new events by polling: every 1 ms, and for progress updates every 10 ms, except on
# Windows (50 and 100 ms). 1,100 wake-ups a second cost an idle server ~10 % of a core here (a laptop's fan, a
# Space's CPU; on two cores the tests' servers took it from each other), and the loop keeps polling while a
# generation runs. 20 ms: an event waits at most that long to start (a human does not see it); 100 ms: ten
# progress updates a second, Gradio's Windows rate. Measured: docs/serving.md, "An idle server".
QUEUE_POLL_SECONDS = 0.02
PROGRESS_POLL_SECONDS = 0.1


def idle_polls(demo: gr.Blocks) -> None:
    """Set the queue's polling intervals (`QUEUE_POLL_SECONDS`, `PROGRESS_POLL_SECONDS`) on `demo`'s queue."""
    queue = demo._queue  # Gradio keeps its Queue here; the two intervals are its plain attributes
    queue.sleep_when_free = QUEUE_POLL_SECONDS
    queue.progress_update_sleep_when_free = PROGRESS_POLL_SECONDS


def launch_kwargs() -> dict:
    """Serve on PLAYGROUND_HOST/PORT (or Gradio's own defaults); no file serving beyond the app's,
    no uploads (the page takes no file: max_file_size=0 refuses any upload with HTTP 413), and
    page state for at most PLAYGROUND_MAX_SESSIONS visitors (Gradio's default, 10,000 copies of
    the page's configuration, would hold 1.7 GB)."""
    s = settings.read()
    kw: dict = {"allowed_paths": [], "show_error": True, "max_file_size": 0, "state_session_capacity": s.max_sessions}
    kw["css"] = style.CSS  # the page's tables, labels and plots (playground.web.style)
    kw["js"] = style.SCRIPT  # Gradio's own English words in its progress overlay, said in Chinese on the Chinese page
    if s.host:
        kw["server_name"] = s.host
    if s.port:
        kw["server_port"] = int(s.port)
    return kw
