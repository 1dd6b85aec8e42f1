"""Under the break-it controls: the chosen mistake's two complete scripts, each with a copy button.

The scripts depend on the mistake only, so they follow the mistake dropdown; the lab's run (in the
Playground tab) executes the fix script's own text.
"""

from __future__ import annotations

import gradio as gr

from playground.core.i18n import t
from playground.web import handlers as h
from playground.web.page import PRIVATE, Page


def build(page: Page, mistake: gr.Dropdown) -> None:
    en, w = "en", page.words
    broken0, fix0 = h.ui_scripts(mistake.value)
    with w(gr.Accordion(t("ui.scripts", en), open=False, elem_id="scripts"), "label", "ui.scripts"):
        w(gr.Markdown(t("ui.scripts.note", en)), "value", "ui.scripts.note")
        with gr.Row():
            broken = w(gr.Code(broken0, language="python", label=t("ui.broken_script", en), interactive=False,
                               buttons=["copy"], elem_id="broken-code"), "label", "ui.broken_script")
            fixed = w(gr.Code(fix0, language="python", label=t("ui.fix_script", en), interactive=False,
                              buttons=["copy"], elem_id="fix-code"), "label", "ui.fix_script")
    mistake.change(h.ui_scripts, mistake, [broken, fixed], **PRIVATE)
