"""The lab's results as Markdown, in English or Chinese: a break-it run, a diagnosis, an inspection."""

from __future__ import annotations

import html

from playground.core.i18n import t
from playground.core.markdown import code, labelled, table, text
from playground.core.units import fmt_bytes
from playground.lab.diagnose import DiagnoseResult
from playground.lab.inspect import InspectReport
from playground.lab.oom import Oom
from playground.lab.result import BreakResult
from playground.lab.scenarios import SCENARIOS


def _pre(code: str) -> str:
    return f"<pre>{html.escape(code)}</pre>"


def fix_table(before: str, after: str, lang: str = "en", harmless: bool = False) -> str:
    """The before/after fix as a two-column HTML table of <pre> blocks (for a harmless order: the order the
    tutorials warn against, and theirs)."""
    heads = ("ui.before_harmless", "ui.after_harmless") if harmless else ("ui.before", "ui.after")
    return (f"<table><thead><tr><th>{t(heads[0], lang)}</th><th>{t(heads[1], lang)}</th></tr></thead>"
            f"<tbody><tr><td>{_pre(before)}</td><td>{_pre(after)}</td></tr></tbody></table>\n")


def _label(key: str, lang: str, text: str = "", plain: bool = False, **fields) -> str:
    """A label (bold unless `plain`) and what it labels, with the page language's colon: `**Error:** text`,
    `**错误**：text`."""
    return labelled(t(key, lang, **fields), text, lang, plain)


def result_markdown(r: BreakResult, lang: str = "en") -> str:
    """A BreakResult as Markdown (with HTML tables for the fix) in 'en' or 'zh'.

    Top to bottom as a reader meets it: where it ran (for real, or simulated), the library's message, then how
    a simulation was made (its words say "the message above", "a real GPU's, below"), what a real GPU raises,
    the tensors, what happened, the fix and its run."""
    sc = SCENARIOS.get(r.scenario)
    labels = sc.labels if sc else {}
    harmless = bool(sc and sc.harmless)  # a tutorial's worry, measured harmless: not called a mistake
    out = [f"### {r.number}. {text(r.title.text(lang))}\n"]
    if r.simulated and r.simulation:
        out.append(f"_{t('ui.simulated_top', lang)}_\n")
    elif not r.cannot_run:
        out.append(f"_{t('ui.real', lang, device=r.device)}_\n")
    if r.cannot_run:
        out.append(_label("ui.cannot_run", lang, text(r.cannot_run.text(lang))) + "\n")
    for note in r.notes:
        out.append(f"_{text(note.text(lang))}_\n")
    if r.warnings:
        out.append(f"**{t('ui.warnings', lang)}**\n")
        out.extend(_pre(w) for w in r.warnings)
    if r.raised:
        if r.broken_output:
            out.append(_label("ui.broken_output", lang, plain=True) + f"\n{_pre(r.broken_output)}")
        kind = f"`{r.error_type}`"
        if r.error_bases:
            kind = t("punct.aside", lang, text=kind, aside=", ".join(r.error_bases[:2]))
        out.append(_label("ui.error", lang, kind) + "\n")
        out.append(_pre(r.error_message or ""))
        if r.frame:
            out.append("\n" + _label("ui.where", lang, f"<code>{html.escape(r.frame)}</code>") + "\n")
        if r.raised_in:
            out.append(_label("ui.raised_in", lang, f"<code>{html.escape(r.raised_in)}</code>", plain=True) + "\n")
    elif not r.cannot_run:
        wording = bool(sc and sc.wording_only and r.simulated)  # the stand-in accepted what the device refuses
        key = "ui.no_error_wording" if wording else "ui.no_error_harmless" if harmless else "ui.no_error"
        out.append(f"**{t(key, lang)}**\n")
        if r.broken_output:
            out.append(_pre(r.broken_output))
    if r.simulated and r.simulation:
        out.append("> " + _label("ui.simulated", lang, text(r.simulation.text(lang))) + "\n")
    if r.real_gpu_message:
        label = "ui.real_gpu" if r.raised else "ui.real_gpu_generate" if r.warnings else "ui.real_gpu_only"
        out.append("\n" + _label(label, lang) + f"\n{_pre(r.real_gpu_message)}")
        if r.real_gpu_how:
            out.append(f"<sub>{text(r.real_gpu_how.text(lang))}</sub>\n")
    if r.tensors:
        out.append(f"\n**{t('ui.tensors', lang)}**\n")
        head = [t(k, lang) for k in ("ui.name", "ui.device", "ui.dtype", "ui.shape")]
        out.append(table(head, [(t("punct.aside", lang, text=code(row.name), aside=row.note.text(lang)) if row.note
                                 else code(row.name),
                                 t("ui.fake_device", lang, device=row.device) if row.fake else row.device,
                                 row.dtype, list(row.shape)) for row in r.tensors]))
    out.append("\n" + _label("ui.what", lang, r.explanation.text(lang) if r.explanation else "") + "\n")
    if r.measured:
        rows = []
        for k, v in r.measured.items():
            shown = fmt_bytes(v) if k.endswith("_bytes") and isinstance(v, int) else v
            key = labels.get(k)
            label = f"{t(key, lang)} <sub><code>{k}</code></sub>" if key else f"<code>{k}</code>"
            rows.append((label, html.escape(str(shown))))
        out += [f"**{t('ui.measured', lang)}**\n\n" + table([t("ui.quantity", lang), t("ui.value", lang)], rows), ""]
    if r.findings:
        said_ = " ".join(f"**{text(f.text(lang))}**" for f in r.findings)
        out.append(_label("ui.findings", lang, said_) + "\n")
    if r.hf_device_map:
        rows = [(html.escape(k), html.escape(v)) for k, v in r.hf_device_map.items()]
        out += [f"**{t('ui.device_map', lang)}**\n\n" + table([t("ui.name", lang), t("ui.device", lang)], rows), ""]
    if r.flagged_modules:
        names = ", ".join(code(m) for m in r.flagged_modules)
        out.append(_label("ui.flagged", lang, names, n=len(r.flagged_modules)) + "\n")
    out.append(f"**{t('ui.order' if harmless else 'ui.fix', lang)}**\n")
    out.append(fix_table(r.fix_before, r.fix_after, lang, harmless))
    ok = "ui.fix_ok_harmless" if harmless else "ui.fix_ok"
    verdict = f"✅ {t(ok, lang)}" if r.fix_ok else f"❌ {t('ui.fix_failed', lang)}"
    if r.fix_seconds is not None:
        timing = (t("ui.tokens", lang, n=r.fix_tokens, seconds=r.fix_seconds) if r.fix_tokens
                  else t("ui.seconds", lang, seconds=r.fix_seconds))
        verdict = t("punct.aside", lang, text=verdict, aside=timing)
    out.append(_label("ui.fix_run_harmless" if harmless else "ui.fix_run", lang, verdict) + "\n")
    if r.fix_output:
        shown = r.fix_output if r.fix_output.strip() else repr(r.fix_output)  # whitespace-only text, made visible
        out.append(_label("ui.output", lang, plain=True) + f"\n{_pre(shown)}")
    if r.fix_error:
        out.append(_pre(r.fix_error))
    if r.waiting is not None:  # runs take turns: the visitors waiting shared nothing with this one
        out.append("_" + (t("pool.waited", lang, n=r.waiting) if r.waiting else t("pool.waited_none", lang)) + "_")
    return "\n".join(out) + "\n"


