"""Does the playground cost anything? The app's own path against bare Transformers.

    python -m playground.bench            # the four cases, a table
    python -m playground.bench --json     # one JSON object
    python -m playground.bench --quick    # one small case, for the tests

A measuring tool that slows down what it measures teaches the wrong numbers. The
playground wraps `from_pretrained`, `.to()` and `generate()` with memory
snapshots, timers, a token streamer in a worker thread and a stop criterion;
this benchmark puts that path beside the plainest Transformers code, in one
process, on the same model, device, dtype, prompt and greedy token count.

The two sides
- bare: `AutoTokenizer.from_pretrained` + `AutoModelForCausalLM.from_pretrained`
  + `.to(device)`; then `model.generate(max_new_tokens=N, do_sample=False)`.
  No streamer, no stopping criterion.
- playground: `SLOT.load(...)` and `SLOT.generate(...)`, the functions the page
  and the API call, consumed the way the API's generate endpoint consumes them
  (each update turned into a dict). Everything is switched on: the phase timers
  and memory snapshots, the streamer, the worker thread, the stop criterion.

Run by run, alternating (bare first on even runs, playground first on odd
ones) so that slow drifts (a background job, thermal throttling, the page
cache) hit both alike; one warm-up run of each side first, because the first
`from_pretrained` in a process also imports the model's Python code. Between
runs the previous model is dropped, `gc.collect()` runs and glibc's
`malloc_trim(0)` hands freed heap back to the kernel, so each load starts from
a comparable resident set. Medians, not means: one preempted run should not move
the result.

What is compared, and why it is fair
- decode tokens/s: playground = its own figure, (new tokens - 1) / (time of the
  last token - time of the first), from the streamer's timestamps. Bare has no
  streamer (even a minimal one is machinery bare code does not have), so its
  decode time is the difference of two plain calls: generate(N) - generate(1)
  = N - 1 decode steps; generate's fixed setup and teardown cancel out.
- time to first token: what the caller waits for. Bare = tokenise + move the
  ids + `generate(max_new_tokens=1)`; playground = from calling
  `SLOT.generate` to its first update (validation, tokenising, starting the
  worker thread, the queue hop and the first text decode included). The
  playground's self-reported TTFT (from just before its thread starts) is
  printed too.
- load: what the caller waits for. Bare = tokenizer + `from_pretrained` +
  `.to()`; playground = the whole `SLOT.load` (validation, the tokenizer, the
  three phases with their snapshots, the report). The playground's
  self-reported load + migrate seconds are set against bare's
  `from_pretrained` + `.to()`: that checks the figure on the page, not just
  the overhead.
- peak RSS during load: the growth of the resident set over its value just
  before the load, at its highest. Read from the kernel's high-water mark
  (VmHWM), which Linux lets a process reset by writing 5 to
  /proc/self/clear_refs, and from a psutil thread sampling at 100 Hz (the only
  way where VmHWM cannot be reset); the larger of the two counts. The same
  meter runs around both sides. Growth, not absolute RSS: the ~0.4 GB that
  Python, torch and Transformers hold before any load would hide a
  difference in what the load itself needs.
- where each side runs: in a thread of its own, never on the main thread. PyTorch's
  CPU kernels use OpenMP, and GNU libgomp keeps a pool of worker threads per thread
  that ever ran a parallel region; with more pooled threads than CPUs it throttles
  spinning, and small kernels run up to 5x slower (see `playground.threads`). A
  plain script has one such thread, its main thread. Here the bare side runs in a
  fresh thread per run and the playground in the threads it starts itself, while
  the main thread only waits, so each side holds the process's only pool while it
  runs, as a plain script does. (Before this rule the bare side ran on the main
  thread; its pool then outlived it, and the playground's generation, on a second
  thread, ran throttled: 0.6-0.8 of bare's tokens/s, none of it the playground's code.)
- control, no target: the plain script itself, in a process of its own, on its main
  thread (load, one warm-up, then generate(1) and generate(N) per run; medians):
  its decode tokens/s and time to first token beside the in-process figures show
  that running bare in a thread here changes nothing.
- cold start: seconds from launching `python app.py` until the page answers
  HTTP 200, against the seconds a fresh interpreter needs just to
  `import torch, transformers, gradio`. The app cannot start faster than its
  imports; the ratio says what the app adds on top.
"""

