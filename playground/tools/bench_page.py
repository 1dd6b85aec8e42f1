"""What the page costs its own measurement: a Generate's decode rate in Chromium against the API's, one server.

    python -m playground bench page                       # 10 + 10 generations, bfloat16, 96 greedy tokens
    python -m playground bench page --runs 10 --dtype float32 --tokens 128

One `python app.py` and one headless Chromium on this machine (as on a laptop); the page and an API client
generate the same greedy tokens on the bundled model (shared by the pool), alternating after a warm-up each,
each run after `--settle` seconds of quiet (the page's plots, drawn after its rate is taken, would otherwise
land on the API's run). Prints each side's decode rate (median, min-max), the page's gap against the API in %
(of the medians, and of the back-to-back pairs with a ~95% interval) and the load average around the runs.
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import tempfile
import time
from pathlib import Path

from playground.lab.timing import median_interval
from playground.tools.alternate import alternate, paired, speed_line, steadiness
from playground.tools.server import start_server, stop_server

CHROMIUM = "/usr/bin/chromium"  # Debian's; --chromium names another
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-quic", "--no-first-run", "--disable-component-update", "--disable-sync"]
PROMPT = "ROMEO:"
MODEL = "shakespeare-gpt2"
# The stats' own markdown (not Gradio's overlay around it) once the run is done, and different from `before`.
STATS = "((document.querySelector('#stats [data-testid=markdown]') || {}).innerText || '')"
RATE = re.compile(r"([\d.]+) tokens/s")
SETTLE = 1.0  # seconds of quiet before each generation


def _page_setup(pg, url: str, dtype: str, tokens: int) -> None:
    pg.goto(url)
    pg.wait_for_selector("button[role=tab]", timeout=60_000)
    pg.locator("button[role=tab]", has_text=re.compile("^(Playground|游乐场)$")).click()
    pg.wait_for_selector("#load", timeout=60_000)
    pg.locator("#dtype label", has_text=dtype).click()
    pg.locator("#load").click()
    pg.wait_for_function("() => ((document.querySelector('#report') || {}).innerText || '').includes('no-op')",
                         timeout=120_000, polling=250)
    pg.locator("#decoding label", has_text="greedy").click()
    pg.locator("#prompt textarea").fill(PROMPT)
    box = pg.locator("#max-new input[type=number]")
    box.fill(str(tokens))
    box.press("Enter")
    time.sleep(1.0)  # the slider's own events settle before the first run


def page_run(pg) -> float:
    """One Generate pressed in the page; the decode rate its finished stats show."""
    before = pg.evaluate("() => " + STATS)
    pg.locator("#generate").click()
    # polled every 250 ms, not every frame: the watcher must not be what slows the page
    pg.wait_for_function(f"(before) => {{ const s = {STATS}; return s !== before && s.includes('done'); }}",
                         arg=before, timeout=180_000, polling=250)
    text = pg.evaluate("() => " + STATS)
    m = RATE.search(text)
    if not m:
        raise RuntimeError(f"no decode rate in the page's stats: {text[:300]}")
    return float(m.group(1))


def api_run(client, tokens: int) -> float:
    _, stats = client.predict(PROMPT, tokens, 0.0, 1.0, 0, api_name="/generate")
    return float(stats["tokens_per_second"])


def summary(name: str, rates: list[float]) -> str:
    med = statistics.median(rates)
    return (f"{name:>4}: median {med:7.1f} tokens/s, spread {min(rates):.1f}-{max(rates):.1f} "
            f"({100 * (max(rates) - min(rates)) / med:.0f}% of the median), n={len(rates)}")


def run(runs: int, tokens: int, dtype: str, chromium: str = CHROMIUM, log=print, settle: float = SETTLE) -> dict:
    # deferred (optional): the tests' requirements, not the app's; only this command needs them
    from gradio_client import Client
    from playwright.sync_api import sync_playwright  # deferred (optional): a test requirement, like the client

    with tempfile.TemporaryDirectory(prefix="bench-page-") as tmp:
        proc, url, _ = start_server(Path(tmp))
        try:
            with sync_playwright() as p:
                browser = p.chromium.launch(executable_path=chromium, args=ARGS)
                pg = browser.new_page(viewport={"width": 1280, "height": 1600}, locale="en-US")
                _page_setup(pg, url, dtype, tokens)
                client = Client(url, verbose=False)
                client.predict(MODEL, "cpu", dtype, api_name="/load_model")
                load_before = os.getloadavg()[0]
                # each run starts on a settled machine, as a reader's next click does: the page's last update draws
                # its plots and chains the ledger's event after the rate is taken, and that work would otherwise
                # land on the API's run that follows at once
                speeds: list[float] = []  # the machine's own speed, read before each timed run
                timed = alternate({"page": lambda: page_run(pg), "api": lambda: api_run(client, tokens)}, runs,
                                  warmup=1, settle=settle, speeds=speeds,
                                  log=lambda side, i, rate: log(f"  run {i + 1:2d}: {side:>4} {rate:7.1f} tokens/s"))
                page, api = timed["page"], timed["api"]
                load_after = os.getloadavg()[0]
                browser.close()
        finally:
            stop_server(proc)
    gap = 100 * (statistics.median(api) - statistics.median(page)) / statistics.median(api)
    # each page run against the API run of the same round: a burst of load from elsewhere hits both
    ratios = [p / a for p, a in zip(page, api)]
    gap_paired = 100 * (1 - paired(page, api))
    low, high = median_interval(ratios)  # ~95% interval of that median, from the order statistics (lab.timing)
    return dict(page=page, api=api, gap_pct=gap, paired_gap_pct=gap_paired, paired_interval=(100 * (1 - high), 100 * (1 - low)),
                load=(load_before, load_after), cores=os.cpu_count(), machine_speed=steadiness(speeds))


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(prog="python -m playground bench page", description=__doc__.split("\n")[0])
    ap.add_argument("--runs", type=int, default=10, help="generations per side (default 10)")
    ap.add_argument("--tokens", type=int, default=96, help="greedy new tokens per generation (default 96)")
    ap.add_argument("--dtype", default="bfloat16", choices=("float32", "bfloat16", "float16"))
    ap.add_argument("--chromium", default=CHROMIUM, help=f"the browser to drive (default {CHROMIUM})")
    ap.add_argument("--settle", type=float, default=SETTLE,
                    help=f"seconds of quiet before each generation (default {SETTLE}; 0: back to back)")
    a = ap.parse_args(argv)
    print(f"{MODEL} on cpu in {a.dtype}, {a.tokens} greedy tokens from {PROMPT!r}, {a.runs} generations a side")
    r = run(a.runs, a.tokens, a.dtype, a.chromium, settle=a.settle)
    print(summary("page", r["page"]))
    print(summary("api", r["api"]))
    lo, hi = r["paired_interval"]
    side = "below" if r["gap_pct"] >= 0 else "above"
    print(f"gap: the page's median is {abs(r['gap_pct']):.1f}% {side} the API's "
          f"(median of the back-to-back pairs: {r['paired_gap_pct']:.1f}%, ~95% interval {lo:.1f} to {hi:.1f}%)")
    print(f"load average (1 min) {r['load'][0]:.2f} before, {r['load'][1]:.2f} after, on {r['cores']} cores")
    if r["machine_speed"]:
        print(speed_line(r["machine_speed"]))


if __name__ == "__main__":
    main()
