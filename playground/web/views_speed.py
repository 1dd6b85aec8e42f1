"""What the Speed tab shows: the bandwidth survey, the KV cache's growth and the decode engines, in either language.

Pure formatting, like `playground.web.views`: each function takes the data a handler
kept (dicts as the measuring code returned them, sentences still `Said`) and the
page's language. Nothing here measures or checks.
"""

from __future__ import annotations

import gradio as gr
import pandas as pd

from playground.core.i18n import Said, t
from playground.core.markdown import labelled, table
from playground.core.units import fmt_bytes
from playground.run.generation import COMPILED
from playground.run.render import busy_note, waited


def _say(x: object, lang: str) -> str:
    return x.text(lang) if isinstance(x, Said) else str(x or "")


def _gbps(b: dict | None) -> str:
    return f"{b['gbps']:.1f} GB/s" if b else "—"


def _waited(d: dict, lang: str) -> str:
    return f"\n\n_{waited(d['waiting'], lang)}_" if d.get("waiting") is not None else ""


def _ms(s: float | None) -> str:
    if s is None:
        return "—"
    return f"{s * 1e3:.2f} ms" if s < 1 else f"{s:.2f} s"


# ---------------------------------------------------------------- copy bandwidth

def bandwidth_markdown(d: dict, lang: str = "en") -> str:
    cpu = d["cpu"]
    head = [t(k, lang) for k in ("bw.head.rate", "bw.head.value", "bw.head.how", "bw.head.bounds")]
    rows = []
    llc = fmt_bytes(cpu["last_level_cache_bytes"]) if cpu.get("last_level_cache_bytes") else "?"
    for kind, how_fields, bound in (
        ("read", dict(size=fmt_bytes(cpu["read"]["bytes"]), threads=cpu["threads"], llc=llc), "bw.bounds.read"),
        ("memcpy", dict(size=fmt_bytes(cpu["memcpy"]["bytes"])), "bw.bounds.memcpy"),
        ("cast", dict(size=fmt_bytes(cpu["cast"]["bytes"]), per_gb=f"{1 / cpu['cast']['gbps']:.2f}"), "bw.bounds.cast"),
    ):
        rows.append((labelled("CPU", t('bw.kind.' + kind, lang), lang, plain=True), _gbps(cpu[kind]), t("bw.how." + kind, lang, **how_fields),
                     t(bound, lang)))
    for g in d["gpu"]["devices"]:
        for kind, bound in (("h2d_pageable", "bw.bounds.h2d_pageable"), ("h2d_pinned", "bw.bounds.h2d_pinned"),
                            ("d2h_pageable", "bw.bounds.d2h"), ("d2h_pinned", "bw.bounds.d2h")):
            if kind in g:
                rows.append((labelled(g['device'], t('bw.kind.' + kind, lang), lang, plain=True), _gbps(g[kind]),
                             t("bw.how.gpu", lang, size=fmt_bytes(g[kind]["bytes"])), t(bound, lang)))
        rows.append((labelled(g['device'], t('bw.kind.read', lang), lang, plain=True), _gbps(g["read"]), "`sum()`", t("bw.bounds.read", lang)))
    out = [table(head, rows, "lrll"), ""]
    if not d["gpu"]["devices"]:
        reasons = t("punct.semicolon", lang).join(labelled(k, _say(r, lang), lang, plain=True)
                                                  for k, r in d["gpu"]["reasons"].items()) or "—"
        out.append(t("bw.gpu.none", lang, reason=reasons))
    for link in d["gpu"].get("links", []):
        if link["theoretical_gbps"]:
            out.append(t("bw.gpu.link", lang, device=f"cuda:{link['ordinal']}", gen=link["generation_max"],
                         width=link["width_max"], gen_now=link["generation_now"], width_now=link["width_now"],
                         rate=f"{link['theoretical_gbps']:.2f}"))
        else:
            out.append(t("bw.gpu.no_link", lang, device=f"cuda:{link['ordinal']}", reason=_say(link["reason"], lang)))
    out += ["", gap_markdown(d.get("migrate"), lang)]
    return "\n".join(out) + _waited(d, lang)


def gap_markdown(g: dict | None, lang: str = "en") -> str:
    if g is None:
        return t("bw.gap.none", lang)
    title = labelled(t('bw.gap.title', lang), f"`{g['model']}` → `{g['device']}` · `{g['dtype']}` · "
                     f"{fmt_bytes(g['weights_bytes'])}{t('punct.comma', lang)}{t('bw.gap.tensors', lang, n=g['tensors'])}",
                     lang, plain=True)
    # the measured time, then each prediction there is a rate for (pinned and link: a GPU's; cast: float32's)
    rows = [(t(f"bw.gap.{k}", lang), _ms(g[f"{k}_seconds"]))
            for k in ("measured", "predicted", "pinned", "link", "tutorial", "cast") if g.get(f"{k}_seconds") is not None]
    head = [t("bw.gap.head.what", lang), t("bw.gap.head.time", lang)]
    return "\n".join([title, "", table(head, rows, "lr"), "", _say(g["why"], lang)])


