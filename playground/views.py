"""What the page shows: reports turned into Markdown, in English or Chinese.

Pure formatting, no Gradio and no measuring: every number here was measured by
`models`, `memory` and `generation` and arrives in a report dataclass. The words
come from `playground.i18n`, so the page can switch language.
"""

from __future__ import annotations

import html

from playground import devices, memory, models, zerogpu
from playground.generation import GenerationStats
from playground.i18n import t


def status_markdown(status: dict, lang: str = "en") -> str:
    if not status["loaded"]:
        return t("status.none", lang)
    extra = f" · ⚠️ {status['label']}" if status.get("label") else ""
    return t("status.loaded", lang, model=status["model"], device=status["device"], dtype=status["dtype"]) + extra


def devices_html(devs: list[devices.DeviceInfo]) -> str:
    """Every device, the absent ones greyed out with the reason they are absent."""
    rows = []
    for d in devs:
        mem = memory.fmt_bytes(d.total_memory) if d.total_memory else ""
        feats = ", ".join(f for f, ok in (("bf16", d.bf16), ("fp16", d.fp16)) if ok)
        style = "" if d.available else ' style="opacity:.5"'
        state = "✅ available" if d.available else "⛔ unavailable"
        rows.append(
            f"<tr{style} class='dev-{'on' if d.available else 'off'}'><td><code>{html.escape(d.id)}</code></td>"
            f"<td>{state}</td><td>{html.escape(d.name)}</td><td>{mem}</td><td>{feats}</td>"
            f"<td>{html.escape(d.reason)}</td></tr>"
        )
    return ("<table><thead><tr><th>device</th><th>state</th><th>name</th><th>memory</th>"
            "<th>native</th><th>note</th></tr></thead><tbody>" + "".join(rows) + "</tbody></table>")


def _vram_cell(gpus: list[dict]) -> str:
    if not gpus:
        return "—"
    return "<br>".join(
        f"cuda:{g['index']}: alloc {memory.fmt_bytes(g['allocated'])}, reserved {memory.fmt_bytes(g['reserved'])}"
        + (f", NVML {memory.fmt_bytes(g['nvml_used'])}/{memory.fmt_bytes(g['nvml_total'])}"
           if g.get("nvml_used") is not None else "")
        for g in gpus
    )


def secs(s: float) -> str:
    return f"{s * 1000:.1f} ms" if s < 1 else f"{s:.2f} s"


def report_markdown(r: models.LoadReport, lang: str = "en") -> str:
    lines = [f"### `{r.model}` → `{r.device}` · `{r.dtype}`"]
    if zerogpu.timing_label():
        lines.append(f"> ⏱️ {zerogpu.timing_label()}")
    if r.label:
        lines.append(f"> ⚠️ **{r.label}**")
    head = [t(k, lang) for k in ("report.phase", "report.what", "report.time", "report.rss", "report.drss", "report.vram")]
    lines += ["", "| " + " | ".join(head) + " |", "|---|---|---:|---:|---:|---|"]
    what = {
        "estimate": t("report.estimate", lang),
        "import": t("report.import", lang),
        "load": t("report.load_auto" if r.device == "auto" else "report.load", lang),
        "migrate": f"`model.to('{r.device}')`" if r.device != "auto" else t("report.placed", lang),
        "eval": "`model.eval()`",
    }
    for p in r.phases:
        lines.append(
            f"| {p.name} | {what[p.name]} | {secs(p.seconds)} | {memory.fmt_bytes(p.rss_before)} → "
            f"{memory.fmt_bytes(p.rss_after)} | {memory.fmt_bytes(p.rss_after - p.rss_before)} | {_vram_cell(p.vram_after)} |"
        )
    notes = {p.name: p.note for p in r.phases}
    lines += [
        "",
        f"**{t('report.check', lang)}:** {notes.get('estimate', '')}",
        "",
        f"**{t('report.params', lang)}:** {r.param_count:,} · **{t('report.buffers', lang)}:** {r.buffer_count} · "
        f"**{t('report.weights', lang)}:** {memory.fmt_bytes(r.weights_bytes)} in {r.dtype} ({t('report.weights_how', lang)}) · "
        f"**{t('report.disk', lang)}:** {memory.fmt_bytes(r.disk_bytes)} (safetensors)",
        "",
        "**" + t("report.ram_growth", lang, delta=memory.fmt_bytes(r.ram["delta"]), weights=memory.fmt_bytes(r.weights_bytes),
                 avail=memory.fmt_bytes(r.ram["available_after"])) + "**",
        "",
        f"**{t('report.dtype', lang)}:** {r.dtype_reason}.",
        f"**{t('report.migration', lang)}:** {r.migrate_note}",
    ]
    if r.file_backed_bytes:
        lines.append(f"**mmap:** {memory.fmt_bytes(r.file_backed_bytes)} — {t('report.mmap', lang)}")
    if r.hint:
        lines.append(f"**{t('report.hint', lang)}:** {r.hint}")
    if not r.vram["available"]:
        lines.append(f"**VRAM:** {r.vram['reason']}.")
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
