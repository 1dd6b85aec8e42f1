"""The page's own CSS and script: what Gradio's defaults get wrong for this page's tables, labels, plots and words.

Each rule is measured by the browser test (tests/e2e/test_browser_first.py) at 1366 and 1920 px wide,
in English and in Chinese: no word broken mid-word, tables inside their column, labels clear of
their inputs, the timeline's legend inside its box.
"""

import json

from playground.core.i18n import t

CSS = """
/* Gradio's Markdown tables break anywhere (overflow-wrap: anywhere), so a narrow column splits a word
   ("phas/e", "estimat/e"). Break at spaces and punctuation only: keep-all keeps a Chinese word whole too
   ("状态", not "状/态"); the words between the spaces are short enough for every column. */
.prose table :is(th, td) { overflow-wrap: normal !important; word-break: keep-all !important; }
.prose table { max-width: 100%; }
/* the devices table lives in the narrow left column: smaller type, every column visible */
#devices table { font-size: 0.85em; width: 100%; table-layout: auto; }
#devices :is(th, td) { padding: 4px 6px; overflow-wrap: normal; word-break: normal; }
/* a slider's label and its number box share one line; a long label (Chinese is longer) wraps above the
   box instead of running into it */
#gen-settings .head, #cmp-tokens .head { flex-wrap: wrap; row-gap: 4px; }
#gen-settings .head label, #cmp-tokens .head label { flex: 1 1 auto; min-width: 0; }
/* The timeline is a Vega-Lite chart as wide as its box ("width": "container"): Gradio's plot holds it in a
   flex row, where the chart's own box would otherwise be 0 px wide */
#timeline .altair > .vega-embed { flex: 1 1 auto; width: 100%; }
/* the Playground's results once another model is loaded: greyed under the line that says what they belonged to */
#results.stale :is(#lab, #output, #stats, #snippet) { opacity: .45; filter: grayscale(1); }
/* A library's message in the lab, the diagnoser and the fact-check is one long line: Gradio's <pre> keeps it
   on one line and scrolls, which hides its end, where the hint usually is ("...use torch.load with
   map_location=torch.device('cpu')..."). Wrap it, at spaces first. */
:is(#lab, #diagnose, #fact-out) pre { white-space: pre-wrap !important; overflow-wrap: anywhere; }
/* Gradio's theme serves Source Sans Pro's weight 600 from a file that holds 55 glyphs (A and B among them, no
   other letter), so bold text would mix two fonts: "RAM" would take its A from that file, in another shape and
   size, and R and M from a fallback. Bold and semi-bold come from Gradio's own complete Bold file. */
@font-face { font-family: 'Source Sans Pro'; font-weight: 600; font-style: normal;
             src: url('static/fonts/SourceSansPro/SourceSansPro-Bold.woff2') format('woff2'); }
@font-face { font-family: 'Source Sans Pro'; font-weight: 700; font-style: normal;
             src: url('static/fonts/SourceSansPro/SourceSansPro-Bold.woff2') format('woff2'); }
"""


# Gradio writes a few words of its own in English, in its own markup, whatever the page's language: its progress
# overlay's "queue: 2/3 |" and "processing |", and the heading of an error toast ("Error": Gradio 6.31 takes it from
# the level and ignores the title it is sent). On the Chinese page (<html lang>, set by the language switch) each
# text node holding one is said again in Chinese as it is drawn; Svelte writes the node again on its next update,
# and the observer with it. Nothing else on the page is touched, and an English page is not watched at all.
SCRIPT = """() => {
  const words = [['[data-testid=status-tracker]', /\\bqueue:\\s*/g, %s],
                 ['[data-testid=status-tracker]', /\\bprocessing\\b/g, %s],
                 ['.toast-title.error', /^Error\\b/, %s]];
  const say = () => {
    for (const [where, re, zh] of words) {
      for (const el of document.querySelectorAll(where)) {
        const walk = document.createTreeWalker(el, NodeFilter.SHOW_TEXT);
        while (walk.nextNode()) {
          const n = walk.currentNode, s = n.data.replace(re, zh);
          if (s !== n.data) n.data = s;
        }
      }
    }
  };
  // the page is watched only while it is Chinese: an English page pays nothing, not even the mutation records
  const watch = new MutationObserver(say);
  const follow = () => {
    if (document.documentElement.lang.startsWith('zh')) {
      watch.observe(document.body, {subtree: true, childList: true, characterData: true});
      say();
    } else {
      watch.disconnect();
    }
  };
  new MutationObserver(follow).observe(document.documentElement, {attributes: true, attributeFilter: ['lang']});
  follow();
}""" % tuple(json.dumps(t(k, "zh")) for k in ("page.gradio.queue", "page.gradio.processing", "ui.error"))
