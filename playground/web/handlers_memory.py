"""The memory panels' events and the `fit` endpoint: will a model fit, at a context and a batch, on each device.

The same contract as `playground.web.handlers`: what a visitor sent becomes typed values here (a model
source, a dtype, a context and a batch, checked once); the sizing runs in the core (`playground.load.fit`),
on the visitor's own model held in use (its activation peak is measured on it; nothing unloads it); a
`UserError` becomes `gr.Error` in English for the API, and on the page a toast and a line in the panel, in the
visitor's language (`results.refused`).
"""

from __future__ import annotations

import gradio as gr

from playground.core import inputs
from playground.hw import devices
from playground.load import catalog, fit as fitting
from playground.run.pool import POOL
from playground.web import views
from playground.core.errors import UserError
from playground.web.handlers import estimate_of, gr_errors
from playground.web.results import page_lang, refused, session_of


def _fit(model: object, dtype: object, context: object, batch: object, session: str) -> fitting.Fit:
    cfg = catalog.read_config(catalog.resolve(model))
    dt, ctx, b = devices.parse_dtype(dtype), inputs.check_context_tokens(context), inputs.check_batch(batch)
    with POOL.held(session) as lm:  # the session's model's activation peak is measured on it, held in use
        return fitting.fit(cfg, dt, ctx, b, loaded=lm)


def fit(model: str, dtype: str, context: int, batch: int, request: gr.Request = None) -> dict:
    """Will it fit at `context` tokens and `batch` sequences? Per device present: weights + KV cache + activation
    peak against free memory (`need_bytes`, `free_bytes`, `fits`) and `largest_context`, the longest that fits."""
    with gr_errors():
        return _fit(model, dtype, context, batch, session_of(request)).to_dict()


def ui_estimate(model: str, device: str, dtype: str, context: object, batch: object, lang: str,
                request: gr.Request = None):
    """The estimate, and whether it fits at the context and batch asked, on each device. Kept as (estimate, fit,
    what was asked, whether the selection has moved on since): `ui_estimate_follows` keeps the last one true."""
    try:
        est = estimate_of(model, dtype, device)
        fitted = _fit(model, dtype, context, batch, session_of(request))
    except UserError as e:  # said in its toast and in this panel; nothing else on the page changes
        return refused(e, lang), None
    kept = (est, fitted, asked(model, device, dtype, context, batch), False)
    return views.estimate_fit_markdown(kept, page_lang(lang)), kept


def asked(model: object, device: object, dtype: object, context: object, batch: object) -> tuple[str, ...]:
    """The selection an estimate answers, as the page's fields hold it."""
    return tuple(str(v) for v in (model, device, dtype, context, batch))


def ui_estimate_follows(kept: tuple | None, model, device, dtype, context, batch, lang: str):
    """The selection changed (a model, a device, a dtype, a context or a batch picked, or another tab's load): an
    estimate made for another selection says so over it, and stops saying so once the selection is back."""
    if not kept or len(kept) < 4:
        return gr.skip(), gr.skip()
    stale = asked(model, device, dtype, context, batch) != kept[2]
    if stale == kept[3]:
        return gr.skip(), gr.skip()
    kept = (*kept[:3], stale)
    return views.estimate_fit_markdown(kept, page_lang(lang)), kept
