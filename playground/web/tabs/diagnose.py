"""The Diagnose tab: paste an error, get the mistake behind it, or an honest "not recognised"."""

from __future__ import annotations

import gradio as gr

from playground.core.i18n import t
from playground.lab import render
from playground.web import handlers as h
from playground.web.page import PRIVATE, Page


def build(page: Page) -> None:
    en, w = "en", page.words
    with w(gr.Tab(t("page.tab.diagnose", en), id="diagnose"), "label", "page.tab.diagnose"):
        w(gr.Markdown(t("page.diagnose.intro", en)), "value", "page.diagnose.intro")
        box = w(gr.Textbox(label=t("page.diagnose.box", en), lines=8, elem_id="diagnose-box"), "label", "page.diagnose.box")
        run = w(gr.Button(t("page.diagnose.run", en), elem_id="diagnose-run"), "value", "page.diagnose.run")
        out = gr.Markdown(elem_id="diagnose")
        # the link to the lab: the first match that the lab reproduces, opened in the Playground tab
        open_lab = gr.Button(visible=False, elem_id="diagnose-open")
        found = gr.State(None)  # the diagnosis, as data: said again when the language changes
    run.click(h.ui_diagnose, [box, page.lang], [out, found, open_lab], api_visibility="private")
    open_lab.click(h.ui_open_in_lab, found, [page.tabs, page.shared["mistake"], page.shared["break_on"]], **PRIVATE)
    page.on_language(lambda lang, f: [render.diagnose_markdown(f, lang) if f is not None else "",
                                      h.ui_open_button(f, lang)], [out, open_lab], [found])
