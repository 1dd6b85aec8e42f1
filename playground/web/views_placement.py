"""What the Placement tab shows: the plan and the placement map as pictures and tables, the cost, the cliff, load
straight vs move, in either language.

Pure formatting, like `playground.web.views`: each function takes the data a handler kept (the reports'
dicts) and the page's language. Block and tier names are code (`<code>`), as the libraries spell them.
"""

from __future__ import annotations

import html

import gradio as gr
import pandas as pd

from playground.core.i18n import in_lang, t
from playground.core.markdown import table
from playground.core.units import fmt_bytes
from playground.hw import devices
from playground.run.render import waited

COLOURS = {"cuda": "#2e7d32", "mps": "#00897b", "cpu": "#1565c0", "disk": "#ef6c00", "meta": "#c62828",
           "mixed": "#6a1b9a"}


def _colour(tier: str | None) -> str:
    return COLOURS.get(devices.kind_of(tier) if tier else "", "#9e9e9e")


def short(name: str) -> str:
    """A block's name without the model's wrapper prefix: transformer.h.3 -> h.3, model.layers.3 -> layers.3."""
    for prefix in ("transformer.", "model.decoder.", "model.", "gpt_neox."):
        if name.startswith(prefix):
            return name[len(prefix):]
    return name


def _mb(n: float | None) -> str:
    return "—" if n is None else fmt_bytes(n)


def _num(x: float | None, fmt: str = "{:.1f}") -> str:
    return "—" if x is None else fmt.format(x)


# ---------------------------------------------------------------- the picture

def strip_html(blocks: list[dict], key: str, label: str, hops: set[str] | None = None) -> str:
    """One row of boxes, one per block in order, each as wide as its bytes (at least a sliver), coloured by
    its tier under `key`; a box whose tiers disagree is outlined in red; a bar marks where activations hop."""
    total = sum(max(b["bytes"], 1) for b in blocks) or 1
    cells = []
    for b in blocks:
        tier = b.get(key)
        width = max(100 * max(b["bytes"], 1) / total, 2.2)
        edge = "outline:3px solid #d50000;outline-offset:-3px;" if b.get("differs") else ""
        title = html.escape(f"{b['name']}: {fmt_bytes(b['bytes'])}, {tier}", quote=True)
        cells.append(f"<div title='{title}' style='flex:{width:.2f} 0 0;min-width:18px;background:{_colour(tier)};"
                     f"{edge}color:#fff;font-size:11px;text-align:center;padding:6px 1px;overflow:hidden;"
                     f"white-space:nowrap'><code style='background:none;color:#fff'>{html.escape(short(b['name']))}"
                     f"</code></div>")
        if hops and b["name"] in hops:
            cells.append("<div style='flex:0 0 5px;background:#000'></div>")
    return (f"<div style='display:flex;align-items:center;gap:8px;margin:4px 0'><div style='width:150px;"
            f"font-size:12px'>{label}</div><div style='display:flex;flex:1;gap:1px'>{''.join(cells)}</div></div>")


def legend_html(tiers: list[str], lang: str) -> str:
    seen = list(dict.fromkeys(devices.kind_of(x) for x in tiers if x))
    items = "".join(f"<span style='display:inline-block;width:12px;height:12px;background:{_colour(k)};"
                    f"margin:0 4px 0 12px;vertical-align:middle'></span>{t('place.tier.' + k, lang)}" for k in seen)
    return f"<div style='font-size:12px;margin-top:6px'>{items}</div>"


def plan_html(plan: dict | None, lang: str = "en") -> str:
    if not plan:
        return ""
    blocks = [dict(b, plan=b["tier"]) for b in plan["blocks"]]
    return (strip_html(blocks, "plan", t("place.row.plan", lang)) + legend_html([b["tier"] for b in blocks], lang))


def map_html(found: dict | None, lang: str = "en") -> str:
    if not found:
        return ""
    blocks, hops = found["blocks"], {h["after"] for h in found["hops"]}
    rows = []
    if any(b["planned"] for b in blocks):
        rows.append(strip_html(blocks, "planned", t("place.row.plan", lang)))
    if any(b["intended"] for b in blocks):
        rows.append(strip_html(blocks, "intended", t("place.row.intended", lang)))
    rows.append(strip_html(blocks, "actual", t("place.row.actual", lang), hops))
    tiers = [b[k] for b in blocks for k in ("planned", "intended", "actual") if b[k]]
    return "".join(rows) + legend_html(tiers, lang)


