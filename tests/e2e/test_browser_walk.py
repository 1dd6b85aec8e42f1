"""Issue 27's walk, the findings only a browser sees: the language kept across a reload, the Playground following
a load made on the Placement tab, and the "Will it fit?" boxes under a heading, in English and in Chinese."""

from __future__ import annotations

import re

import pytest

from tests.e2e.conftest import open_playground
from tests.e2e.test_browser import OWN_TEXT, _pick_lang

pytestmark = [pytest.mark.slow, pytest.mark.browser]


@pytest.fixture(scope="module")
def browser(browser_server, module_log, chromium):
    """The worker's Chromium (tests/e2e/conftest.py); each test opens and closes a page of its own."""
    return chromium


def _checked(page, box: str) -> str:
    return page.locator(f"#{box} input:checked").get_attribute("value")


KEPT = "playground-lang"  # the page's gr.BrowserState storage key (its value is encrypted there)


def _stored(page) -> str | None:
    return page.evaluate("(key) => localStorage.getItem(key)", KEPT)


def _wait_stored(page, before: str | None) -> None:
    """Until the kept language's stored value changes: a fixed half second was not always enough on a busy machine."""
    page.wait_for_function("([key, before]) => { const v = localStorage.getItem(key); return v && v !== before; }",
                           arg=[KEPT, before], timeout=30_000)


def test_the_chosen_language_survives_a_reload(browser, browser_server):
    """The walk lost the chosen language on reload (the step was kept): it is kept in the browser too."""
    page = browser.new_page(locale="en-US")  # the browser asks for English: a reload that forgets says English
    try:
        open_playground(page, browser_server.url)
        stored = _stored(page)
        _pick_lang(page, "中文")
        # generous waits: the switch re-renders the whole page in the browser, ~1.5 s idle and over 10 s once in CI
        page.wait_for_function("() => document.documentElement.lang === 'zh-CN'", timeout=30_000)
        _wait_stored(page, stored)  # the choice reaches the browser's storage after the switch, not with it
        page.reload()
        page.wait_for_selector("button[role=tab]", timeout=60_000)
        page.wait_for_function("() => (document.querySelector('#lang input:checked') || {}).value === 'zh'",
                               timeout=15_000)
        page.locator("button[role=tab]", has_text="游乐场").wait_for(timeout=15_000)
        stored = _stored(page)
        _pick_lang(page, "English")  # and back: English is kept the same way
        page.wait_for_function("() => document.documentElement.lang === 'en'", timeout=30_000)
        _wait_stored(page, stored)
        page.reload()
        page.wait_for_selector("button[role=tab]", timeout=60_000)
        page.wait_for_timeout(2000)
        assert _checked(page, "lang") == "en"
    finally:
        page.close()


def test_the_will_it_fit_boxes_have_a_heading_in_both_languages(browser, browser_server):
    """The context and batch boxes stood under Load with no heading saying what they are for."""
    page = browser.new_page(locale="en-US")
    try:
        open_playground(page, browser_server.url)
        heading = page.locator("#fit-heading")
        assert "Will it fit?" in heading.inner_text() and "Estimate before loading" in heading.inner_text()
        box, boxes = heading.bounding_box(), page.locator("#fit-context").bounding_box()
        assert box["y"] + box["height"] <= boxes["y"] + 1  # above the boxes
        _pick_lang(page, "中文")
        page.wait_for_function("() => document.querySelector('#fit-heading').innerText.includes('放得下吗')",
                               timeout=10_000)
    finally:
        page.close()


def test_a_load_with_limits_on_the_placement_tab_is_what_the_playground_then_describes(browser, browser_server):
    """Placement's "Load with these limits" replaced the visitor's model while the Playground still showed the old
    selection (cpu) and the old load report: both follow the load (device `auto`, the placed model's report)."""
    page = browser.new_page(viewport={"width": 1366, "height": 1400}, locale="en-US")
    try:
        open_playground(page, browser_server.url)
        page.locator("#load").click()
        page.wait_for_function("() => /→\\s*cpu/.test(" + OWN_TEXT.format("#report") + ")", timeout=120_000)
        assert _checked(page, "device") == "cpu"
        page.locator("button[role=tab]", has_text="Placement").click()
        page.locator("#place-model input").fill("shakespeare-gpt2")
        page.locator("#place-model input").press("Enter")
        page.locator("#place-limit-cpu textarea, #place-limit-cpu input").first.fill("16MB")
        page.wait_for_function("() => document.querySelector('#place-limits textarea, #place-limits input').value "
                               "=== 'cpu=16MB,disk'", timeout=10_000)
        page.locator("#place-load").click()
        page.wait_for_function("() => " + OWN_TEXT.format("#place-out") + ".includes('AlignDevicesHook')",
                               timeout=120_000)
        page.locator("button[role=tab]", has_text=re.compile("^Playground$")).click()
        page.wait_for_function("() => /→\\s*auto/.test(" + OWN_TEXT.format("#report") + ")", timeout=20_000)
        assert _checked(page, "device") == "auto" and _checked(page, "dtype") == "float32"
        assert "shakespeare-gpt2" in page.locator("#model input").input_value()
        assert "cpu=16MB,disk" in page.evaluate("() => " + OWN_TEXT.format("#report"))  # the placed load's own report
    finally:
        page.close()
