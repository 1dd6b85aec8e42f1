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
        return t("status.none", lang)
    extra = f" · ⚠️ {status['label'].text(lang)}" if status.get("label") else ""
    return t("status.loaded", lang, model=status["model"], device=status["device"], dtype=status["dtype"]) + extra


def devices_html(devs: list[DeviceInfo], lang: str = "en") -> str:
    """Every device, the absent ones greyed out with the reason they are absent."""
    rows = []
    for d in devs:
        mem = fmt_bytes(d.total_memory) if d.total_memory else ""
        feats = ", ".join(f for f, ok in (("bf16", d.bf16), ("fp16", d.fp16)) if ok)
        style = "" if d.available else ' style="opacity:.5"'
        state = "✅ available" if d.available else "⛔ unavailable"
        rows.append(
            f"<tr{style} class='dev-{'on' if d.available else 'off'}'><td><code>{html.escape(d.id)}</code></td>"
            f"<td>{state}</td><td>{html.escape(d.name)}</td><td>{mem}</td><td>{feats}</td>"
            f"<td>{html.escape(d.reason.text(lang) if d.reason else '')}</td></tr>"
        )
    return ("<table><thead><tr><th>device</th><th>state</th><th>name</th><th>memory</th>"
            "<th>native</th><th>note</th></tr></thead><tbody>" + "".join(rows) + "</tbody></table>")


def _vram_cell(gpus: list[dict]) -> str:
    if not gpus:
        return "—"
    return "<br>".join(
        f"cuda:{g['index']}: alloc {fmt_bytes(g['allocated'])}, reserved {fmt_bytes(g['reserved'])}"
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
        "estimate": t("report.estimate", lang),
        "build": t("report.build", lang),
        "import": t("report.import", lang),
        "load": t("report.load_auto" if r.device == "auto" else "report.load", lang),
        "migrate": f"`model.to('{r.device}')`" if r.device != "auto" else t("report.placed", lang),
        "eval": "`model.eval()`",
    }
    for p in r.phases:
        lines.append(
            f"| {p.name} | {what[p.name]} | {secs(p.seconds)} | {fmt_bytes(p.rss_before)} → "
            f"{fmt_bytes(p.rss_after)} | {fmt_bytes(p.rss_after - p.rss_before)} | {_vram_cell(p.vram_after)} |"
        )
    notes = {p.name: p.note.text(lang) for p in r.phases if p.note}
    lines += [
        "",
        f"**{t('report.check', lang)}:** {notes.get('estimate', '')}",
        *(["", f"**{t('report.build', lang)}:** {notes['build']}"] if "build" in notes else []),
        "",
        f"**{t('report.params', lang)}:** {r.param_count:,} · **{t('report.buffers', lang)}:** {r.buffer_count} · "
        f"**{t('report.weights', lang)}:** {fmt_bytes(r.weights_bytes)} in {r.dtype} ({t('report.weights_how', lang)}) · "
        f"**{t('report.disk', lang)}:** {fmt_bytes(r.disk_bytes)} (safetensors)",
        "",
        "**" + t("report.ram_growth", lang, delta=fmt_bytes(r.ram["delta"]), weights=fmt_bytes(r.weights_bytes),
                 avail=fmt_bytes(r.ram["available_after"])) + "**",
        "",
        f"**{t('report.dtype', lang)}:** {r.dtype_reason.text(lang)}.",
        f"**{t('report.migration', lang)}:** {r.migrate_note.text(lang)}",
    ]
    if r.file_backed_bytes:
        lines.append(f"**mmap:** {fmt_bytes(r.file_backed_bytes)} — {t('report.mmap', lang)}")
    if r.hint:
        lines.append(f"**{t('report.hint', lang)}:** {r.hint.text(lang)}")
    if not r.vram["available"] and r.vram["reason"]:
        lines.append(f"**VRAM:** {r.vram['reason'].text(lang)}.")
    if r.hf_device_map:
        lines.append(f"**{t('report.placement', lang)} (`hf_device_map`):** "
                     + ", ".join(f"`{k or '(all)'}` → {v}" for k, v in r.hf_device_map.items()))
    return "\n".join(lines)