# ---------------------------------------------------------------- the plan and the map, as tables

def _tier(x: str | None) -> str:
    return f"`{x}`" if x else "—"


def runs(blocks: list[dict], keys: tuple[str, ...]) -> list[list[dict]]:
    """Consecutive blocks that agree on `keys` (and are not tied or flagged), as one group each: a 48-layer model's
    table stays short."""
    groups: list[list[dict]] = []
    for b in blocks:
        last = groups[-1][-1] if groups else None
        if (last is not None and not b.get("tied_to") and not last.get("tied_to") and not b.get("differs")
                and not last.get("differs") and all(b.get(k) == last.get(k) for k in keys)):
            groups[-1].append(b)
        else:
            groups.append([b])
    return groups


def group_name(group: list[dict], lang: str) -> str:
    first = group[0]
    tied = f" ({t('place.tied', lang, to=first['tied_to'])})" if first.get("tied_to") else ""
    if len(group) == 1:
        return f"`{first['name']}`{tied}"
    return t("place.group", lang, first=first["name"], last=short(group[-1]["name"]), n=len(group))


def plan_markdown(plan: dict | None, lang: str = "en") -> str:
    if not plan:
        return ""
    offered = ", ".join(f"`{d}` {fmt_bytes(n)} ({t('place.offered.' + plan['offered_by'][d], lang)})"
                        for d, n in plan["max_memory"].items())
    tiers = ", ".join(f"`{k}` {fmt_bytes(v)}" for k, v in plan["by_tier"].items())
    lines = [t("place.plan.summary", lang, model=plan["model"], dtype=plan["dtype"], limits=plan["limits"],
               offered=offered, tiers=tiers, offloaded=fmt_bytes(plan["offloaded_bytes"]), main=plan["main_device"],
               n=len(plan["blocks"]), largest=plan["largest_block"], largest_bytes=fmt_bytes(plan["largest_block_bytes"]))]
    if plan["absent"]:
        lines.append(t("place.plan.absent", lang, devices=", ".join(f"`{d}`" for d in plan["absent"])))
    if plan["warnings"]:
        lines.append(t("place.plan.warnings", lang) + " " + "; ".join(f"`{w}`" for w in plan["warnings"]))
    head = [t(k, lang) for k in ("place.col.block", "place.col.bytes", "place.col.plan")]
    rows = [(group_name(g, lang), fmt_bytes(sum(b["bytes"] for b in g)), _tier(g[0]["tier"]))
            for g in runs(plan["blocks"], ("tier",))]
    return "\n\n".join(lines + [table(head, rows, "lrl")])


def map_markdown(found: dict | None, lang: str = "en") -> str:
    if not found:
        return ""
    tiers = ", ".join(f"`{k}` {fmt_bytes(v)}" for k, v in found["by_tier"].items())
    lines = [t("place.map.summary", lang, model=found["model"], limits=found["limits"] or "—", tiers=tiers,
               offloaded=fmt_bytes(found["offloaded_bytes"]), hooks=found["hooks"], offloading=found["offloading_hooks"],
               model_device=found["model_device"], main=found["main_device"])]
    if found["model_device"] == "meta":
        lines.append(t("place.map.model_device_meta", lang, main=found["main_device"]))
    lines.append(t("place.map.differences", lang, n=found["differences"]) if found["differences"]
                 else t("place.map.agree", lang))
    for h in found["hops"]:
        lines.append(t("place.map.hop", lang, after=h["after"], src=h["src"], dst=h["dst"]))
    head = [t(k, lang) for k in ("place.col.block", "place.col.bytes", "place.col.plan", "place.col.intended",
                                 "place.col.actual", "place.col.devices", "place.col.store", "place.col.runs")]
    rows = []
    for g in runs(found["blocks"], ("planned", "intended", "actual", "store", "execution", "tensor_devices")):
        b = g[0]
        rows.append((group_name(g, lang) + (" ⚠️" if b["differs"] else ""), fmt_bytes(sum(x["bytes"] for x in g)),
                     _tier(b["planned"]), _tier(b["intended"]), _tier(b["actual"]),
                     ", ".join(f"`{d}`" for d in b["tensor_devices"]), t("place.store." + b["store"], lang),
                     _tier(b["execution"])))
    return "\n\n".join(lines + [table(head, rows, "lrllllll"), t("place.map.how", lang)])


