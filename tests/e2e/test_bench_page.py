"""`python -m playground bench page`: the page's own cost, measured in Chromium against the API, runs end to end."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.conftest import ROOT
from tests.e2e.conftest import need_browser


@pytest.mark.slow
def test_bench_page_measures_the_page_against_the_api():
    """One run a side: a Generate in Chromium and the same greedy tokens through the API, each side's rate and
    the gap printed (the bench had no test: a change to the page's selectors would have broken it unseen)."""
    need_browser()
    proc = subprocess.run([sys.executable, "-m", "playground", "bench", "page", "--runs", "1", "--tokens", "8",
                           "--settle", "0"], cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    out = proc.stdout
    assert "page: median" in out and " api: median" in out and "gap: the page's median is" in out, out
