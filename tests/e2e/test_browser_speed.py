"""The Speed tab on the real server: its three API endpoints through gradio_client, then each panel
opened in a real browser, in English and in Chinese (the compiled engine is left off: compiling takes
about 11 s here; tests/run/test_compiled.py compiles once).

Screenshots: artifacts/speed-en.png, artifacts/speed-zh.png.
"""

from __future__ import annotations

import pytest
from gradio_client import Client

from tests.e2e.conftest import ARTIFACTS, open_playground
from tests.e2e.test_browser import _pick_lang, _text
from tests.e2e.test_browser_first import _english_words

pytestmark = [pytest.mark.slow, pytest.mark.browser]


@pytest.fixture(scope="module")
def server(browser_server, module_log):
    """The browser tests' server (tests/e2e/conftest.py); nothing this module did wrote a traceback to its log."""
    return browser_server


@pytest.fixture(scope="module")
def client(server):
    c = Client(server.url, verbose=False)
    c.predict("shakespeare-gpt2", "cpu", "float32", api_name="/load_model")
    yield c
    c.close()  # its hold goes with it: the next module's visitor meets the server without this model


def test_bandwidth_kv_growth_and_engines_through_the_api(client):
    bw = client.predict(api_name="/bandwidth")
    for k in ("memcpy", "read", "cast"):
        assert bw["cpu"][k]["gbps"] > 0 and bw["cpu"][k]["seconds"] > 0
    assert bw["gpu"]["devices"] == [] and "no CUDA" in bw["gpu"]["reasons"]["cuda"]
    gap = bw["migrate"]
    assert gap["model"] == "shakespeare-gpt2" and gap["moved"] is False and gap["predicted_seconds"] == 0
    assert gap["tutorial_seconds"] == pytest.approx(gap["weights_bytes"] / 16e9)
    assert "Nothing moved" in gap["why"]

    kv = client.predict(api_name="/kv_growth")
    assert len(kv["points"]) >= 4 and kv["estimate_bytes_per_token"] == 2 * 4 * 4 * 64 * 4
    assert all(abs(p["error"]) <= 0.02 for p in kv["points"])  # read from the real cache object
    assert [p["tokens"] for p in kv["points"]] == sorted(p["tokens"] for p in kv["points"])

    rows = client.predict(24, api_name="/engines")
    assert [r["engine"] for r in rows] == ["generate", "manual", "manual-nocache"]  # the names `engine=` takes
    keys = {"engine", "tokens_per_second", "new_tokens", "same_tokens_as_generate", "compile_seconds",
            "bandwidth_bound_tokens_per_second", "percent_of_bound", "overhead_ms_per_token"}
    for r in rows:
        assert keys <= set(r) and r["new_tokens"] == 24 and r["same_tokens_as_generate"] and r["compile_seconds"] is None
        assert r["percent_of_bound"] == pytest.approx(100 * r["tokens_per_second"] / r["bandwidth_bound_tokens_per_second"])
    with pytest.raises(Exception, match="from 2 to 256"):
        client.predict(1000, api_name="/engines")
    assert client.predict(api_name="/kv_growth")["points"]  # still serving after the bad request


@pytest.fixture(scope="module")
def page(server, client, chromium):
    pg = chromium.new_page(viewport={"width": 1280, "height": 1800}, locale="en-US")
    open_playground(pg, server.url)
    pg.locator("#load").click()  # the page's own model (the API client's, shared): the panels measure it
    pg.wait_for_function("() => ((document.querySelector('#status') || {}).innerText || '')"
                         ".includes('Your model: shakespeare-gpt2')", timeout=60_000)
    yield pg
    pg.close()


def _wait_for(page, selector: str, *needles: str, before: str | None = None, timeout: int = 90_000) -> str:
    """The element's text once it holds every needle (and, given `before`, differs from it: a new result),
    with no progress overlay left on it (Gradio writes "processing | 1.2s" or "queue: 1/2" over a pending one)."""
    page.wait_for_function(
        "([sel, needles, before]) => { const s = (document.querySelector(sel) || {}).innerText || '';"
        " return (before === null || s !== before) && !/processing|queue:|⏳/.test(s)"
        " && needles.every(n => s.includes(n)); }",
        arg=[selector, list(needles), before], timeout=timeout)
    return _text(page, selector)


def _open_panels(page, words: dict) -> dict:
    """Press each panel's button; wait for its new result in the page's language; return the three texts."""
    out = {}
    for key, button in (("bw", "#bw-run"), ("kv", "#kv-run"), ("eng", "#eng-run")):
        before = _text(page, f"#{key}-out")
        if key == "eng":
            page.locator("#eng-tokens input[type=number]").fill("24")
            page.locator("#eng-tokens input[type=number]").press("Enter")
        page.locator(button).click()
        out[key] = _wait_for(page, f"#{key}-out", *words[key], before=before)
    return out


EN = dict(bw=["GB/s", "tutorials' estimate", "Nothing moved"], kv=["bytes per token", "+0.00%"],
          eng=["manual loop, no cache", "% of the bound", "What limits"])
ZH = dict(bw=["GB/s", "教程的估算", "什么也没有搬"], kv=["每个 token", "+0.00%"],
          eng=["手写循环，不用缓存", "占上限的百分比", "这里限制"])


def test_each_panel_in_english_then_in_chinese(page):
    ARTIFACTS.mkdir(exist_ok=True)
    _pick_lang(page, "English")
    page.locator("button[role=tab]", has_text="Speed").click()
    en = _open_panels(page, EN)
    assert "same tokens as generate()" in en["eng"] and en["eng"].count("yes") >= 3
    page.wait_for_function("() => document.querySelectorAll('#kv-bytes canvas, #kv-bytes svg').length > 0",
                           timeout=20_000)
    page.wait_for_timeout(1500)
    page.screenshot(path=str(ARTIFACTS / "speed-en.png"), full_page=True)

    # Switching language re-renders the results already on the page, from the data kept for them
    _pick_lang(page, "中文")
    _wait_for(page, "#bw-out", *ZH["bw"], timeout=20_000)
    _wait_for(page, "#kv-out", *ZH["kv"], timeout=20_000)
    _wait_for(page, "#eng-out", *ZH["eng"], timeout=20_000)
    assert "运行各引擎" in _text(page, "#eng-run")
    # and each panel measured again, in Chinese
    zh = _open_panels(page, ZH)
    assert "What limits" not in zh["eng"] and "Nothing moved" not in zh["bw"]
    page.wait_for_timeout(1500)  # the plots redraw after their data arrives
    # every event answered: Gradio's own status over a pending output ("In queue of 2") is not the page's text
    page.wait_for_function("() => !/processing|queue|⏳/i.test(document.body.innerText)", timeout=60_000)
    page.screenshot(path=str(ARTIFACTS / "speed-zh.png"), full_page=True)
    strays = _english_words(page)  # every measured panel in Chinese: no English outside code, names, units
    assert not strays, " ".join(sorted(set(strays)))
    _pick_lang(page, "English")
