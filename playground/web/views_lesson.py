"""The guided path in the page's language: a step's title and text, its result (the sentence, the figures' table).

Each function takes what the handlers keep as data (a step id, a result as `StepResult.to_dict()`) and a
language, and returns Markdown. Figures are formatted by `lesson.num` and `lesson.size`, the same functions
that filled the sentence's fields, so the table and the sentence show the same numbers.
"""

from __future__ import annotations

import time

from playground.core.i18n import t
from playground.core.units import fmt_seconds
from playground.web import lesson

# Each figure's label (literal keys: tests/core/test_i18n_keys.py reads the source for them).
LABELS = {
    "load_ms": "lesson.fig.load_ms", "migrate_ms": "lesson.fig.migrate_ms", "eval_ms": "lesson.fig.eval_ms",
    "weights_bytes": "lesson.fig.weights_bytes", "mapped_bytes": "lesson.fig.mapped_bytes", "device": "lesson.fig.device",
    "dtype": "lesson.fig.dtype", "migrate": "lesson.fig.migrate", "tensors": "lesson.fig.tensors",
    "dev_copied": "lesson.fig.dev_copied", "dev_bytes": "lesson.fig.dev_bytes", "dev_ms": "lesson.fig.dev_ms",
    "cast_dtype": "lesson.fig.cast_dtype", "cast_copied": "lesson.fig.cast_copied", "cast_read": "lesson.fig.cast_read",
    "cast_written": "lesson.fig.cast_written", "cast_ms": "lesson.fig.cast_ms", "meta": "lesson.fig.meta",
    "bytes": "lesson.fig.bytes", "places": "lesson.fig.places", "parameters": "lesson.fig.parameters",
    "buffers": "lesson.fig.buffers", "state_dict": "lesson.fig.state_dict", "prompt_tokens": "lesson.fig.prompt_tokens",
    "positions": "lesson.fig.positions", "vocab": "lesson.fig.vocab", "forward_ms": "lesson.fig.forward_ms",
    "new_tokens": "lesson.fig.new_tokens", "calls": "lesson.fig.calls", "generate_ms": "lesson.fig.generate_ms",
    "same_first": "lesson.fig.same_first", "forward_warmup": "lesson.fig.forward_warmup",
    "generate_warmup": "lesson.fig.generate_warmup", "prefill_ms": "lesson.fig.prefill_ms", "cached_ms": "lesson.fig.cached_ms",
    "nocache_ms": "lesson.fig.nocache_ms", "ratio": "lesson.fig.ratio", "same_tokens": "lesson.fig.same_tokens",
    "scenario": "lesson.fig.scenario", "raised": "lesson.fig.raised", "simulated": "lesson.fig.simulated",
    "error_type": "lesson.fig.error_type", "message": "lesson.fig.message", "real_gpu": "lesson.fig.real_gpu",
    "fix_ok": "lesson.fig.fix_ok", "limits": "lesson.fig.limits", "blocks": "lesson.fig.blocks",
    "disk_blocks": "lesson.fig.disk_blocks", "disk_bytes": "lesson.fig.disk_bytes", "ram_blocks": "lesson.fig.ram_blocks",
    "ram_bytes": "lesson.fig.ram_bytes", "agree": "lesson.fig.agree", "model_device": "lesson.fig.model_device",
    "tps": "lesson.fig.tps", "read_gbps": "lesson.fig.read_gbps", "bound": "lesson.fig.bound", "share": "lesson.fig.share",
    "per_ms": "lesson.fig.per_ms", "over_ms": "lesson.fig.over_ms", "profiled": "lesson.fig.profiled",
    "matmul_share": "lesson.fig.matmul_share", "matmul_gbps": "lesson.fig.matmul_gbps", "others": "lesson.fig.others",
    "f32_bytes": "lesson.fig.f32_bytes", "bf16_bytes": "lesson.fig.bf16_bytes", "int8_bytes": "lesson.fig.int8_bytes",
    "f32_tps": "lesson.fig.f32_tps", "bf16_tps": "lesson.fig.bf16_tps", "int8_tps": "lesson.fig.int8_tps",
    "decode_tokens": "lesson.fig.decode_tokens", "compared": "lesson.fig.compared", "bf16_same": "lesson.fig.bf16_same",
    "int8_same": "lesson.fig.int8_same", "int8_layers": "lesson.fig.int8_layers",
    "int8_step_ms": "lesson.fig.int8_step_ms", "int8_convert_ms": "lesson.fig.int8_convert_ms",
    "f32_convert_ms": "lesson.fig.f32_convert_ms", "int8_share": "lesson.fig.int8_share",
}
BYTES = {"weights_bytes", "mapped_bytes", "dev_bytes", "cast_read", "cast_written", "bytes", "disk_bytes", "ram_bytes",
         "f32_bytes", "bf16_bytes", "int8_bytes"}
