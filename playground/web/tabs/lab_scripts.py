"""Under the break-it controls: the chosen mistake's two complete scripts, each with a copy button.

The scripts depend on the mistake only, so they follow the mistake dropdown; the lab's run (in the
Playground tab) executes the fix script's own text.
"""

from __future__ import annotations

import gradio as gr

from playground.core.i18n import t
from playground.web import handlers as h
from playground.web.page import PRIVATE, Page


def build(page: Page, mistake: gr.Dropdown) -> gr.Accordion:
    """The accordion (hidden: the Playground shows it while Break it is ticked) with the mistake's two scripts."""
    en, w = "en", page.words
    broken0, fix0 = h.ui_scripts(mistake.value)
    with w(gr.Accordion(t("ui.scripts", en), open=False, elem_id="scripts", visible=False), "label",
           "ui.scripts") as scripts:
        w(gr.Markdown(t("ui.scripts.note", en)), "value", "ui.scripts.note")
        with gr.Row():
            # their labels follow the language and the mistake (a harmless order is not called a mistake)
            broken = gr.Code(broken0, language="python", label=t("ui.broken_script", en), interactive=False,
                             buttons=["copy"], elem_id="broken-code")
            fixed = gr.Code(fix0, language="python", label=t("ui.fix_script", en), interactive=False,
                            buttons=["copy"], elem_id="fix-code")
    mistake.change(h.ui_scripts, mistake, [broken, fixed], **PRIVATE)
    mistake.change(h.ui_script_labels, [mistake, page.lang], [broken, fixed], **PRIVATE)
    page.on_language(lambda lang, m: list(h.ui_script_labels(m, lang)), [broken, fixed], [mistake])
    return scripts