# ---------------------------------------------------------------- the cost of the loaded model

def _breakdown_rows(label: str, b: dict | None, lang: str) -> tuple | None:
    if not b:
        return None
    return (label, f"{b['total_ms']:.1f}", f"{b['hooks_ms']:.1f}", f"{b['forward_ms']:.1f}", _num(b["ram_ms"]),
            _num(b["disk_ms"]))


def breakdown_table(rows: list[tuple], lang: str, first: str = "place.col.run") -> str:
    """The step's two parts (they add up to the total), then the two references (not parts: other runs)."""
    head = [t(k, lang) for k in (first, "place.col.total_ms", "place.col.hooks_ms", "place.col.forward_ms",
                                 "place.col.ram_ms", "place.col.disk_ms")]
    return table(head, [r for r in rows if r], "lrrrrr") + "\n\n" + t("place.breakdown.how", lang)


def _loadavg(d: dict, lang: str) -> str:
    """The machine's load when the figures were taken, and (on the page and the API) the other visitors waiting."""
    said = t("place.loadavg", lang, load=f"{d['load_average']:.2f}")
    return said + (f" {waited(d['waiting'], lang)}" if d.get("waiting") is not None else "")


def _same(same: bool | None, diff: int | None, lang: str) -> str:
    if same is None:
        return "—"
    return t("place.same.yes", lang) if same else t("place.same.no", lang, i=diff)


def cost_markdown(c: dict | None, lang: str = "en") -> str:
    if not c:
        return ""
    warm, cold, ram = c["warm"], c["cold"], c["ram"]
    lines = [t("place.cost.summary", lang, model=c["model"], dtype=c["dtype"], limits=c["limits"] or "—",
               blocks=c["offloaded_blocks"], offloaded=fmt_bytes(c["offloaded_bytes"]), n=c["new_tokens"],
               prompt=c["prompt"])]
    head = [t(k, lang) for k in ("place.col.run", "place.col.tokens", "place.col.rate", "place.col.moved",
                                 "place.col.copied", "place.col.disk", "place.col.slowdown", "place.col.same")]
    rows = []
    for key, r, slow, same, diff in (("ram", ram, None, None, None),
                                     ("warm", warm, c["slowdown_warm"], c["same_tokens_warm"], c["first_difference_warm"]),
                                     ("cold", cold, c["slowdown_cold"], c["same_tokens_cold"], c["first_difference_cold"])):
        if r is None:
            continue
        rows.append((t("place.run." + key, lang), r["new_tokens"], _num(r["tokens_per_second"]),
                     _mb(r["moved_bytes_per_token"]), _mb(r["copied_bytes_per_token"]), _mb(r["disk_bytes_per_token"]),
                     _num(slow, "{:.2f}×"), _same(same, diff, lang) if key != "ram" else t("place.same.ref", lang)))
    lines.append(table(head, rows, "lrrrrrrl"))
    lines.append(seeing(c, lang))
    if cold is not None and kept(cold["moved_bytes_per_token"], cold["disk_bytes_per_token"]):
        lines.append(t("place.cold.kept", lang, disk=_mb(cold["disk_bytes_per_token"]),
                       moved=_mb(cold["moved_bytes_per_token"])))
    rate = c["rate"]
    if rate and rate["gbps"]:
        lines.append(t("place.cost.rate", lang, gbps=f"{rate['gbps']:.2f}", read=fmt_bytes(rate["read_bytes"]),
                       ms=f"{1e3 * rate['seconds']:.1f}", bound=_num(c["disk_bound_tokens_per_second"]),
                       pct=_num(c["percent_of_disk_bound"], "{:.0f}")))
    elif rate:
        lines.append(t("place.cost.rate_cached", lang, cached=fmt_bytes(rate["requested_bytes"])))
    lines.append(t("place.breakdown.title", lang))
    lines.append(breakdown_table([_breakdown_rows(t("place.run.warm", lang), c["breakdown_warm"], lang),
                                  _breakdown_rows(t("place.run.cold", lang), c["breakdown_cold"], lang)], lang))
    lines.append(holds_back(c["breakdown_cold"] or c["breakdown_warm"], c["percent_of_disk_bound"], lang))
    lines += [in_lang(n, lang) for n in c.get("notes") or []]
    lines.append(_loadavg(c, lang))
    return "\n\n".join(x for x in lines if x)


