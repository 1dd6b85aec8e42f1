"""What the page shows: reports turned into Markdown, in English or Chinese.

Pure formatting, no Gradio and no measuring: every number here was measured by the
loader, the memory readings and the generation, and arrives in a report dataclass
whose sentences are kept as facts (`Said`). The words come from the i18n tables,
so the page can switch language.
"""

from __future__ import annotations

import dataclasses
import html

from playground.core.i18n import t
from playground.core.units import fmt_bytes
from playground.hw import zerogpu
from playground.hw.devices import DeviceInfo
from playground.load.estimate import Estimate
from playground.load.loader import LoadReport
from playground.run import decode
from playground.run.generation import GenerationStats


def status_markdown(status: dict, lang: str = "en") -> str:
    if not status["loaded"]:
        if status.get("away"):  # Compare borrows the slot: the visitor's model comes back afterwards
            return t("status.away", lang, **status["away"])
        return t("status.none", lang)
    extra = f" · ⚠️ {status['label'].text(lang)}" if status.get("label") else ""
    return t("status.loaded", lang, model=status["model"], device=status["device"], dtype=status["dtype"]) + extra


def devices_html(devs: list[DeviceInfo], lang: str = "en") -> str:
    """Every device, the absent ones greyed out with the reason they are absent. Three columns, the details
    (name, memory, native 16-bit formats, note) together in the last, so that the table fits the page's
    narrow left column in either language."""
    rows = []
    for d in devs:
        feats = ", ".join(f for f, ok in (("bf16", d.bf16), ("fp16", d.fp16)) if ok)
        details = [html.escape(d.name), fmt_bytes(d.total_memory) if d.total_memory else "",
                   f"{t('dev.col.native', lang)}: {feats}" if feats else "",
                   html.escape(d.reason.text(lang) if d.reason else "")]
        style = "" if d.available else ' style="opacity:.5"'
        state = t("dev.available" if d.available else "dev.unavailable", lang)
        rows.append(f"<tr{style} class='dev-{'on' if d.available else 'off'}'><td><code>{html.escape(d.id)}</code></td>"
                    f"<td>{state}</td><td>{' · '.join(x for x in details if x)}</td></tr>")
    head = "".join(f"<th>{t('dev.col.' + c, lang)}</th>" for c in ("device", "state", "note"))
    return f"<table class='devices'><thead><tr>{head}</tr></thead><tbody>" + "".join(rows) + "</tbody></table>"


def phase_name(name: str, lang: str = "en") -> str:
    """A phase of a load or a generation ("load", "decode", ...) as the page names it."""
    return t(f"phase.name.{name}", lang)


def _vram_cell(gpus: list[dict], lang: str = "en") -> str:
    if not gpus:
        return "—"
    return "<br>".join(
        t("report.vram_cell", lang, index=g["index"], alloc=fmt_bytes(g["allocated"]), reserved=fmt_bytes(g["reserved"]))
        + (f", NVML {fmt_bytes(g['nvml_used'])}/{fmt_bytes(g['nvml_total'])}"
           if g.get("nvml_used") is not None else "")
        for g in gpus
    )


def secs(s: float) -> str:
    return f"{s * 1000:.1f} ms" if s < 1 else f"{s:.2f} s"


