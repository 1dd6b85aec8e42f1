"""What the page shows: reports turned into Markdown, in English or Chinese.

Pure formatting, no Gradio and no measuring: every number here was measured by the
loader, the memory readings and the generation, and arrives in a report dataclass
whose sentences are kept as facts (`Said`). The words come from the i18n tables,
so the page can switch language.
"""

from __future__ import annotations

import dataclasses
import html
import time

import pandas as pd

from playground.core.i18n import in_lang, t
from playground.core.markdown import aside, labelled, table
from playground.core.units import fmt_bytes
from playground.hw.devices import DeviceInfo
from playground.load.estimate import Estimate
from playground.load.fit import Fit
from playground.run.generation import ENGINES, GenerationStats
from playground.run.render import device_label, phase_name, secs


def status_markdown(status: dict, lang: str = "en") -> str:
    """The banner (the pool's `status`): the visitor's own model, or why it has none; then, apart, how many
    models the server holds for how many visitors."""
    if status["loaded"]:
        own = t("status.loaded", lang, model=status["model"], device=status["device"], dtype=status["dtype"])
        if status.get("became") and status["became"] != status["device"]:  # auto, or memory limits: what it became
            own += t("status.became", lang, became=status["became"])
        own += t("status.ram", lang, ram=fmt_bytes(status.get("ram") or 0))
        own += f" · ⚠️ {in_lang(status['label'], lang)}" if status.get("label") else ""
    elif status.get("gone"):
        g = status["gone"]
        own = t("status.gone", lang, model=g["model"], device=g["device"], dtype=g["dtype"],
                at=time.strftime("%H:%M:%S", time.localtime(g["at"])), seconds=f"{g['seconds']:.1f}")
    else:
        own = t("status.none", lang)
    pool = t("status.pool", lang, models=status["models"], visitors=status["visitors"], bytes=fmt_bytes(status["bytes"]))
    return f"{own}  \n{pool}"


def devices_html(devs: list[DeviceInfo], lang: str = "en") -> str:
    """Every device, the absent ones greyed out with the reason they are absent. Three columns, the details
    (name, memory, native 16-bit formats, note) together in the last, so that the table fits the page's
    narrow left column in either language."""
    rows = []
    for d in devs:
        feats = ", ".join(f for f, ok in (("bf16", d.bf16), ("fp16", d.fp16)) if ok)
        details = [html.escape(d.name), fmt_bytes(d.total_memory) if d.total_memory else "",
                   labelled(t("dev.col.native", lang), feats, lang, plain=True) if feats else "",
                   html.escape(d.reason.text(lang) if d.reason else "")]
        style = "" if d.available else ' style="opacity:.5"'
        state = t("dev.available" if d.available else "dev.unavailable", lang)
        rows.append(f"<tr{style} class='dev-{'on' if d.available else 'off'}'><td><code>{html.escape(d.id)}</code></td>"
                    f"<td>{state}</td><td>{' · '.join(x for x in details if x)}</td></tr>")
    head = "".join(f"<th>{t('dev.col.' + c, lang)}</th>" for c in ("device", "state", "note"))
    return f"<table class='devices'><thead><tr>{head}</tr></thead><tbody>" + "".join(rows) + "</tbody></table>"


def peaks_markdown(peaks: list[dict], lang: str = "en") -> str:
    if not peaks:
        return ""
    head = [t(k, lang) for k in ("report.phase", "report.time", "timeline.rss_start", "timeline.rss_peak",
                                  "timeline.avail_min", "report.vram")]
    rows = []
    for p in peaks:
        vram = "<br>".join(f"cuda:{g.get('index')}: {fmt_bytes(g.get('allocated_peak') or g.get('allocated'))}"
                           for g in p.get("gpu_peaks") or []) or "—"
        when = t("timeline.samples", lang, time=secs(p["seconds"]), n=p["samples"])
        rows.append((phase_name(p["name"], lang), when, fmt_bytes(p["rss_start"]), f"**{fmt_bytes(p['rss_peak'])}**",
                     fmt_bytes(p["available_min"]), vram))
    return table(head, rows, "lrrrrl")


def estimate_markdown(e: Estimate, lang: str = "en") -> str:
    verdict = t("estimate.fits" if e.fits else "estimate.refused", lang)
    comma = t("punct.comma", lang)
    by_dtype = comma.join(labelled(k, fmt_bytes(v), lang, plain=True) for k, v in e.weights_bytes_by_dtype.items())
    where = e.available_source.text(lang) if e.available_source else ""
    # the largest layer's names, whole: the first two, then how many more share its size
    names = e.largest_layer_names
    largest = comma.join(f"`{n}`" for n in names[:2]) + (t("estimate.more", lang, n=len(names) - 2)
                                                          if len(names) > 2 else "")
    rows = [(aside(t('report.weights', lang), e.dtype, lang), fmt_bytes(e.weights_bytes)),
            (aside(t('estimate.required', lang), f"+{e.margin:.0%}", lang), fmt_bytes(e.required_bytes))]
    if e.build_bytes > e.required_bytes:  # a synthetic model's first use: its float32 build is what RAM must hold
        rows.append((t("estimate.build", lang), fmt_bytes(e.build_bytes)))
    rows += [(t("estimate.available", lang), aside(fmt_bytes(e.available_bytes), where, lang)),
             (t("estimate.largest", lang), aside(fmt_bytes(e.largest_layer_bytes), largest, lang)),
             (t("estimate.kv", lang), f"{fmt_bytes(e.kv_bytes_per_token)} = {e.kv_formula.text(lang)}")]
    return "\n".join([
        f"**{verdict}** — {e.reason.text(lang) if e.reason else ''}",
        "",
        table([t("estimate.what", lang), ""], rows, "lr"),
        "",
        labelled(t('estimate.by_dtype', lang), by_dtype, lang, plain=True) if by_dtype else "",
    ])


