"""Results that say when they go stale, refusals that stay in their panel, and a timeline of the current load,
in a real browser, in English and Chinese (issue 23).

One visit: load the bundled model in float32 and generate; load it in bfloat16: the output and its stats stay,
greyed under a line saying they are from float32, before the load of bfloat16 (both languages). A load the
server refuses (a Hub id that is not cached: no network here) says why in its toast and in the Load panel
only: no other panel is marked failed or blanked, the results on show stay. The timeline after the second load
draws the second load's phases: its legend is the phases of the peaks table under it, and each short phase is
marked with its name and its duration, as the table says it. Break it: the scripts show only while it is
ticked, and no empty output box sits under a lab result.

Screenshots: artifacts/stale-en.png, artifacts/stale-zh.png, artifacts/refused-en.png, artifacts/timeline-zh.png.
"""

from __future__ import annotations

import re
import time

import pytest

from tests.e2e.conftest import ARTIFACTS
from tests.e2e.test_browser_first import _generate_done, _lang

pytestmark = [pytest.mark.slow, pytest.mark.browser]

# The timeline as drawn: the legend's entries, and the short phases' labels (text marks outside the legend).
DRAWN = """() => {
  const svg = document.querySelector('#timeline svg.marks');
  if (!svg) return null;
  const legend = [...svg.querySelectorAll('.role-legend-label text')].map(t => t.textContent);
  const labels = [...svg.querySelectorAll('g.mark-text.role-mark text')].map(t => t.textContent);
  return {legend, labels};
}"""

# Every output Gradio marked as failed: its status tracker shows an error
FAILED = """() => [...document.querySelectorAll('[data-testid=status-tracker]')]
  .filter(s => s.classList.contains('error') || s.querySelector('.error'))
  .filter(s => s.getClientRects().length).length"""


def _text(page, selector: str) -> str:
    return page.locator(selector).inner_text()


def _load(page, dtype: str, expect_dtype: str) -> None:
    """Load with `dtype`; wait for the whole chain (the stale check is its last step) and the report."""
    before = _text(page, "#report")
    page.locator("#dtype label", has_text=dtype).click()
    page.locator("#load").click()
    page.wait_for_function(
        "([before, d]) => { const r = (document.querySelector('#report [data-testid=markdown]') || {}).innerText || '';"
        " return r !== before && r.includes(d) && r.includes('no-op'); }",
        arg=[before, expect_dtype], timeout=90_000)
    page.wait_for_function("() => !document.querySelector('#load').disabled", timeout=30_000)
    time.sleep(1.5)  # the chained events (the slider, the ledger's plots, the stale check) follow the load


def _peaks(page) -> list[tuple[str, str]]:
    """The peaks table's (phase, time) per row, the time without its sample count."""
    rows = page.evaluate("() => [...document.querySelectorAll('#peaks table tbody tr')]"
                         ".map(tr => [...tr.querySelectorAll('td')].map(td => td.innerText))")
    return [(r[0].strip(), re.split(r"\s*[（(]", r[1])[0].strip()) for r in rows]


def _check_timeline(page, lang: str) -> dict:
    """The drawn legend is the peaks table's phases, in order; each drawn label is a phase with its duration as
    the table gives it."""
    page.wait_for_function("() => document.querySelector('#timeline svg.marks .role-legend-label text')", timeout=20_000)
    drawn, peaks = page.evaluate(DRAWN), _peaks(page)
    assert drawn["legend"] == [p for p, _ in peaks], (lang, drawn, peaks)
    assert drawn["labels"], (lang, drawn)
    table = dict(peaks)
    # the grey rule where the idle time between a load and its generation is cut: its own label, not a phase's
    cut = re.compile(r"^[\d.]+ (ms|s) idle, drawn as 0\.5 s$|^空闲 [\d.]+ (ms|s)，这里画成 0\.5 秒$")
    cuts = [label for label in drawn["labels"] if cut.match(label)]
    assert len(cuts) <= 1, (lang, cuts)
    for label in drawn["labels"]:
        if label in cuts:
            continue
        phase, _, took = label.partition(" · ")
        assert table.get(phase) == took, (lang, label, peaks)
    return dict(drawn, cuts=cuts)


def test_stale_results_refusals_and_the_timeline(page):
    ARTIFACTS.mkdir(exist_ok=True)
    try:
        _walk(page)
    except Exception:
        page.screenshot(path=str(ARTIFACTS / "stale-failed.png"), full_page=True)
        raise


