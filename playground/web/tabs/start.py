"""The "Start here" tab: the guided path, one step at a time (its steps: playground.web.lesson).

Layout and wiring only. The step the visitor is on lives in the browser (`gr.BrowserState`): it survives a
reload and a language switch; each step's last result is kept as data in a `gr.State` and said again in the
new language. "Go deeper" selects the tab holding the step's full panel.
"""

from __future__ import annotations

import gradio as gr
from gradio.context import Context

from playground.core.i18n import t
from playground.web import handlers_lesson as hl, lesson, views_lesson as views
from playground.web.page import PRIVATE, Page, answering, working

FIRST = lesson.STEPS[0].id


def build(page: Page) -> None:
    en, w = "en", page.words
    tabs = Context.block  # the page's gr.Tabs, built by ui.py: "Go deeper" selects one of its tabs
    with w(gr.Tab(t("lesson.tab", en), id="start", elem_id="tab-start"), "label", "lesson.tab"):
        w(gr.Markdown(t("lesson.intro", en), elem_id="lesson-intro"), "value", "lesson.intro")
        with gr.Row():
            with gr.Column(scale=1, min_width=260):
                path = w(gr.Radio(views.step_choices(en), value=FIRST, label=t("lesson.path", en),
                                  elem_id="lesson-path"), "label", "lesson.path")
                # the tutorials the steps name (T1 to T5): what each taught, so that a visitor can find them
                with w(gr.Accordion(t("lesson.tutorials.title", en), open=False, elem_id="lesson-tutorials"),
                       "label", "lesson.tutorials.title"):
                    w(gr.Markdown(t("lesson.tutorials", en)), "value", "lesson.tutorials")
            with gr.Column(scale=3):
                text = gr.Markdown(views.step_markdown(FIRST, en), elem_id="lesson-step")
                run = w(gr.Button(t("lesson.run", en), variant="primary", elem_id="lesson-run"), "value", "lesson.run")
                said = gr.Markdown(elem_id="lesson-said")
                figures = gr.Markdown(elem_id="lesson-figures")
                with gr.Row():
                    back = w(gr.Button(t("lesson.back", en), elem_id="lesson-back", interactive=False), "value",
                             "lesson.back")  # the path opens at its first step: nothing before it
                    deeper = gr.Button(views.deeper_label(FIRST, en), elem_id="lesson-deeper")
                    nxt = w(gr.Button(t("lesson.next", en), variant="secondary", elem_id="lesson-next"), "value",
                            "lesson.next")
        at = gr.BrowserState(FIRST, storage_key="playground-lesson-step")
        results = gr.State({})

    ui = dict(path=path, text=text, said=said, figures=figures, deeper=deeper, at=at, back=back, next=nxt)
    path.change(**answering(hl.ui_show, ui), inputs=[path, results, page.lang], **PRIVATE)
    back.click(lambda s: hl.ui_move(s, -1), path, path, **PRIVATE)
    nxt.click(lambda s: hl.ui_move(s, 1), path, path, **PRIVATE)
    run.click(hl.ui_run, [path, results, page.lang], [said, figures, page.status, results], api_visibility="private",
              **working(said))
    if isinstance(tabs, gr.Tabs):
        deeper.click(hl.ui_deeper, path, tabs, **PRIVATE)
    # Back where the visitor was: the browser's stored step, restored when the page opens.
    Context.root_block.load(lambda s: s if s in lesson.BY_ID else FIRST, at, path, **PRIVATE)
    page.on_language(**answering(hl.rerender, ui), inputs=[path, results])
