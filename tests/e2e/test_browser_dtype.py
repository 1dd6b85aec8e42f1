"""int8 chosen on the page, in a real browser, in English and Chinese (issue 30).

One visit: the Llama-shaped synthetic model loaded in int8 from the Playground's dtype choice: the load report
has its quantize phase and says which weight matrices were quantized and which were skipped and why, the banner
and the stats name int8, the ledger's weights are the quantized tensors' bytes, and a generation runs; then the
same page in Chinese, every visible word of it Chinese but the allowed names.

Screenshots: artifacts/dtype-int8-en.png, artifacts/dtype-int8-zh.png.
"""

from __future__ import annotations

import re

import pytest

from tests.e2e.conftest import ARTIFACTS
from tests.e2e.test_browser_first import _english_words, _generate_done, _lang, _wait_text

pytestmark = [pytest.mark.slow, pytest.mark.browser]

MODEL = "synthetic/llama-42m"


def _text(page, selector: str) -> str:
    return page.locator(selector).inner_text()


def test_int8_chosen_on_the_page_loads_quantized_and_says_so_in_both_languages(page):
    ARTIFACTS.mkdir(exist_ok=True)
    page.locator("#model input").fill(MODEL)
    page.locator("#model input").press("Enter")
    page.locator("#dtype label", has_text="int8").click()
    page.locator("#load").click()
    _wait_text(page, "#status", f"{MODEL}.*int8", 180_000)
    report = _wait_text(page, "#report", "weight matrices quantized to int8", 30_000)
    # the load's own phase, and what it did, counted from the model (8 layers x 7 projections; the embedding and
    # the head tied to it skipped)
    assert "quantize_(model, config)" in report, report
    assert "56 of 58 weight matrices quantized to int8 (Int8Tensor)" in report, report
    assert "1 output head tied to the embedding" in report and "a lookup, not a matrix product" in report, report
    said = re.search(r"the weights went from [\d.]+ MiB to ([\d.]+ MiB)", report)
    ledger = _wait_text(page, "#ledger", r"\bweights\t", 30_000)
    weights = re.search(r"^weights\t([\d.]+ MiB)\t", ledger, re.M)  # the ledger's row, as the table draws it
    assert said and weights and said[1] == weights[1], ledger  # the ledger's weights: the quantized tensors'
    page.locator("#max-new input[type=number]").fill("16")
    page.locator("#max-new input[type=number]").press("Enter")
    stats = _generate_done(page)
    assert f"model: {MODEL} (cpu, int8)" in stats and "tokens/s" in stats, stats
    page.screenshot(path=str(ARTIFACTS / "dtype-int8-en.png"), full_page=True)

    _lang(page, "中文", "你的模型")
    zh = _wait_text(page, "#report", "个量化成了 int8", 30_000)
    assert "58 个权重矩阵中有 56 个量化成了 int8（Int8Tensor）" in zh, zh
    assert "与词嵌入共享权重的输出头" in zh, zh
    words = _english_words(page)
    assert words == [], words
    page.screenshot(path=str(ARTIFACTS / "dtype-int8-zh.png"), full_page=True)
    _lang(page, "English", "Your model")
