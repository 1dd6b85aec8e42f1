"""What the Compare tab shows: the table, the charts' data and words, and the model loaded back, in either language.

Pure formatting of rows that `playground.run.compare` measured: no Gradio, no
measuring. The charts list their bars in the table's order, name their axes
with units, and the bound column says which limit a row is up against.
"""

from __future__ import annotations

import pandas as pd

from playground.core import markdown
from playground.core.i18n import in_lang, t
from playground.core.units import fmt_bytes
from playground.run.compare import MEMORY_BOUND, RUNS, WARMUP, ranking
from playground.run.render import busy_note, secs, waited

# (column of the frame, words of the chart's title); the x axis is the pair, in the table's order. Times in ms,
# as the table writes them below a second.
CHARTS = (("load_ms", "cmp.chart.load"), ("migrate_ms", "cmp.chart.migrate"), ("ttft_ms", "cmp.chart.ttft"),
          ("decode_tokens_per_s", "cmp.chart.rate"), ("peak_rss_MiB", "cmp.chart.rss"))
# the charted figures that are medians of the timed runs: (column, its runs' lowest, highest), drawn as a range
SPREAD = {"ttft_ms": ("ttft_min_ms", "ttft_max_ms"),
          "decode_tokens_per_s": ("decode_min_tokens_per_s", "decode_max_tokens_per_s")}
MS = {"load_ms": "load_s", "migrate_ms": "migrate_s", "ttft_ms": "ttft_s", "ttft_min_ms": "ttft_min_s",
      "ttft_max_ms": "ttft_max_s"}


def _dicts(rows) -> list[dict]:
    return [r.to_dict() if hasattr(r, "to_dict") else dict(r) for r in rows]


def frame(rows):
    """One line per pair, in the table's order, with the charts' columns (and the runs' spread)."""
    data = []
    for d in _dicts(rows):
        d["peak_rss_MiB"] = (d.get("peak_rss") or 0) / 2**20
        for ms, sec in MS.items():
            d[ms] = d[sec] * 1e3 if d.get(sec) is not None else None
        data.append(d)
    cols = ["pair"] + [c for c, _ in CHARTS] + [c for pair in SPREAD.values() for c in pair]
    return pd.DataFrame(data, columns=cols)


def chart_spec(rows, column: str, key: str, lang: str = "en", width: int = 215, height: int = 200) -> dict | None:
    """One chart (a Vega-Lite spec): a bar per pair in the table's order, from zero (their heights compare
    honestly), and over a median the range of its timed runs, lowest to highest, as the table writes it in
    brackets. None when no pair has the figure."""
    data = frame(rows)
    values = [dict(pair=r["pair"], value=float(r[column])) for _, r in data.iterrows() if pd.notna(r[column])]
    if not values:
        return None
    title = t(key, lang)
    x = {"field": "pair", "type": "nominal", "title": t("cmp.chart.x", lang), "sort": [v["pair"] for v in values],
         "axis": {"labelAngle": -30}}
    layers = [{"data": {"values": values}, "mark": {"type": "bar", "width": {"band": 0.6}},
               "encoding": {"x": x, "y": {"field": "value", "type": "quantitative", "title": title}}}]
    if column in SPREAD:
        lo, hi = SPREAD[column]
        spread = [dict(pair=r["pair"], lo=float(r[lo]), hi=float(r[hi])) for _, r in data.iterrows()
                  if pd.notna(r[lo]) and pd.notna(r[hi])]
        if spread:
            dark = {"color": "#333"}
            layers += [{"data": {"values": spread}, "mark": {"type": "rule", "strokeWidth": 2, **dark},
                        "encoding": {"x": x, "y": {"field": "lo", "type": "quantitative"}, "y2": {"field": "hi"}}},
                       *({"data": {"values": spread}, "mark": {"type": "tick", "thickness": 2, "size": 14, **dark},
                          "encoding": {"x": x, "y": {"field": end, "type": "quantitative"}}} for end in ("lo", "hi"))]
    return {"$schema": "https://vega.github.io/schema/vega-lite/v5.json",
            "usermeta": {"embedOptions": {"renderer": "svg", "actions": False}},  # SVG: the tests read the bars
            "title": {"text": title, **({"subtitle": t("cmp.chart.spread", lang)} if column in SPREAD else {})},
            # a fixed width: five charts side by side, each about 230 px wide ("container" measures 0 inside a row)
            "width": width, "height": height, "autosize": {"type": "fit-x", "contains": "padding"},
            "layer": layers}


