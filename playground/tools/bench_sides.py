"""The bench's two sides, and the meter of peak RSS they share.

- bare: `AutoTokenizer.from_pretrained` + `AutoModelForCausalLM.from_pretrained` +
  `.to(device)`; then `generate(max_new_tokens=N, do_sample=False)`, no streamer.
  Its decode time is generate(N) - generate(1): N - 1 decode steps, setup cancelled.
- playground: `POOL.load` and `POOL.generate`, the functions the page and the API call,
  consumed the way the API's generate endpoint consumes them.
- the control: the plain script in a process of its own, on its main thread.
Peak RSS during a load is the larger of the kernel's high-water mark (VmHWM, reset by
writing 5 to /proc/self/clear_refs) and a 100 Hz sampler: growth over the start.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time

import psutil
from transformers import AutoModelForCausalLM, AutoTokenizer

from playground.core import inputs
from playground.core.paths import REPO
from playground.hw import memory
from playground.hw.devices import TORCH_DTYPES, sync
from playground.load import loader
from playground.run.pool import POOL

SESSION = "bench"  # the bench's session in the pool: its load and its generation use one model

_read_hwm = memory.peak_rss  # VmHWM, the kernel's high-water mark of RSS
_reset_hwm = memory.reset_peak_rss  # Linux 4.0+: writing 5 to clear_refs resets VmHWM to the current RSS


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


# ---------------------------------------------------------------- the two sides

def bare_run(path: str, device: str, dtype: str, prompt: str, n: int) -> dict:
    """The plainest Transformers code for the same work."""
    memory.release_memory()
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
    memory.release_memory()
    return result


PLAIN_SCRIPT = r"""
import json, statistics, sys, time
import torch
from transformers import AutoModelForCausalLM, AutoTokenizer
from playground.hw.devices import sync as wait_for  # waits for a GPU's queued work; nothing to wait for on a CPU
path, device, dtype, prompt, n, runs = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5]), int(sys.argv[6])

def sync():
    wait_for(device)

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
                              capture_output=True, text=True, timeout=600, env=env, cwd=REPO)
        return json.loads(proc.stdout.strip().splitlines()[-1])
    except (subprocess.SubprocessError, ValueError, IndexError) as e:
        return dict(error=f"{type(e).__name__}: {e}"[:300], tokens_per_second=None, ttft_seconds=None)


def playground_run(model: str, device: str, dtype: str, prompt: str, n: int) -> dict:
    """The app's own path, everything switched on, checked and consumed as the API does it."""
    POOL.unload(SESSION)  # the previous model's cleanup is not part of this load
    memory.release_memory()
    with PeakRSS() as mem:
        t0 = time.perf_counter()
        report = POOL.load(*loader.parse(model, device, dtype), session=SESSION)
        t1 = time.perf_counter()

    t2 = time.perf_counter()
    first = None
    updates, stats, text = 0, None, ""
    params = inputs.generation_params(n, 0, 1, 0)
    for text, stats in POOL.generate(inputs.check_prompt(prompt), params, session=SESSION):
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
    POOL.unload(SESSION)
    memory.release_memory()
    return result


