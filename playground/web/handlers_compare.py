"""Compare's page event and API endpoint: check the request once, run the matrix beside the pool's models.

The same contract as `playground.web.handlers`: what a visitor sent becomes typed values here, the
matrix runs in the pool's lane (`playground.run.compare.run(..., pool=POOL)`), borrowing none of the
models loaded for visitors, and the result says how many other visitors were waiting when it ended.
"""

from __future__ import annotations

from playground.web import exports  # first: it points Gradio's temporary folder inside its own

import json

import gradio as gr
from gradio.components.plot import PlotData

from playground.core import inputs
from playground.core.i18n import in_lang
from playground.load import catalog
from playground.run import compare as matrix
from playground.run.pool import POOL
from playground.web import compare_views as cmp_views
from playground.web.handlers import gr_errors, ui_status
from playground.web.model_lists import model_choices
from playground.web.pace import paced
from playground.web.page import answers, waiting
from playground.web.results import page_lang, session_of

CHARTS = tuple(f"chart_{col}" for col, _ in cmp_views.CHARTS)  # the five charts' names, in the page's order


def _compare_request(model: object, pairs: object, max_new_tokens: object):
    return catalog.resolve(model), matrix.parse_pairs(pairs), inputs.check_max_new_tokens(max_new_tokens)


def compare(model: str, pairs: list[str], max_new_tokens: int, request: gr.Request = None) -> list[dict]:
    """Run each 'device/dtype' pair through load, migrate, one prompt and greedy tokens; one row per pair,
    loaded beside the models the server holds for visitors (none of them is unloaded)."""
    session = session_of(request)
    with gr_errors():
        src, todo, n = _compare_request(model, pairs, max_new_tokens)
        rows = matrix.run(src, todo, n, pool=POOL)
    n_waiting = waiting(session)
    return [dict(r.to_dict(), waiting=n_waiting) for r in rows]


# ---------------------------------------------------------------- page events

@answers(*CHARTS, "table", "beside", "files", "status", "result")
def ui_compare(model: str, pairs: list[str], max_new_tokens, lang: str, request: gr.Request, progress=gr.Progress()):
    lang, session = page_lang(lang), session_of(request)
    with gr_errors(lang):
        src, todo, n = _compare_request(model, pairs, max_new_tokens)
        with POOL.session("compare:" + session) as stop:
            # the matrix reports every token; the page is told four times a second (playground.web.pace)
            rows = matrix.run(src, todo, n, pool=POOL, stop=stop,
                              progress=paced(lambda f, d: progress(f, desc=in_lang(d, lang))))
    paths = matrix.export(rows, exports.new_folder())
    result = (list(rows), rows.beside, waiting(session))
    return dict(charts(rows, lang), table=cmp_views.table(rows, lang),
                beside=cmp_views.beside_markdown(rows.beside, result[2], lang),
                files=[str(paths["csv"]), str(paths["json"])], status=ui_status(lang, request), result=result)


def charts(rows, lang: str) -> dict:
    """The Compare tab's five charts of `rows` in `lang`, by name, each drawn whole (a Vega-Lite spec: words and
    data together, so a new run or a new language never shows the old under the new)."""
    out = {}
    for name, (col, key) in zip(CHARTS, cmp_views.CHARTS):
        spec = cmp_views.chart_spec(rows, col, key, lang)
        out[name] = gr.Plot(value=PlotData(type="altair", plot=json.dumps(spec, default=float)) if spec else None)
    return out


@answers(*CHARTS, "table", "beside", "model")
def retranslate_compare(lang: str, result: tuple | None) -> dict:
    """The Compare tab in `lang`: its charts, the table, the note on the models it ran beside, the model list."""
    rows, beside, n_waiting = result or ([], None, None)
    return dict(charts(rows, lang), table=cmp_views.table(rows, lang) if rows else "",
                beside=cmp_views.beside_markdown(beside, n_waiting, lang),
                model=gr.update(choices=model_choices(lang)))


def ui_compare_stop(request: gr.Request):
    POOL.stop("compare:" + session_of(request))
