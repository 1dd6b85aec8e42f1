"""Shared by the browser tests: Debian's Chromium through Playwright, one server per test module,
and one page on it at the module's `VIEWPORT` (default 1280 x 1600), opened once the page has its Load button.

Without Chromium or Playwright a browser test skips with the reason, except under `.ci/run`, which
sets PLAYGROUND_REQUIRE_BROWSER=1 so that the skip is a failure.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from tests.conftest import ROOT, need_web_layer, start_server, stop_server

need_web_layer("tests/e2e")  # a server and its API client: Gradio and gradio_client, or a skip that says so

CHROMIUM = os.environ.get("PLAYGROUND_CHROMIUM", "/usr/bin/chromium")
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-quic", "--no-first-run", "--disable-component-update", "--disable-sync"]
ARTIFACTS = ROOT / "artifacts"


def need_browser() -> None:
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


@pytest.fixture(scope="package")
def browser_server(tmp_path_factory):
    """`python app.py` for every browser test, in a folder of its own: one server (it takes ~7 s to start), each
    module a visitor of its own (its own page and browser context, so its own session, model and lab history). A
    module's visitor is released when its page closes (the heartbeat: 2 s here), before the next module's begins.
    Stopped when a worker leaves tests/e2e (which it runs first: tests/schedule.py), not kept idle through the rest."""
    need_browser()
    s = start_server(tmp_path_factory.mktemp("browser"))
    yield s
    stop_server(s)


@pytest.fixture(scope="package")
def hostile(tmp_path_factory):
    """test_hostile's and test_security's server (test_hostile.hostile_server). Package-scoped here, in the package's
    conftest (defined in a test module, pytest keeps a package-scoped fixture to the session's end): stopped when a
    worker leaves tests/e2e, not kept idle through the other folders."""
    from tests.e2e.test_hostile import hostile_server

    yield from hostile_server(tmp_path_factory)


@pytest.fixture(scope="module")
def module_log(browser_server):
    """The server's log written while this module ran: no traceback in it."""
    start = len(browser_server.log_text())
    yield
    assert "Traceback" not in browser_server.log_text()[start:], browser_server.log_text()[start:][-3000:]


def open_playground(pg, url: str) -> None:
    """Open the page and go to its Playground tab (the page opens on "Start here"; a tab's components are
    drawn once it is shown), where most browser tests begin."""
    pg.goto(url)
    pg.wait_for_selector("button[role=tab]", timeout=60_000)
    pg.locator("button[role=tab]", has_text=re.compile("^(Playground|游乐场)$")).click()
    pg.wait_for_selector("#load", timeout=60_000)


@pytest.fixture(scope="package")
def chromium():
    """One Chromium (and Playwright's driver) per worker for the browser tests: ~2 CPU-s to start each, which every
    module had paid. A module's pages are its own: each `new_page` is a context of its own (cookies, storage, and so
    a Gradio session and a visitor of its own), closed with the page."""
    need_browser()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        yield browser
        browser.close()


@pytest.fixture(scope="module")
def page(request, browser_server, chromium):
    viewport = getattr(request.module, "VIEWPORT", {"width": 1280, "height": 1600})
    pg = chromium.new_page(viewport=viewport, locale="en-US")
    if getattr(request.module, "START_TAB", False):  # the module begins where a visitor lands
        pg.goto(browser_server.url)
        pg.wait_for_selector("#lesson-run", timeout=60_000)
    else:
        open_playground(pg, browser_server.url)
    yield pg
    pg.close()  # the visitor leaves: the heartbeat (2 s here) releases its model before the next module's begins
