"""Compare: one model through every (device, dtype) pair, measured the same way.

Each pair is one run through the same path the page uses: `loader.prepare` and `loader.load` (timed
load and migration), then `generation.stream` on one fixed prompt for a fixed
number of greedy tokens. A memory sampler runs throughout, with the load,
migrate, prefill and decode phases marked. Per row:

- load_s, migrate_s: from the load report (disk -> RAM, then `.to(device)`).
- ttft_s with prompt_tokens: the prefill.
- decode tokens/s with decode_tokens (= new tokens - 1, the steps it divides).
- peak RSS (and peak VRAM on a GPU) over the run, and the growth over its start.
- the memory-bandwidth bound: each decode step reads every weight once, so no
  run can beat memory bandwidth / weight bytes tokens per second. The bandwidth
  is measured here (`bandwidth.memory_bandwidth`: a large memcpy in the memory
  the weights live in); `percent_of_bound` says how close decode came. Small
  models on a CPU stay far below it (Python and kernel-launch overhead dominate
  each step); large ones approach it.

A note on float32 on the CPU: Transformers 5 memory-maps a safetensors checkpoint
that already has the requested dtype, so "load" copies nothing and the weights
are read from the page cache during the first forward pass: that cost lands in
TTFT, not in load_s. `file_backed_bytes` says when that happened.

The matrix is capped (PLAYGROUND_MAX_COMPARE_PAIRS, default 8), checked before
anything runs; a stop event is read between runs (and ends a running generation
early, its row marked stopped). One model is loaded at a time, and freed before
the next.
"""

from __future__ import annotations

import csv
import io
import json

import threading
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Callable

import torch

from playground.core import settings, threads
from playground.core.errors import UserError, shown
from playground.core.i18n import Said, plain
from playground.core.inputs import GenerationParams
from playground.hw import bandwidth, devices, memory, sampler
from playground.hw.devices import DeviceInfo, Dtype
from playground.load import estimate, loader
from playground.load.catalog import ModelSource
from playground.run import generation

DEFAULT_PROMPT = "ROMEO: But soft, what light through yonder window breaks?"
DEFAULT_DTYPES = ("float32", "bfloat16", "float16")

Progress = Callable[[float, str], None]

CSV_COLUMNS = (
    "pair", "model", "device", "dtype", "status", "load_s", "migrate_s", "ttft_s", "prompt_tokens", "new_tokens",
    "decode_tokens", "decode_s", "decode_tokens_per_s", "weights_bytes", "rss_start", "peak_rss", "peak_rss_growth",
    "peak_vram", "bandwidth_gbps", "bound_tokens_per_s", "percent_of_bound", "file_backed_bytes", "finish_reason",
    "error",
)


@dataclass
class CompareRow:
    pair: str  # "cpu/bfloat16"
    model: str
    device: str
    dtype: str  # the dtype asked for
    status: str = "pending"  # ok, error, refused, stopped, skipped
    load_s: float | None = None
    migrate_s: float | None = None
    ttft_s: float | None = None
    prompt_tokens: int | None = None
    new_tokens: int | None = None
    decode_tokens: int | None = None  # new_tokens - 1: the steps decode_s covers
    decode_s: float | None = None
    decode_tokens_per_s: float | None = None
    weights_bytes: int | None = None
    rss_start: int | None = None
    peak_rss: int | None = None
    peak_rss_growth: int | None = None
    peak_vram: int | None = None
    bandwidth_gbps: float | None = None  # the memory bandwidth the bound uses
    bound_tokens_per_s: float | None = None  # bandwidth / weight bytes
    percent_of_bound: float | None = None
    file_backed_bytes: int | None = None
    finish_reason: str | None = None
    error: str = ""
    text: str = ""
    label: Said | None = None  # the synthetic models' "random weights" warning
    phases: list[dict] = field(default_factory=list)  # per-phase peaks from the sampler

    def to_dict(self) -> dict:
        d = plain(asdict(self))
        d["label"] = d["label"] or ""
        return d


def parse_pairs(pairs: object) -> list[tuple[DeviceInfo, Dtype]]:
    """['cpu/float32', 'cuda:0/bfloat16'] -> [(device, dtype)]: the edge's check, one device discovery,
    duplicates removed, capped (PLAYGROUND_MAX_COMPARE_PAIRS)."""
    if isinstance(pairs, str):
        pairs = [p for p in pairs.replace(",", " ").split() if p]
    if not isinstance(pairs, (list, tuple)) or not pairs:
        raise UserError("No pairs to compare. Give a list like ['cpu/float32', 'cpu/bfloat16'].")
    cap = settings.read().max_compare_pairs
    if len(pairs) > cap:
        raise UserError(f"{len(pairs)} pairs asked for; the limit is {cap} (PLAYGROUND_MAX_COMPARE_PAIRS). "
                        "Untick some.")
    known = devices.discover()
    out: list[tuple[DeviceInfo, Dtype]] = []
    for p in pairs:
        if not isinstance(p, str) or p.count("/") != 1:
            raise UserError(f"{shown(p, 40)} is not a pair. Write device/dtype, e.g. cpu/bfloat16 or cuda:0/float16.")
        dev, dt = (x.strip() for x in p.split("/"))
        pair = (devices.parse_device(dev, known), devices.parse_dtype(dt))
        if pair not in out:
            out.append(pair)
    return out