# the load report's migrate code, said as a word (literal keys, as above)
MIGRATE = {"noop": "lesson.migrate.noop", "copied": "lesson.migrate.copied", "auto_hooks": "lesson.migrate.auto_hooks",
           "auto_single": "lesson.migrate.auto_single"}
QUOTED = {"message", "real_gpu"}  # the library's own words, quoted as they are


def step_choices(lang: str) -> list[tuple[str, str]]:
    return [(t(s.title, lang).replace("`", ""), s.id) for s in lesson.STEPS]  # a radio shows no Markdown


def step_markdown(step_id: str, lang: str) -> str:
    s = lesson.BY_ID.get(step_id, lesson.STEPS[0])
    n = lesson.STEPS.index(s) + 1
    return (f"*{t('lesson.progress', lang, n=n, total=len(lesson.STEPS))}*\n\n### {t(s.title, lang)}\n\n"
            f"{t(s.text, lang)}")


def deeper_label(step_id: str, lang: str) -> str:
    s = lesson.BY_ID.get(step_id, lesson.STEPS[0])
    return t("lesson.deeper", lang, where=t(s.where, lang))


def value(name: str, v: object, lang: str) -> str:
    if isinstance(v, bool):
        return t("lesson.yes" if v else "lesson.no", lang)
    if v is None:
        return "–"
    if name in BYTES:
        return lesson.size(int(v), lang)
    if name == "migrate" and v in MIGRATE:
        return t(MIGRATE[v], lang)
    if isinstance(v, float):
        return lesson.num(v)
    if isinstance(v, int):
        return str(v)
    text = str(v).replace("|", "\\|")
    return f"“{text}”" if name in QUOTED else f"`{text}`"


def sentence_markdown(d: dict | None, lang: str) -> str:
    """The result's sentence (and, when the step loaded the bundled model first, that note above it)."""
    if not d:
        return ""
    note = d.get(f"note_{lang}") or ""
    said = d[f"sentence_{lang}"]
    # a quote, not bold: bold capitals fall back to another font in the page's theme
    return (f"{note}\n\n" if note else "") + f"> {said}"


def figures_markdown(d: dict | None, lang: str) -> str:
    if not d:
        return ""
    at = time.strftime("%H:%M:%S", time.localtime(d["measured_at"])) if d.get("measured_at") else "?"
    took = fmt_seconds(d["seconds"])
    where = dict(model=d["model"], device=d["device"], dtype=d["dtype"], at=at)
    head = (t("lesson.measured.placed", lang, at=at, took=took) if d["step"] == "fit"
            else t("lesson.measured.load", lang, **where) if d["step"] == "load"
            else t("lesson.measured", lang, took=took, **where))
    rows = [f"| {t(LABELS[k], lang)} | {value(k, v, lang)} |" for k, v in d["figures"].items()]
    return "\n".join([head, "", f"| {t('lesson.col.figure', lang)} | {t('lesson.col.value', lang)} |", "|---|---|", *rows])
