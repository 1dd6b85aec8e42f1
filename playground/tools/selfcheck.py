"""`python -m playground selfcheck`: run every path this machine can run, and say what passed.

    python -m playground selfcheck                 # a table
    python -m playground selfcheck --json          # one JSON object
    python -m playground selfcheck --device cuda:1 # only that device's checks (and device_map='auto')

The checks (`checks_cpu`, `checks_gpu`) exercise the playground's own code paths
on the bundled model: discovery and the NVML bus-id match, a load and its
migration with every tensor verified on the device, the memory readings, the
sampler, copy bandwidth against the PCIe link, greedy generation compared
across devices, the break-it lab, dtype speed, memory returned after unloads,
`device_map="auto"`. Each one says `pass`, `fail` or `skip` with its reason and
the figures it measured. On a machine without a GPU the GPU checks skip ("this
PyTorch build has no CUDA"); on a GPU they are the first run of those paths.

Exit status: 0 when nothing failed (skips are not failures), 1 when a check failed.
"""

from __future__ import annotations

import os
import re
import time

import torch

from playground.core.errors import UserError, shown
from playground.hw import devices
from playground.run.slot import SLOT
from playground.tools import checks_cpu, checks_gpu, report
from playground.tools.checks import FAIL, PASS, REGISTRY, SKIP, Check, Result, run_one

MODULES = (checks_cpu, checks_gpu)  # importing them registers their checks, in this order
DEFAULT_DEVICE = {"cpu": "cpu", "auto": "cpu", "cuda": "cuda:0", "mps": "mps"}


def parse_device(value: object) -> str | None:
    """--device: cpu, cuda, cuda:N or mps (None: every check). An absent device is not an error
    here: its checks run and skip, saying why."""
    if value is None:
        return None
    if not isinstance(value, str) or not re.fullmatch(r"cpu|mps|cuda(:\d{1,3})?", value.strip()):
        raise UserError(f"--device must be cpu, cuda, cuda:N or mps; got {shown(value, 40)}.")
    value = value.strip()
    return "cuda:0" if value == "cuda" else value


def selected(device: str | None) -> list[tuple[Check, str]]:
    """(check, the device it runs on) for every check --device keeps, in registration order."""
    if device is None:
        return [(c, DEFAULT_DEVICE[c.device]) for c in REGISTRY]
    kind = device.split(":")[0]
    return [(c, device if c.device == kind else "cpu") for c in REGISTRY if c.device in (kind, "auto")]


def machine() -> dict:
    return dict(cpu=devices.cpu_name(), cores=os.cpu_count(), torch_threads=torch.get_num_threads(),
                cuda_build=torch.version.cuda, cuda_devices=torch.cuda.device_count() if torch.cuda.is_available() else 0,
                versions=report.versions())


def run(device: str | None = None, log=lambda msg: None, debug: bool = False) -> dict:
    """Run the selected checks, each to its verdict; one dict with every result and the counts."""
    t0 = time.perf_counter()
    results: list[Result] = []
    try:
        for c, dev in selected(device):
            log(f"  {c.name} ({dev}) ...")
            r = run_one(c, dev, debug)
            results.append(r)
            log(f"  {c.name}: {r.status}" + (f" ({r.reason})" if r.reason else "") + f", {r.seconds:.1f} s")
    finally:
        SLOT.unload()  # the checks load through the shared slot; leave nothing loaded
    counts = {s: sum(1 for r in results if r.status == s) for s in (PASS, FAIL, SKIP)}
    return dict(checks=[r.to_dict() for r in results], passed=counts[PASS], failed=counts[FAIL], skipped=counts[SKIP],
                ok=counts[FAIL] == 0, device=device or "all", machine=machine(),
                seconds=time.perf_counter() - t0, loadavg=os.getloadavg())


def _figures(d: dict, width: int = 90) -> str:
    skip = {"name", "status", "reason", "device", "proves", "seconds"}
    parts = []
    for k, v in d.items():
        if k in skip or isinstance(v, (dict, list)):
            continue
        parts.append(f"{k}={v:.3g}" if isinstance(v, float) else f"{k}={v}")
    text = ", ".join(parts)
    return text if len(text) <= width else text[:width - 1] + "…"


def table(result: dict) -> str:
    mark = {PASS: "pass", FAIL: "FAIL", SKIP: "skip"}
    lines = [f"{'check':<28} {'device':<7} {'status':<6} {'time':>6}  figures / reason", "-" * 100]
    for c in result["checks"]:
        detail = c["reason"] if c["status"] != PASS else _figures(c)
        lines.append(f"{c['name']:<28} {c['device']:<7} {mark[c['status']]:<6} {c['seconds']:>5.1f}s  {detail}")
    m = result["machine"]
    lines.append(f"{result['passed']} passed, {result['failed']} failed, {result['skipped']} skipped · {m['cpu']}, "
                 f"{m['cores']} cores, torch {m['versions']['torch']}, CUDA {m['cuda_build'] or 'none'} · "
                 f"{result['seconds']:.0f} s")
    return "\n".join(lines)