from __future__ import annotations

import argparse
import contextlib
import ctypes
import gc
import json
import os
import re
import socket
import statistics
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path

import psutil

from playground import threads
from playground.inputs import UserError

ROOT = Path(__file__).resolve().parent.parent
PROMPT = ("ROMEO:\nBut, soft! what light through yonder window breaks?\n"
          "It is the east, and Juliet is the sun.\n")
CASES = [
    ("shakespeare-gpt2", "cpu", "float32"),
    ("shakespeare-gpt2", "cpu", "bfloat16"),
    ("synthetic/gpt2-small", "cpu", "float32"),
    ("synthetic/gpt2-small", "cpu", "bfloat16"),
]
QUICK_CASES = [("shakespeare-gpt2", "cpu", "float32")]
PORTS = range(7900, 7920)


@dataclass(frozen=True)
class Target:
    op: str  # ">=" or "<="
    limit: float
    what: str

    def met(self, value: float | None) -> bool | None:
        if value is None:
            return None
        return value >= self.limit if self.op == ">=" else value <= self.limit


TARGETS = {
    "decode_tokens_per_second_ratio": Target(">=", 0.97, "decode tokens/s, playground / bare"),
    "ttft_difference_seconds": Target("<=", 0.020, "time to first token, playground - bare (s)"),
    "load_migrate_ratio": Target("<=", 1.10, "load wall time (tokenizer + from_pretrained + .to), playground / bare"),
    "peak_rss_load_ratio": Target("<=", 1.10, "peak RSS growth during load, playground / bare"),
    "cold_start_ratio": Target("<=", 1.30, "python app.py to HTTP 200 / import torch, transformers, gradio"),
}
# Not targets of the issue, but they check that the page's own figures tell the truth.
INFO = {
    "load_migrate_reported_ratio": Target("<=", 1.10, "the page's load + migrate seconds / bare from_pretrained + .to()"),
    "ttft_reported_difference_seconds": Target("<=", 0.020, "the page's TTFT - bare TTFT (s)"),
}


# ---------------------------------------------------------------- meters

def _read_hwm() -> int | None:
    try:
        with open("/proc/self/status", encoding="ascii") as fh:
            m = re.search(r"^VmHWM:\s+(\d+) kB", fh.read(), re.M)
        return int(m.group(1)) * 1024 if m else None
    except OSError:
        return None


def _reset_hwm() -> bool:
    """Linux 4.0+: writing 5 to clear_refs resets VmHWM to the current RSS."""
    try:
        with open("/proc/self/clear_refs", "w", encoding="ascii") as fh:
            fh.write("5")
        return True
    except OSError:
        return False