def _walk(page):
    # -- float32, then a short greedy generation
    _load(page, "float32", "float32")
    page.locator("#decoding label", has_text="greedy").click()
    page.locator("#max-new input[type=number]").fill("16")
    page.locator("#max-new input[type=number]").press("Enter")
    stats = _generate_done(page)
    output = page.locator("#output textarea").input_value()
    assert output.strip() and "float32" in stats
    drawn = _check_timeline(page, "en")
    assert "decode" in drawn["legend"] and len(drawn["cuts"]) == 1, drawn  # the idle time between them, said
    assert _text(page, "#stale").strip() == ""

    # -- bfloat16: the results stay, greyed, saying what they belonged to
    _load(page, "bfloat16", "bfloat16")
    page.wait_for_function("() => (document.querySelector('#stale') || {}).innerText.includes('Out of date')",
                           timeout=20_000)
    line = _text(page, "#stale")
    assert "float32" in line and "before your load of" in line and "bfloat16" in line, line
    assert page.locator("#output textarea").input_value() == output
    assert _text(page, "#stats") == stats
    assert "stale" in (page.locator("#results").get_attribute("class") or "")
    opacity = page.evaluate("() => +getComputedStyle(document.querySelector('#output')).opacity")
    assert opacity < 0.8, opacity
    # the timeline is the second load's: its phases (an unload of the float32 model among them), no generation
    drawn = _check_timeline(page, "en")
    assert "unload" in drawn["legend"] and "decode" not in drawn["legend"] and not drawn["cuts"], drawn
    page.screenshot(path=str(ARTIFACTS / "stale-en.png"), full_page=True)

    _lang(page, "中文", "你的模型")
    page.wait_for_function("() => (document.querySelector('#stale') || {}).innerText.includes('已过时')", timeout=20_000)
    line = _text(page, "#stale")
    assert "float32" in line and "bfloat16" in line and "之前" in line, line
    drawn = _check_timeline(page, "zh")
    assert "卸载" in drawn["legend"], drawn
    page.screenshot(path=str(ARTIFACTS / "stale-zh.png"), full_page=True)
    page.locator("#timeline").screenshot(path=str(ARTIFACTS / "timeline-zh.png"))
    _lang(page, "English", "Your model")

    # -- a refused load: its toast and the Load panel say why; nothing else is marked failed or blanked
    report, peaks = _text(page, "#report"), _peaks(page)
    page.locator("#model input").fill("playground-test/never-cached")
    page.locator("#model input").press("Enter")
    page.locator("#load").click()
    page.wait_for_function("() => (document.querySelector('#load-note') || {}).innerText.includes('Refused')",
                           timeout=30_000)
    time.sleep(1.0)
    assert page.locator(".toast-wrap").inner_text().strip(), "no toast"
    assert page.evaluate(FAILED) == 0, "outputs marked as failed"
    assert _text(page, "#report") == report and _peaks(page) == peaks
    assert page.locator("#output textarea").input_value() == output
    assert page.locator("#timeline svg.marks").count() == 1
    assert "bfloat16" in _text(page, "#status")
    page.screenshot(path=str(ARTIFACTS / "refused-en.png"), full_page=True)
    page.locator("#model input").fill("shakespeare-gpt2")
    page.locator("#model input").press("Enter")

    # -- a generation on the model loaded now: the line goes, the results are current again
    _generate_done(page)
    assert _text(page, "#stale").strip() == ""
    assert "stale" not in (page.locator("#results").get_attribute("class") or "")

    # -- Break it: its scripts only while ticked; a lab result without an empty output box under it
    assert not page.locator("#scripts").is_visible()
    page.locator("#breakit input[type=checkbox]").check()
    page.wait_for_selector("#scripts", state="visible", timeout=10_000)
    page.locator("#generate").click()
    page.wait_for_function("() => /The fix works|The fix did not work/.test("
                           "(document.querySelector('#lab [data-testid=markdown]') || {}).innerText || '')", timeout=90_000)
    assert not page.locator("#output").is_visible() and not page.locator("#snippet").is_visible()
    page.locator("#breakit input[type=checkbox]").uncheck()
    page.wait_for_selector("#scripts", state="hidden", timeout=10_000)
    _generate_done(page)
    assert page.locator("#output").is_visible() and _text(page, "#lab").strip() == ""
