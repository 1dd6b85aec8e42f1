"""Compare: one model through every (device, dtype) pair, measured the same way, repeated.

`run(src, pairs, max_new_tokens)` loads each pair through the page's path, warms up once, then
times `RUNS` greedy generations: per row the load and migration, TTFT and decode tokens/s as
median and spread with their token counts, peak memory, the share of the bandwidth bound, and the
last run's memory ledger with the weights' and the KV cache's estimates beside their measurements.
With the pool, the pairs run in its lane, beside the models it holds for visitors and within the
budget they leave: nothing of theirs is unloaded. `to_csv`, `to_json`, `export` write the rows.
What each figure means: docs/generation.md.
"""

from __future__ import annotations

import csv
import io
import json
import statistics
import threading
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Callable

import torch

from playground.core import settings, threads
from playground.core.errors import UserError, shown
from playground.core.i18n import Said, as_text, said, translatable
from playground.core.inputs import GenerationParams
from playground.hw import bandwidth, busy, devices, ledger, memory, sampler
from playground.hw.devices import DeviceInfo, Dtype
from playground.load import estimate, loader
from playground.load.catalog import ModelSource
from playground.run import accounting, fidelity, generation

DEFAULT_PROMPT = "ROMEO: But soft, what light through yonder window breaks?"
DEFAULT_DTYPES = ("float32", "bfloat16", "float16", "int8")
REFERENCE_DTYPE = "float32"  # the rows' tokens and logits are compared with the first float32 row's
WARMUP = 1  # untimed generations per pair, before the timed ones
RUNS = 3  # timed generations per pair: the row gives their median and min-max
MEMORY_BOUND = 50.0  # % of a decode step spent reading the weights, from which a row is memory-bound

Progress = Callable[[float, str], None]

CSV_COLUMNS = (
    "pair", "model", "device", "dtype", "status", "warmup", "runs", "load_s", "migrate_s", "ttft_s", "ttft_min_s",
    "ttft_max_s", "prompt_tokens", "new_tokens", "decode_tokens", "decode_s", "decode_tokens_per_s",
    "decode_min_tokens_per_s", "decode_max_tokens_per_s", "weights_bytes", "rss_start", "peak_rss", "peak_rss_growth",
    "peak_vram", "bandwidth_gbps", "bound_tokens_per_s", "percent_of_bound", "bound", "step_ms", "weights_read_ms",
    "file_backed_bytes", "weights_estimate_bytes", "weights_error_pct", "kv_bytes", "kv_estimate_bytes", "kv_error_pct",
    "activation_bytes", "finish_reason", "load_average", "cores", "error", "prefill_tokens_per_s", "agree_same",
    "agree_compared", "agree_first_change", "logit_diff_median", "logit_diff_max", "profile_ms_per_token", "top_op",
)