def available_pairs() -> list[str]:
    """Every usable device (not 'auto') with each of float32, bfloat16, float16: the default matrix."""
    return [f"{d.id}/{dt}" for d in devices.discover() if d.available and d.kind != "auto" for dt in DEFAULT_DTYPES]


def run(src: ModelSource, pairs: list[tuple[DeviceInfo, Dtype]], max_new_tokens: int, prompt: str = DEFAULT_PROMPT,
        progress: Progress | None = None, stop: threading.Event | None = None, slot=None) -> list[CompareRow]:
    """Run the matrix; one row per pair, in order. With `slot` (the shared slot) the shared model is
    unloaded first and the slot held throughout, so one model is loaded at a time."""
    progress = progress or (lambda frac, desc: None)
    stop = stop or threading.Event()
    if slot is None:
        return _run(src, pairs, max_new_tokens, prompt, progress, stop)
    with slot.emptied():
        return _run(src, pairs, max_new_tokens, prompt, progress, stop)


def _run(src, pairs, n_new, prompt, progress, stop) -> list[CompareRow]:
    rows = [CompareRow(pair=f"{d.id}/{devices.dtype_name(t)}", model=src.name, device=d.id,
                       dtype=devices.dtype_name(t)) for d, t in pairs]
    n = len(rows)
    for i, (row, (dev, dtype)) in enumerate(zip(rows, pairs)):
        if stop.is_set():
            for r in rows[i:]:
                r.status, r.error = "skipped", "stopped before this run"
            break

        def sub(frac: float, desc: str, i: int = i, row: CompareRow = row) -> None:
            progress((i + min(max(frac, 0.0), 1.0)) / n, f"{i + 1}/{n} {row.pair}: {desc}")

        try:
            _one(src, dev, dtype, row, n_new, prompt, sub, stop)
        except UserError as e:
            row.status = "refused" if isinstance(e, estimate.DoesNotFit) else "error"
            row.error = str(e)
        except Exception as e:  # a pair this machine cannot run: the row says why, the matrix goes on
            row.status, row.error = "error", f"{type(e).__name__}: {str(e).splitlines()[0][:300] if str(e) else ''}"
        finally:
            memory.release_memory()
    progress(1.0, f"{n} run{'s' if n != 1 else ''} done")
    return rows


def _one(src: ModelSource, dev: DeviceInfo, dtype: Dtype, row: CompareRow, n_new: int, prompt: str,
         progress: Progress, stop: threading.Event) -> None:
    # torch work in threads that end with it; this one only waits (see playground.core.threads)
    plan = threads.run(loader.prepare, src, dev, dtype, name="check")  # refuse before allocating
    bw = threads.run(bandwidth.memory_bandwidth, dev.id, name="bandwidth")
    if torch.cuda.is_available():
        torch.cuda.reset_peak_memory_stats()
    with sampler.Sampler(hz=15) as s:
        mark = sampler.marking_progress(s, lambda f, d: progress(0.6 * f, d))
        lm = threads.run(loader.load, plan, mark, name="load")
        try:
            rep = lm.report
            row.load_s, row.migrate_s = rep.load_seconds, rep.migrate_seconds
            row.weights_bytes, row.label = rep.weights_bytes, rep.label
            row.file_backed_bytes = rep.file_backed_bytes
            params = GenerationParams(max_new_tokens=n_new, temperature=0.0, seed=0)
            run_stop = threading.Event()  # stream() sets its own event when it ends; never ours
            s.mark("prefill")
            progress(0.6, "prefill")
            text, stats = "", None
            for text, stats in generation.stream(lm.model, lm.tokenizer, lm.device, prompt, params, stop=run_stop):
                if stats.new_tokens >= 1 and s.spans[-1].name != "decode":
                    s.mark("decode")
                progress(0.6 + 0.4 * stats.new_tokens / n_new, f"decode {stats.new_tokens}/{n_new} tokens")
                if stop.is_set():
                    run_stop.set()
        finally:
            del lm
    row.text = text
    row.ttft_s, row.prompt_tokens, row.new_tokens = stats.ttft_seconds, stats.prompt_tokens, stats.new_tokens
    row.decode_tokens = max(stats.new_tokens - 1, 0)
    row.decode_s, row.decode_tokens_per_s = stats.decode_seconds, stats.tokens_per_second
    row.finish_reason = stats.finish_reason
    row.phases = [p.to_dict() for p in s.peaks()]
    row.rss_start = s.samples[0].rss
    row.peak_rss = max(x.rss for x in s.samples)
    row.peak_rss_growth = row.peak_rss - row.rss_start
    if row.device.startswith("cuda") and torch.cuda.is_available():
        row.peak_vram = torch.cuda.max_memory_allocated(torch.device(row.device))
    row.bandwidth_gbps = bw.gbps
    if row.weights_bytes:
        row.bound_tokens_per_s = bw.gbps * 1e9 / row.weights_bytes
        if row.decode_tokens_per_s:
            row.percent_of_bound = 100.0 * row.decode_tokens_per_s / row.bound_tokens_per_s
    row.status = "stopped" if stats.finish_reason == "stopped" else "ok"


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


def read_csv(text: str) -> list[dict]:
    """Read an exported CSV back: numbers as numbers, empty cells as None."""
    out = []
    for rec in csv.DictReader(io.StringIO(text)):
        row = {}
        for k, v in rec.items():
            if v == "":
                row[k] = None
                continue
            try:
                row[k] = int(v)
            except ValueError:
                try:
                    row[k] = float(v)
                except ValueError:
                    row[k] = v
        out.append(row)
    return out