def estimate_fit_markdown(both: tuple | None, lang: str = "en") -> str:
    """The estimate panel: the estimate, then whether it fits at the context and batch asked."""
    if not both:
        return ""
    est, fitted = both[:2]
    if len(both) > 3 and both[3]:  # the selection moved on since: said over it (handlers_memory.ui_estimate_follows)
        model, device, dtype, context, batch = both[2]
        line = t("estimate.stale", lang, model=model, device=device, dtype=dtype, context=context, batch=batch)
        return f"> ⚠️ {line}\n\n" + estimate_fit_markdown(both[:3], lang)
    load_need = est.reason.fields.get("need") if est.reason is not None and not est.fits else None
    return estimate_markdown(est, lang) + "\n\n" + fit_markdown(fitted, lang, refused_on(est), load_need)


def refused_on(est: Estimate) -> set[str] | None:
    """The devices the estimate refuses the load on (None: every one): the fit table must not say a refused
    load fits. A synthetic model's float32 build needs the RAM whatever the device; 'auto' pools them all."""
    if est.fits:
        return set()
    if est.device == "auto" or (est.reason is not None and est.reason.key == "est.reason.build"):
        return None
    return {est.device}


def fit_markdown(f: Fit, lang: str = "en", refused: set[str] | None = frozenset(), load_need: str | None = None) -> str:
    """Each device: what the model needs at the context and batch asked, what is free, and the longest
    context that fits; above it, how the KV cache and the activation peak were sized. On a device where the
    estimate refuses the load (`refused`, None for all) the rows say so instead: it needs what the refusal
    says (`load_need`, the estimate's figure) at any context, and no context fits."""

    def no_load(d) -> bool:
        return refused is None or d.device in refused

    def fits(d) -> str:
        if no_load(d):
            return t("fit.refused", lang)
        return t("fit.beyond" if f.beyond_model else "fit.yes" if d.fits else "fit.no", lang, ctx=f.context_length)

    def need(d) -> str:
        if no_load(d) and load_need:
            return f"**{load_need}**<br><small>{t('fit.need.load', lang)}</small>"
        return f"**{fmt_bytes(d.need_bytes)}**"

    def largest(d) -> str:
        if no_load(d):
            return t("fit.largest.refused", lang)
        return (t("fit.capped", lang, n=d.largest_context) if d.capped else
                t("fit.none", lang) if d.largest_context == 0 else f"{d.largest_context:,}")

    a = f.activation
    if a["measured"]:
        act = t("fit.act.measured", lang, counter=t(f"ledger.counter.{a['counter']}", lang), a=a["tokens"][0],
                b=a["tokens"][1], per=fmt_bytes(a["per_token"]), fixed=fmt_bytes(a["fixed"]))
    else:
        act = t("fit.act.formula", lang, per=fmt_bytes(a["per_token"]), fixed=fmt_bytes(a["fixed"]),
                why=a["reason"].text(lang) if a.get("reason") else "")
    # one column per device, one row per figure: narrow enough for the panel's column with three devices
    head = [t("fit.col.device", lang)] + [f"`{d.device}`" for d in f.devices]
    rows = [(t("fit.col.free", lang), *(f"{fmt_bytes(d.free_bytes)}<br><small>{d.free_source.text(lang)}</small>"
                                        for d in f.devices)),
            (t("fit.col.weights", lang), *(fmt_bytes(d.weights_bytes) for d in f.devices)),
            (t("fit.col.kv", lang), *(fmt_bytes(d.kv_bytes) for d in f.devices)),
            (t("fit.col.act", lang), *(fmt_bytes(d.activation_bytes) for d in f.devices)),
            (f"**{t('fit.col.need', lang)}**", *(need(d) for d in f.devices)),
            (t("fit.col.fits", lang), *(fits(d) for d in f.devices)),
            (t("fit.col.largest", lang), *(largest(d) for d in f.devices))]
    lines = [f"**{t('fit.title', lang, context=f'{f.context:,}', batch=f.batch)}**", "",
             "- " + t("fit.kv", lang, formula=f.kv_formula.text(lang))]
    if f.sliding:
        lines.append("- " + t("fit.sliding", lang, **f.sliding))
    lines += ["- " + act, "", table(head, rows, "l" + "r" * len(f.devices))]
    return "\n".join(lines)