@dataclass
class CompareRow:
    pair: str  # "cpu/bfloat16"
    model: str
    device: str
    dtype: str  # the dtype asked for
    status: str = "pending"  # ok, error, refused, stopped, skipped
    warmup: int = 0  # untimed generations before the timed ones
    runs: int = 0  # timed generations: the figures below are their medians
    load_s: float | None = None
    migrate_s: float | None = None
    ttft_s: float | None = None
    ttft_min_s: float | None = None
    ttft_max_s: float | None = None
    prompt_tokens: int | None = None
    new_tokens: int | None = None
    decode_tokens: int | None = None  # new_tokens - 1: the steps decode_s covers
    decode_s: float | None = None
    decode_tokens_per_s: float | None = None
    decode_min_tokens_per_s: float | None = None
    decode_max_tokens_per_s: float | None = None
    run_ttft_s: list[float] = field(default_factory=list)  # each timed run, in order
    run_decode_tokens_per_s: list[float] = field(default_factory=list)
    weights_bytes: int | None = None
    rss_start: int | None = None
    peak_rss: int | None = None
    peak_rss_growth: int | None = None
    peak_vram: int | None = None
    bandwidth_gbps: float | None = None  # the memory bandwidth the bound uses
    bound_tokens_per_s: float | None = None  # bandwidth / weight bytes
    percent_of_bound: float | None = None  # also the share of a decode step spent reading the weights
    bound: str = ""  # "memory" (>= MEMORY_BOUND % of a step reads weights) or "overhead" (per-token overhead)
    step_ms: float | None = None  # one decode step, 1000 / decode_tokens_per_s
    weights_read_ms: float | None = None  # reading every weight once at the measured bandwidth
    file_backed_bytes: int | None = None
    # the last timed run's ledger (playground.run.accounting), and its estimates beside what was measured
    weights_estimate_bytes: int | None = None
    weights_error_pct: float | None = None
    kv_bytes: int | None = None  # read from the cache object, the cache still held after the last token
    kv_estimate_bytes: int | None = None  # per-token estimate x the tokens in the cache
    kv_error_pct: float | None = None
    activation_bytes: int | None = None  # the prefill's peak above what stayed
    ledger: list[dict] = field(default_factory=list)
    finish_reason: str | None = None
    load_average: float | None = None  # the machine's 1-minute load average after the timed runs (hw.busy)
    cores: int | None = None  # the cores this process may use: a load above them shared the CPU
    # why the pair failed: our own refusal (a UserError, the memory check's) as words, said in the page's
    # language; a library's own message as it is. The API's `error` is the English, `error_zh` the Chinese
    # of our own words ("" for a library's message).
    error: Said | str = ""
    text: str = ""
    label: Said | None = None  # the synthetic models' "random weights" warning
    phases: list[dict] = field(default_factory=list)  # per-phase peaks from the sampler
    prefill_tokens_per_s: float | None = None  # prompt tokens / TTFT (the prefill and the first token's choice)
    # against the reference row (the first float32 one) on the same prompt, teacher-forced (run/fidelity.py)
    agreement: dict | None = None
    profile: dict | None = None  # a few decode steps under torch.profiler: the top operators, ms per token
    quantized: dict | None = None  # int8, int4: the load's QuantReport (what was quantized, what skipped)

    def to_dict(self) -> dict:
        d = as_text(asdict(self))
        d["label"] = d["label"] or ""
        d["error_zh"] = self.error.text("zh") if isinstance(self.error, Said) else ""
        a, prof = d.get("agreement") or {}, d.get("profile") or {}
        d.update(agree_same=a.get("same"), agree_compared=a.get("compared"), agree_first_change=a.get("first_change"),
                 logit_diff_median=a.get("logit_diff_median"), logit_diff_max=a.get("logit_diff_max"),
                 profile_ms_per_token=prof.get("ms_per_token"),
                 top_op=prof["ops"][0]["op"] if prof.get("ops") else None)
        return d


def parse_pairs(pairs: object) -> list[tuple[DeviceInfo, Dtype]]:
    """['cpu/float32', 'cuda:0/bfloat16'] -> [(device, dtype)]: the edge's check, one device discovery,
    duplicates removed, capped (PLAYGROUND_MAX_COMPARE_PAIRS)."""
    if isinstance(pairs, str):
        pairs = [p for p in pairs.replace(",", " ").split() if p]
    if not isinstance(pairs, (list, tuple)) or not pairs:
        raise UserError.of("err.pairs_none")
    cap = settings.read().max_compare_pairs
    if len(pairs) > cap:
        raise UserError.of("err.pairs_many", n=len(pairs), cap=cap)
    known = devices.discover()
    out: list[tuple[DeviceInfo, Dtype]] = []
    for p in pairs:
        if not isinstance(p, str) or p.count("/") != 1:
            raise UserError.of("err.pair", got=shown(p, 40))
        dev, dt = (x.strip() for x in p.split("/"))
        pair = (devices.parse_device(dev, known), devices.parse_dtype(dt))
        if pair not in out:
            out.append(pair)
    return out


def available_pairs() -> list[str]:
    """Every usable device (not 'auto') with each of float32, bfloat16, float16: the default matrix."""
    return [f"{d.id}/{dt}" for d in devices.discover() if d.available and d.kind != "auto" for dt in DEFAULT_DTYPES]


class Matrix(list):
    """The rows, in the order asked for; `beside`: the pool's models the pairs ran beside (with a pool)."""

    beside: dict | None = None  # {"models": n, "bytes": their RAM}, read when the run took the lane
    waiting: int | None = None  # other visitors waiting for the lane when it ended (the page's queue)


