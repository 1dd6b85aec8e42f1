"""The Placement tab: memory limits per device, the plan, the placement map, the cost of offloading, the cliff,
and loading straight onto the target against loading then moving."""

from __future__ import annotations

import gradio as gr

from playground.core.i18n import t
from playground.hw import devices
from playground.load import catalog, synthetic
from playground.web import handlers_placement as hp, model_lists, views_placement as pv
from playground.web.page import PRIVATE, Page, answering, working

DEFAULT_MODEL = "synthetic/gpt2-small"


def _default_model() -> str:
    """GPT-2 small's shape when this server offers it (12 blocks, 350 MB: offloading shows), else the bundled model."""
    _top, names, _why = synthetic.allowed()
    return DEFAULT_MODEL if DEFAULT_MODEL in names else catalog.catalog()[0].id


def build(page: Page) -> None:
    en, w = "en", page.words
    here = [d for d in devices.discover() if d.available and d.kind in ("cuda", "mps", "cpu")]
    names = [d.id for d in here]
    with w(gr.Tab(t("place.tab", en), id="placement", elem_id="tab-placement"), "label", "place.tab"):
        w(gr.Markdown(t("place.intro", en)), "value", "place.intro")
        with gr.Row():
            model = w(gr.Dropdown(choices=catalog.choices(en), value=_default_model(), allow_custom_value=True,
                                  label=t("page.model", en), elem_id="place-model"), "label", "page.model")
            dtype = w(gr.Radio(list(devices.DTYPES), value="float32", label=t("page.dtype", en), elem_id="place-dtype"),
                      "label", "page.dtype")
        with gr.Row():
            fields = [w(gr.Textbox("", label=f"{d} · {t('place.ui.limit', en)}", placeholder=t("place.ui.no_limit", en),
                                   elem_id=f"place-limit-{d.replace(':', '-')}", min_width=160),
                        "label", "place.ui.limit", f"{d} · {{}}", placeholder="place.ui.no_limit")
                      for d in names]
            disk = w(gr.Checkbox(True, label=t("place.ui.disk", en), info=t("place.ui.disk.info", en),
                                 elem_id="place-disk"), "label", "place.ui.disk", info="place.ui.disk.info")
        limits = w(gr.Textbox("disk", label=t("place.ui.limits", en), info=t("place.ui.limits.info", en),
                              elem_id="place-limits"), "label", "place.ui.limits", info="place.ui.limits.info")
        with gr.Row():
            plan_btn = w(gr.Button(t("place.ui.plan", en), elem_id="place-plan"), "value", "place.ui.plan")
            load_btn = w(gr.Button(t("place.ui.load", en), variant="primary", elem_id="place-load"),
                         "value", "place.ui.load")
            show_btn = w(gr.Button(t("place.ui.show", en), elem_id="place-show"), "value", "place.ui.show")
        picture = gr.HTML(elem_id="place-map")
        out = gr.Markdown(elem_id="place-out")

        w(gr.Markdown(t("place.cost.title", en)), "value", "place.cost.title")
        w(gr.Markdown(t("place.cost.intro", en)), "value", "place.cost.intro")
        cost_btn = w(gr.Button(t("place.ui.cost", en), elem_id="cost-run"), "value", "place.ui.cost")
        cost_md = gr.Markdown(elem_id="cost-out")

        w(gr.Markdown(t("place.cliff.title", en)), "value", "place.cliff.title")
        w(gr.Markdown(t("place.cliff.intro", en)), "value", "place.cliff.intro")
        with gr.Row():
            blocks = w(gr.Slider(1, 12, value=4, step=1, label=t("place.ui.blocks", en), elem_id="cliff-blocks"),
                       "label", "place.ui.blocks")
            cliff_btn = w(gr.Button(t("place.ui.cliff", en), variant="primary", elem_id="cliff-run"),
                          "value", "place.ui.cliff")
        w(gr.Markdown(t("place.cliff.plot", en)), "value", "place.cliff.plot", "**{}**")
        plot = gr.LinePlot(x="blocks", y="rate", color="series", height=320, elem_id="cliff-plot", show_label=False,
                           **pv.cliff_plot_words(en))
        cliff_md = gr.Markdown(elem_id="cliff-out")

        w(gr.Markdown(t("place.straight.title", en)), "value", "place.straight.title")
        w(gr.Markdown(t("place.straight.intro", en)), "value", "place.straight.intro")
        with gr.Row():
            s_device = w(gr.Radio(names, value="cpu", label=t("page.device", en), elem_id="straight-device"),
                         "label", "page.device")
            s_dtype = w(gr.Radio(["bfloat16", "float16", "float32"], value="bfloat16", label=t("page.dtype", en),
                                 elem_id="straight-dtype"), "label", "page.dtype")
        s_btn = w(gr.Button(t("place.ui.straight", en), elem_id="straight-run"), "value", "place.ui.straight")
        s_md = gr.Markdown(elem_id="straight-out")
        shown, cost_s, cliff_s, straight_s = (gr.State(None) for _ in range(4))

    page.shared.update(place_model=model)  # its list marked once the page is open (ui.py)

    def joined(disk_on, *values):
        return hp.limits_from(names, list(values), disk_on)

    for comp in (disk, *fields):
        comp.change(joined, [disk, *fields], limits, **PRIVATE)
    plan_btn.click(hp.ui_plan, [model, dtype, limits, page.lang], [picture, out, shown], api_visibility="private",
                   **working(out))
    load_btn.click(hp.ui_load_placed, [model, dtype, limits, page.lang],
                   [picture, out, page.status, shown, page.shared["loaded_elsewhere"]],
                   api_visibility="private", **working(out))
    show_btn.click(hp.ui_map, page.lang, [picture, out, shown], api_visibility="private", **working(out))
    cost_btn.click(hp.ui_cost, page.lang, [cost_md, cost_s], api_visibility="private", **working(cost_md))
    cliff_btn.click(hp.ui_cliff, [blocks, page.lang], [plot, cliff_md, page.status, cliff_s], api_visibility="private",
                    **working(cliff_md))
    s_btn.click(hp.ui_straight, [s_device, s_dtype, page.lang], [s_md, straight_s], api_visibility="private", **working(s_md))
    page.on_language(lambda lang: [gr.update(choices=model_lists.model_choices(lang))], [model])
    ui = dict(picture=picture, out=out, cost_md=cost_md, plot=plot, cliff_md=cliff_md, s_md=s_md)
    page.on_language(**answering(hp.rerender, ui), inputs=[shown, cost_s, cliff_s, straight_s])
