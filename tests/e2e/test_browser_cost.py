"""What the page costs its own measurement, in a real browser: during a Generate, no progress overlay on a
component that is not working (none at all: the streaming text and the stats' "generating…" say it works),
and updates no more often than a reader can follow.

Gradio draws its progress overlay (a `div.wrap` with `full` or `minimal`, `hide` when not shown) over each
component an event names as a progress target; by default, over every output.
"""

from __future__ import annotations

import time

import pytest

pytestmark = [pytest.mark.slow, pytest.mark.browser]

# The elem_id of every component with a progress overlay on show, each named once.
OVERLAYS = """() => [...new Set([...document.querySelectorAll('div.wrap.full, div.wrap.minimal')]
  .filter(el => !el.classList.contains('hide'))
  .map(el => { const host = el.closest('[id]'); return host ? host.id : '?'; }))]"""

# Counts the stats' distinct texts as the page draws them (one per update the page renders): the markdown's own
# text, not the element's, which also holds Gradio's hidden tracker ("processing | 0.2s", ticking every 0.1 s
# until the first update, which now comes a quarter second after the click).
WATCH = """() => { window.__texts = []; const el = document.querySelector('#stats');
  new MutationObserver(() => { const s = (el.querySelector('[data-testid=markdown]') || el).innerText;
    if (window.__texts[window.__texts.length - 1] !== s) window.__texts.push(s); })
  .observe(el, {subtree: true, childList: true, characterData: true}); }"""


def test_generate_draws_no_overlay_and_paces_its_updates(page):
    page.locator("#load").click()
    page.wait_for_function("() => ((document.querySelector('#report') || {}).innerText || '').includes('no-op')",
                           timeout=60_000)
    page.locator("#decoding label", has_text="greedy").click()
    page.locator("#prompt textarea").fill("ROMEO:")
    box = page.locator("#max-new input[type=number]")
    box.fill("200")
    box.press("Enter")
    time.sleep(1.0)
    page.evaluate(WATCH)
    page.locator("#generate").click()
    seen: set[str] = set()
    start, deadline = time.monotonic(), time.monotonic() + 120
    while time.monotonic() < deadline:
        seen.update(page.evaluate(OVERLAYS))
        if "done" in page.locator("#stats").inner_text():
            break
        time.sleep(0.05)
    elapsed = time.monotonic() - start
    assert "done" in page.locator("#stats").inner_text()
    assert not seen, f"progress overlays during a Generate, on: {sorted(seen)}"
    texts = page.evaluate("() => window.__texts")
    assert any("generating" in s for s in texts), "the stats never said the run was going"
    # 200 tokens at some hundreds of tokens/s: one update per token would be ~200 texts; paced at four a second
    # (and the final one), a few per second of the run, with room for the clock's slack
    assert len(texts) <= 6 * elapsed + 5, f"{len(texts)} updates drawn in {elapsed:.1f} s"
    assert "done" in texts[-1]
