"""A load report and a generation's stats as Markdown, in English or Chinese: the page shows them through
these, and `python -m playground report` prints the same facts through them (in English).

Pure formatting, no measuring: every number was measured by the loader, the memory readings and the
generation, and arrives in a report dataclass whose sentences are kept as facts (`Said`).
"""

from __future__ import annotations

import time

from playground.core.i18n import t
from playground.core.markdown import aside, labelled, sentence, table
from playground.core.units import fmt_bytes
from playground.hw import busy, zerogpu
from playground.load.loader import LoadReport
from playground.run import decode
from playground.run.generation import GenerationStats


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


def waited(n: int | None, lang: str = "en") -> str:
    """How many other visitors were waiting for the lane when a figure was taken ('' where nobody counted:
    the CLI has no queue). Runs take turns, so waiting visitors never share the machine with a run."""
    if n is None:
        return ""
    return t("pool.waited", lang, n=n) if n else t("pool.waited_none", lang)


def busy_note(load: float | None, cores: int | None, lang: str = "en") -> str:
    """'' on a machine that had a core for everything; else that the figure shared the CPU (hw.busy)."""
    return t("stats.busy", lang, load=load, cores=cores) if busy.busy(load, cores) else ""


def secs(s: float) -> str:
    return f"{s * 1000:.1f} ms" if s < 1 else f"{s:.2f} s"


def report_markdown(r: LoadReport, lang: str = "en") -> str:
    where = f"`{r.device}`"
    if r.location is not None and r.location.became != r.device:  # auto, memory limits: what it became
        where += f" ({t('report.became', lang, became=r.location.became)})"
    lines = [f"### `{r.model}` → {where} · `{r.dtype}`"]
    if r.shared:
        at = time.strftime("%H:%M:%S", time.localtime(r.loaded_at)) if r.loaded_at else "?"
        lines.append(f"> 🤝 {t('pool.shared', lang, n=r.shared, at=at)}")
    if r.evicted_before:
        lines.append(f"> ⚠️ {t('pool.evicted_before', lang, **r.evicted_before)}")
    if zerogpu.timing_label():
        lines.append(f"> ⏱️ {zerogpu.timing_label()}")
    if r.label:
        lines.append(f"> ⚠️ **{r.label.text(lang)}**")
    if r.size_note:
        lines += [">", f"> {r.size_note.text(lang)}"]
    head = [t(k, lang) for k in ("report.phase", "report.what", "report.time", "report.rss", "report.drss", "report.vram")]
    what = {  # what each phase ran; a phase not named here is said by its word-table entry `report.<name>`
        "load": t("report.load_auto" if r.device == "auto" else "report.load", lang),
        "migrate": f"`model.to('{r.device}')`" if r.device != "auto" else t("report.placed", lang),
        "eval": "`model.eval()`",
    }
    rows = [(phase_name(p.name, lang), what.get(p.name) or t(f"report.{p.name}", lang), secs(p.seconds),
             f"{fmt_bytes(p.rss_before)} → {fmt_bytes(p.rss_after)}", fmt_bytes(p.rss_after - p.rss_before),
             _vram_cell(p.vram_after, lang)) for p in r.phases]
    lines += ["", table(head, rows, "llrrrl")]
    notes = {p.name: p.note.text(lang) for p in r.phases if p.note}
    lines.append("")
    if "download" in notes:
        lines += [labelled(phase_name('download', lang), notes['download'], lang), ""]
    lines += [
        labelled(t('report.check', lang), notes.get('estimate', ''), lang),
        *(["", labelled(t('report.build', lang), notes['build'], lang)] if "build" in notes else []),
        *(["", labelled(phase_name('quantize', lang), notes['quantize'], lang)] if "quantize" in notes else []),
        "",
        " · ".join((labelled(t('report.params', lang), f"{r.param_count:,}", lang),
                    labelled(t('report.buffers', lang), str(r.buffer_count), lang),
                    labelled(t('report.weights', lang), aside(t('report.in_dtype', lang, dtype=r.dtype,
                                                                size=fmt_bytes(r.weights_bytes)),
                                                              t('report.weights_how', lang), lang), lang),
                    labelled(t('report.disk', lang), aside(fmt_bytes(r.disk_bytes), "safetensors", lang), lang))),
        "",
        "**" + t("report.ram_growth", lang, delta=fmt_bytes(r.ram["delta"]), weights=fmt_bytes(r.weights_bytes),
                 avail=fmt_bytes(r.ram["available_after"])) + "**",
        "",
        labelled(t('report.dtype', lang), sentence(r.dtype_reason.text(lang), lang), lang),
        *_refused(r, lang),
        labelled(t('report.migration', lang), r.migrate_note.text(lang), lang),
    ]
    if r.file_backed_bytes:
        lines.append(labelled(aside("mmap", t('report.mmap_label', lang), lang),
                              f"{fmt_bytes(r.file_backed_bytes)} — {t('report.mmap', lang)}", lang))
    if r.hint:
        lines.append(labelled(t('report.hint', lang), r.hint.text(lang), lang))
    if r.chat_template:
        lines.append(labelled(t('report.chat', lang), t('report.chat_yes', lang), lang))
    if not r.vram["available"] and r.vram["reason"]:
        lines.append(labelled(t('report.vram_label', lang), sentence(r.vram['reason'].text(lang), lang), lang))
    if r.hf_device_map:
        lines.append(labelled(aside(t('report.placement', lang), "`hf_device_map`", lang),
                              ", ".join(f"`{k or '(all)'}` → {v}" for k, v in r.hf_device_map.items()), lang))
    if r.waiting is not None and not r.shared:  # a shared report's figures were taken at its own load
        lines += ["", f"_{waited(r.waiting, lang)}_"]
    return "\n".join(lines)