def stats_markdown(s: GenerationStats, lang: str = "en") -> str:
    running = s.finish_reason == "running"
    state = t("stats.running", lang) if running else t("stats.done", lang, reason=s.finish_reason)
    ttft = f"{s.ttft_seconds * 1000:.0f} ms" if s.ttft_seconds is not None else "—"
    rate = f"{s.tokens_per_second:.1f} tokens/s" if s.tokens_per_second else "—"
    decode_t = f"{s.decode_seconds:.3f} s" if s.decode_seconds is not None else "—"
    cells = [ttft, str(s.prompt_tokens), str(s.new_tokens),
             t("stats.rate_cell", lang, rate=rate, n=max(s.new_tokens - 1, 0), t=decode_t), f"{s.total_seconds:.2f} s"]
    head = [t(k, lang) for k in ("stats.ttft", "stats.prompt", "stats.new", "stats.rate", "stats.total")]
    mode = t("stats.greedy" if s.greedy else "stats.sampling", lang)
    return (f"**{state}** · {t('stats.mode', lang)}: {mode}\n\n"
            "| " + " | ".join(head) + " |\n|---:|---:|---:|---:|---:|\n| " + " | ".join(cells) + " |")


def timeline_frame(rows: list[dict], gpus: bool = False):
    """Sampler rows -> a DataFrame for a line plot: MiB over seconds, one colour per phase
    (process RSS), or per GPU series when `gpus`."""
    import pandas as pd

    keep = [r for r in rows if (r["series"].startswith("cuda") if gpus else r["series"] == "process RSS")]
    df = pd.DataFrame(keep, columns=["t", "phase", "series", "bytes"])
    df["MiB"] = df["bytes"] / 2**20
    df["seconds"] = df["t"].round(3)
    return df[["seconds", "MiB", "phase", "series"]]


def peaks_markdown(peaks: list[dict], lang: str = "en") -> str:
    if not peaks:
        return ""
    head = [t(k, lang) for k in ("report.phase", "report.time", "timeline.rss_start", "timeline.rss_peak",
                                  "timeline.avail_min", "report.vram")]
    lines = ["| " + " | ".join(head) + " |", "|---|---:|---:|---:|---:|---|"]
    for p in peaks:
        vram = "<br>".join(f"cuda:{g.get('index')}: {fmt_bytes(g.get('allocated_peak') or g.get('allocated'))}"
                           for g in p.get("gpu_peaks") or []) or "—"
        lines.append(f"| {p['name']} | {secs(p['seconds'])} ({p['samples']} samples) | {fmt_bytes(p['rss_start'])} | "
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


COMPARE_CHARTS = (("load_s", "load (s)"), ("migrate_s", "migrate (s)"), ("ttft_s", "time to first token (s)"),
                  ("decode_tokens_per_s", "decode tokens/s"), ("peak_rss_MiB", "peak RSS (MiB)"))


def compare_frame(rows):
    import pandas as pd

    data = []
    for r in rows:
        d = r.to_dict() if hasattr(r, "to_dict") else dict(r)
        d["peak_rss_MiB"] = (d.get("peak_rss") or 0) / 2**20
        data.append(d)
    cols = ["pair"] + [c for c, _ in COMPARE_CHARTS]
    return pd.DataFrame(data)[cols].fillna(0)


def compare_table(rows, lang: str = "en") -> str:
    head = "| pair | status | load | migrate | TTFT | decode tokens/s (tokens) | % of bandwidth bound | peak RSS | weights |"
    lines = [head, "|---|---|---:|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        d = r.to_dict() if hasattr(r, "to_dict") else dict(r)
        f = lambda k: secs(d[k]) if d.get(k) is not None else "—"  # noqa: E731
        rate = (f"{d['decode_tokens_per_s']:.1f} ({d.get('decode_tokens')})" if d.get("decode_tokens_per_s") else "—")
        bound = f"{d['percent_of_bound']:.0f}%" if d.get("percent_of_bound") is not None else "—"
        status = d["status"] + (f": {d['error'][:120]}" if d.get("error") else "")
        lines.append(f"| {d['pair']} | {status} | {f('load_s')} | {f('migrate_s')} | {f('ttft_s')} | {rate} | {bound} | "
                     f"{fmt_bytes(d.get('peak_rss'))} | {fmt_bytes(d.get('weights_bytes'))} |")
    label = next((r.label for r in rows if r.label), None)
    return ("> ⚠️ " + label.text(lang) + "\n\n" if label else "") + "\n".join(lines)


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
    parts = [f"prefill {secs(prefill)}" if prefill is not None else ""]
    parts += [f"{k} {secs(v)}" for k, v in prof.items() if isinstance(v, float)]
    return "\n\n" + t("stats.per_token", lang) + ": " + " · ".join(p for p in parts if p) + f" ({len(steps)} steps)"
