"""A lab run from the page says, while it runs, how long it has taken and how long is left, from its last runs here."""

import time

import pytest

from playground.core.i18n import said
from playground.lab import harness, scenarios
from playground.lab.durations import DURATIONS, Durations
from playground.lab.result import BreakResult
from playground.run.pool import POOL
from playground.web import lab_runs
from playground.web.tabs import play


@pytest.fixture
def slow_lab(monkeypatch):
    """Every mistake takes 0.6 s, its harness.run measured as the real one is; a tick every 0.1 s."""
    def run(sc, model=None, tokenizer=None, **kw):
        t0 = time.perf_counter()
        time.sleep(0.6)
        return BreakResult(scenario=sc.id, number=sc.number, title=said(sc.title), seconds=time.perf_counter() - t0)
    monkeypatch.setattr(harness, "run", run)
    monkeypatch.setattr(lab_runs, "EVERY", 0.1)
    DURATIONS.clear()
    POOL.clear()  # no model: the lab runs on the bundled one
    yield
    DURATIONS.clear()


def _lines(lang: str) -> list[str]:
    out = list(play.ui_generate("ROMEO:", 8, 0, 1, 0, True, "fp16-on-cpu", "generate", lang, None))
    return [o["lab_md"] for o in out[:-1]]  # every update before the result


@pytest.mark.slow
def test_a_lab_run_says_the_time_so_far_then_the_time_left_from_its_last_runs(slow_lab):
    first = _lines("en")
    assert len(first) >= 4, first  # one a tick, not one line for the whole run
    assert all("no estimate of the time left yet: its first run" in line for line in first), first
    second = _lines("zh")
    assert any("大约还剩 0." in line and "0.6 秒" in line for line in second), second  # under 10 s: tenths
    assert DURATIONS.expected(("fp16-on-cpu", "bundled")) == pytest.approx(0.6, abs=0.15)


def test_ticks_count_up_and_the_result_comes_last(slow_lab):
    DURATIONS.note(("fp16-on-cpu", "bundled"), 0.3)
    got = list(lab_runs.ticking(scenarios.get("fp16-on-cpu"), ""))
    ticks, result = got[:-1], got[-1]
    assert isinstance(result, BreakResult) and all(isinstance(t, lab_runs.Tick) for t in ticks)
    assert [t.elapsed for t in ticks] == sorted(t.elapsed for t in ticks) and ticks[-1].elapsed >= 0.5
    assert {t.expected for t in ticks} == {0.3}


def test_a_lab_error_is_raised_where_the_page_reads_it(monkeypatch):
    def broken(*a, **kw):
        raise RuntimeError("the scenario's own failure")
    monkeypatch.setattr(harness, "run", broken)
    POOL.clear()
    with pytest.raises(RuntimeError, match="own failure"):
        list(lab_runs.ticking(scenarios.get("fp16-on-cpu"), "", every=0.05))


def test_the_estimate_is_the_median_of_the_last_runs():
    d = Durations(keep=3)
    assert d.expected(("x",)) is None
    for s in (10.0, 1.0, 2.0, 3.0):  # the first falls out
        d.note(("x",), s)
    assert d.expected(("x",)) == 2.0