def run(src: ModelSource, pairs: list[tuple[DeviceInfo, Dtype]], max_new_tokens: int, prompt: str = DEFAULT_PROMPT,
        progress: Progress | None = None, stop: threading.Event | None = None, pool=None,
        runs: int = RUNS, warmup: int = WARMUP) -> Matrix:
    """Run the matrix; one row per pair, in order. With `pool` (playground.run.pool's) it runs in the pool's
    lane, each pair loaded beside the models the pool holds, within the budget they leave (a pair that
    does not fit is refused, saying so): it borrows nothing of theirs."""
    progress = progress or (lambda frac, desc: None)
    stop = stop or threading.Event()
    if pool is None:
        return Matrix(_run(src, pairs, max_new_tokens, prompt, progress, stop, runs, warmup))
    with pool.exclusive():
        held = pool.others(None)
        rows = Matrix(_run(src, pairs, max_new_tokens, prompt, progress, stop, runs, warmup,
                           resident=sum(m["bytes"] for m in held)))
    rows.beside = dict(models=len(held), bytes=sum(m["bytes"] for m in held))
    return rows


def _run(src, pairs, n_new, prompt, progress, stop, runs, warmup, resident: int = 0) -> list[CompareRow]:
    rows = [CompareRow(pair=f"{d.id}/{devices.dtype_name(t)}", model=src.name, device=d.id,
                       dtype=devices.dtype_name(t)) for d, t in pairs]
    n = len(rows)
    # the reference pair runs first, so that every other row is compared with its tokens; the rows keep their order
    first = next((i for i, r in enumerate(rows) if r.dtype == REFERENCE_DTYPE), None)
    order = ([first] if first is not None else []) + [i for i in range(n) if i != first]
    refs: list[fidelity.Reference] = []  # the reference row appends its Reference; the others read it
    for step, i in enumerate(order):
        row, (dev, dtype) = rows[i], pairs[i]
        if stop.is_set():
            for j in order[step:]:
                rows[j].status, rows[j].error = "skipped", said("cmp.skipped")
            break

        def sub(frac: float, desc: str, k: int = step, row: CompareRow = row) -> None:
            progress((k + min(max(frac, 0.0), 1.0)) / n, translatable("progress.cmp_pair", i=k + 1, n=n, pair=row.pair, step=desc))

        try:
            _one(src, dev, dtype, row, n_new, prompt, sub, stop, runs, warmup, resident, refs, i == first)
        except UserError as e:
            row.status = "refused" if isinstance(e, estimate.DoesNotFit) else "error"
            row.error = e.said
        except Exception as e:  # a pair this machine cannot run: the row says why, the matrix goes on
            row.status, row.error = "error", f"{type(e).__name__}: {str(e).splitlines()[0][:300] if str(e) else ''}"
        finally:
            memory.release_memory()
    progress(1.0, translatable("progress.cmp_done", n=n))
    return rows


