"""The bench's engine section: the compiled static-cache engine against generate() and the bandwidth bound.

    python -m playground bench engines             # this section alone
    python -m playground bench engines --profile   # plus a profile of the decode steps
    python -m playground bench engines --engine-model shakespeare-gpt2   # one model of the two

`run()` measures the bundled model and synthetic GPT-2 small against this machine's targets;
how, and the targets: docs/generation.md.
"""

from __future__ import annotations

import os
import statistics

import torch

from playground.core import threads
from playground.hw import bandwidth, census
from playground.load import loader, synthetic
from playground.core.inputs import GenerationParams
from playground.run import compiled, decode, engines, generation
from playground.run.pool import POOL
from playground.tools.alternate import alternate, speed_line, steadiness

MODELS = ("shakespeare-gpt2", "synthetic/gpt2-small")
TARGETS = {
    "shakespeare-gpt2": ("speedup", 1.2, "compiled tokens/s / generate() tokens/s"),
    "synthetic/gpt2-small": ("percent_of_bound", 50.0, "compiled tokens/s as % of the read-bandwidth bound"),
}


def _generate(lm, n: int) -> tuple[list[int], float | None]:
    ids, stamps, _ = threads.run(generation.generate_ids, lm.model, lm.tokenizer, lm.device, engines.PROMPT, n,
                                 name="bench-generate")
    return ids, (len(ids) - 1) / (stamps[-1] - stamps[0]) if len(ids) > 1 else None


def _manual(lm, n: int) -> tuple[list[int], float | None]:
    """The tutorials' loop with the KV cache (decode.run: its own thread)."""
    _, st = decode.run(lm.model, lm.tokenizer, lm.device, engines.PROMPT, GenerationParams(n, 0.0, 1.0, 0))
    return st.token_ids, st.tokens_per_second


def _compiled(lm, n: int) -> compiled.CompiledRun:
    return threads.run(compiled.run, lm.model, lm.tokenizer, lm.device, engines.PROMPT, n, name="bench-compiled")


def profile_steps(lm, n: int, rows: int = 14) -> str:
    """torch.profiler over one compiled run of `n` tokens (the same `n` as the timed runs, so the same
    static-cache length: compiled already): the operators' self CPU time, largest first. The eager
    prefill shows up as its own aten operators; everything in the compiled graph is one row per kernel."""
    def work() -> str:
        with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]) as prof:
            compiled.run(lm.model, lm.tokenizer, lm.device, engines.PROMPT, n)
        return prof.key_averages().table(sort_by="self_cpu_time_total", row_limit=rows)

    return threads.run(work, name="bench-profile")


def run_model(model: str, runs: int, n: int, log=lambda msg: None, profile: bool = False) -> dict:
    if model.startswith("synthetic/"):
        threads.run(synthetic.ensure, model)
    POOL.load(*loader.parse(model, "cpu", "float32"), session="bench")
    with POOL.held("bench") as lm:
        weights = census.weights_bytes(lm.model)
        log(f"  {model}: warm-up (generate(), the manual loop, then compiling the static-cache step)")
        ref, _ = _generate(lm, n)
        first = _compiled(lm, n)  # compiled here, before the timed runs (the alternation warms the other two)
        sides = {"read": lambda: (None, threads.run(bandwidth.host_read, name="bench-read").gbps),
                 "generate": lambda: _generate(lm, n), "manual": lambda: _manual(lm, n),
                 "compiled": lambda: (lambda r: (r.token_ids, r.tokens_per_second))(_compiled(lm, n))}
        speeds: list[float] = []  # the machine's own speed, read before each timed run
        timed = alternate(sides, runs, warmup=1, speeds=speeds,
                          log=lambda side, i, r: log(f"  {model} run {i + 1}/{runs}: {side} {r[1]:.1f}"))
        gen, man, comp, reads = ([r[1] for r in timed[k]] for k in ("generate", "manual", "compiled", "read"))
        same = first.token_ids == ref and all(ids == ref for k in ("manual", "compiled") for ids, _ in timed[k])
        table = profile_steps(lm, n) if profile else None
    POOL.unload("bench")
    read = statistics.median(reads)
    bound = read * 1e9 / weights
    g, m, c = statistics.median(gen), statistics.median(man), statistics.median(comp)
    out = dict(model=model, device="cpu", dtype="float32", runs=runs, new_tokens=n, weights_bytes=weights,
               read_gbps=read, read_gbps_runs=reads, bound_tokens_per_second=bound, compile_seconds=first.compile_seconds,
               generate_tokens_per_second=g, manual_tokens_per_second=m, compiled_tokens_per_second=c,
               generate_runs=gen, manual_runs=man, compiled_runs=comp, speedup=c / g,
               generate_percent_of_bound=100 * g / bound, manual_percent_of_bound=100 * m / bound,
               percent_of_bound=100 * c / bound,
               same_tokens=same, profile=table, speed_probes=speeds)
    key, limit, what = TARGETS[model]
    value = out[key]
    out["target"] = dict(what=what, value=value, limit=limit, met=value >= limit,
                         missed_by=None if value >= limit else limit - value)
    return out