def oom_markdown(o: Oom, lang: str = "en") -> str:
    """An out-of-memory message's numbers, part by part, and the remedies they point at, in `lang`."""
    out = [f"#### {t('oom.title', lang)}\n", t("oom.read", lang, kind=t(f"oom.kind.{o.kind}", lang)) + "\n"]
    if o.kind == "cpu":
        out.append(t("oom.summary_cpu", lang, requested=fmt_bytes(o.requested)) + "\n")
    else:
        out.append(t("oom.summary" if o.free is not None else "oom.summary_no_free", lang, device=o.device,
                     requested=fmt_bytes(o.requested), free=fmt_bytes(o.free or 0), total=fmt_bytes(o.total)) + "\n")
        rows = [(t(f"oom.part.{p}", lang), fmt_bytes(b)) for p, b in o.parts()]
        out.append(table([t("oom.col.part", lang), t("oom.col.bytes", lang)], rows, "lr") + "\n")
    if o.kind == "cuda_1x" or (o.kind == "xpu_1x" and o.free is not None):
        out.append(f"_{t('oom.note_1x', lang)}_\n")
    if o.processes:
        listed = ", ".join(f"{pid}: {fmt_bytes(b)}" for pid, b in o.processes)
        out.append(t("oom.processes", lang, list=listed) + "\n")
    out.append(f"**{t('oom.remedies', lang)}**\n")
    out += [f"- {r.text(lang)}" for r in o.remedies()]
    return "\n".join(out) + "\n"