def _spread(mid: float | None, lo: float | None, hi: float | None, fmt) -> str:
    if mid is None:
        return "—"
    return fmt(mid) + (f" ({fmt(lo)}–{fmt(hi)})" if lo is not None and hi is not None and hi != lo else "")


def _bound(d: dict, lang: str) -> str:
    if d.get("percent_of_bound") is None:
        return "—"
    if d.get("bound") == "memory":
        return t("cmp.bound.memory", lang, pct=d["percent_of_bound"], bound=d["bound_tokens_per_s"])
    return t("cmp.bound.overhead", lang, pct=d["percent_of_bound"], read=secs(d["weights_read_ms"] / 1000),
             step=secs(d["step_ms"] / 1000))


def table(rows, lang: str = "en") -> str:
    head = [t(f"cmp.col.{c}", lang) for c in ("pair", "status", "runs", "load", "migrate", "ttft", "rate", "bound",
                                                "rss", "weights")]
    cells = []
    label = None
    for r in rows:
        label = label or getattr(r, "label", None)
        d = r.to_dict() if hasattr(r, "to_dict") else dict(r)
        f = lambda k: secs(d[k]) if d.get(k) is not None else "—"  # noqa: E731
        status = t(f"cmp.status.{d['status']}", lang)
        error = in_lang(r.error, lang)
        if error:
            status += ": " + error[:160]
        runs = t("cmp.runs_cell", lang, warmup=d.get("warmup", 0), runs=d.get("runs", 0))
        ttft = _spread(d.get("ttft_s"), d.get("ttft_min_s"), d.get("ttft_max_s"), secs)
        rate = _spread(d.get("decode_tokens_per_s"), d.get("decode_min_tokens_per_s"), d.get("decode_max_tokens_per_s"),
                       lambda v: f"{v:.1f}")
        if d.get("decode_tokens_per_s"):
            rate += " · " + t("cmp.tokens_cell", lang, n=d.get("decode_tokens"))
        cells.append((d["pair"], status, runs, f("load_s"), f("migrate_s"), ttft, rate, _bound(d, lang),
                      fmt_bytes(d.get("peak_rss")), _memory(d, lang)))
    notes = [*rank_sentences(rows, lang), *busy_sentences(rows, lang),
             t("cmp.repeat", lang, warmup=WARMUP, runs=RUNS), t("cmp.bound.explain", lang, limit=MEMORY_BOUND)]
    warn = "> ⚠️ " + label.text(lang) + "\n\n" if label else ""
    changed = dtype_table(rows, lang)
    return (warn + markdown.table(head, cells, "lllrrrrlrr") + "\n\n" + "\n\n".join(notes)
            + ("\n\n" + changed if changed else ""))


def dtype_table(rows, lang: str = "en") -> str:
    """What each dtype changed against the reference row (the first float32 one), measured on the same prompt: its
    weights, prefill and decode rates with their counts, its next-token choices and logits against the reference's
    (teacher-forced), the operators a decode step spent its time in; then the sentence each row's numbers say."""
    ds = [d for d in _dicts(rows) if d.get("agreement")]
    if not ds:
        return ""
    head = [t(f"cmp.dtype.col.{c}", lang) for c in ("pair", "weights", "prefill", "decode", "same", "logits", "ops")]
    cells = []
    for d in ds:
        a, prof = d["agreement"], d.get("profile") or {}
        same = t("cmp.dtype.same_cell", lang, same=a["same"], n=a["compared"])
        if a["first_change"] is not None:
            same += "<br>" + t("cmp.dtype.first_change", lang, at=a["first_change"] + 1)
        ops = "<br>".join(f"`{o['op']}` {o['ms_per_token']:.1f} ms" for o in prof.get("ops", [])[:3])
        cells.append((d["pair"], fmt_bytes(d.get("weights_bytes")),
                      t("cmp.dtype.prefill_cell", lang, rate=d["prefill_tokens_per_s"] or 0, n=d.get("prompt_tokens") or 0),
                      t("cmp.dtype.decode_cell", lang, rate=d.get("decode_tokens_per_s") or 0, n=d.get("decode_tokens") or 0),
                      same, t("cmp.dtype.logit_cell", lang, median=a["logit_diff_median"], max=a["logit_diff_max"]),
                      ops + ("<br>" + t("cmp.dtype.ops_total", lang, ms=prof["ms_per_token"], n=prof["tokens"])
                             if prof else "")))
    lines = ["#### " + t("cmp.dtype.title", lang, ref=ds[0]["agreement"]["reference"]),
             markdown.table(head, cells, "lrrrlrl"), ""]
    return "\n".join(lines + [f"- {x}" for x in dtype_sentences(rows, lang)] + ["", t("cmp.dtype.how", lang)])


