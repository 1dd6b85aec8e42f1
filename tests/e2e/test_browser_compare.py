"""Compare's charts draw the run the table shows: Compare run twice with different settings, in English and
in Chinese, and after each run every bar of the five charts read back from the page's SVG (the value Vega
drew it for, and its height against the axis' ticks) and checked against the table's numbers.

Gradio 6's bar plot, given new data and new words at once, redrew the previous run's bars under the new
run's axis (issue 23: 280/214/142 tok/s drawn under a 0-40 axis beside a table saying 40.9/24.4/33.7).

Screenshots: artifacts/compare-second-en.png, artifacts/compare-second-zh.png.
"""

from __future__ import annotations

import re
import time

import pytest

from tests.e2e.conftest import ARTIFACTS
from tests.e2e.test_browser_first import _lang

pytestmark = [pytest.mark.slow, pytest.mark.browser]

# the table's columns the charts draw, in the charts' order (playground.web.compare_views.CHARTS)
CHART_COLUMNS = ("load", "migrate", "ttft", "rate", "rss")
COLUMN_INDEX = {"load": 3, "migrate": 4, "ttft": 5, "rate": 6, "rss": 8}
UNIT = {"ms": 1.0, "s": 1e3, "B": 2**-20, "KiB": 2**-10, "MiB": 1.0, "GiB": 2**10}

# Per chart: each bar's x label, the value Vega drew it for (its aria-label), and the value its height
# reads as against the y axis' first and last tick; the top of the plot area is y = 0.
DRAWN = """() => [...document.querySelectorAll('.cmp-chart svg.marks')].map(svg => {
  const axis = [...svg.querySelectorAll('.role-axis')].find(a => (a.getAttribute('aria-label') || '').startsWith('Y-axis'));
  if (!axis) return null;
  const ys = [...axis.querySelectorAll('.role-axis-tick line')].map(l => +/translate\\([^,]+,([^)]+)\\)/.exec(l.getAttribute('transform'))[1]);
  const vs = [...axis.querySelectorAll('.role-axis-label text')].map(t => +t.textContent.replace(/,/g, ''));
  const n = ys.length - 1, per = (vs[n] - vs[0]) / (ys[0] - ys[n]);
  return [...svg.querySelectorAll('.mark-rect path[aria-roledescription=bar]')].map(p => {
    const label = p.getAttribute('aria-label'), top = +/^M[^,]+,([-0-9.e]+)/.exec(p.getAttribute('d'))[1];
    return {pair: label.split('; ')[0].split(': ').pop(), data: +label.split(': ').pop(), top,
            drawn: vs[0] + (ys[0] - top) * per, axis_top: vs[0] + ys[0] * per};
  });
})"""


def _number(cell: str) -> tuple[float, float]:
    """A table cell's first figure in the chart's units (ms, tokens/s, MiB), and half its last digit."""
    m = re.match(r"([-0-9.,]+)\s*(ms|s|B|KiB|MiB|GiB)?", cell.strip())
    assert m, cell
    digits, unit = m.group(1).replace(",", ""), m.group(2)
    half = 0.5 * 10 ** -len(digits.partition(".")[2])
    scale = UNIT[unit] if unit else 1.0
    return float(digits) * scale, half * scale


def _table(page) -> dict[str, list[tuple[float, float]]]:
    """{pair: [(value, rounding) per charted column]} from the table's rows."""
    rows = page.evaluate("() => [...document.querySelectorAll('#cmp-table table:first-of-type tbody tr')]"
                         ".map(tr => [...tr.querySelectorAll('td')].map(td => td.innerText))")
    return {r[0].strip(): [_number(r[COLUMN_INDEX[c]]) for c in CHART_COLUMNS] for r in rows}


