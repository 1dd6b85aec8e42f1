"""The Playground tab's results: whether they still belong to the model loaded, the memory timeline, a refusal.

Results on show (output, stats, code to copy, lab result) were made with one model; after another Load they
stay, greyed under a line saying what they belonged to (`ui_stale`). A page event's `UserError` is answered in
a toast and in the panel that sent it (`refused`), never raised: Gradio would mark every output failed.
"""

from __future__ import annotations

import html
import json

import gradio as gr
from gradio.components.plot import PlotData
from gradio.helpers import log_message

from playground.core.errors import UserError
from playground.core.i18n import t
from playground.core.paths import BUNDLED_NAME
from playground.run.pool import POOL
from playground.web import views, views_timeline


def page_lang(lang: object) -> str:
    return "zh" if lang == "zh" else "en"


def session_of(request: gr.Request | None) -> str:
    return getattr(request, "session_hash", None) or ""


def refused(e: UserError, lang: object = "en") -> str:
    """A page event's refusal: said in an error toast, and returned for the panel of the button that sent it.

    The event itself then ends normally: an exception would make Gradio mark every output of the event as
    failed (a red "Error" over each) and blank some of them, results that are still true (a refused load
    leaves the model before it serving). So the event returns `gr.skip()` for every other output. The API's
    endpoints still raise (`gr_errors`): a script gets its error as an error."""
    lang = page_lang(lang)
    text = e.text(lang)
    # gr.Error's own toast (level "error"), sent without raising; outside an event (a direct call) nothing is sent
    log_message(html.escape(text, quote=False), title=t("ui.error", lang), level="error")  # type: ignore[arg-type]
    return views.refusal_markdown(text, lang)


def model_for_run(session: str) -> dict:
    """The model a run on this session makes its results with: its own, or before a load the lab's bundled model
    (float32 on the CPU: `harness.bundled`)."""
    current = POOL.current(session)
    if current is None:
        return dict(model=BUNDLED_NAME, device="cpu", dtype="float32")
    r = current[0]
    return dict(model=r.model, device=r.device, dtype=r.dtype)


def ui_stale(made_with: dict | None, lang: str, request: gr.Request = None) -> tuple:
    """After a load (done or refused): do the Playground's results (output, stats, code, lab) still belong to
    the model loaded now? The line over them, the results' column greyed or not, and the line's data (for
    the language switch)."""
    current = POOL.current(session_of(request))
    now = views.made_with(current[0].to_dict()) if current else None
    facts = (made_with, now)
    return (*retranslate_stale(page_lang(lang), facts), facts)


def retranslate_stale(lang: str, facts: tuple | None) -> tuple:
    """The stale line in `lang` and the results' column, greyed when the line says they are out of date."""
    line = views.stale_markdown(*(facts or (None, None)), lang)
    return line, gr.Column(elem_classes=["results", "stale"] if line else ["results"])


def ui_timeline_data(session: str) -> tuple[list[dict], list[dict]]:
    """The visitor's model's load and last generation: the process RSS rows (what the plot draws) and the peaks."""
    rows, peaks = POOL.timeline(session)
    return [r for r in rows if r["series"] in ("process RSS", "idle cut")], peaks


def ui_timeline(data: tuple | None, lang: str) -> tuple:
    """The timeline's chart (drawn whole each time: see `views_timeline`) and its table of peaks, in `lang`."""
    rows, peaks = data or ([], [])
    lang = page_lang(lang)
    spec = views_timeline.timeline_spec(rows, peaks, lang)
    plot = PlotData(type="altair", plot=json.dumps(spec, default=float)) if spec else None
    return gr.Plot(value=plot), views.peaks_markdown(peaks, lang)
