"""The memory timeline as a Vega-Lite chart: the process's RSS over time, coloured by phase, every phase visible.

A load's phases last from a second (import, a synthetic model's build) down to a fraction of a millisecond
(`model.to('cpu')`, `eval()`): as a line alone, a short phase is a dot or nothing at the scale of the long ones.
So each phase shorter than `SHORT` of the time axis is also marked by a rule at its start and its name with its
duration, one label row each so that neighbours never overlap. Each phase has one colour (`PHASE_COLOURS`), the
same whatever other phases a run had and in either language. Pure data, no Gradio: the page hands the spec to
its plot (`results.ui_timeline`), which draws it whole each time (no previous data drawn under new words).
"""

from __future__ import annotations

import pandas as pd

from playground.core.i18n import t
from playground.run.holds import CUT
from playground.run.render import phase_name, secs

# in the order a load and then a generation run them (the legend's order)
PHASE_COLOURS = {
    "download": "#8c564b", "import": "#7f7f7f", "context": "#bcbd22", "estimate": "#17becf", "build": "#9467bd",
    "tokenizer": "#e377c2", "unload": "#c49c94", "load": "#1f77b4", "migrate": "#ff7f0e", "quantize": "#e7969c",
    "eval": "#2ca02c",
    "warm-up": "#8c8c3c", "prefill": "#d62728", "decode": "#393b79", "agreement": "#9edae5",
}
OTHER = "#555555"  # a phase not listed above (none today): drawn, in grey
SHORT = 0.02  # a phase under this share of the time axis is marked with a rule and its name
LABEL_ROW = 13  # px between two short phases' labels


def segments(rows: list[dict]) -> list[dict]:
    """The process-RSS readings as runs of one phase, in time order: key (the phase), its readings (t, bytes),
    start and end. A reading that starts a phase also ends the one before (the sampler takes one reading at
    each mark), so a run followed at once by another ends at that one's first reading: the line is unbroken.
    Readings in no phase (before the first mark, between the load and the generation) belong to no run."""
    runs: list[dict] = []
    before = ""  # the phase of the reading before
    for r in rows:
        if r.get("series", "process RSS") != "process RSS":
            continue
        phase, point = r["phase"], (r["t"], r["bytes"])
        if phase and phase != before:
            if before:
                runs[-1]["points"].append(point)  # the boundary reading: the previous phase's last too
            runs.append({"key": phase, "points": []})
        if phase:
            runs[-1]["points"].append(point)
        before = phase
    for run in runs:
        run["start"], run["end"] = run["points"][0][0], run["points"][-1][0]
    return runs


def timeline_frame(rows: list[dict], lang: str = "en") -> pd.DataFrame:
    """One row per drawn point: seconds, MiB, the phase named in `lang`, its key and its run's number."""
    out = [(round(tt, 3), b / 2**20, phase_name(run["key"], lang), run["key"], i)
           for i, run in enumerate(segments(rows)) for tt, b in run["points"]]
    return pd.DataFrame(out, columns=["seconds", "MiB", "phase", "key", "run"])


def colour(key: str) -> str:
    return PHASE_COLOURS.get(key, OTHER)


def _timed(runs: list[dict], peaks: list[dict]) -> list[float | None]:
    """Each run's phase as the phase itself timed it (its peak's `seconds`, what the table of peaks says), matched
    in order by name; None for a run no peak names. Not the readings' span: a reading lags its mark when the
    sampler's thread waits for a core (CI drew "prefill · 15.1 ms" beside a table's 10.9 ms)."""
    left = list(peaks)
    out: list[float | None] = []
    for run in runs:
        match = next((p for p in left if p["name"] == run["key"]), None)
        if match is not None:
            left.remove(match)
        out.append(match["seconds"] if match is not None else None)
    return out