def run(runs: int = 5, n: int = 64, log=lambda msg: None, profile: bool = False,
        only: tuple[str, ...] = MODELS) -> dict:
    """Each model of `only` (default: both, each with its target) measured by `run_model`."""
    log(f"engines: generate() vs a static cache under torch.compile, {runs} runs each, {n} greedy tokens")
    before = os.getloadavg()
    models = {m: run_model(m, runs, n, log, profile) for m in MODELS if m in only}
    speeds = [x for r in models.values() for x in r["speed_probes"]]
    return dict(models=models, loadavg_before=before, loadavg_after=os.getloadavg(), torch_threads=torch.get_num_threads(),
                machine_speed=steadiness(speeds),
                missed=[f"{m}: {r['target']['what']}" for m, r in models.items() if not r["target"]["met"]])


def table(result: dict) -> str:
    head = (f"{'engines (tokens/s)':<22} {'generate()':>11} {'manual':>7} {'compiled':>9} {'speed-up':>9} {'bound':>8} "
            f"{'gen %':>6} {'man %':>6} {'comp %':>7} {'compile':>8}  same  target")
    lines = [head, "-" * len(head)]
    for m, r in result["models"].items():
        t = r["target"]
        verdict = "met" if t["met"] else f"MISSED by {t['missed_by']:.2f}"
        lines.append(f"{m:<22} {r['generate_tokens_per_second']:>11.1f} {r['manual_tokens_per_second']:>7.1f} "
                     f"{r['compiled_tokens_per_second']:>9.1f} {r['speedup']:>8.2f}x {r['bound_tokens_per_second']:>8.0f} "
                     f"{r['generate_percent_of_bound']:>5.0f}% {r['manual_percent_of_bound']:>5.0f}% "
                     f"{r['percent_of_bound']:>6.0f}% {r['compile_seconds']:>7.1f}s  {'yes' if r['same_tokens'] else 'NO':<4}  "
                     f"{t['what']} >= {t['limit']}: {t['value']:.2f} {verdict}")
        lines.append(f"{'':<22} tokens/s (medians of {r['runs']}); bound = read {r['read_gbps']:.1f} GB/s / "
                     f"{r['weights_bytes'] / 1e6:.1f} MB of weights")
    lb, la = result["loadavg_before"], result["loadavg_after"]
    lines.append(f"load average before {lb[0]:.2f}, after {la[0]:.2f} (1 min)")
    if result.get("machine_speed"):
        lines.append(speed_line(result["machine_speed"]))
    for m, r in result["models"].items():
        if r.get("profile"):
            lines += ["", f"profile of one compiled run, {r['new_tokens']} tokens (the eager prefill, then "
                      f"{r['new_tokens'] - 1} compiled decode steps), {m}:", r["profile"]]
    return "\n".join(lines)