class PeakRSS:
    """The highest resident set size while the block runs, and where it started."""

    def __init__(self, interval: float = 0.01) -> None:
        self.interval = interval
        self.proc = psutil.Process(os.getpid())
        self.start = self.sampled = self.hwm = 0
        self.hwm_ok = False
        self._stop = threading.Event()

    def _sample(self) -> None:
        while not self._stop.wait(self.interval):
            self.sampled = max(self.sampled, self.proc.memory_info().rss)

    def __enter__(self) -> PeakRSS:
        self.hwm_ok = _reset_hwm()
        self.start = self.sampled = self.proc.memory_info().rss
        self._thread = threading.Thread(target=self._sample, name="peak-rss", daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()
        self.sampled = max(self.sampled, self.proc.memory_info().rss)
        hwm = _read_hwm() if self.hwm_ok else None
        self.hwm = hwm or 0

    @property
    def peak(self) -> int:
        return max(self.sampled, self.hwm)

    @property
    def growth(self) -> int:
        return self.peak - self.start


def _release_memory() -> None:
    """Drop garbage, then give glibc's freed heap back to the kernel (RSS falls)."""
    gc.collect()
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL("libc.so.6").malloc_trim(0)


# ---------------------------------------------------------------- the two sides

def bare_run(path: str, device: str, dtype: str, prompt: str, n: int) -> dict:
    """The plainest Transformers code for the same work."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from playground.devices import TORCH_DTYPES, sync

    _release_memory()
    with PeakRSS() as mem:
        t0 = time.perf_counter()
        tok = AutoTokenizer.from_pretrained(path)
        t1 = time.perf_counter()
        model = AutoModelForCausalLM.from_pretrained(path, dtype=TORCH_DTYPES[dtype])
        model.to(device)
        sync(device)
        t2 = time.perf_counter()

    sync(device)
    t3 = time.perf_counter()
    ids = tok(prompt, return_tensors="pt").to(device)
    one = model.generate(**ids, max_new_tokens=1, do_sample=False, pad_token_id=tok.eos_token_id)
    sync(device)
    t4 = time.perf_counter()
    out = model.generate(**ids, max_new_tokens=n, do_sample=False, pad_token_id=tok.eos_token_id)
    sync(device)
    t5 = time.perf_counter()
    prompt_tokens = int(ids["input_ids"].shape[-1])
    new = int(out.shape[-1]) - prompt_tokens
    decode_s = (t5 - t4) - (t4 - t3)  # generate(N) - generate(1): N-1 decode steps
    result = dict(
        load_seconds=t2 - t0, tokenizer_seconds=t1 - t0, load_migrate_seconds=t2 - t1,
        peak_rss=mem.peak, rss_before_load=mem.start, peak_rss_growth=mem.growth,
        peak_rss_sampled=mem.sampled, peak_rss_hwm=mem.hwm if mem.hwm_ok else None,
        ttft_seconds=t4 - t3, prompt_tokens=prompt_tokens, new_tokens=new,
        decode_seconds=decode_s,
        tokens_per_second=(new - 1) / decode_s if new > 1 and decode_s > 0 else None,
        first_token_id=int(one[0, -1]), token_ids=out[0, prompt_tokens:].tolist(),
    )
    del model, tok, ids, one, out
    _release_memory()
    torch.cuda.empty_cache() if torch.cuda.is_available() else None
    return result


PLAIN_SCRIPT = r"""
import json, statistics, sys, time
import torch
from transformers import AutoModelForCausalLM, AutoTokenizer
path, device, dtype, prompt, n, runs = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5]), int(sys.argv[6])

def sync():
    if device.startswith("cuda"):
        torch.cuda.synchronize()
    elif device == "mps":
        torch.mps.synchronize()

tok = AutoTokenizer.from_pretrained(path)
model = AutoModelForCausalLM.from_pretrained(path, dtype=getattr(torch, dtype)).to(device)
ids = tok(prompt, return_tensors="pt").to(device)
kw = dict(do_sample=False, pad_token_id=tok.eos_token_id)
model.generate(**ids, max_new_tokens=n, **kw)  # warm-up
rates, ttfts = [], []
for _ in range(runs):
    sync(); t0 = time.perf_counter()
    model.generate(**ids, max_new_tokens=1, **kw)
    sync(); t1 = time.perf_counter()
    out = model.generate(**ids, max_new_tokens=n, **kw)
    sync(); t2 = time.perf_counter()
    new = out.shape[-1] - ids["input_ids"].shape[-1]
    rates.append((new - 1) / ((t2 - t1) - (t1 - t0)))
    ttfts.append(t1 - t0)
print(json.dumps(dict(tokens_per_second=statistics.median(rates), ttft_seconds=statistics.median(ttfts))))
"""


def plain_script(path: str, device: str, dtype: str, prompt: str, n: int, runs: int) -> dict:
    """The control: bare Transformers as a script, in its own process, on its main thread."""
    env = dict(os.environ, HF_HUB_OFFLINE="1", TRANSFORMERS_VERBOSITY="error", TQDM_DISABLE="1")
    try:
        proc = subprocess.run([sys.executable, "-c", PLAIN_SCRIPT, path, device, dtype, prompt, str(n), str(runs)],
                              capture_output=True, text=True, timeout=600, env=env)
        return json.loads(proc.stdout.strip().splitlines()[-1])
    except (subprocess.SubprocessError, ValueError, IndexError) as e:
        return dict(error=f"{type(e).__name__}: {e}"[:300], tokens_per_second=None, ttft_seconds=None)


def playground_run(model: str, device: str, dtype: str, prompt: str, n: int) -> dict:
    """The app's own path, everything switched on, consumed as the API consumes it."""
    from playground.slot import SLOT

    SLOT.unload()  # the previous model's cleanup is not part of this load
    _release_memory()
    with PeakRSS() as mem:
        t0 = time.perf_counter()
        report = SLOT.load(model, device, dtype)
        t1 = time.perf_counter()

    t2 = time.perf_counter()
    first = None
    updates, stats, text = 0, None, ""
    for text, stats in SLOT.generate(prompt, n, 0, 1, 0, session="bench"):
        if first is None:
            first = time.perf_counter()
        stats.to_dict()  # what the API's generate endpoint does with every update
        updates += 1
    result = dict(
        load_seconds=t1 - t0, load_migrate_seconds=report.load_seconds + report.migrate_seconds,
        peak_rss=mem.peak, rss_before_load=mem.start, peak_rss_growth=mem.growth,
        peak_rss_sampled=mem.sampled, peak_rss_hwm=mem.hwm if mem.hwm_ok else None,
        ttft_seconds=first - t2, ttft_reported_seconds=stats.ttft_seconds,
        prompt_tokens=stats.prompt_tokens, new_tokens=stats.new_tokens,
        decode_seconds=stats.decode_seconds, tokens_per_second=stats.tokens_per_second,
        updates=updates, finish_reason=stats.finish_reason, text=text,
    )
    SLOT.unload()
    _release_memory()
    return result