def report_markdown(r: LoadReport, lang: str = "en") -> str:
    lines = [f"### `{r.model}` → `{r.device}` · `{r.dtype}`"]
    if zerogpu.timing_label():
        lines.append(f"> ⏱️ {zerogpu.timing_label()}")
    if r.label:
        lines.append(f"> ⚠️ **{r.label.text(lang)}**")
    head = [t(k, lang) for k in ("report.phase", "report.what", "report.time", "report.rss", "report.drss", "report.vram")]
    lines += ["", "| " + " | ".join(head) + " |", "|---|---|---:|---:|---:|---|"]
    what = {
        "download": t("report.download", lang),
        "estimate": t("report.estimate", lang),
        "build": t("report.build", lang),
        "import": t("report.import", lang),
        "load": t("report.load_auto" if r.device == "auto" else "report.load", lang),
        "migrate": f"`model.to('{r.device}')`" if r.device != "auto" else t("report.placed", lang),
        "eval": "`model.eval()`",
    }
    for p in r.phases:
        lines.append(
            f"| {phase_name(p.name, lang)} | {what[p.name]} | {secs(p.seconds)} | {fmt_bytes(p.rss_before)} → "
            f"{fmt_bytes(p.rss_after)} | {fmt_bytes(p.rss_after - p.rss_before)} | {_vram_cell(p.vram_after, lang)} |"
        )
    notes = {p.name: p.note.text(lang) for p in r.phases if p.note}
    lines.append("")
    if "download" in notes:
        lines += [f"**{phase_name('download', lang)}:** {notes['download']}", ""]
    lines += [
        f"**{t('report.check', lang)}:** {notes.get('estimate', '')}",
        *(["", f"**{t('report.build', lang)}:** {notes['build']}"] if "build" in notes else []),
        "",
        f"**{t('report.params', lang)}:** {r.param_count:,} · **{t('report.buffers', lang)}:** {r.buffer_count} · "
        f"**{t('report.weights', lang)}:** {fmt_bytes(r.weights_bytes)} {t('report.in_dtype', lang, dtype=r.dtype)} "
        f"({t('report.weights_how', lang)}) · **{t('report.disk', lang)}:** {fmt_bytes(r.disk_bytes)} (safetensors)",
        "",
        "**" + t("report.ram_growth", lang, delta=fmt_bytes(r.ram["delta"]), weights=fmt_bytes(r.weights_bytes),
                 avail=fmt_bytes(r.ram["available_after"])) + "**",
        "",
        f"**{t('report.dtype', lang)}:** {r.dtype_reason.text(lang)}.",
        f"**{t('report.migration', lang)}:** {r.migrate_note.text(lang)}",
    ]
    if r.file_backed_bytes:
        lines.append(f"**mmap ({t('report.mmap_label', lang)}):** {fmt_bytes(r.file_backed_bytes)} — "
                     f"{t('report.mmap', lang)}")
    if r.hint:
        lines.append(f"**{t('report.hint', lang)}:** {r.hint.text(lang)}")
    if r.chat_template:
        lines.append(f"**{t('report.chat', lang)}:** {t('report.chat_yes', lang)}")
    if not r.vram["available"] and r.vram["reason"]:
        lines.append(f"**{t('report.vram_label', lang)}:** {r.vram['reason'].text(lang)}.")
    if r.hf_device_map:
        lines.append(f"**{t('report.placement', lang)} (`hf_device_map`):** "
                     + ", ".join(f"`{k or '(all)'}` → {v}" for k, v in r.hf_device_map.items()))
    return "\n".join(lines)


def stats_markdown(s: GenerationStats, lang: str = "en") -> str:
    running = s.finish_reason == "running"
    state = (t("stats.running", lang) if running
             else t("stats.done", lang, reason=t(f"finish.{s.finish_reason}", lang)))
    ttft = f"{s.ttft_seconds * 1000:.0f} ms" if s.ttft_seconds is not None else "—"
    rate = f"{s.tokens_per_second:.1f} tokens/s" if s.tokens_per_second else "—"
    decode_t = f"{s.decode_seconds:.3f} s" if s.decode_seconds is not None else "—"
    cells = [ttft, str(s.prompt_tokens), str(s.new_tokens),
             t("stats.rate_cell", lang, rate=rate, n=max(s.new_tokens - 1, 0), t=decode_t), f"{s.total_seconds:.2f} s"]
    head = [t(k, lang) for k in ("stats.ttft", "stats.prompt", "stats.new", "stats.rate", "stats.total")]
    mode = t("stats.greedy" if s.greedy else "stats.sampling", lang)
    chat = " · " + t("stats.chat_applied", lang) if s.chat_template_applied else ""
    return (f"**{state}** · {t('stats.mode', lang)}: {mode}{chat}\n\n"
            "| " + " | ".join(head) + " |\n|---:|---:|---:|---:|---:|\n| " + " | ".join(cells) + " |")


def timeline_frame(rows: list[dict], gpus: bool = False, lang: str = "en"):
    """Sampler rows -> a DataFrame for a line plot: MiB over seconds, one colour per phase
    (process RSS, phases named in `lang`), or per GPU series when `gpus`."""
    import pandas as pd

    # samples taken before the first phase was marked belong to no phase: left out, or the plot would join
    # the load's first reading to the generation's with one line of their shared colour
    keep = [r for r in rows if r["phase"] and (r["series"].startswith("cuda") if gpus else r["series"] == "process RSS")]
    df = pd.DataFrame(keep, columns=["t", "phase", "series", "bytes"])
    df["MiB"] = df["bytes"] / 2**20
    df["seconds"] = df["t"].round(3)
    df["phase"] = [phase_name(p, lang) for p in df["phase"]]
    return df[["seconds", "MiB", "phase", "series"]]


