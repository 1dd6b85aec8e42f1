"""The Speed tab: copy bandwidth, the KV cache growing, and decode engines against the bandwidth bound."""

from __future__ import annotations

import gradio as gr

from playground.core.i18n import t
from playground.web import handlers_speed as hs, views_speed as views
from playground.web.page import Page, working


def build(page: Page) -> None:
    en, w = "en", page.words
    with w(gr.Tab(t("speed.tab", en), id="speed", elem_id="tab-speed"), "label", "speed.tab"):
        w(gr.Markdown(t("speed.intro", en)), "value", "speed.intro")

        w(gr.Markdown(t("speed.bw.title", en)), "value", "speed.bw.title")
        w(gr.Markdown(t("speed.bw.intro", en)), "value", "speed.bw.intro")
        bw_btn = w(gr.Button(t("speed.bw.run", en), elem_id="bw-run"), "value", "speed.bw.run")
        bw_md = gr.Markdown(elem_id="bw-out")
        bw_data = gr.State(None)

        w(gr.Markdown(t("speed.kv.title", en)), "value", "speed.kv.title")
        w(gr.Markdown(t("speed.kv.intro", en)), "value", "speed.kv.intro")
        kv_btn = w(gr.Button(t("speed.kv.run", en), elem_id="kv-run"), "value", "speed.kv.run")
        with gr.Row():
            # Titles above the plots, not as their labels: a label pushes the legend out of the frame.
            with gr.Column():
                w(gr.Markdown(t("speed.kv.bytes_plot", en)), "value", "speed.kv.bytes_plot", "**{}**")
                kv_bytes = gr.LinePlot(x="tokens", y="bytes", color="series", height=300, elem_id="kv-bytes",
                                       show_label=False, **views.kv_plot_words(en, "kv.axis.bytes"))
            with gr.Column():
                w(gr.Markdown(t("speed.kv.time_plot", en)), "value", "speed.kv.time_plot", "**{}**")
                kv_time = gr.LinePlot(x="tokens", y="ms", color="series", height=300, elem_id="kv-time",
                                      show_label=False, **views.kv_plot_words(en, "kv.axis.ms"))
        kv_md = gr.Markdown(elem_id="kv-out")
        kv_data = gr.State(None)

        w(gr.Markdown(t("speed.eng.title", en)), "value", "speed.eng.title")
        w(gr.Markdown(t("speed.eng.intro", en)), "value", "speed.eng.intro")
        with gr.Row():
            tokens = w(gr.Slider(2, hs.ENGINE_MAX_TOKENS, value=64, step=1, label=t("speed.eng.tokens", en),
                                 elem_id="eng-tokens"), "label", "speed.eng.tokens")
            with_compiled = w(gr.Checkbox(False, label=t("speed.eng.compile", en), info=t("speed.eng.compile.info", en),
                                          elem_id="eng-compile"), "label", "speed.eng.compile",
                              info="speed.eng.compile.info")
        eng_btn = w(gr.Button(t("speed.eng.run", en), variant="primary", elem_id="eng-run"), "value", "speed.eng.run")
        eng_md = gr.Markdown(elem_id="eng-out")
        eng_data = gr.State(None)

    # Each measurement takes the model lane: it holds the shared model, and timings taken while a
    # generation runs beside them would measure both.
    bw_btn.click(hs.ui_bandwidth, page.lang, [bw_md, bw_data], api_visibility="private", **working(bw_md))
    kv_btn.click(hs.ui_kv, page.lang, [kv_md, kv_bytes, kv_time, kv_data], api_visibility="private", **working(kv_md))
    eng_btn.click(hs.ui_engines, [tokens, with_compiled, page.lang], [eng_md, eng_data], api_visibility="private",
                  **working(eng_md))
    page.on_language(hs.rerender, [bw_md, kv_md, kv_bytes, kv_time, eng_md], [bw_data, kv_data, eng_data])