# ---------------------------------------------------------------- a case

def _median(runs: list[dict], key: str) -> float | None:
    vals = [r[key] for r in runs if r.get(key) is not None]
    return statistics.median(vals) if vals else None


def _paired(timed: dict[str, list[dict]], key: str) -> float | None:
    pairs = [(p[key], b[key]) for p, b in zip(timed["playground"], timed["bare"]) if p.get(key) and b.get(key)]
    return statistics.median(p / b for p, b in pairs) if pairs else None


def _ratio(name: str, value: float | None, targets: dict = TARGETS) -> dict:
    t = targets[name]
    return {"value": value, "target": f"{t.op} {t.limit}", "met": t.met(value), "what": t.what}


MEDIAN_KEYS = ("load_seconds", "load_migrate_seconds", "tokenizer_seconds", "peak_rss", "peak_rss_growth",
               "rss_before_load", "ttft_seconds", "ttft_reported_seconds", "prompt_tokens", "new_tokens",
               "decode_seconds", "tokens_per_second")


def run_case(model: str, device: str, dtype: str, runs: int, warmup: int, n: int, prompt: str = PROMPT,
             log=lambda msg: None, with_control: bool = True) -> dict:
    from playground import models

    if model.startswith("synthetic/"):
        from playground import synthetic

        log(f"  ensuring {model} exists (built once)")
        threads.run(synthetic.ensure, model)  # torch work stays off the main thread (see the docstring)
    path = models.resolve(model).ref
    load_before = os.getloadavg()
    sides = {"bare": lambda: threads.run(bare_run, path, device, dtype, prompt, n, name="bare"),
             "playground": lambda: playground_run(model, device, dtype, prompt, n)}
    for i in range(warmup):
        for side in ("bare", "playground"):
            log(f"  warm-up {i + 1}/{warmup}: {side}")
            sides[side]()
    timed: dict[str, list[dict]] = {"bare": [], "playground": []}
    for i in range(runs):
        order = ("bare", "playground") if i % 2 == 0 else ("playground", "bare")
        for side in order:
            r = sides[side]()
            timed[side].append(r)
            log(f"  run {i + 1}/{runs} {side:<10} load {r['load_seconds']:.3f} s, ttft {r['ttft_seconds'] * 1000:.1f} ms, "
                f"{r['tokens_per_second'] or 0:.1f} tok/s ({r['new_tokens']} tokens), "
                f"peak RSS +{r['peak_rss_growth'] / 2**20:.1f} MiB")
    med = {side: {k: _median(rs, k) for k in MEDIAN_KEYS} for side, rs in timed.items()}
    control = {}
    if with_control:
        log("  control: the plain script in its own process")
        control = plain_script(path, device, dtype, prompt, n, runs)
    b, p = med["bare"], med["playground"]

    def div(a, c):
        return a / c if a is not None and c else None

    def sub(a, c):
        return a - c if a is not None and c is not None else None

    ratios = {
        "decode_tokens_per_second_ratio": _ratio("decode_tokens_per_second_ratio",
                                                 div(p["tokens_per_second"], b["tokens_per_second"])),
        "ttft_difference_seconds": _ratio("ttft_difference_seconds", sub(p["ttft_seconds"], b["ttft_seconds"])),
        "load_migrate_ratio": _ratio("load_migrate_ratio", div(p["load_seconds"], b["load_seconds"])),
        "peak_rss_load_ratio": _ratio("peak_rss_load_ratio", div(p["peak_rss_growth"], b["peak_rss_growth"])),
    }
    info = {
        "load_migrate_reported_ratio": _ratio("load_migrate_reported_ratio",
                                              div(p["load_migrate_seconds"], b["load_migrate_seconds"]), INFO),
        "ttft_reported_difference_seconds": _ratio("ttft_reported_difference_seconds",
                                                   sub(p["ttft_reported_seconds"], b["ttft_seconds"]), INFO),
        "decode_paired_ratio": {
            "value": _paired(timed, "tokens_per_second"),
            "what": ("decode tokens/s, the median of playground / bare over the runs, each pair run back to back "
                     "(less moved by this machine's slow drifts than the ratio of the two medians)")},
        "decode_vs_plain_script_ratio": {
            "value": div(p["tokens_per_second"], control.get("tokens_per_second")),
            "what": "decode tokens/s, playground / the plain script in its own process, on its main thread"},
        "bare_vs_plain_script_decode_ratio": {
            "value": div(b["tokens_per_second"], control.get("tokens_per_second")),
            "what": "decode tokens/s, bare here (in a thread) / the plain script (main thread, own process)"},
        "ttft_vs_plain_script_difference_seconds": {
            "value": sub(p["ttft_seconds"], control.get("ttft_seconds")),
            "what": "time to first token, playground - the plain script (s); the script's ids are already tokenised"},
        "peak_rss_absolute_ratio": {"value": div(p["peak_rss"], b["peak_rss"]),
                                    "what": "peak RSS during load including the process baseline, playground / bare"},
    }
    # Greedy on both sides: the same tokens, or the comparison is not like for like.
    same_tokens = all(r["new_tokens"] == timed["bare"][0]["new_tokens"] for r in timed["bare"] + timed["playground"])
    return dict(model=model, device=device, dtype=dtype, runs=runs, warmup=warmup, max_new_tokens=n,
                same_token_count=same_tokens, loadavg_before=load_before, loadavg_after=os.getloadavg(), medians=med,
                control=control, ratios=ratios, info=info,
                runs_detail={s: [{k: v for k, v in r.items() if k not in ("token_ids", "text")} for r in rs]
                             for s, rs in timed.items()})


