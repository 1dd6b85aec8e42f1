"""The Compare tab: every (device, dtype) pair through the same load, prompt and greedy tokens."""

from __future__ import annotations

import gradio as gr

from playground.core.i18n import t
from playground.core.paths import BUNDLED_NAME
from playground.load import catalog
from playground.run import compare as matrix
from playground.web import handlers as h, views
from playground.web.page import LANE, PRIVATE, Page


def build(page: Page) -> None:
    en, w = "en", page.words
    with w(gr.Tab(t("page.tab.compare", en), id="compare", elem_id="tab-compare"), "label", "page.tab.compare"):
        w(gr.Markdown(t("page.compare.intro", en)), "value", "page.compare.intro")
        with gr.Row():
            model = w(gr.Dropdown(choices=[(e.label, e.id) for e in catalog.catalog()], value=BUNDLED_NAME,
                                  allow_custom_value=True, label=t("page.model", en), elem_id="cmp-model"),
                      "label", "page.model")
            pairs = w(gr.CheckboxGroup(matrix.available_pairs(), value=matrix.available_pairs(),
                                       label=t("page.compare.pairs", en), elem_id="cmp-pairs"),
                      "label", "page.compare.pairs")
            tokens = w(gr.Slider(2, 128, value=16, step=1, label=t("page.compare.tokens", en), elem_id="cmp-tokens"),
                       "label", "page.compare.tokens")
        with gr.Row():
            run = w(gr.Button(t("page.compare.run", en), variant="primary", elem_id="cmp-run"), "value", "page.compare.run")
            stop = w(gr.Button(t("page.compare.stop", en), variant="stop", elem_id="cmp-stop"),
                     "value", "page.compare.stop")
        with gr.Row(elem_id="cmp-charts"):
            charts = [gr.BarPlot(x="pair", y=col, title=title, height=220, elem_classes=["cmp-chart"])
                      for col, title in views.COMPARE_CHARTS]
        table = gr.Markdown(elem_id="cmp-table")
        files = w(gr.File(label=t("page.compare.files", en), file_count="multiple", elem_id="cmp-files"),
                  "label", "page.compare.files")
    run.click(h.ui_compare, [model, pairs, tokens, page.lang], [*charts, table, files, page.status],
              api_visibility="private", **LANE)
    stop.click(h.ui_compare_stop, None, None, **PRIVATE)