def short_marks(rows: list[dict], peaks: list[dict], lang: str = "en") -> list[dict]:
    """The phases too short to see as a line: where each starts, its name with its duration (from `peaks`), its
    label row."""
    runs = segments(rows)
    if not runs:
        return []
    span = max(r["end"] for r in runs) - min(r["start"] for r in runs)
    short = [(r, took) for r, took in zip(runs, _timed(runs, peaks))
             if span <= 0 or (r["end"] - r["start"]) < SHORT * span]
    return [dict(seconds=round(r["start"], 3), phase=phase_name(r["key"], lang), key=r["key"], row=i,
                 label=phase_name(r["key"], lang) + (f" · {secs(took)}" if took is not None else ""))
            for i, (r, took) in enumerate(short)]


def timeline_spec(rows: list[dict], peaks: list[dict], lang: str = "en", height: int = 300) -> dict | None:
    """The chart (a Vega-Lite spec) of the readings `rows`, the short phases labelled with their time from
    `peaks`, in `lang`; None when there is nothing to draw."""
    frame = timeline_frame(rows, lang)
    if frame.empty:
        return None
    keys = list(dict.fromkeys(frame["key"]))
    names = [phase_name(k, lang) for k in keys]
    colours = {"field": "phase", "type": "nominal", "title": t("timeline.color", lang),
               "scale": {"domain": names, "range": [colour(k) for k in keys]},
               "legend": {"orient": "right", "symbolType": "stroke"}}
    x = {"field": "seconds", "type": "quantitative", "title": t("timeline.x", lang)}
    marks = short_marks(rows, peaks, lang)
    line = {"data": {"values": frame.to_dict("records")},
            "mark": {"type": "line", "point": {"size": 18}, "strokeWidth": 2},
            "encoding": {"x": x, "y": {"field": "MiB", "type": "quantitative", "title": t("timeline.y", lang),
                                       "scale": {"zero": False}},
                         "color": colours, "detail": {"field": "run", "type": "ordinal"},
                         "tooltip": [{"field": "phase", "title": t("timeline.color", lang)},
                                     {"field": "seconds", "title": t("timeline.x", lang)},
                                     {"field": "MiB", "format": ".1f", "title": t("timeline.y", lang)}]}}
    layers = [line]
    if marks:
        rule = {"data": {"values": marks}, "mark": {"type": "rule", "strokeDash": [4, 3], "strokeWidth": 1.5},
                "encoding": {"x": x, "color": dict(colours, legend=None)}}
        # one label layer per short phase, each on its own row (a pixel offset from the top), written away
        # from the nearer edge of the plot
        middle = (frame["seconds"].min() + frame["seconds"].max()) / 2
        labels = [{"data": {"values": [m]},
                   "mark": {"type": "text", "align": "right" if m["seconds"] > middle else "left",
                            "dx": -3 if m["seconds"] > middle else 3, "baseline": "top", "fontSize": 11,
                            "fontWeight": "bold"},
                   "encoding": {"x": x, "y": {"value": 4 + m["row"] * LABEL_ROW}, "text": {"field": "label"},
                                "color": dict(colours, legend=None)}} for m in marks]
        layers += [rule, *labels]
    cuts = [dict(seconds=round(r["t"], 3), label=t("timeline.cut", lang, idle=secs(r["idle"]), drawn=f"{CUT:g}"))
            for r in rows if r.get("series") == "idle cut"]
    if cuts:  # the idle time between the load and the generation, drawn shorter than it was: said where
        grey = {"color": "#888"}
        layers += [{"data": {"values": cuts}, "mark": {"type": "rule", "strokeDash": [2, 4], **grey},
                    "encoding": {"x": x}},
                   {"data": {"values": cuts}, "mark": {"type": "text", "baseline": "bottom", "fontSize": 11, **grey},
                    "encoding": {"x": x, "y": {"value": height - 4}, "text": {"field": "label"}}}]
    return {"$schema": "https://vega.github.io/schema/vega-lite/v5.json",
            # drawn as SVG (vega-embed reads the spec's own options): the page's tests read the drawn text
            "usermeta": {"embedOptions": {"renderer": "svg", "actions": False}},
            "width": "container", "height": height, "autosize": {"type": "fit-x", "contains": "padding"},
            "layer": layers}
