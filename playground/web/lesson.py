"""The guided path ("Start here"): its steps as data, each run on the visitor's own model, as facts.

Contract: `STEPS` lists the steps in the tutorials' order (id, words, the panel that goes deeper);
`run_step(step_id, session) -> StepResult` runs one with the existing measuring functions (the load report,
`load.moves`, `lab.inspect`, `run.forward`, `run.decode`, the lab's scenarios, the placement map,
`run.engines` with `hw.bandwidth`) and returns its figures (raw numbers and words) and a sentence (`Said`)
chosen by comparing those figures. A step that needs a model when the session has none loads the bundled
model (cpu, float32) first and says so (`loaded_first`), on the page and in the API alike. Run and lab
meet here, in the web layer, because neither may import the other. The figures' formats are `num` and
`size`, used for the sentence's fields and by the views for the table, so that the two always agree.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Callable

import torch

from playground.core import threads
from playground.core.errors import UserError
from playground.core.i18n import Said, in_lang, said, t
from playground.core.inputs import GenerationParams
from playground.core.paths import BUNDLED_NAME
from playground.core.units import fmt_bytes
from playground.hw import bandwidth
from playground.lab import scenarios
from playground.lab.inspect import inspect
from playground.load import loader, moves, quantize
from playground.load.loader import LoadedModel
from playground.run import compare, decode, engines, forward, generation
from playground.run.pool import POOL
from playground.web import handlers_placement as placing, lab_runs

NEW_TOKENS = 24  # tokens each generating step asks for: enough for a median, seconds on the bundled model
FIT_LIMITS = "cpu=16MB,disk"  # the bundled model (21 MB in float32): three of its four blocks go to the disk
PLACED = "lesson:"  # the fit step's own session prefix: its placed copy never replaces the visitor's model


# ---------------------------------------------------------------- formats (shared with the views)

def num(x: float) -> str:
    """Three significant figures, without exponents: 0.512, 5.12, 51.2, 512, 5120."""
    a = abs(x)
    if a >= 100 or x == 0:
        return f"{x:.0f}"
    if a >= 10:
        return f"{x:.1f}"
    if a >= 1:
        return f"{x:.2f}"
    return f"{x:.3g}"


def size(b: int, lang: str = "en") -> str:
    """Bytes as the rest of the page writes them (the banner, the load report: powers of 1024), or "0 bytes"."""
    return t("lesson.size.zero", lang) if b == 0 else fmt_bytes(b)


# ---------------------------------------------------------------- the result

@dataclass
class StepResult:
    step: str
    figures: dict  # name -> a number, a word (device, dtype, error type) or a bool; bytes in bytes, times in ms
    sentence: Said  # chosen by comparing the figures; its numbers are the figures' `num`/`size`
    panel: str  # the element that goes deeper ("panel:report")
    tab: str  # the tab holding it
    model: str = ""
    device: str = ""
    dtype: str = ""
    loaded_first: bool = False
    placed: bool = False  # measured on the fit step's own placed copy, not the visitor's model
    seconds: float = 0.0  # how long the step ran
    measured_at: float = 0.0  # time.time() when its figures were measured (the load step: when the model loaded)

    def to_dict(self) -> dict:
        note = said("lesson.loaded_first", model=BUNDLED_NAME) if self.loaded_first else None
        return dict(step=self.step, figures=dict(self.figures), sentence_en=in_lang(self.sentence, "en"),
                    sentence_zh=in_lang(self.sentence, "zh"), panel=self.panel, tab=self.tab, model=self.model,
                    device=self.device, dtype=self.dtype, loaded_first=self.loaded_first,
                    note_en=in_lang(note, "en") if note else "", note_zh=in_lang(note, "zh") if note else "",
                    seconds=self.seconds, measured_at=self.measured_at)


# ---------------------------------------------------------------- the steps' measurements

def load_step(lm: LoadedModel) -> tuple[dict, Said]:
    r = lm.report
    ph = {p.name: p for p in r.phases}
    mapped = r.file_backed_bytes
    f = dict(load_ms=ph["load"].seconds * 1e3, migrate_ms=ph["migrate"].seconds * 1e3, eval_ms=ph["eval"].seconds * 1e3,
             weights_bytes=r.weights_bytes, mapped_bytes=mapped, device=r.device, dtype=r.dtype, migrate=r.migrate_code)
    if r.migrate_code == "noop":
        moved = said("lesson.moved.noop")
    elif r.migrate_code == "copied":
        moved = said("lesson.moved.copied", dst=r.migrate_fields.get("dst", r.device))
    else:
        moved = said("lesson.moved.auto")
    key = ("lesson.load.said.mapped" if mapped and mapped >= r.weights_bytes
           else "lesson.load.said.part" if mapped else "lesson.load.said.copied")
    return f, said(key, load=num(f["load_ms"]), weights=size(r.weights_bytes), mapped=size(mapped or 0),
                   device=r.device, migrate=num(f["migrate_ms"]), moved=moved, eval=num(f["eval_ms"]))


def to_step(lm: LoadedModel) -> tuple[dict, Said]:
    """`.to('cpu')` (where the visitor's model already is on a CPU-only machine: nothing to copy; from a GPU,
    a real copy back) and `.to(bfloat16)` (float32 if it is bfloat16 already), tensor by tensor."""
    dev = moves.walk_to(lm.model, "cpu")
    dt = torch.float32 if next(lm.model.parameters()).dtype == torch.bfloat16 else torch.bfloat16
    cast = moves.walk_to(lm.model, dt)
    f = dict(tensors=dev.tensors, device=dev.target, dev_copied=dev.copied, dev_bytes=dev.bytes_in,
             dev_ms=dev.seconds * 1e3, cast_dtype=cast.target, cast_copied=cast.copied, cast_read=cast.bytes_in,
             cast_written=cast.bytes_out, cast_ms=cast.seconds * 1e3, meta=dev.meta)
    d = (said("lesson.to.dev.none", device=dev.target, ms=num(f["dev_ms"]), tensors=dev.tensors) if dev.bytes_in == 0
         else said("lesson.to.dev.copied", device=dev.target, ms=num(f["dev_ms"]), bytes=size(dev.bytes_in),
                   copied=dev.copied, tensors=dev.tensors))
    c = (said("lesson.to.cast.none", dtype=cast.target, ms=num(f["cast_ms"]), tensors=cast.tensors) if cast.bytes_in == 0
         else said("lesson.to.cast.copied", dtype=cast.target, copied=cast.copied, tensors=cast.tensors,
                   read=size(cast.bytes_in), written=size(cast.bytes_out), ms=num(f["cast_ms"])))
    m = said("lesson.to.meta", meta=dev.meta) if dev.meta else ""
    return f, said("lesson.to.said", dev=d, cast=c, meta=m)


def where_step(lm: LoadedModel) -> tuple[dict, Said]:
    found = inspect(lm.model, lm.offload_folder)
    places = found.summary
    tensors = sum(p["tensors"] for p in places)
    n = {k.removesuffix("()"): v for k, v in found.counts.items()}
    f = dict(tensors=tensors, bytes=found.total_bytes, places=len(places), device=found.majority_device,
             dtype=found.majority_dtype, parameters=n["parameters"], buffers=n["buffers"], state_dict=n["state_dict"])
    if len(places) == 1:
        place = said("lesson.where.one", tensors=tensors, bytes=size(found.total_bytes), device=places[0]["device"],
                     dtype=places[0]["dtype"])
    else:
        listed = ", ".join(f"{p['device']}/{p['dtype']}: {p['tensors']}" for p in places)
        place = said("lesson.where.mixed", tensors=tensors, bytes=size(found.total_bytes), places=len(places), list=listed)
    extra = n["state_dict"] - n["parameters"] - n["buffers"]
    lists = (said("lesson.where.tied", params=n["parameters"], state=n["state_dict"], extra=extra) if extra > 0
             else said("lesson.where.same", state=n["state_dict"], params=n["parameters"], buffers=n["buffers"]))
    return f, said("lesson.where.said", place=place, lists=lists)


def forward_step(lm: LoadedModel) -> tuple[dict, Said]:
    r = threads.run(forward.forward_vs_generate, lm.model, lm.tokenizer, lm.device, engines.PROMPT, 8, name="lesson")
    f = dict(prompt_tokens=r.prompt_tokens, positions=r.logits_shape[1], vocab=r.logits_shape[2],
             forward_ms=r.forward_seconds * 1e3, new_tokens=r.new_tokens, calls=r.forward_calls,
             generate_ms=r.generate_seconds * 1e3, same_first=r.same_first_token,
             forward_warmup=r.warmup_forward_passes, generate_warmup=r.warmup_generate_passes)
    calls = said("lesson.forward.calls.each" if r.forward_calls == r.new_tokens else "lesson.forward.calls.other",
                 calls=r.forward_calls)
    first = said("lesson.forward.first.same" if r.same_first_token else "lesson.forward.first.other")
    warm = (said("lesson.forward.warm", fwarm=r.warmup_forward_passes, gwarm=r.warmup_generate_passes)
            if r.warmup_forward_passes and r.warmup_generate_passes else said("lesson.forward.cold"))
    return f, said("lesson.forward.said", prompt=r.prompt_tokens, fwd=num(f["forward_ms"]), positions=f["positions"],
                   vocab=f["vocab"], new=r.new_tokens, gen=num(f["generate_ms"]), calls=calls, first=first, warm=warm)


def cache_step(lm: LoadedModel) -> tuple[dict, Said]:
    params = GenerationParams(max_new_tokens=NEW_TOKENS, temperature=0.0, top_p=1.0, seed=0)
    runs = {c: threads.run(decode.run, lm.model, lm.tokenizer, lm.device, engines.PROMPT, params, use_cache=c,
                           name="lesson")[1] for c in (True, False)}
    on, off = runs[True], runs[False]
    cached, nocache = decode.profile(on.token_seconds)["median"] * 1e3, decode.profile(off.token_seconds)["median"] * 1e3
    ratio = nocache / cached
    diff = next((i for i, (a, b) in enumerate(zip(on.token_ids, off.token_ids)) if a != b), None)
    f = dict(prompt_tokens=on.prompt_tokens, new_tokens=on.new_tokens, prefill_ms=on.ttft_seconds * 1e3,
             cached_ms=cached, nocache_ms=nocache, ratio=ratio, same_tokens=diff is None)
    same = said("lesson.cache.same", new=on.new_tokens) if diff is None else said("lesson.cache.differ", at=diff + 1)
    key = "lesson.cache.faster" if num(ratio) != num(1.0) and ratio > 1 else "lesson.cache.slower"
    return f, said(key, prompt=on.prompt_tokens, prefill=num(f["prefill_ms"]), cached=num(cached),
                   nocache=num(nocache), ratio=num(ratio), same=same)


def mistake(scenario: str) -> Callable[[str], tuple[dict, Said]]:
    def run(session: str) -> tuple[dict, Said]:
        r = lab_runs.run_lab(scenarios.get(scenario), session)
        message = " ".join((r.error_message or "").split())
        real = " ".join((r.real_gpu_message or "").split())
        f = dict(scenario=scenario, raised=r.raised, simulated=r.simulated, error_type=r.error_type or "",
                 message=message, real_gpu=real, fix_ok=r.fix_ok)
        fix = said("lesson.fix.ok") if r.fix_ok else said("lesson.fix.failed", error=r.fix_error or "?")
        if not r.raised:
            return f, said("lesson.mistake.silent", fix=fix)
        if r.simulated and real:
            return f, said("lesson.mistake.sim", error=f["error_type"], message=message, real=real, fix=fix)
        return f, said("lesson.mistake.real", error=f["error_type"], message=message, fix=fix)
    return run


def fit_step(session: str) -> tuple[dict, Said, str]:
    """The bundled model loaded again under FIT_LIMITS for a session of the step's own, its map read from the
    tensors, then released (unloaded, unless someone else holds the same placed model)."""
    own = PLACED + session
    try:
        d = placing.place(*placing.parse_placed(BUNDLED_NAME, "float32", FIT_LIMITS), own)
    finally:
        POOL.release(own)
    blocks = d["blocks"]
    disk = [b for b in blocks if b["actual"] == "disk"]
    ram = [b for b in blocks if b["actual"] != "disk"]
    agree = sum(1 for b in blocks if b["planned"] == b["actual"])
    f = dict(limits=FIT_LIMITS, blocks=len(blocks), disk_blocks=len(disk), disk_bytes=sum(b["bytes"] for b in disk),
             ram_blocks=len(ram), ram_bytes=sum(b["bytes"] for b in ram), agree=agree, model_device=d["model_device"])
    fields = dict(limits=FIT_LIMITS, blocks=len(blocks), disk=len(disk), disk_bytes=size(f["disk_bytes"]), ram=len(ram),
                  ram_bytes=size(f["ram_bytes"]), agree=agree)
    return f, said("lesson.fit.disk" if disk else "lesson.fit.none", **fields), d["model"]


def speed_step(lm: LoadedModel) -> tuple[dict, Said]:
    """`generate()`'s rate against the bandwidth bound, and what limits it said as the Speed tab's engines panel
    says it (`engines.limit_of`, from the same profile: the matrix multiplications' share of the time)."""
    read = threads.run(bandwidth.read_bandwidth, lm.device, name="lesson")
    weights = lm.report.weights_bytes
    bound = read.gbps * 1e9 / weights
    ids, stamps, _ = generation.generate_ids(lm.model, lm.tokenizer, lm.device, engines.PROMPT, NEW_TOKENS)  # its own thread
    row = engines.make_row("generate", ids, stamps, None, bound)
    prof = threads.run(engines.matmul_profile, lm.model, lm.tokenizer, lm.device, engines.PROMPT, name="lesson")
    tps = row.tokens_per_second or 0.0
    f = dict(new_tokens=row.new_tokens, tps=tps, weights_bytes=weights, read_gbps=read.gbps, bound=bound,
             share=row.percent_of_bound or 0.0, per_ms=1e3 / tps if tps else 0.0, over_ms=row.overhead_ms_per_token or 0.0,
             profiled=prof["tokens"], matmul_share=100 * prof["matmul_share"], matmul_gbps=prof["matmul_gbps"] or 0.0,
             others=" · ".join(f"{o['op']} {o['seconds'] * 1e3:.0f} ms" for o in prof["largest_others"]))
    # the engines panel's decision and words; its numbers written as the figures' table writes them
    limit = engines.limit_of(row, prof, read.gbps)
    limit = said(limit.key, **dict(limit.fields, share=num(f["matmul_share"]), rate=num(f["matmul_gbps"]),
                                   read=num(read.gbps)))
    return f, said("lesson.speed.said", new=row.new_tokens, tps=num(tps), weights=size(weights), read=num(read.gbps),
                   bound=num(bound), share=num(f["share"]), limit=limit)


DTYPES = ("float32", "bfloat16", "int8")  # the dtype step's pairs, on the visitor's device


def dtype_step(session: str) -> tuple[dict, Said]:
    """float32, bfloat16 and int8 of the visitor's model through Compare, each loaded beside it in the pool's lane
    (nothing of theirs unloaded), warmed up, timed twice; bfloat16's and int8's next tokens against float32's,
    teacher-forced (run/fidelity.py). The sentence compares the bytes and the rates, "faster" or "slower" only
    where every timed run was, and names the time int8 spends converting where it is the slower."""
    report, src = POOL.current(session)
    where = report.location.runs_on if report.location is not None else "cpu"
    pairs = compare.parse_pairs([f"{where}/{d}" for d in DTYPES])
    rows = {r.dtype: r for r in compare.run(src, pairs, NEW_TOKENS, pool=POOL, runs=2)}
    bad = next((r for r in rows.values() if r.status != "ok"), None)
    if bad is not None:
        raise UserError.of("lesson.dtype.failed", pair=bad.pair, error=in_lang(bad.error, "en") or bad.status)
    f32, bf16, i8 = rows["float32"], rows["bfloat16"], rows["int8"]
    f = dict(f32_bytes=f32.weights_bytes, bf16_bytes=bf16.weights_bytes, int8_bytes=i8.weights_bytes,
             f32_tps=f32.decode_tokens_per_s, bf16_tps=bf16.decode_tokens_per_s, int8_tps=i8.decode_tokens_per_s,
             decode_tokens=f32.decode_tokens, compared=f32.agreement["compared"], bf16_same=bf16.agreement["same"],
             int8_same=i8.agreement["same"], int8_layers=i8.quantized["quantized"],
             int8_step_ms=i8.profile["ms_per_token"], int8_convert_ms=i8.profile["convert_ms_per_token"],
             f32_convert_ms=f32.profile["convert_ms_per_token"])
    if i8.decode_min_tokens_per_s > f32.decode_max_tokens_per_s:
        speed = "faster"
    elif i8.decode_max_tokens_per_s < f32.decode_min_tokens_per_s:
        speed = "slower"
    else:
        speed = "unclear"
    why = (said("lesson.dtype.why", step=num(f["int8_step_ms"]), conv=num(f["int8_convert_ms"]),
                f32=num(f["f32_convert_ms"])) if speed == "slower" and f["int8_convert_ms"] > f["f32_convert_ms"] else "")
    common = dict(f32=size(f32.weights_bytes), f32_tps=num(f["f32_tps"]), bf16=size(bf16.weights_bytes),
                  bf16_tps=num(f["bf16_tps"]), bf16_same=f["bf16_same"], n=f["compared"], tokens=f["decode_tokens"])
    if not f["int8_layers"]:  # why nothing was quantized, from the model's layers (load/quantize.py)
        kinds = [said(f"lesson.dtype.skip.{x['reason']}", kinds=", ".join(x["kinds"])) for x in i8.quantized["skipped"]]
        return f, said("lesson.dtype.said.none", **common, int8=size(i8.weights_bytes), int8_tps=num(f["int8_tps"]),
                       skipped=quantize.joined(kinds))
    f["int8_share"] = i8.weights_bytes / f32.weights_bytes
    return f, said("lesson.dtype.said.some", **common, int8=size(i8.weights_bytes), int8_tps=num(f["int8_tps"]),
                   layers=f["int8_layers"], share=num(f["int8_share"]),
                   speed=said(f"lesson.dtype.speed.{speed}"), int8_same=f["int8_same"], why=why)


# ---------------------------------------------------------------- the path

@dataclass(frozen=True)
class Step:
    id: str
    title: str  # i18n keys
    text: str
    panel: str  # "panel:<element id>" (docs/lesson-map.md's form)
    tab: str  # the gr.Tab id holding it
    where: str  # i18n key naming the panel
    on_model: Callable[[LoadedModel], tuple[dict, Said]] | None = None  # run on the visitor's held model
    on_session: Callable[[str], tuple] | None = field(default=None)  # run with the session (the lab, the fit step)


STEPS: tuple[Step, ...] = (
    Step("load", "lesson.load.title", "lesson.load.text", "panel:report", "play", "lesson.panel.report", on_model=load_step),
    Step("to", "lesson.to.title", "lesson.to.text", "panel:bw-out", "speed", "lesson.panel.bw", on_model=to_step),
    Step("where", "lesson.where.title", "lesson.where.text", "panel:inspect", "inspect", "lesson.panel.inspect",
         on_model=where_step),
    Step("forward", "lesson.forward.title", "lesson.forward.text", "panel:stats", "play", "lesson.panel.stats",
         on_model=forward_step),
    Step("cache", "lesson.cache.title", "lesson.cache.text", "panel:kv-out", "speed", "lesson.panel.kv",
         on_model=cache_step),
    Step("infer", "lesson.infer.title", "lesson.infer.text", "panel:lab", "play", "lesson.panel.lab",
         on_session=mistake("inputs-on-cpu")),
    Step("train", "lesson.train.title", "lesson.train.text", "panel:lab", "play", "lesson.panel.lab",
         on_session=mistake("labels-on-cpu")),
    Step("fit", "lesson.fit.title", "lesson.fit.text", "panel:place-map", "placement", "lesson.panel.place",
         on_session=fit_step),
    Step("speed", "lesson.speed.title", "lesson.speed.text", "panel:eng-out", "speed", "lesson.panel.engines",
         on_model=speed_step),
    Step("dtype", "lesson.dtype.title", "lesson.dtype.text", "panel:cmp-table", "compare", "lesson.panel.compare",
         on_session=dtype_step),
)
BY_ID = {s.id: s for s in STEPS}


def get(step: object) -> Step:
    if not isinstance(step, str) or step not in BY_ID:
        shown = step if isinstance(step, str) else type(step).__name__
        raise UserError.of("lesson.err.unknown", step=repr(shown[:40]), ids=", ".join(BY_ID))
    return BY_ID[step]


def run_step(step: Step, session: str) -> StepResult:
    """Run `step` for `session`; its own model loaded first (the bundled one) when it has none."""
    t0 = time.perf_counter()
    loaded_first = False
    if step.on_model is not None or step.id in ("infer", "train", "dtype"):
        if POOL.current(session) is None:
            POOL.load(*loader.parse(BUNDLED_NAME, "cpu", "float32"), session=session)
            loaded_first = True
    placed = step.id == "fit"
    if step.on_model is not None:
        with POOL.held(session) as lm:
            if lm is None:  # unloaded between the two calls: said as the pool says it
                raise UserError.of("err.not_loaded")
            figures, sentence = step.on_model(lm)
            model, device, dtype = lm.report.model, lm.report.device, lm.report.dtype
            # the load step measures nothing: it reads the figures the load took, when it took them
            at = (lm.report.loaded_at or 0.0) if step.id == "load" else time.time()
    else:
        out = step.on_session(session)
        figures, sentence = out[0], out[1]
        current = POOL.current(session)
        model, device, dtype = ((out[2], "auto", "float32") if placed
                                else (current[0].model, current[0].device, current[0].dtype) if current else ("", "", ""))
        at = time.time()
    return StepResult(step.id, figures, sentence, step.panel, step.tab, model, device, dtype, loaded_first, placed,
                      time.perf_counter() - t0, at)