def dtype_sentences(rows, lang: str = "en") -> list[str]:
    """Per row against the reference, what its numbers say: its weights' share, faster, slower or not told apart
    (every timed run against every run, as the ranking), the next-token choices kept, and, where it is slower and
    spends more of a step converting stored values than the reference, that time."""
    ds = _dicts(rows)
    ref_pair = next((d["agreement"]["reference"] for d in ds if d.get("agreement")), None)
    ref = next((d for d in ds if d["pair"] == ref_pair), None)
    if ref is None or not ref.get("decode_tokens_per_s"):
        return []
    out = []
    for d in ds:
        a = d.get("agreement")
        if d is ref or not a or not d.get("decode_tokens_per_s") or not d.get("weights_bytes"):
            continue
        if d["decode_min_tokens_per_s"] > ref["decode_max_tokens_per_s"] and min(d["runs"], ref["runs"]) >= 2:
            speed = "faster"
        elif d["decode_max_tokens_per_s"] < ref["decode_min_tokens_per_s"] and min(d["runs"], ref["runs"]) >= 2:
            speed = "slower"
        else:
            speed = "unclear"
        said = t("cmp.dtype.says", lang, pair=d["pair"], ref=ref["pair"],
                 share=d["weights_bytes"] / ref["weights_bytes"], weights=fmt_bytes(d["weights_bytes"]),
                 ref_weights=fmt_bytes(ref["weights_bytes"]),
                 speed=t(f"cmp.dtype.speed.{speed}", lang, rate=d["decode_tokens_per_s"],
                         ref_rate=ref["decode_tokens_per_s"]),
                 same=a["same"], n=a["compared"])
        conv, ref_conv = (d.get("profile") or {}).get("convert_ms_per_token"), (ref.get("profile") or {}).get(
            "convert_ms_per_token")
        if speed == "slower" and conv is not None and ref_conv is not None and conv > ref_conv:
            said = t("cmp.dtype.then", lang, a=said, b=t("cmp.dtype.why_slower", lang, conv=conv, ref_conv=ref_conv,
                                                         step=d["profile"]["ms_per_token"], ref=ref["pair"]))
        out.append(said)
    return out


def rank_sentences(rows, lang: str = "en") -> list[str]:
    """Neighbours in decode rate, fastest first: told apart, or "cannot tell" where their spreads overlap."""
    out = []
    for a, b, apart in ranking(rows):
        figures = dict(a=a["pair"], b=b["pair"], a_lo=f"{a['decode_min_tokens_per_s']:.1f}",
                       a_hi=f"{a['decode_max_tokens_per_s']:.1f}", b_lo=f"{b['decode_min_tokens_per_s']:.1f}",
                       b_hi=f"{b['decode_max_tokens_per_s']:.1f}")
        out.append(t("cmp.rank.apart" if apart else "cmp.rank.overlap", lang, **figures))
    return out


def busy_sentences(rows, lang: str = "en") -> list[str]:
    """Each row whose runs ended while the machine was busy, said so beside the table."""
    out = []
    for d in _dicts(rows):
        note = busy_note(d.get("load_average"), d.get("cores"), lang)
        if note:
            out.append("⚠️ " + t("cmp.busy", lang, pair=d["pair"], said=note))
    return out


def _memory(d: dict, lang: str) -> str:
    """The weights and the KV cache as measured, each with its estimate's error."""
    out = fmt_bytes(d.get("weights_bytes"))
    if d.get("weights_error_pct") is not None:
        out += " " + t("cmp.vs_estimate", lang, pct=d["weights_error_pct"])
    if d.get("kv_bytes") is not None:
        out += "<br>" + t("cmp.kv_cell", lang, kv=fmt_bytes(d["kv_bytes"]))
        if d.get("kv_error_pct") is not None:
            out += " " + t("cmp.vs_estimate", lang, pct=d["kv_error_pct"])
    return out


def beside_markdown(beside: dict | None, n_waiting: int | None, lang: str = "en") -> str:
    """What the matrix ran beside (the pool's models, none unloaded), and who was waiting when it ended."""
    if beside is None:
        return ""
    said = (t("pool.beside", lang, models=beside["models"], bytes=fmt_bytes(beside["bytes"])) if beside["models"]
            else t("pool.beside_none", lang))
    return said + (f" {waited(n_waiting, lang)}" if n_waiting is not None else "")
