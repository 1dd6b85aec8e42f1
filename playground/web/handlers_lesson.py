"""The guided path's events and its API endpoints (`lesson_steps`, `lesson_step`): check once, run the step.

The same contract as `playground.web.handlers`: the step id is checked here (an unknown one is refused
with the valid ids), the step runs on the visitor's own model (`playground.web.lesson.run_step`, which
loads the bundled model first when the session has none, and says so), and a `UserError` becomes
`gr.Error` in the visitor's language (the API answers in English). The page keeps each step's result as
data, so that a language switch says it again and going back to a step shows what it measured.
"""

from __future__ import annotations

import gradio as gr

from playground.core.i18n import t
from playground.web import lesson, views_lesson as views
from playground.web.handlers import gr_errors, ui_status
from playground.web.page import answers, waiting
from playground.web.results import page_lang, session_of

SHOWN = ("text", "said", "figures", "deeper", "at", "back", "next")  # what choosing a step shows


# ---------------------------------------------------------------- API endpoints

def lesson_steps() -> list[dict]:
    """The guided path's steps in order: id, title_en, title_zh, panel (the element that goes deeper)."""
    return [dict(id=s.id, title_en=t(s.title, "en"), title_zh=t(s.title, "zh"), panel=s.panel, tab=s.tab)
            for s in lesson.STEPS]


def lesson_step(step: str, request: gr.Request = None) -> dict:
    """Run one step of the guided path on this client's model (the bundled one is loaded first when it has none:
    `loaded_first`, `note_en`): figures (raw numbers; bytes in bytes, times in ms), sentence_en, sentence_zh
    (chosen from the figures), panel."""
    session = session_of(request)
    with gr_errors():
        d = lesson.run_step(lesson.get(step), session).to_dict()
    return dict(d, waiting=waiting(session))


# ---------------------------------------------------------------- page events

@answers(*SHOWN)
def ui_show(step_id: str, results: dict | None, lang: str) -> dict:
    """A step chosen (the path's list, Next, Back, or the page remembering it): its text, its last result, the
    step kept in the browser (`at`), and Back and Next pressable only where there is a step to go to."""
    lang = page_lang(lang)
    step_id = step_id if step_id in lesson.BY_ID else lesson.STEPS[0].id
    d = (results or {}).get(step_id)
    at = [s.id for s in lesson.STEPS].index(step_id)
    return dict(text=views.step_markdown(step_id, lang), said=views.sentence_markdown(d, lang),
                figures=views.figures_markdown(d, lang), deeper=gr.update(value=views.deeper_label(step_id, lang)),
                at=step_id, back=gr.update(interactive=at > 0),
                next=gr.update(interactive=at < len(lesson.STEPS) - 1))


def ui_run(step_id: str, results: dict | None, lang: str, request: gr.Request = None):
    lang, session = page_lang(lang), session_of(request)
    with gr_errors(lang):
        step = lesson.get(step_id)
        yield t("lesson.running", lang), "", gr.skip(), gr.skip()
        d = lesson.run_step(step, session).to_dict()
    results = dict(results or {}, **{step.id: d})
    yield views.sentence_markdown(d, lang), views.figures_markdown(d, lang), ui_status(lang, request), results


def ui_move(step_id: str, delta: int) -> str:
    ids = [s.id for s in lesson.STEPS]
    at = ids.index(step_id) if step_id in ids else 0
    return ids[max(0, min(len(ids) - 1, at + delta))]


def ui_deeper(step_id: str):
    """Open the tab holding the step's full panel."""
    return gr.Tabs(selected=lesson.BY_ID.get(step_id, lesson.STEPS[0]).tab)


@answers("path", "text", "said", "figures", "deeper")
def rerender(lang: str, step_id: str, results: dict | None) -> dict:
    lang = page_lang(lang)
    shown = ui_show(step_id, results, lang)
    return dict(path=gr.update(choices=views.step_choices(lang)),
                **{k: shown[k] for k in ("text", "said", "figures", "deeper")})