def _one(src: ModelSource, dev: DeviceInfo, dtype: Dtype, row: CompareRow, n_new: int, prompt: str,
         progress: Progress, stop: threading.Event, runs: int, warmup: int, resident: int = 0,
         refs: list | None = None, is_reference: bool = False) -> None:
    """One pair: loaded, warmed up, timed; then, the timing done, its tokens against the reference's (`refs`: the
    reference row appends its own, the others read it) and a short profile."""
    # torch work in threads that end with it; this one only waits (see playground.core.threads)
    # refuse before allocating: the budget covers the pool's models too
    plan = threads.run(loader.prepare, src, dev, dtype, resident=resident, name="check")
    # the pair's own GPU counted afresh (where `auto` puts the first layers when the pair asks for it: a GPU's
    # peak is per device, and auto's layers start on the first one)
    counted_on = dev.id if dev.kind != "auto" else ("cuda:0" if devices.cuda_count() else "cpu")
    memory.reset_peak(counted_on)
    steps = warmup + runs
    timed: list[generation.GenerationStats] = []
    with sampler.Sampler(hz=15) as s:
        plan.recorder.timeline = s  # the load's phases mark this pair's timeline
        lm = threads.run(loader.load, plan, lambda f, d: progress(0.4 * f, d), name="load")
        try:
            rep = lm.report
            where = rep.location.runs_on
            row.load_s, row.migrate_s = rep.load_seconds, rep.migrate_seconds
            row.weights_bytes, row.label = rep.weights_bytes, rep.label
            row.file_backed_bytes = rep.file_backed_bytes
            params = GenerationParams(max_new_tokens=n_new, temperature=0.0, seed=0)
            for k in range(steps):
                if stop.is_set():
                    break
                is_warmup = k < warmup
                s.mark("warm-up" if is_warmup else "prefill")
                run_stop = threading.Event()  # stream() sets its own event when it ends; never ours
                text, stats = "", None
                meter = None if is_warmup else accounting.Meter(lm)  # every timed run alike; the last one's is kept
                for text, stats in generation.stream(lm.model, lm.tokenizer, lm.device, prompt, params, stop=run_stop,
                                                     meter=meter):
                    if not is_warmup and stats.new_tokens >= 1 and s.spans[-1].name != "decode":
                        s.mark("decode")
                    what = (translatable("progress.cmp_warmup", done=stats.new_tokens, n=n_new) if is_warmup else
                            translatable("progress.cmp_run", k=k - warmup + 1, runs=runs, done=stats.new_tokens, n=n_new))
                    progress(0.4 + 0.6 * (k + stats.new_tokens / n_new) / steps, what)
                    if stop.is_set():
                        run_stop.set()
                if is_warmup:
                    row.warmup += 1
                elif stats is not None and stats.new_tokens:
                    timed.append(stats)  # a run stopped part way counts too: the row says "stopped"
                    row.text = text
                    _ledger(row, meter.parts(stats.prompt_tokens, stats.new_tokens))
                if meter is not None:
                    meter.release()
                if stats is not None and stats.finish_reason == "stopped":
                    row.status = "stopped"
                    break
            if timed and not stop.is_set():  # after the clock: what the dtype changed, and where its time goes
                s.mark("agreement")
                _fidelity(lm, row, prompt, n_new, refs if refs is not None else [], is_reference)
        finally:
            del lm
    row.runs = len(timed)
    row.load_average, row.cores = busy.load_average(), busy.cores()
    row.phases = [p.to_dict() for p in s.peaks()]
    row.rss_start = s.samples[0].rss
    row.peak_rss = max(x.rss for x in s.samples)
    row.peak_rss_growth = row.peak_rss - row.rss_start
    row.peak_vram = memory.peak_allocated(counted_on)
    # the decode bound's rate for the memory the weights are read from: where the model's forward pass runs
    # (what `auto` became), measured once per process and outside the pair's timeline
    bw = threads.run(bandwidth.read_bandwidth, where, name="bandwidth")
    row.bandwidth_gbps = bw.gbps
    if row.weights_bytes:
        row.bound_tokens_per_s = bw.gbps * 1e9 / row.weights_bytes
        row.weights_read_ms = 1000.0 * row.weights_bytes / (bw.gbps * 1e9)
    if timed:
        _medians(row, timed)
    if row.status != "stopped":
        row.status = "ok" if timed else "stopped"


def _fidelity(lm, row: CompareRow, prompt: str, n: int, refs: list, is_reference: bool) -> None:
    """The row's tokens and logits against the reference's (the reference row makes it), and its top operators per
    decode step; each in a thread of its own (playground.core.threads)."""
    if is_reference:
        refs.append(threads.run(fidelity.reference, lm.model, lm.tokenizer, lm.device, prompt, n, row.pair,
                                name="reference"))
    if refs:
        row.agreement = threads.run(fidelity.against, lm.model, lm.device, refs[0], name="agreement").to_dict()
    row.profile = threads.run(fidelity.top_ops, lm.model, lm.tokenizer, lm.device, prompt, name="profile")
    if lm.report.quantized is not None:
        row.quantized = lm.report.quantized.to_dict()


def _ledger(row: CompareRow, parts: list) -> None:
    """The row's memory: the run's ledger, and the estimates beside the weights and the KV cache."""
    row.ledger = ledger.as_dicts(parts)
    by = {p.part: p for p in parts if p.scope != "device"}
    weights, kv, act = by.get("weights"), by.get("kv_cache"), by.get("activations")
    if weights is not None:
        row.weights_estimate_bytes, row.weights_error_pct = weights.estimate_bytes, weights.error_pct
    if kv is not None:
        row.kv_bytes, row.kv_estimate_bytes, row.kv_error_pct = kv.bytes, kv.estimate_bytes, kv.error_pct
    if act is not None:
        row.activation_bytes = act.bytes


