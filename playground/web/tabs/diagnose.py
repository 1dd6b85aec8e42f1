"""The Diagnose tab: paste an error, get the mistake behind it (an out-of-memory message's numbers as a stacked
bar, with the remedies they point at), or an honest "not recognised"."""

from __future__ import annotations

import gradio as gr

from playground.core.i18n import t
from playground.web import handlers as h, views
from playground.web.page import PRIVATE, Page


def build(page: Page) -> None:
    en, w = "en", page.words
    with w(gr.Tab(t("page.tab.diagnose", en), id="diagnose"), "label", "page.tab.diagnose"):
        w(gr.Markdown(t("page.diagnose.intro", en)), "value", "page.diagnose.intro")
        box = w(gr.Textbox(label=t("page.diagnose.box", en), lines=8, elem_id="diagnose-box"), "label", "page.diagnose.box")
        run = w(gr.Button(t("page.diagnose.run", en), elem_id="diagnose-run"), "value", "page.diagnose.run")
        # an out-of-memory message's numbers as one stacked bar (Gradio stacks a bar plot's colours)
        bar = gr.BarPlot(x="device", y="MiB", color="part", visible=False, elem_id="oom-bar", **views.oom_words(en))
        out = gr.Markdown(elem_id="diagnose")
        # the link to the lab: the first match that the lab reproduces, opened in the Playground tab
        open_lab = gr.Button(visible=False, elem_id="diagnose-open")
        found = gr.State(None)  # the diagnosis, as data: said again when the language changes
    run.click(h.ui_diagnose, [box, page.lang], [out, bar, found, open_lab], api_visibility="private",
              show_progress_on=[out]
              ).then(h.ui_oom_bar, [found, page.lang], bar, **PRIVATE)
    open_lab.click(h.ui_open_in_lab, found, [page.tabs, page.shared["mistake"], page.shared["break_on"]], **PRIVATE)
    page.on_language(lambda lang, f: [*h.retranslate_diagnose(lang, f), h.ui_open_button(f, lang)],
                     [out, bar, open_lab], [found])
    page.after_language(lambda lang, f: h.ui_oom_bar(f, lang), [bar], [found])