def timeline_words(lang: str = "en") -> dict:
    """The timeline plot's titles in `lang`: gr.LinePlot(**timeline_words(lang))."""
    return dict(x_title=t("timeline.x", lang), y_title=t("timeline.y", lang), color_title=t("timeline.color", lang))


def peaks_markdown(peaks: list[dict], lang: str = "en") -> str:
    if not peaks:
        return ""
    head = [t(k, lang) for k in ("report.phase", "report.time", "timeline.rss_start", "timeline.rss_peak",
                                  "timeline.avail_min", "report.vram")]
    lines = ["| " + " | ".join(head) + " |", "|---|---:|---:|---:|---:|---|"]
    for p in peaks:
        vram = "<br>".join(f"cuda:{g.get('index')}: {fmt_bytes(g.get('allocated_peak') or g.get('allocated'))}"
                           for g in p.get("gpu_peaks") or []) or "—"
        when = t("timeline.samples", lang, time=secs(p["seconds"]), n=p["samples"])
        lines.append(f"| {phase_name(p['name'], lang)} | {when} | {fmt_bytes(p['rss_start'])} | "
                     f"**{fmt_bytes(p['rss_peak'])}** | {fmt_bytes(p['available_min'])} | {vram} |")
    return "\n".join(lines)


def estimate_markdown(e: Estimate, lang: str = "en") -> str:
    verdict = t("estimate.fits" if e.fits else "estimate.refused", lang)
    by_dtype = ", ".join(f"{k}: {fmt_bytes(v)}" for k, v in e.weights_bytes_by_dtype.items())
    where = e.available_source.text(lang) if e.available_source else ""
    return "\n".join([
        f"**{verdict}** — {e.reason.text(lang) if e.reason else ''}",
        "",
        f"| {t('estimate.what', lang)} | |", "|---|---:|",
        f"| {t('report.weights', lang)} ({e.dtype}) | {fmt_bytes(e.weights_bytes)} |",
        f"| {t('estimate.required', lang)} (+{e.margin:.0%}) | {fmt_bytes(e.required_bytes)} |",
        f"| {t('estimate.available', lang)} | {fmt_bytes(e.available_bytes)} ({where}) |",
        f"| {t('estimate.largest', lang)} | {fmt_bytes(e.largest_layer_bytes)} "
        f"(`{', '.join(e.largest_layer_names)[:80]}`) |",
        f"| {t('estimate.kv', lang)} | {fmt_bytes(e.kv_bytes_per_token)} = {e.kv_formula.text(lang)} |",
        "",
        f"{t('estimate.by_dtype', lang)}: {by_dtype}" if by_dtype else "",
    ])


def stats_from_dict(d: dict) -> GenerationStats:
    """Rebuild the stats record from its dict (extra engine fields ignored)."""
    names = {f.name for f in dataclasses.fields(GenerationStats)}
    return GenerationStats(**{k: v for k, v in d.items() if k in names})


def per_token_markdown(d: dict, lang: str = "en") -> str:
    """Prefill and per-token decode times (from the token timestamps), for every engine."""
    steps = d.get("token_seconds") or decode.step_seconds(d.get("token_times") or [])
    prof = decode.profile(steps) if steps else None
    if not prof:
        return ""
    prefill = d.get("prefill_seconds") if d.get("prefill_seconds") is not None else d.get("ttft_seconds")
    parts = [f"{t('stats.prefill', lang)} {secs(prefill)}" if prefill is not None else ""]
    parts += [f"{t('stats.' + k, lang)} {secs(v)}" for k, v in prof.items() if isinstance(v, float)]
    return ("\n\n" + t("stats.per_token", lang) + ": " + " · ".join(p for p in parts if p)
            + f" ({t('stats.steps', lang, n=len(steps))})")


def context_info(ctx: int | None, prompt_tokens: int | None, lang: str = "en") -> str:
    """The line under max_new_tokens: the context, what the prompt takes of it, what it leaves."""
    if ctx is None:
        return ""
    if prompt_tokens is None:
        return t("page.context.unknown", lang, ctx=ctx)
    return t("page.context", lang, ctx=ctx, n=prompt_tokens, room=max(ctx - prompt_tokens, 0))


def engine_choices(lang: str = "en") -> list[tuple[str, str]]:
    return [(t(f"engine.{e}", lang), e) for e in ("generate", "manual", "manual-nocache")]


def decoding_choices(lang: str = "en") -> list[tuple[str, str]]:
    return [(t(f"page.decoding.{m}", lang), m) for m in ("sampled", "greedy", "custom")]
