"""The timeline's chart: every phase drawn, the short ones marked with their name and duration, one colour per
phase whatever else the run had and in either language (issue 23: load, migrate and eval drawn as dots or
nothing, the synthetic build omitted, colours changing between renders)."""

from __future__ import annotations

import json

import pytest

from playground.hw.sampler import PhasePeak
from playground.web import results, views_timeline as vt


def _rows(phases: list[tuple[str, float, int]]) -> list[dict]:
    """Sampler-like process-RSS rows: per phase (name, seconds, readings), readings spread over it ("": in no
    phase, as between a load and a generation)."""
    rows, t = [], 0.0
    for k, (name, secs, n) in enumerate(phases):
        for i in range(n):
            rows.append(dict(t=t + secs * i / n, phase=name, series="process RSS", bytes=(400 + len(rows)) * 2**20))
        t += secs
        if name and (k + 1 == len(phases) or not phases[k + 1][0]):  # `end_phase`: its last reading is its own
            rows.append(dict(t=t, phase=name, series="process RSS", bytes=(400 + len(rows)) * 2**20))
    return rows


def _peaks(phases: list[tuple[str, float, int]]) -> list[dict]:
    """What the sampler's peaks say of those phases: each one's name and its own time (the memory figures made up)."""
    return [PhasePeak(name, secs, n, 400 * 2**20, 401 * 2**20, 402 * 2**20, 2**30).to_dict()
            for name, secs, n in phases if name]


LOAD = [("import", 0.5, 8), ("estimate", 0.02, 2), ("build", 1.2, 18), ("tokenizer", 0.015, 1),
        ("load", 0.17, 3), ("migrate", 0.001, 1), ("eval", 0.0004, 1)]


def _drawn(rows, lang="en", peaks=None) -> dict:
    """What the page's plot is given, read back: {phase name: colour}, and the labels of the marked phases."""
    plot, _ = results.ui_timeline((rows, peaks or []), lang)
    spec = json.loads(plot.constructor_args["value"].plot)
    colours = spec["layer"][0]["encoding"]["color"]["scale"]
    texts = [layer["data"]["values"][0]["label"] for layer in spec["layer"] if layer["mark"]["type"] == "text"]
    return {"colours": dict(zip(colours["domain"], colours["range"])), "labels": texts,
            "points": spec["layer"][0]["data"]["values"]}


def test_every_phase_is_drawn_the_synthetic_build_included():
    drawn = _drawn(_rows(LOAD))
    assert list(drawn["colours"]) == [p for p, _, _ in LOAD]
    assert {p["phase"] for p in drawn["points"]} == {p for p, _, _ in LOAD}


def test_short_phases_are_marked_with_their_name_and_duration():
    labels = _drawn(_rows(LOAD), peaks=_peaks(LOAD))["labels"]
    # under 2% of the 1.9 s axis: estimate (20 ms), tokenizer, migrate (1 ms) and eval (0.4 ms)
    assert [label.split(" · ")[0] for label in labels] == ["estimate", "tokenizer", "migrate", "eval"]
    assert "migrate · 1.0 ms" in labels and "eval · 0.4 ms" in labels
    zh = _drawn(_rows(LOAD), "zh", _peaks(LOAD))["labels"]
    assert "迁移 · 1.0 ms" in zh


def test_a_short_phases_label_gives_the_time_the_table_gives_not_the_readings_span():
    """CI drew "prefill · 15.1 ms" beside a table of peaks saying 10.9 ms: the reading that ended the prefill came
    4 ms late (the sampler's thread waited for a core). The label says the phase's own time, as the table does."""
    phases = LOAD + [("", 0.5, 1), ("prefill", 0.0151, 1), ("decode", 0.3, 5)]
    peaks = [dict(p, seconds=0.0109) if p["name"] == "prefill" else p for p in _peaks(phases)]
    plot, table = results.ui_timeline((_rows(phases), peaks), "en")
    labels = _drawn(_rows(phases), peaks=peaks)["labels"]
    assert "prefill · 10.9 ms" in labels and "10.9 ms" in table, labels
    # a phase no peak names is labelled by its name alone, never with a second figure
    assert "eval" in _drawn(_rows(LOAD), peaks=_peaks(LOAD[:-1]))["labels"]


def test_a_phase_keeps_its_colour_across_runs_and_languages():
    with_build = _drawn(_rows(LOAD))["colours"]
    without = _drawn(_rows([p for p in LOAD if p[0] != "build"]))["colours"]
    generation = _drawn(_rows(LOAD + [("", 0.5, 1), ("prefill", 0.01, 1), ("decode", 0.3, 5)]))
    zh = _drawn(_rows(LOAD), "zh")["colours"]
    for phase in ("load", "migrate", "eval", "tokenizer"):
        assert with_build[phase] == without[phase] == generation["colours"][phase]
    assert zh["加载"] == with_build["load"] and zh["构建"] == with_build["build"]
    assert len(set(with_build.values())) == len(with_build)  # one colour per phase


def test_a_phase_line_runs_to_the_next_phase_but_not_across_the_idle_gap():
    runs = vt.segments(_rows(LOAD + [("", 0.5, 1), ("prefill", 0.01, 1), ("decode", 0.3, 5)]))
    by = {r["key"]: r for r in runs}
    assert by["migrate"]["end"] == by["eval"]["start"]  # one reading ends migrate and starts eval
    assert by["eval"]["end"] < by["prefill"]["start"] - 0.4  # the load's end and the generation are not joined


def test_nothing_to_draw_is_an_empty_plot():
    assert results.ui_timeline(None, "en")[0].constructor_args["value"] is None


@pytest.mark.slow
def test_the_idle_time_cut_between_a_load_and_its_generation_is_said_where_it_is():
    """A fresh look: the load ended at 0.05 s and the prefill began at 0.57 s, though seconds passed between them,
    and nothing on the chart said so. The hold's timeline keeps the real idle time; the chart marks the cut."""
    import time as _time

    from playground.hw.sampler import Sampler
    from playground.run.holds import CUT, Hold

    with Sampler(hz=20) as load:
        load.mark("load")
        _time.sleep(0.05)
    _time.sleep(0.4)  # the visitor reads the report
    with Sampler(hz=20) as gen:
        gen.mark("prefill")
        _time.sleep(0.03)
        gen.mark("decode")
        _time.sleep(0.05)
    hold = Hold.__new__(Hold)
    hold.load_timeline, hold.gen_timeline = load, gen
    rows, peaks = hold.timeline()
    cut = [r for r in rows if r["series"] == "idle cut"]
    assert len(cut) == 1 and 0.38 < cut[0]["idle"] < 0.6, cut
    first_gen = min(r["t"] for r in rows if r["phase"] == "prefill")
    last_load = max(r["t"] for r in rows if r["phase"] == "load")
    assert abs(first_gen - last_load - CUT) < 0.01 and last_load < cut[0]["t"] < first_gen
    labels = _drawn(rows, peaks=peaks)["labels"] + _drawn(rows, "zh", peaks)["labels"]
    assert any(s.endswith("idle, drawn as 0.5 s") for s in labels), labels
    assert any("这里画成 0.5 秒" in s for s in labels), labels