def kept(moved: float, disk: float | None) -> bool:
    """A cold run that read less than half of what it brought in from the disk: the eviction did not take."""
    return disk is not None and moved > 0 and disk < 0.5 * moved


def seeing(c: dict, lang: str) -> str:
    """Which of the two costs the visitor's generations pay, from the warm run's own counters."""
    warm, cold = c["warm"], c["cold"]
    if warm["disk_bytes_per_token"] is None:
        return t("place.seeing.unknown", lang)
    if warm["disk_bytes_per_token"] < 0.05 * max(warm["moved_bytes_per_token"], 1):
        key = "place.seeing.cache"
    else:
        key = "place.seeing.disk"
    return t(key, lang, moved=_mb(warm["moved_bytes_per_token"]), disk=_mb(warm["disk_bytes_per_token"]),
             cold_disk=_mb(cold["disk_bytes_per_token"]) if cold else "—")


def holds_back(b: dict | None, pct: float | None, lang: str) -> str:
    """What the breakdown says limits the run: the larger of its two parts, named, and the references that
    explain it (the sentence follows the figures)."""
    if not b:
        return ""
    share = lambda ms: f"{100 * ms / b['total_ms']:.0f}"  # noqa: E731
    if b["hooks_ms"] >= b["forward_ms"]:
        return t("place.holds.hooks", lang, ms=f"{b['hooks_ms']:.1f}", total=f"{b['total_ms']:.1f}",
                 share=share(b["hooks_ms"]), pct=_num(pct, "{:.0f}"))
    said = t("place.holds.forward", lang, ms=f"{b['forward_ms']:.1f}", total=f"{b['total_ms']:.1f}",
             share=share(b["forward_ms"]))
    if b["ram_ms"] is not None and b["ram_ms"] <= b["forward_ms"]:
        said += " " + t("place.holds.ram", lang, ram=f"{b['ram_ms']:.1f}", more=f"{b['forward_ms'] - b['ram_ms']:.1f}")
        if b["disk_ms"] is not None:
            said += " " + t("place.holds.disk", lang, disk=f"{b['disk_ms']:.1f}", pct=_num(pct, "{:.0f}"))
    elif b["ram_ms"] is not None:  # the all-in-RAM copy, another run, took longer than this whole forward
        said += " " + t("place.holds.noisy", lang, ram=f"{b['ram_ms']:.1f}")
    return said


# ---------------------------------------------------------------- the cliff

def cliff_frame(c: dict | None, lang: str = "en") -> pd.DataFrame:
    """Tokens/s against blocks on the disk: warm, cold, and the disk-read bound of each cold point."""
    out = []
    for r in (c or {}).get("rows", []):
        for key, value in (("warm", r["tokens_per_second"]), ("cold", r["cold_tokens_per_second"]),
                           ("bound", r["disk_bound_tokens_per_second"])):
            if value is not None:
                # the block count as a category: the axis then shows whole blocks (0, 1, 2), not 0.1 steps
                out.append(dict(blocks=str(r["blocks_offloaded"]), rate=round(value, 2),
                                series=t("place.series." + key, lang)))
    # typed even when empty: Gradio fixes each axis's type (nominal, quantitative) from the first frame it draws
    frame = pd.DataFrame(out, columns=["blocks", "rate", "series"])
    return frame.astype({"blocks": str, "rate": float, "series": str})


def cliff_plot_words(lang: str) -> dict:
    return dict(x_title=t("place.axis.blocks", lang), y_title=t("place.axis.rate", lang),
                color_title=t("place.axis.series", lang))


def cliff_plot(c: dict | None, lang: str = "en"):
    frame = cliff_frame(c, lang)
    order = [str(r["blocks_offloaded"]) for r in (c or {}).get("rows", [])]
    return gr.update(value=frame, colors_in_legend=list(dict.fromkeys(frame["series"])) or None, sort=order or None,
                     **cliff_plot_words(lang))


def cliff_running(max_blocks: int, lang: str = "en") -> str:
    """What the page says while a cliff runs (the plot emptied meanwhile)."""
    return t("place.cliff.running", lang, points=max_blocks + 1)