def diagnose_markdown(result: DiagnoseResult, lang: str = "en", top: int = 3) -> str:
    """The diagnosis as Markdown (with an HTML before/after table per match) in 'en' or 'zh'; an out-of-memory
    message's own numbers and remedies first."""
    if not result.recognised:
        return f"**{t('ui.not_recognised', lang)}**\n"
    out = [oom_markdown(result.oom, lang)] if result.oom is not None else []
    out.append(f"#### {t('ui.matches', lang)}\n")
    for i, m in enumerate(result.matches[:top], 1):
        title = m.title.text(lang)
        out.append(f"**{i}. {text(title)}**\n")
        if m.matched:
            line = code(m.matched[0])  # verbatim: a code span shows `_`, `*` and `<` as pasted
            out.append(_label("ui.matched_text", lang, line, plain=True) + "\n")
        out.append(m.explanation.text(lang) + "\n")
        out.append(fix_table(m.fix_before, m.fix_after, lang))
        if m.scenario:  # named as the lab lists it; the tab's button opens the first one there
            out.append(t("ui.try_it", lang, number=SCENARIOS[m.id].number) + "\n")
    return "\n".join(out)


def flag_text(flag: dict, lang: str = "en") -> str:
    fields = {k: v for k, v in flag.items() if k != "kind"}
    return t(f"flag.{flag['kind']}", lang, **fields)


def _cell(s: object) -> str:
    return html.escape(str(s)).replace("|", "&#124;")


def inspect_markdown(report: InspectReport, lang: str = "en", max_rows: int = 300) -> str:
    """The report as Markdown tables in 'en' or 'zh'; flagged rows first and marked."""
    out = [f"**{_cell(report.model)}**: {fmt_bytes(report.total_bytes)}"]
    if report.fake:
        out.append(f"\n_{t('ui.fake_note', lang)}_")
    out.append(f"\n#### {t('ui.summary', lang)}\n")
    head = [t(k, lang) for k in ("ui.device", "ui.dtype", "ui.tensors_n", "ui.params", "ui.bytes")]
    out.append(table(head, [(_cell(s["device"]), _cell(s["dtype"]), s["tensors"], f"{s['elements']:,}",
                             fmt_bytes(s["bytes"])) for s in report.summary], "llrrr"))
    for q in report.quantized:
        out.append("\n" + t("ui.quantized", lang, n=q["count"], tensor=q["tensor"], bytes=fmt_bytes(q["bytes"]),
                            float_bytes=fmt_bytes(q["float_bytes"]), layout=q["layout"].split(": ", 1)[1]))
    if report.flagged:
        out.append(f"\n**⚠ {t('ui.flagged', lang, n=len(report.flagged))}**")
    else:
        out.append(f"\n{t('ui.flagged_none_quantized' if report.quantized else 'ui.flagged_none', lang)}")
    if report.offloaded:
        out.append(f"\n{t('ui.offloaded', lang, n=len(report.offloaded))}")
    out.append(f"\n#### {t('ui.modules', lang)}\n")
    head = [t(k, lang) for k in ("ui.flag", "ui.module", "ui.device", "ui.dtype", "ui.params", "ui.buffers", "ui.bytes")]
    ordered = [r for r in report.rows if r.flags] + [r for r in report.rows if not r.flags]
    rows = []
    for r in ordered[:max_rows]:
        flag = "⚠ " + "; ".join(flag_text(f, lang) for f in r.flags) if r.flags else ""
        if r.offloaded:
            flag = t(f"flag.offloaded_{'disk' if r.offloaded == 'disk' else 'ram'}", lang)
        name = f"**{_cell(r.name or '(root)')}**" if r.flags else _cell(r.name or "(root)")
        tied = f" ({_cell('; '.join(r.shared))})" if r.shared else ""
        tied += "".join(f"<br><sub>{_cell(x)}</sub>" for x in r.layouts)
        rows.append((flag, f"{name} <sub>{_cell(r.kind)}</sub>{tied}", _cell(", ".join(r.devices)),
                     _cell(", ".join(r.dtypes)), f"{r.params:,}", f"{r.buffers:,}", fmt_bytes(r.bytes)))
    out.append(table(head, rows, "llllrrr"))
    if len(ordered) > max_rows:
        out.append(f"\n_{t('ui.rows_cut', lang, shown=max_rows, total=len(ordered))}_")
    out.append(f"\n#### {t('ui.counts', lang)}\n")
    out.append(table([t("ui.count_api", lang), t("ui.count_n", lang)],
                     [(f"`model.{k}`", v) for k, v in report.counts.items()], "lr"))
    out.append(f"\n{t('inspect.counts_note', lang)}")
    for group in report.tied:
        out.append(f"\n- {t('inspect.tied', lang, names=', '.join(f'`{n}`' for n in group))}")
    if report.hf_device_map:
        out.append(f"\n#### {t('ui.device_map', lang)}\n")
        out.append(table([t("ui.module", lang), t("ui.device", lang)],
                         [(_cell(k), _cell(v)) for k, v in report.hf_device_map.items()]))
    return "\n".join(out) + "\n"
