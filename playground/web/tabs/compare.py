"""The Compare tab: every (device, dtype) pair through the same load, prompt and greedy tokens, repeated.

The result is kept as data (the rows, and how the visitor's model was loaded back) and rendered in the
page's language: the charts' titles and axes, the table, the note under it.
"""

from __future__ import annotations

import gradio as gr

from playground.core.i18n import t
from playground.core.paths import BUNDLED_NAME
from playground.load import catalog
from playground.run import compare as matrix
from playground.web import compare_views as views, handlers_compare as hc
from playground.web.page import PRIVATE, Page, answering, working


def build(page: Page) -> None:
    en, w = "en", page.words
    with w(gr.Tab(t("page.tab.compare", en), id="compare", elem_id="tab-compare"), "label", "page.tab.compare"):
        w(gr.Markdown(t("page.compare.intro", en)), "value", "page.compare.intro")
        with gr.Row():
            model = w(gr.Dropdown(choices=catalog.choices(en), value=BUNDLED_NAME,
                                  allow_custom_value=True, label=t("page.model", en), elem_id="cmp-model"),
                      "label", "page.model")
            pairs = w(gr.CheckboxGroup(matrix.available_pairs(), value=matrix.available_pairs(),
                                       label=t("page.compare.pairs", en), elem_id="cmp-pairs"),
                      "label", "page.compare.pairs")
            tokens = w(gr.Slider(2, 128, value=16, step=1, label=t("page.compare.tokens", en), elem_id="cmp-tokens"),
                       "label", "page.compare.tokens")
        page.shared.update(compare_model=model)  # its list marked once the page is open (ui.py)
        with gr.Row():
            run = w(gr.Button(t("page.compare.run", en), variant="primary", elem_id="cmp-run"), "value", "page.compare.run")
            stop = w(gr.Button(t("page.compare.stop", en), variant="stop", elem_id="cmp-stop"),
                     "value", "page.compare.stop")
        beside = gr.Markdown(elem_id="cmp-beside")
        with gr.Row(elem_id="cmp-charts"):
            charts = [gr.Plot(elem_classes=["cmp-chart"], min_width=200, show_label=False) for _ in views.CHARTS]
        table = gr.Markdown(elem_id="cmp-table")
        files = w(gr.File(label=t("page.compare.files", en), file_count="multiple", elem_id="cmp-files"),
                  "label", "page.compare.files")
        result = gr.State(None)  # (rows, what they ran beside, visitors waiting); inside the tab (a child of gr.Tabs)
    ui = dict(zip(hc.CHARTS, charts), table=table, beside=beside, files=files, status=page.status, result=result,
              model=model)
    run.click(**answering(hc.ui_compare, ui), inputs=[model, pairs, tokens, page.lang], api_visibility="private",
              **working(table))
    stop.click(hc.ui_compare_stop, None, None, **PRIVATE)
    page.on_language(**answering(hc.retranslate_compare, ui), inputs=[result])