def _medians(row: CompareRow, timed: list) -> None:
    """The row's figures: the median of the timed runs, with their spread (min-max)."""
    mid = statistics.median_low  # a run that happened: its token counts and decode time go together
    ttfts = [st.ttft_seconds for st in timed if st.ttft_seconds is not None]
    rates = [st.tokens_per_second for st in timed if st.tokens_per_second]
    row.run_ttft_s, row.run_decode_tokens_per_s = ttfts, rates
    last = timed[-1]
    row.prompt_tokens, row.new_tokens, row.finish_reason = last.prompt_tokens, last.new_tokens, last.finish_reason
    row.decode_tokens = max(last.new_tokens - 1, 0)
    if ttfts:
        row.ttft_s, row.ttft_min_s, row.ttft_max_s = statistics.median(ttfts), min(ttfts), max(ttfts)
        row.prefill_tokens_per_s = row.prompt_tokens / row.ttft_s if row.prompt_tokens and row.ttft_s else None
    if rates:
        middle = next(st for st in timed if st.tokens_per_second == mid(rates))
        row.decode_tokens_per_s, row.decode_s = middle.tokens_per_second, middle.decode_seconds
        row.decode_min_tokens_per_s, row.decode_max_tokens_per_s = min(rates), max(rates)
        row.step_ms = 1000.0 / row.decode_tokens_per_s
        if row.bound_tokens_per_s:
            row.percent_of_bound = 100.0 * row.decode_tokens_per_s / row.bound_tokens_per_s
            row.bound = "memory" if row.percent_of_bound >= MEMORY_BOUND else "overhead"


def ranking(rows) -> list[tuple[dict, dict, bool]]:
    """The rows that decoded, fastest median first, as neighbours (faster, slower, told apart). Told apart
    when each ran at least twice and every timed run of the faster beat every run of the slower (their
    min-max spreads do not overlap); otherwise this run cannot tell which is faster, whatever the medians say."""
    done = sorted((d for d in _as_dicts(rows) if d.get("decode_tokens_per_s")),
                  key=lambda d: d["decode_tokens_per_s"], reverse=True)
    out = []
    for a, b in zip(done, done[1:]):
        apart = (min(a.get("runs") or 0, b.get("runs") or 0) >= 2
                 and a["decode_min_tokens_per_s"] > b["decode_max_tokens_per_s"])
        out.append((a, b, apart))
    return out


# -- export ---------------------------------------------------------------------
def _as_dicts(rows) -> list[dict]:
    return [r.to_dict() if isinstance(r, CompareRow) else dict(r) for r in rows]


def to_csv(rows) -> str:
    """The table as CSV: one line per pair, the columns of CSV_COLUMNS (no nested fields)."""
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=CSV_COLUMNS, extrasaction="ignore", lineterminator="\n")
    w.writeheader()
    for d in _as_dicts(rows):
        w.writerow({k: ("" if d.get(k) is None else d.get(k)) for k in CSV_COLUMNS})
    return buf.getvalue()


def to_json(rows, machine: dict | None = None) -> str:
    """Every row in full, with a header describing the machine the numbers were measured on."""
    return json.dumps(dict(machine=machine or machine_info(), rows=_as_dicts(rows)), indent=2)


def machine_info() -> dict:
    bw = bandwidth.host_memcpy()
    return dict(cpu=devices.cpu_name(), threads=torch.get_num_threads(), torch=torch.__version__,
                devices=[d.id for d in devices.discover() if d.available],
                host_memcpy_gbps=bw.gbps, ram_available=memory.available_bytes(), measured_at=time.time())


def export(rows, folder: str | Path, stem: str = "compare") -> dict[str, Path]:
    """Write <stem>.csv and <stem>.json into `folder` (e.g. a temp dir for a download button)."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    paths = dict(csv=folder / f"{stem}.csv", json=folder / f"{stem}.json")
    paths["csv"].write_text(to_csv(rows), encoding="utf-8")
    paths["json"].write_text(to_json(rows), encoding="utf-8")
    return paths