# ---------------------------------------------------------------- cold start

def _free_port() -> int:
    for port in PORTS:
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
            try:
                s.bind(("127.0.0.1", port))
                return port
            except OSError:
                continue
    raise RuntimeError(f"no free port in {PORTS.start}-{PORTS.stop - 1}")


def app_start_seconds(timeout: float = 180.0) -> float:
    """Launch `python app.py`, poll until the page answers 200, stop it."""
    port = _free_port()
    env = dict(os.environ, PLAYGROUND_PORT=str(port), PLAYGROUND_HOST="127.0.0.1")
    t0 = time.perf_counter()
    proc = subprocess.Popen([sys.executable, str(ROOT / "app.py")], cwd=ROOT, env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        while True:
            if proc.poll() is not None:
                raise RuntimeError(f"app.py exited with code {proc.returncode} before answering")
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=2) as resp:
                    if resp.status == 200:
                        return time.perf_counter() - t0
            except (urllib.error.URLError, ConnectionError, socket.timeout):
                pass
            if time.perf_counter() - t0 > timeout:
                raise RuntimeError(f"app.py did not answer within {timeout:.0f} s")
            time.sleep(0.05)
    finally:
        proc.terminate()
        try:
            proc.wait(15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def import_seconds() -> float:
    """A fresh interpreter that only imports what the app is built on.

    The clock stops when the child says the imports are done, not when it exits:
    tearing down torch and gradio at exit takes a while, and the app's clock does
    not include an exit either."""
    t0 = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-c", "import torch, transformers, gradio; print('imported', flush=True)"],
                            cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    line = proc.stdout.readline()
    seconds = time.perf_counter() - t0
    proc.wait()
    if line.strip() != "imported" or proc.returncode != 0:
        raise RuntimeError(f"the import baseline failed (exit code {proc.returncode})")
    return seconds


def cold_start(runs: int, log=lambda msg: None) -> dict:
    app, imp = [], []
    for i in range(runs):
        order = (("app", app_start_seconds, app), ("imports", import_seconds, imp))
        for name, fn, sink in (order if i % 2 == 0 else order[::-1]):
            sink.append(fn())
            log(f"  cold start {i + 1}/{runs} {name:<8} {sink[-1]:.2f} s")
    a, b = statistics.median(app), statistics.median(imp)
    return dict(runs=runs, app_seconds=app, import_seconds=imp,
                medians={"app_to_http_200_seconds": a, "import_torch_transformers_gradio_seconds": b},
                ratio=_ratio("cold_start_ratio", a / b))


# ---------------------------------------------------------------- the whole bench

def machine() -> dict:
    import torch

    from playground import cli, devices

    return dict(cpu=devices.cpu_name(), cores=os.cpu_count(), torch_threads=torch.get_num_threads(),
                bf16_native=devices.cpu_native_bf16(), versions=cli.versions())


def run(quick: bool = False, runs: int | None = None, warmup: int = 1, max_new_tokens: int | None = None,
        with_cold_start: bool | None = None, log=lambda msg: None) -> dict:
    cases = QUICK_CASES if quick else CASES
    runs = runs if runs is not None else (2 if quick else 11)
    n = max_new_tokens if max_new_tokens is not None else (16 if quick else 64)
    with_cold_start = (not quick) if with_cold_start is None else with_cold_start
    t0 = time.perf_counter()
    out: dict = dict(machine=machine(), settings=dict(quick=quick, runs=runs, warmup=warmup, max_new_tokens=n,
                                                      prompt=PROMPT, cold_start=with_cold_start),
                     cases={}, ratios={})
    for model, device, dtype in cases:
        key = f"{model} {device} {dtype}"
        log(f"{key}:")
        case = run_case(model, device, dtype, runs, warmup, n, log=log, with_control=not quick)
        out["cases"][key] = case
        out["ratios"][key] = case["ratios"]
    if with_cold_start:
        log("cold start:")
        cs = cold_start(max(1, min(runs, 3)) if not quick else 1, log=log)
    else:
        cs = dict(skipped="not run (--quick without --cold-start)", medians=None,
                  ratio=_ratio("cold_start_ratio", None))
    out["cold_start"] = cs
    out["ratios"]["cold_start"] = {"cold_start_ratio": cs["ratio"]}
    mets = {f"{case}: {name}": r["met"] for case, group in out["ratios"].items() for name, r in group.items()}
    out["all_met"] = not any(m is False for m in mets.values())  # of those measured
    out["missed"] = [k for k, m in mets.items() if m is False]
    out["not_measured"] = [k for k, m in mets.items() if m is None]
    out["seconds"] = time.perf_counter() - t0
    return out


def _fmt(v: float | None, unit: str) -> str:
    if v is None:
        return "—"
    if unit == "ms":
        return f"{v * 1000:.1f} ms"
    if unit == "MiB":
        return f"{v / 2**20:.1f} MiB"
    if unit == "s":
        return f"{v:.3f} s"
    if unit == "tok/s":
        return f"{v:.1f}"
    return f"{v:.3f}"


def table(result: dict) -> str:
    rows = [("decode tokens/s", "tokens_per_second", "tok/s", "decode_tokens_per_second_ratio", "ratio"),
            ("time to first token", "ttft_seconds", "ms", "ttft_difference_seconds", "ms"),
            ("load (wall)", "load_seconds", "s", "load_migrate_ratio", "ratio"),
            ("peak RSS growth in load", "peak_rss_growth", "MiB", "peak_rss_load_ratio", "ratio")]
    info_rows = [("  page's TTFT", "ttft_reported_seconds", "ms", "ttft_reported_difference_seconds", "ms"),
                 ("  page's load+migrate", "load_migrate_seconds", "s", "load_migrate_reported_ratio", "ratio")]
    control_rows = [("  control: plain script", "tokens_per_second", "tok/s", "decode_vs_plain_script_ratio", "ratio"),
                    ("  control: plain script", "ttft_seconds", "ms", "ttft_vs_plain_script_difference_seconds", "ms")]
    head = f"{'case':<34} {'metric':<25} {'bare':>11} {'playground':>11} {'ratio/diff':>11} {'target':>9}  met"
    lines = [head, "-" * len(head)]
    for key, case in result["cases"].items():
        b, p = case["medians"]["bare"], case["medians"]["playground"]
        for label, mk, unit, rk, runit in rows + info_rows:
            r = case["ratios"].get(rk) or case["info"][rk]
            met = {True: "yes", False: "NO", None: "n/a"}[r["met"]]
            lines.append(f"{key:<34} {label:<25} {_fmt(b.get(mk), unit):>11} {_fmt(p.get(mk), unit):>11} "
                         f"{_fmt(r['value'], runit):>11} {r['target']:>9}  {met}")
        paired = case["info"].get("decode_paired_ratio", {}).get("value")
        lines.append(f"{key:<34} {'  decode, paired runs':<25} {'':>11} {'':>11} {_fmt(paired, 'ratio'):>11} "
                     f"{'':>9}  (median of run-by-run ratios)")
        for label, mk, unit, rk, runit in control_rows if case.get("control") else ():
            r = case["info"][rk]  # the script's figure in the "bare" column
            lines.append(f"{key:<34} {label:<25} {_fmt(case['control'].get(mk), unit):>11} {_fmt(p.get(mk), unit):>11} "
                         f"{_fmt(r['value'], runit):>11} {'':>9}  (no target)")
        lines.append(f"{'':<34} {'new tokens (both sides)':<25} {_fmt(b['new_tokens'], ''):>11} "
                     f"{_fmt(p['new_tokens'], ''):>11}   same count: {case['same_token_count']}")
    cs = result["cold_start"]
    r = cs["ratio"]
    met = {True: "yes", False: "NO", None: "n/a"}[r["met"]]
    if cs.get("medians"):
        m = cs["medians"]
        lines.append(f"{'cold start':<34} {'app.py -> 200 / imports':<25} {_fmt(m['import_torch_transformers_gradio_seconds'], 's'):>11} "
                     f"{_fmt(m['app_to_http_200_seconds'], 's'):>11} {_fmt(r['value'], 'ratio'):>11} {r['target']:>9}  {met}")
    else:
        lines.append(f"{'cold start':<34} {cs.get('skipped', '')}")
    lines.append(f"all targets met: {result['all_met']} · {result['machine']['cpu']}, {result['machine']['cores']} cores, "
                 f"torch {result['machine']['versions']['torch']} · {result['settings']['runs']} runs per side, "
                 f"{result['settings']['max_new_tokens']} new tokens · {result['seconds']:.0f} s")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    from playground import cli

    parser = cli._Parser(prog="python -m playground.bench", description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", action="store_true", help="print one JSON object on stdout")
    parser.add_argument("--quick", action="store_true", help="one small case, 2 runs, 16 tokens, no cold start")
    parser.add_argument("--runs", type=int, default=None, help="timed runs per side (default 11; 2 with --quick)")
    parser.add_argument("--warmup", type=int, default=1, help="untimed runs per side first (default 1)")
    parser.add_argument("--max-new-tokens", type=int, default=None, help="greedy tokens per run (default 64; 16 with --quick)")
    parser.add_argument("--cold-start", dest="cold_start", action="store_true", default=None,
                        help="measure cold start even with --quick")
    parser.add_argument("--no-cold-start", dest="cold_start", action="store_false", help="skip the cold start")
    try:
        args = parser.parse_args(argv)
        if args.runs is not None and args.runs < 1:
            raise UserError(f"--runs must be at least 1; got {args.runs}.")
        if args.warmup < 0:
            raise UserError(f"--warmup must be 0 or more; got {args.warmup}.")
        if args.max_new_tokens is not None and args.max_new_tokens < 2:
            raise UserError(f"--max-new-tokens must be at least 2 (a decode rate needs two tokens); got {args.max_new_tokens}.")
        cli.quiet_libraries()
        log = (lambda msg: print(msg, file=sys.stderr, flush=True))
        with cli._stdout_to_stderr():
            result = run(quick=args.quick, runs=args.runs, warmup=args.warmup, max_new_tokens=args.max_new_tokens,
                         with_cold_start=args.cold_start, log=log)
    except UserError as e:
        print(f"error: {cli._one_line(e)}", file=sys.stderr)
        return cli.EXIT_USAGE
    sys.stdout.write((json.dumps(result) if args.json else table(result)) + "\n")
    sys.stdout.flush()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
