"""The Inspect tab: where every tensor of the visitor's model (or of a half-moved one) lives."""

from __future__ import annotations

import gradio as gr

from playground.core.i18n import t
from playground.lab import render
from playground.web import handlers as h
from playground.web.page import Page, working


def build(page: Page) -> None:
    en, w = "en", page.words
    with w(gr.Tab(t("page.tab.inspect", en), id="inspect"), "label", "page.tab.inspect"):
        w(gr.Markdown(t("page.inspect.intro", en)), "value", "page.inspect.intro")
        with gr.Row():
            loaded = w(gr.Button(t("page.inspect.loaded", en), elem_id="inspect-loaded"), "value", "page.inspect.loaded")
            half = w(gr.Button(t("page.inspect.half", en), elem_id="inspect-half"), "value", "page.inspect.half")
        out = gr.Markdown(elem_id="inspect")
        found = gr.State(None)  # the inspection, as data: said again when the language changes
    loaded.click(h.ui_inspect_loaded, page.lang, [out, found], api_visibility="private", **working(out))
    half.click(h.ui_inspect_half, page.lang, [out, found], api_visibility="private", **working(out))
    page.on_language(lambda lang, f: [render.inspect_markdown(f, lang) if f is not None else ""], [out], [found])