def ledger_frames(parts: list[dict], lang: str = "en") -> tuple[pd.DataFrame, pd.DataFrame]:
    """The ledger as two stacked bars per device: this process's parts (with the prefill's peak on top), and
    the whole device (this process, the other processes, free). MiB; a negative `unaccounted` (the parts
    over-explain) is drawn as zero, the table says it."""
    proc, whole = [], []
    for dev in dict.fromkeys(p["device"] for p in parts):
        label = device_label(dev, lang)
        mine = [p for p in parts if p["device"] == dev]
        held = [p for p in mine if p["scope"] in ("process", "peak") and p["bytes"]]
        proc += [(label, t(f"ledger.short.{p['part']}", lang), max(p["bytes"], 0) / 2**20) for p in held]
        total = sum(p["bytes"] or 0 for p in mine if p["scope"] == "process")
        whole.append((label, t("ledger.bar.this_process", lang), max(total, 0) / 2**20))
        whole += [(label, t(f"ledger.short.{p['part']}", lang), p["bytes"] / 2**20)
                  for p in mine if p["scope"] == "device" and p["bytes"] is not None]
    cols = ["device", "part", "MiB"]
    return pd.DataFrame(proc, columns=cols), pd.DataFrame(whole, columns=cols)


def oom_frame(o, lang: str = "en") -> pd.DataFrame:
    """An out-of-memory message's numbers as one stacked bar (MiB): held, cached, the others, free, and on top
    the request that did not fit."""
    rows = [(o.device, t(f"oom.part.{p}", lang), b / 2**20) for p, b in (o.parts() if o is not None else [])]
    return pd.DataFrame(rows, columns=["device", "part", "MiB"])


def oom_words(lang: str = "en") -> dict:
    return dict(x_title=t("oom.y", lang), y_title=t("oom.x", lang), color_title=t("oom.color", lang),
                label=t("oom.title", lang))


def ledger_words(lang: str = "en", which: str = "process") -> dict:
    """A ledger bar plot's titles in `lang`: gr.BarPlot(**ledger_words(lang, "process" | "device"))."""
    return dict(x_title=t("ledger.y", lang), y_title=t("ledger.x", lang), color_title=t("ledger.color", lang),
                label=t("ledger.bar." + which, lang))


def made_with(d: dict | None) -> dict | None:
    """The model a result was made with, as (model, device, dtype) keys: from a load report's or a generation's
    dict; None when it names none."""
    if not d or not d.get("model"):
        return None
    return {k: d.get(k) for k in ("model", "device", "dtype")}


def stale_markdown(made: dict | None, now: dict | None, lang: str = "en") -> str:
    """The line over results made with `made` while `now` is loaded: '' while they match (or nothing was
    made); otherwise what they belonged to and what the visitor loaded since (or that it is gone)."""
    if made is None or made == now:
        return ""
    said = (lambda m: t("page.stale.model", lang, **m))
    if now is None:
        return t("page.stale.gone", lang, made=said(made))
    return t("page.stale", lang, made=said(made), now=said(now))


def refusal_markdown(text: str, lang: str = "en") -> str:
    """A refused request, in the panel of the button that sent it (the message may quote what was typed)."""
    return t("page.refused", lang, text=html.escape(text, quote=False))


def stats_from_dict(d: dict) -> GenerationStats:
    """Rebuild the stats record from its dict (extra engine fields ignored)."""
    names = {f.name for f in dataclasses.fields(GenerationStats)}
    return GenerationStats(**{k: v for k, v in d.items() if k in names})


def context_info(ctx: int | None, prompt_tokens: int | None, lang: str = "en") -> str:
    """The line under max_new_tokens: the context, what the prompt takes of it, what it leaves."""
    if ctx is None:
        return ""
    if prompt_tokens is None:
        return t("page.context.unknown", lang, ctx=ctx)
    return t("page.context", lang, ctx=ctx, n=prompt_tokens, left=max(ctx - prompt_tokens, 0))


def engine_choices(lang: str = "en") -> list[tuple[str, str]]:
    return [(t(f"engine.{e}", lang), e) for e in ENGINES]


def decoding_choices(lang: str = "en") -> list[tuple[str, str]]:
    return [(t(f"page.decoding.{m}", lang), m) for m in ("sampled", "greedy", "custom")]


def lab_running(elapsed: float, expected: float | None, lang: str = "en") -> str:
    """The lab's line while a mistake runs: seconds so far, and the time left from its last runs here."""
    if expected is None:
        return t("lab.running_first", lang, elapsed=f"{elapsed:.0f}")
    took = f"{expected:.1f}"
    if elapsed >= expected:
        return t("lab.running_over", lang, elapsed=f"{elapsed:.0f}", took=took)
    left = expected - elapsed
    return t("lab.running_left", lang, elapsed=f"{elapsed:.0f}", left=f"{left:.0f}" if left >= 10 else f"{left:.1f}",
             took=took)