# ---------------------------------------------------------------- the KV cache

def kv_markdown(g: dict, lang: str = "en") -> str:
    lines = [t("kv.summary", lang, layers=g["layers"], kv_heads=g["kv_heads"], head_dim=g["head_dim"],
               dtype_bytes=g["dtype_bytes"], dtype=g["dtype"], per_token=f"{g['estimate_bytes_per_token']:,}",
               cache=g["cache_class"], n=len(g["points"]), slope=f"{g['measured_bytes_per_token']:,.1f}",
               error=f"{100 * g['max_error']:.2f}%"), ""]
    steps = {s["tokens"]: s for s in g["steps"]}
    head = [t(k, lang) for k in ("kv.head.tokens", "kv.head.measured", "kv.head.estimate", "kv.head.error",
                                 "kv.head.with", "kv.head.without")]
    rows = []
    for p in g["points"]:
        s = steps.get(p["tokens"])
        w = f"{s['with_cache_ms']:.2f} ms" if s else "—"
        wo = f"{s['without_cache_ms']:.2f} ms" if s else "—"
        rows.append((p["tokens"], f"{p['cache_bytes']:,} B", f"{p['estimate_bytes']:,} B", f"{100 * p['error']:+.2f}%",
                     w, wo))
    lines.append(table(head, rows, "rrrrrr"))
    if len(g["steps"]) >= 2:
        a, b = g["steps"][0], g["steps"][-1]
        # The sentence must agree with these timings: it says the cost grows only where it did.
        grew = b["without_cache_ms"] > 1.3 * a["without_cache_ms"] and b["with_cache_ms"] < b["without_cache_ms"]
        lines += ["", t("kv.quadratic" if grew else "kv.noisy", lang, first=a["tokens"], last=b["tokens"],
                        wo_first=f"{a['without_cache_ms']:.2f}", wo_last=f"{b['without_cache_ms']:.2f}",
                        w_first=f"{a['with_cache_ms']:.2f}", w_last=f"{b['with_cache_ms']:.2f}")]
    return "\n".join(lines) + _waited(g, lang)


def kv_plot_words(lang: str, y_key: str) -> dict:
    """A KV plot's axis and legend titles in the page's language: gr.LinePlot(**kv_plot_words(...))."""
    return dict(x_title=t("kv.axis.tokens", lang), y_title=t(y_key, lang), color_title=t("kv.axis.series", lang))


def kv_plots(g: dict | None, lang: str = "en") -> tuple[dict, dict]:
    """The two plots' updates: their data and their titles, in the page's language."""
    b, s = kv_frames(g, lang)
    # colors_in_legend names the series: Gradio fixes a plot's colour domain when it first draws it, so
    # series renamed in the other language would otherwise be neither drawn nor listed.
    return (gr.update(value=b, colors_in_legend=list(dict.fromkeys(b["series"])) or None,
                      **kv_plot_words(lang, "kv.axis.bytes")),
            gr.update(value=s, colors_in_legend=list(dict.fromkeys(s["series"])) or None,
                      **kv_plot_words(lang, "kv.axis.ms")))


def kv_frames(g: dict | None, lang: str = "en") -> tuple[pd.DataFrame, pd.DataFrame]:
    """(bytes against tokens: measured and estimate; ms per step against tokens: with and without the cache)."""
    if not g:
        return (pd.DataFrame({"tokens": [], "bytes": [], "series": []}),
                pd.DataFrame({"tokens": [], "ms": [], "series": []}))
    m, e = t("kv.series.measured", lang), t("kv.series.estimate", lang)
    b = [dict(tokens=p["tokens"], bytes=p["cache_bytes"], series=m) for p in g["points"]]
    b += [dict(tokens=p["tokens"], bytes=p["estimate_bytes"], series=e) for p in g["points"]]
    w, wo = t("kv.series.with", lang), t("kv.series.without", lang)
    s = [dict(tokens=x["tokens"], ms=x["with_cache_ms"], series=w) for x in g["steps"]]
    s += [dict(tokens=x["tokens"], ms=x["without_cache_ms"], series=wo) for x in g["steps"]]
    return pd.DataFrame(b), pd.DataFrame(s)


# ---------------------------------------------------------------- decode engines

