"""The Placement tab on the real server: its API endpoints through gradio_client, then every panel in a real browser,
in English and in Chinese (no stray English), on the bundled model with a CPU limit that sends 3 of its 4 blocks to
the disk.

Screenshots: artifacts/placement-en.png, artifacts/placement-zh.png.
"""

from __future__ import annotations

import pytest
from gradio_client import Client

from tests.e2e.conftest import ARTIFACTS, open_playground
from tests.e2e.test_browser import OWN_TEXT, _pick_lang, own_text
from tests.e2e.test_browser_first import _english_words

pytestmark = [pytest.mark.slow, pytest.mark.browser]
LIMITS = "cpu=16MB,disk"


@pytest.fixture(scope="module")
def server(browser_server, module_log):
    """The browser tests' server (tests/e2e/conftest.py); nothing this module did wrote a traceback to its log."""
    return browser_server


def test_the_placement_api(server):
    c = Client(server.url, verbose=False)
    plan = c.predict("shakespeare-gpt2", "float32", LIMITS, api_name="/plan_placement")
    assert plan["offloaded_bytes"] == 9479168 and [b["intended"] for b in plan["blocks"]].count("disk") == 4
    placed = c.predict("shakespeare-gpt2", "float32", LIMITS, api_name="/load_placed")
    assert [b["actual"] for b in placed["blocks"]] == [b["intended"] for b in plan["blocks"]]
    assert placed["load"]["device"] == "auto" and placed["differences"] == 0
    cost = c.predict(api_name="/offload_cost")
    assert cost["warm"]["moved_bytes_per_token"] == 9479168 and cost["same_tokens_warm"] and cost["warm"]["new_tokens"] == 16
    rows = c.predict(2, api_name="/offload_cliff")
    assert [r["blocks_offloaded"] for r in rows] == [0, 1, 2] and all(r["same_tokens"] for r in rows)
    paths = c.predict("cpu", "bfloat16", api_name="/load_straight")["paths"]
    assert [p["how"] for p in paths] == ["straight", "then_move"] and all(p["peak_delta"] >= 0 for p in paths)
    with pytest.raises(Exception, match="below one block"):
        c.predict("shakespeare-gpt2", "float32", "cpu=1MB,disk", api_name="/load_placed")
    assert c.predict("shakespeare-gpt2", "float32", LIMITS, api_name="/plan_placement")["blocks"]  # still serving


@pytest.fixture(scope="module")
def page(server, chromium):
    pg = chromium.new_page(viewport={"width": 1366, "height": 1800}, locale="en-US")
    open_playground(pg, server.url)
    yield pg
    pg.close()


EN = dict(plan=["Plan for", "transformer.wte"], map=["Where", "AlignDevicesHook", "agree for every block"],
          cost=["moved per token", "offloaded, cold", "Where a decode step's time went"],
          cliff=["blocks on disk", "token for token"], straight=["straight onto", "load then move", "peak RSS"])
ZH = dict(plan=["的规划", "transformer.wte"], map=["的权重在哪里", "AlignDevicesHook", "都一致"],
          cost=["每个 token 搬运", "卸载，冷", "时间花在了哪里"],
          cliff=["磁盘上的块", "逐个相同"], straight=["直接加载", "先加载再搬运", "峰值 RSS"])


def _wait_for(page, box: str, *needles: str, before: str | None = None, timeout: int = 120_000) -> str:
    """The Markdown's own text (not the progress overlay Gradio draws over it, which shows the step's description)
    once it holds every needle and, given `before`, differs from it: a new result."""
    page.wait_for_function(
        "([before, needles]) => { const s = " + OWN_TEXT.format(box) + ";"
        " return (before === null || s !== before) && needles.every(n => s.includes(n)); }",
        arg=[before, list(needles)], timeout=timeout)
    return own_text(page, box)


def _run_panels(page, words: dict) -> dict:
    out = {}
    for key, button, box in (("plan", "#place-plan", "#place-out"), ("map", "#place-load", "#place-out"),
                             ("cost", "#cost-run", "#cost-out"), ("cliff", "#cliff-run", "#cliff-out"),
                             ("straight", "#straight-run", "#straight-out")):
        before = own_text(page, box) if page.locator(f"{box} [data-testid=markdown]").count() else None
        page.locator(button).click()
        out[key] = _wait_for(page, box, *words[key], before=before)
    return out


def test_every_panel_in_english_then_in_chinese(page):
    ARTIFACTS.mkdir(exist_ok=True)
    _pick_lang(page, "English")
    page.locator("button[role=tab]", has_text="Placement").click()
    page.locator("#place-model input").fill("shakespeare-gpt2")
    page.locator("#place-model input").press("Enter")
    page.locator("#place-limit-cpu textarea, #place-limit-cpu input").first.fill("16MB")
    page.wait_for_function("() => document.querySelector('#place-limits textarea, #place-limits input').value "
                           f"=== '{LIMITS}'", timeout=10_000)
    page.locator("#cliff-blocks input[type=number]").fill("3")
    page.locator("#cliff-blocks input[type=number]").press("Enter")
    en = _run_panels(page, EN)
    assert "`disk`" not in en["map"] and "disk" in en["map"]  # tiers as code, rendered
    assert page.locator("#place-map code").count() >= 3 * 8  # three rows of eight blocks: plan, intended, actual
    page.wait_for_function("() => document.querySelectorAll('#cliff-plot canvas, #cliff-plot svg').length > 0",
                           timeout=20_000)
    page.wait_for_timeout(1500)
    page.screenshot(path=str(ARTIFACTS / "placement-en.png"), full_page=True)

    # Switching language says the results on the page again, from the data kept for them
    _pick_lang(page, "中文")
    _wait_for(page, "#place-out", *ZH["map"], timeout=20_000)
    _wait_for(page, "#cost-out", *ZH["cost"], timeout=20_000)
    _wait_for(page, "#cliff-out", *ZH["cliff"], timeout=20_000)
    _wait_for(page, "#straight-out", *ZH["straight"], timeout=20_000)
    # and each panel run again, in Chinese
    zh = _run_panels(page, ZH)
    assert "moved per token" not in zh["cost"] and "Plan for" not in zh["plan"]
    page.wait_for_timeout(1500)  # the plot redraws after its data arrives
    page.screenshot(path=str(ARTIFACTS / "placement-zh.png"), full_page=True)
    strays = _english_words(page)
    assert not strays, " ".join(sorted(set(strays)))
    _pick_lang(page, "English")