def cliff_markdown(c: dict | None, lang: str = "en") -> str:
    if not c:
        return ""
    rate = c["rate"]
    lines = [t("place.cliff.summary", lang, model=c["model"], dtype=c["dtype"], n=c["new_tokens"], points=len(c["rows"]),
               seconds=f"{c['seconds']:.0f}", prompt=c["prompt"])]
    head = [t(k, lang) for k in ("place.col.off", "place.col.offloaded", "place.col.tokens", "place.col.warm_rate",
                                 "place.col.cold_rate", "place.col.moved", "place.col.disk", "place.col.bound",
                                 "place.col.pct", "place.col.same")]
    rows = [(r["blocks_offloaded"], fmt_bytes(r["offloaded_bytes"]), r["new_tokens"], _num(r["tokens_per_second"]),
             _num(r["cold_tokens_per_second"]), _mb(r["moved_bytes_per_token"]), _mb(r["disk_bytes_per_token"]),
             _num(r["disk_bound_tokens_per_second"]), _num(r["percent_of_disk_bound"], "{:.0f}%"),
             _same(r["same_tokens"], r["first_difference"], lang)) for r in c["rows"]]
    lines.append(table(head, rows, "rrrrrrrrrl"))
    same = all(r["same_tokens"] for r in c["rows"])
    lines.append(t("place.cliff.same" if same else "place.cliff.differ", lang, n=c["new_tokens"]))
    if rate and rate["gbps"]:
        lines.append(t("place.cliff.rate", lang, gbps=f"{rate['gbps']:.2f}", read=fmt_bytes(rate["read_bytes"]),
                       ms=f"{1e3 * rate['seconds']:.1f}"))
    elif not c["cold"]:
        lines.append(t("place.note.no_evict", lang))
    lines.append(t("place.breakdown.title_cold", lang))
    lines.append(breakdown_table([_breakdown_rows(str(r["blocks_offloaded"]), r["breakdown_cold"], lang)
                                  for r in c["rows"] if r["breakdown_cold"]], lang, "place.col.off"))
    for r in c["rows"]:
        if r["cold_tokens_per_second"] is not None and kept(r["moved_bytes_per_token"], r["disk_bytes_per_token"]):
            lines.append(f"{r['blocks_offloaded']}: " + t("place.cold.kept", lang, disk=_mb(r["disk_bytes_per_token"]),
                                                          moved=_mb(r["moved_bytes_per_token"])))
    below = [r for r in c["rows"] if r["percent_of_disk_bound"] is not None and r["percent_of_disk_bound"] < 50]
    for r in below:
        lines.append(f"{r['blocks_offloaded']}: " + holds_back(r["breakdown_cold"], r["percent_of_disk_bound"], lang))
    lines.append(_loadavg(c, lang))
    return "\n\n".join(lines)


# ---------------------------------------------------------------- load straight vs load then move

def straight_markdown(s: dict | None, lang: str = "en") -> str:
    if not s:
        return ""
    head = [t(k, lang) for k in ("place.col.path", "place.col.code", "place.col.load_s", "place.col.move_s",
                                 "place.col.total_s", "place.col.peak", "place.col.after", "place.col.vram")]
    rows = [(t("place.path." + p["how"], lang), f"`{p['code']}`", f"{p['load_seconds']:.3f} s",
             f"{p['move_seconds']:.3f} s", f"{p['seconds']:.3f} s", f"+{fmt_bytes(p['peak_delta'])}",
             f"+{fmt_bytes(p['rss_after'] - p['rss_before'])}", _mb(p["vram_peak"])) for p in s["paths"]]
    a, b = s["paths"]
    ratio = b["seconds"] / a["seconds"] if a["seconds"] else None
    key = ("place.straight.faster" if ratio and ratio > 1.1 else
           "place.straight.slower" if ratio and ratio < 1 / 1.1 else "place.straight.same")
    lines = [t("place.straight.form." + s["form"], lang, model=s["model"], device=s["device"], dtype=s["dtype"]),
             table(head, rows, "llrrrrrr"),
             t(key, lang, ratio=_num(ratio, "{:.2f}"), peak_a=fmt_bytes(a["peak_delta"]), peak_b=fmt_bytes(b["peak_delta"])),
             t("place.straight.same_weights" if s["same_weights"] else "place.straight.other_weights", lang),
             _loadavg(s, lang)]
    return "\n\n".join(lines)
