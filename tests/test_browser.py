"""A real browser on the real page: load the bundled model, generate, watch it stream.

Drives Debian's Chromium (/usr/bin/chromium) with Playwright for Python. On a
machine without Chromium the test skips with the reason printed, except when
PLAYGROUND_REQUIRE_BROWSER=1 (set by .ci/run): then a missing browser fails.
Screenshots go to artifacts/ (and, with PLAYGROUND_SCREENSHOT set, to that path).
"""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

import pytest

from tests.conftest import ROOT, start_server, stop_server

pytestmark = [pytest.mark.slow, pytest.mark.browser]

CHROMIUM = os.environ.get("PLAYGROUND_CHROMIUM", "/usr/bin/chromium")
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-quic", "--no-first-run", "--disable-component-update", "--disable-sync"]
ARTIFACTS = ROOT / "artifacts"


def _need_browser():
    missing = []
    if not Path(CHROMIUM).exists():
        missing.append(f"no Chromium at {CHROMIUM} (apt-get install -y chromium)")
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        missing.append("playwright is not installed (pip install -r tests/requirements.txt)")
    if missing:
        reason = "; ".join(missing)
        if os.environ.get("PLAYGROUND_REQUIRE_BROWSER") == "1":
            pytest.fail("browser test required but cannot run: " + reason)
        print("SKIP browser test:", reason)
        pytest.skip(reason)


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    _need_browser()
    s = start_server(tmp_path_factory.mktemp("browser"))
    yield s
    stop_server(s)


@pytest.fixture(scope="module")
def page(server):
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        pg = browser.new_page(viewport={"width": 1280, "height": 1600}, locale="en-US")
        pg.goto(server.url)
        pg.wait_for_selector("#load", timeout=60_000)
        yield pg
        browser.close()


def _text(page, selector: str) -> str:
    return page.locator(selector).inner_text()


def _output(page) -> str:
    return page.locator("#output textarea").input_value()


def test_load_generate_stream_and_screenshot(page):
    ARTIFACTS.mkdir(exist_ok=True)
    page.locator("#dtype label", has_text="bfloat16").click()
    page.locator("#load").click()
    page.wait_for_function(
        "() => document.querySelector('#report') && document.querySelector('#report').innerText.includes('migrate')",
        timeout=60_000,
    )
    report = _text(page, "#report")
    assert "from_pretrained" in report and "model.to('cpu')" in report and "no-op" in report
    assert "bfloat16" in _text(page, "#status")

    page.locator("#prompt textarea").fill("ROMEO:")
    page.locator("#max-new input[type=number]").fill("200")
    page.locator("#max-new input[type=number]").press("Enter")
    page.locator("#generate").click()

    # Watch the output grow: several distinct lengths seen while it streams.
    lengths, deadline = set(), time.monotonic() + 60
    while time.monotonic() < deadline:
        n = len(_output(page))
        if n:
            lengths.add(n)
        if "done" in _text(page, "#stats"):
            break
        time.sleep(0.05)
    stats = _text(page, "#stats")
    assert "done" in stats, stats
    assert len(lengths) >= 3, f"text did not stream in (lengths seen: {sorted(lengths)})"
    assert "tokens/s" in stats and "time to first token" in stats
    assert _output(page).strip()
    shot = ARTIFACTS / "playground.png"
    page.screenshot(path=str(shot), full_page=True)
    if os.environ.get("PLAYGROUND_SCREENSHOT"):
        shutil.copy(shot, os.environ["PLAYGROUND_SCREENSHOT"])
    assert shot.stat().st_size > 10_000


def test_bad_input_shows_message_and_page_keeps_working(page):
    page.locator("#model input").fill("../../etc/passwd")
    page.locator("#model input").press("Enter")
    page.locator("#load").click()
    page.wait_for_selector("text=outside the folders", timeout=30_000)
    page.locator("#model input").fill("shakespeare-gpt2")
    page.locator("#model input").press("Enter")
    page.locator("#load").click()
    page.wait_for_function(
        "() => document.querySelector('#status').innerText.includes('shakespeare-gpt2')", timeout=60_000)