def _refused(r: LoadReport, lang: str) -> list[str]:
    """An int4 load: the packed int4 formats torchao refused on this machine, each with its own words."""
    if r.quantized is None or not r.quantized.refused:
        return []
    return ["", t("quant.refused_intro", lang),
            *(f"- {t('quant.refused', lang, format=x['format'], error=x['error'])}" for x in r.quantized.refused), ""]


def device_label(device: str, lang: str = "en") -> str:
    """A ledger's device as the page names it: RAM for the CPU, else the device's own name."""
    return t("ledger.device.cpu", lang) if device == "cpu" else device


def _signed(n: int) -> str:
    return ("+" if n > 0 else "−" if n < 0 else "±") + fmt_bytes(abs(n))


def _pct(x: float, digits: int = 1) -> str:
    """A signed percentage with the same minus sign as `_signed` (U+2212), not a hyphen beside it."""
    return f"{x:+.{digits}f}%".replace("-", "−")


def ledger_markdown(parts: list[dict], lang: str = "en", moment: str = "after_load") -> str:
    """The ledger as one table per device: each part, what it measured, the counter that read it, and the
    estimate with its error where there is one; then what the process parts add up to against the
    process's own total, and the share no part explains. `parts`: the part dicts (`Part.to_dict`)."""
    if not parts:
        return ""
    head = [t(f"ledger.col.{c}", lang) for c in ("part", "bytes", "counter", "estimate", "error")]
    out = [f"**{t('ledger.title', lang)}** · {t('ledger.' + moment, lang)}"]
    for dev in dict.fromkeys(p["device"] for p in parts):
        mine = [p for p in parts if p["device"] == dev]
        rows = []
        for p in mine:
            name = t(f"ledger.part.{p['part']}", lang)
            name = {"within": f"↳ {name}", "total": f"**{name}**", "peak": f"*{name}*"}.get(p["scope"], name)
            note = p.get(f"note_{lang}") or ""
            measured = (f"— ({t('ledger.unknown', lang)})" if p["bytes"] is None
                        else _signed(p["bytes"]) if p["bytes"] < 0 else fmt_bytes(p["bytes"]))
            est = fmt_bytes(p["estimate_bytes"]) if p.get("estimate_bytes") is not None else ""
            err = (f"{_pct(p['error_pct'], 2)} ({_signed(p['error_bytes'])})" if p.get("error_pct") is not None else "")
            rows.append((name + (f"<br><small>{note}</small>" if note else ""), measured,
                         t(f"ledger.counter.{p['counter']}", lang), est, err))
        out += ["", f"*{device_label(dev, lang)}*", "", table(head, rows, "lrlrr")]
        held = [p for p in mine if p["scope"] == "process"]
        unacc = next((p for p in held if p["part"] == "unaccounted"), None)
        if unacc is not None and unacc["bytes"] is not None:
            total = sum(p["bytes"] or 0 for p in held)
            pct = _pct(100 * unacc["bytes"] / total) if total else "—"
            which = "cpu" if dev == "cpu" else "mps" if dev == "mps" else "gpu"
            # parts that add up to more than the whole: their counters overlap, or read a moment apart
            key = "ledger.sum_over" if unacc["bytes"] < 0 else "ledger.sum"
            out += ["", t(key, lang, explained=fmt_bytes(total - unacc["bytes"]), total=fmt_bytes(total),
                          device=device_label(dev, lang), counter=t(f"ledger.total.{which}", lang),
                          unaccounted=_signed(unacc["bytes"]), over=fmt_bytes(-unacc["bytes"]), pct=pct)]
        peaks = [p for p in mine if p["scope"] == "peak" and p["bytes"]]
        if peaks:
            out += ["", t("ledger.peak", lang, peak=fmt_bytes(sum(p["bytes"] for p in peaks)))]
    return "\n".join(out)