def compiled_how(row: dict, lang: str = "en") -> str:
    """How the compiled engine's step came to be: compiled by this run, or a compilation reused (what it cost then)."""
    if row.get("compile_seconds"):
        return t("eng.compiled.now", lang, seconds=f"{row['compile_seconds']:.1f}")
    then = row.get("compiled_before")
    return (t("eng.compiled.reused", lang, seconds=f"{then:.1f}") if then is not None
            else t("eng.compiled.reused_unknown", lang))


def compiled_cell(row: dict, lang: str = "en") -> str:
    """The table's compile column: '—' where nothing compiles, the time where this run compiled, else 'reused'."""
    if row.get("compile_seconds") is None:
        return "—"
    if row["compile_seconds"]:
        return f"{row['compile_seconds']:.1f} s"
    then = row.get("compiled_before")
    return (t("eng.compiled.reused_cell", lang, seconds=f"{then:.1f}") if then is not None
            else t("eng.compiled.reused_cell_unknown", lang))


def nocache_faster(r: dict, lang: str = "en") -> str:
    """Where the loop without the cache decoded faster than the loop with it: why, from this run's figures
    ('' where it did not)."""
    by = {row["engine"]: row for row in r["rows"]}
    cached, bare = by.get("manual"), by.get("manual-nocache")
    if not cached or not bare or not cached["tokens_per_second"] or not bare["tokens_per_second"]:
        return ""
    if bare["tokens_per_second"] <= cached["tokens_per_second"]:
        return ""
    return t("eng.nocache_faster", lang, bare=f"{bare['tokens_per_second']:.1f}",
             cached=f"{cached['tokens_per_second']:.1f}", n=bare["new_tokens"], prompt=r["prompt_tokens"],
             longest=r["prompt_tokens"] + bare["new_tokens"] - 1)


def engines_markdown(r: dict, lang: str = "en") -> str:
    read = r["read"]
    where = r.get("location") or {}
    lines = [t("eng.bound", lang, rate=f"{read['gbps']:.1f}", how=f"`sum()`{t('punct.comma', lang)}{fmt_bytes(read['bytes'])}",
               size=fmt_bytes(r["weights_bytes"]), bound=f"{r['bound_tokens_per_second']:.0f}", model=r["model"],
               device=where.get("became") or r["device"], dtype=r["dtype"])]
    if where.get("offloaded"):  # the bound assumes every weight in RAM: an offloaded model's are brought in first
        lines += ["", t("eng.offloaded", lang, offloaded=fmt_bytes(where["offloaded_bytes"]),
                        blocks=where["offloaded_blocks"], of=where["blocks"])]
    if r["weights_in_cache"]:
        lines += ["", t("eng.in_cache", lang, size=fmt_bytes(r["weights_bytes"]), llc=fmt_bytes(r["last_level_cache_bytes"]))]
    head = [t(k, lang) for k in ("eng.head.engine", "eng.head.tokens", "eng.head.rate", "eng.head.same",
                                 "eng.head.compile", "eng.head.percent", "eng.head.overhead")]
    rows = []
    for row in r["rows"]:
        same = (t("eng.same.yes", lang) if row["same_tokens_as_generate"]
                else t("eng.same.no", lang, i=row["first_difference"] + 1))  # counted from 1, as a reader counts
        rate = f"{row['tokens_per_second']:.1f}" if row["tokens_per_second"] else "—"
        pct = f"{row['percent_of_bound']:.0f}%" if row["percent_of_bound"] is not None else "—"
        over = f"{row['overhead_ms_per_token']:.2f} ms" if row["overhead_ms_per_token"] is not None else "—"
        built = compiled_cell(row, lang)
        rows.append((t("engine." + row["engine"], lang), row["new_tokens"], rate, same, built, pct, over))
    lines += ["", table(head, rows, "lrrlrrr"), "", _say(r["limit"], lang)]
    for row in r["rows"]:
        p = row.get("parting")
        if p:  # where the cache-less loop parted from generate(), and why, measured
            key = "eng.parted.tie" if abs(p["margin"]) <= p["gap"] else "eng.parted.other"
            lines += ["", t(key, lang, engine=t("engine." + row["engine"], lang), token=p["index"] + 1,
                            margin=f"{p['margin']:.4f}", gap=f"{p['gap']:.4f}", dtype=r["dtype"])]
    nocache = nocache_faster(r, lang)
    if nocache:
        lines += ["", nocache]
    for row in r["rows"]:
        if row["engine"] == COMPILED:
            lines += ["", t("eng.compiled_note", lang, how=compiled_how(row, lang))]
    busy = busy_note(r.get("load_average"), r.get("cores"), lang)
    if busy:  # as the other panels say it: a rate measured then shared the CPU with other work
        lines += ["", "⚠️ " + t("eng.busy", lang, said=busy)]
    if r.get("compile_error"):
        lines += ["", f"⚠️ {_say(r['compile_error'], lang)}"]
    return "\n".join(lines) + _waited(r, lang)
