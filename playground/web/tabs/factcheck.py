"""The Fact-check tab: the tutorials' claims, each decided by an experiment run when asked."""

from __future__ import annotations

import gradio as gr

from playground.core.i18n import t
from playground.lab import factcheck
from playground.lab.factcheck import render
from playground.web import handlers as h
from playground.web.page import Page, working


def _choices(lang: str) -> list[tuple[str, str]]:
    def short(text: str) -> str:  # a long claim is cut at a word, its id kept whole
        return text if len(text) <= 110 else text[:110].rsplit(" ", 1)[0] + "…"
    return [(t("fact.pick", lang, id=c.id, claim=short(t(c.claim, lang))), c.id) for c in factcheck.CLAIMS.values()]


def build(page: Page) -> None:
    en, w = "en", page.words
    with w(gr.Tab(t("page.tab.factcheck", en), id="factcheck"), "label", "page.tab.factcheck"):
        w(gr.Markdown(t("page.factcheck.intro", en)), "value", "page.factcheck.intro")
        claim = w(gr.Dropdown(_choices(en), value=next(iter(factcheck.CLAIMS)), label=t("page.factcheck.pick", en),
                              elem_id="fact-claim"), "label", "page.factcheck.pick")
        with gr.Row():
            one = w(gr.Button(t("page.factcheck.one", en), variant="primary", elem_id="fact-one"),
                    "value", "page.factcheck.one")
            every = w(gr.Button(t("page.factcheck.all", en), elem_id="fact-all"), "value", "page.factcheck.all")
        out = gr.Markdown(elem_id="fact-out")
        results = gr.State([])  # the results as data: said again in the page's language on a switch
    one.click(h.ui_fact_check, [claim, page.lang], [out, results], api_visibility="private", **working(out))
    every.click(h.ui_fact_checks, [page.lang], [out, results], api_visibility="private", **working(out))
    page.on_language(lambda lang, rs: [gr.update(choices=_choices(lang)), render.many(rs or [], lang)],
                     [claim, out], [results])
