"""The page's model lists (Playground, Compare, Placement): the catalog's models, labelled in the page's language,
a model that no dtype can ever load on this machine marked with why (`load.estimate.out_of_reach`)."""

from __future__ import annotations

import functools

import gradio as gr

from playground.core.i18n import Said, t
from playground.load import catalog, estimate as sizing
from playground.run.pool import POOL
from playground.web.results import page_lang


@functools.lru_cache(maxsize=1)
def out_of_reach() -> tuple[tuple[str, Said], ...]:
    """The listed models no dtype can ever load on this machine, each with why (`estimate.out_of_reach`), worked
    out once per process, on the first page opened (building on meta switches process-wide state: in the lane)."""
    with POOL.exclusive():
        found = ((e.id, sizing.out_of_reach(catalog.read_config(catalog.resolve(e.id)))) for e in catalog.catalog()
                 if e.kind == "synthetic")
        return tuple((name, why) for name, why in found if why is not None)


def model_choices(lang: str) -> list[tuple[str, str]]:
    """The model lists' (label, id) pairs in `lang`, a model that can never load here marked with why."""
    never = dict(out_of_reach())
    return [(t("catalog.never", lang, label=label, why=never[name].text(lang)) if name in never else label, name)
            for label, name in catalog.choices(lang)]


def ui_model_choices(lang: str) -> tuple:
    """The page's three model lists (Playground, Compare, Placement), marked once the page is open (ui.py)."""
    choices = model_choices(page_lang(lang))
    return tuple(gr.update(choices=choices) for _ in range(3))