def _mismatches(page) -> list[str]:
    """What the charts draw that the table does not say; [] when every bar is the table's figure."""
    table, charts = _table(page), page.evaluate(DRAWN)
    wrong = []
    if len(charts) != len(CHART_COLUMNS) or any(c is None for c in charts):
        return [f"{len(charts)} charts drawn, {sum(c is None for c in charts)} without a y axis"]
    for i, (col, bars) in enumerate(zip(CHART_COLUMNS, charts)):
        if sorted(b["pair"] for b in bars) != sorted(table):
            wrong.append(f"{col}: bars for {[b['pair'] for b in bars]}, table rows {list(table)}")
            continue
        for b in bars:
            want, rounding = table[b["pair"]][i]
            if abs(b["data"] - want) > rounding * 1.001:
                wrong.append(f"{col} {b['pair']}: bar drawn for {b['data']:.6g}, table says {want:.6g}")
            # the height read against the axis: a pixel of the plot's ~140 is under 1% of the axis
            if b["top"] < -0.5 or abs(b["drawn"] - want) > rounding + 0.015 * b["axis_top"]:
                wrong.append(f"{col} {b['pair']}: bar's height reads {b['drawn']:.6g} on an axis to "
                             f"{b['axis_top']:.6g} (top at y={b['top']:.1f}), table says {want:.6g}")
    return wrong


def _charts_agree(page, timeout: float = 15.0) -> list[str]:
    """Wait (Vega draws a moment after the update) until the charts agree with the table, or the timeout."""
    deadline, wrong = time.monotonic() + timeout, ["not read"]
    while time.monotonic() < deadline:
        wrong = _mismatches(page)
        if not wrong:
            break
        time.sleep(0.5)
    return wrong


def _run(page, pairs: tuple[str, ...], tokens: int) -> None:
    """Run Compare on `pairs` with `tokens` new tokens (each run a count of its own); back once the table
    holds this run: one row per pair, each over tokens - 1 decoded tokens."""
    labels = page.locator("#cmp-pairs label")
    for i in range(labels.count()):
        label = labels.nth(i)
        if label.locator("input").is_checked() != (label.inner_text().strip() in pairs):
            label.click()
    page.locator("#cmp-tokens input[type=number]").fill(str(tokens))
    page.locator("#cmp-tokens input[type=number]").press("Enter")
    page.locator("#cmp-run").click()
    page.wait_for_function(
        "([n, k]) => { const rows = [...document.querySelectorAll('#cmp-table table:first-of-type tbody tr')];"
        " return rows.length === n && rows.every(r => new RegExp('· ' + k + ' ').test(r.innerText)); }",
        arg=[len(pairs), tokens - 1], timeout=240_000)


def _screenshot(page, name: str) -> None:
    time.sleep(1.0)  # Gradio's progress overlay fades out over the charts just drawn
    page.screenshot(path=str(ARTIFACTS / name), full_page=True)


def test_compare_charts_draw_the_run_the_table_shows(page):
    ARTIFACTS.mkdir(exist_ok=True)
    page.locator("button[role=tab]", has_text="Compare").click()
    _run(page, ("cpu/float32", "cpu/bfloat16"), 4)
    assert _charts_agree(page) == []  # the first run: the charts were empty before
    # the TTFT and rate charts draw each pair's range of runs over its median (the table's brackets)
    ranges = page.evaluate("() => [...document.querySelectorAll('.cmp-chart')].map(c => "
                           "c.querySelectorAll('.mark-rule.role-mark line').length)")
    assert ranges == [0, 0, 2, 2, 0], ranges
    _run(page, ("cpu/float32", "cpu/bfloat16"), 12)
    wrong = _charts_agree(page)
    _screenshot(page, "compare-second-en.png")
    assert wrong == [], "second run, English:\n" + "\n".join(wrong)

    _lang(page, "中文", "你的模型")
    page.locator("button[role=tab]", has_text="对比").click()
    wrong = _charts_agree(page)
    assert wrong == [], "after the switch to Chinese:\n" + "\n".join(wrong)
    assert "加载（毫秒）" in page.locator(".cmp-chart svg.marks").first.inner_html()  # the charts' words followed
    _run(page, ("cpu/bfloat16",), 8)
    wrong = _charts_agree(page)
    assert wrong == [], "third run (one pair), Chinese:\n" + "\n".join(wrong)
    _run(page, ("cpu/float32", "cpu/bfloat16"), 6)
    wrong = _charts_agree(page)
    _screenshot(page, "compare-second-zh.png")
    assert wrong == [], "fourth run, Chinese:\n" + "\n".join(wrong)
    _lang(page, "English", "Your model")