def stats_markdown(s: GenerationStats, lang: str = "en") -> str:
    running = s.finish_reason == "running"
    state = (t("stats.running", lang) if running
             else t("stats.done", lang, reason=t(f"finish.{s.finish_reason}", lang)))
    left = s.max_new_tokens - s.new_tokens
    if running and s.tokens_per_second and left > 0:  # a slow run (float16 on a CPU) says how long it may take
        state += " · " + t("stats.left", lang, n=s.new_tokens, max=s.max_new_tokens,
                           left=secs(left / s.tokens_per_second))
    ttft = f"{s.ttft_seconds * 1000:.0f} ms" if s.ttft_seconds is not None else "—"
    rate = f"{s.tokens_per_second:.1f} tokens/s" if s.tokens_per_second else "—"
    decode_t = f"{s.decode_seconds:.3f} s" if s.decode_seconds is not None else "—"
    cells = [ttft, str(s.prompt_tokens), str(s.new_tokens),
             t("stats.rate_cell", lang, rate=rate, n=max(s.new_tokens - 1, 0), t=decode_t), f"{s.total_seconds:.2f} s"]
    head = [t(k, lang) for k in ("stats.ttft", "stats.prompt", "stats.new", "stats.rate", "stats.total")]
    mode = t("stats.greedy" if s.greedy else "stats.sampling", lang)
    chat = " · " + t("stats.chat_applied", lang) if s.chat_template_applied else ""
    made = t("stats.model", lang, model=s.model, device=s.device, dtype=s.dtype) if s.model else ""
    if s.threads and s.cores and not s.device.startswith(("cuda", "mps")):  # the CPU's kernels ran it: how many threads
        made += t("stats.threads", lang, n=s.threads, cores=s.cores)
    after = f"\n\n_{waited(s.waiting, lang)}_" if s.waiting is not None else ""
    if busy_note(s.load_average, s.cores, lang):
        after += f"\n\n⚠️ _{busy_note(s.load_average, s.cores, lang)}_"
    return (f"**{state}** · {labelled(t('stats.mode', lang), mode, lang, plain=True)}{chat}{made}\n\n" + table(head, [cells], "rrrrr")
            + after)


def per_token_markdown(d: dict, lang: str = "en") -> str:
    """Prefill and per-token decode times (from the token timestamps), for every engine."""
    steps = d.get("token_seconds") or decode.step_seconds(d.get("token_times") or [])
    prof = decode.profile(steps) if steps else None
    if not prof:
        return ""
    prefill = d.get("prefill_seconds") if d.get("prefill_seconds") is not None else d.get("ttft_seconds")
    parts = [f"{t('stats.prefill', lang)} {secs(prefill)}" if prefill is not None else ""]
    parts += [f"{t('stats.' + k, lang)} {secs(v)}" for k, v in prof.items() if isinstance(v, float)]
    return "\n\n" + labelled(t("stats.per_token", lang), aside(" · ".join(p for p in parts if p),
                                                                 t('stats.steps', lang, n=len(steps)), lang), lang, plain=True)
