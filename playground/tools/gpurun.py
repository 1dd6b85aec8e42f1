"""`python -m playground gpu-run OUT_DIR`: the prepared run for a lent GPU machine, every figure in one folder.

    python -m playground gpu-run out/h100                   # every step, 8 minutes at most
    python -m playground gpu-run out/h100 --only h2d,break_it --budget 120

Each step (`STEPS`, in this order) runs in a fresh process of its own (`--step NAME`, so that a CUDA
context, a crash or a hang stays in it, and memory is measured from a clean start), under its own time
budget and what is left of the run's; its result or its error is written to OUT_DIR/steps/<step>.json and
gathered into OUT_DIR/gpu-run.json (rewritten after every step, so that a run cut short keeps what it
measured), which stdout also prints. A step that needs a GPU is skipped where none is present, saying
why; one with a CPU part runs that part. Nothing is downloaded: the synthetic checkpoint is built under
OUT_DIR/work and removed at the end. Exit 0 when no step failed or ran out of time, 1 otherwise.
See docs/gpu.md.
"""

from __future__ import annotations

import json
import os
import platform
import shutil
import subprocess
import sys
import time
import traceback
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

import psutil
import torch

from playground.core.i18n import Said, said
from playground.hw import devices, memory, pcie

BUDGET = 480  # seconds for the whole run: 8 minutes of a 15-minute lease, leaving room for a second run
RESERVE = 10  # seconds kept back at the end (the summary, removing the work folder)
OK, ERROR, TIMEOUT, SKIPPED = "ok", "error", "timeout", "skipped"


@dataclass(frozen=True)
class Step:
    name: str
    budget: int  # seconds at most
    cpu_part: bool  # runs without a GPU too (its CPU part); False: skipped there, saying why
    fn: str  # the function it runs: of `gpu_steps`, or `gpu_lab` for break_it

    def command(self, out: Path) -> list[str]:
        return [sys.executable, "-m", "playground", "gpu-run", str(out), "--step", self.name]


# The measurements first (bounded, each with its budget), the self-check last with what is left: its length on a
# GPU (every device test, the lab twice) is the least known, and a second run can give it the whole budget alone.
STEPS = (
    Step("load_vs_to", 150, False, "load_vs_to"),  # builds the 1B checkpoint the later steps reuse
    Step("h2d", 40, False, "h2d"),
    Step("straight_vs_move", 90, True, "straight_vs_move"),
    Step("ledger_decode", 90, True, "ledger_decode"),
    Step("half_precision", 90, True, "half_precision"),  # why float16/bfloat16 decoded at a tenth of float32's
    Step("dtypes", 120, True, "dtypes"),  # Compare's rows per dtype, int8 and int4 (torchao) included
    Step("decode_parity", 120, False, "decode_parity"),  # the bench's parity case on the GPU: bare against the page
    Step("break_it", 120, False, "break_it"),
    Step("placement", 60, True, "placement"),
    Step("selfcheck", 300, True, "run_selfcheck"),
)


def gpu_here() -> Said | None:
    """Why this machine cannot run the GPU parts (None when it can). Asks the CUDA runtime how many devices there
    are, which makes no CUDA context in this process: the steps' processes measure theirs from nothing."""
    return devices.no_cuda_reason()


def environment() -> dict:
    """The machine and the versions, read without a CUDA context (NVML for the GPU's name, driver and memory)."""
    out = dict(python=platform.python_version(), platform=platform.platform(), cpu=devices.cpu_name(),
               cores=os.cpu_count(), ram_bytes=psutil.virtual_memory().total, versions=versions(),
               torch_cuda=torch.version.cuda, cuda_available=devices.cuda_count() > 0,
               cuda_devices=devices.cuda_count(), gpus=[])
    nvml, reason = memory.nvml_module()
    if nvml is None:
        out["nvml"] = reason.text("en") if reason else None
        return out
    try:
        out["driver"] = _text(nvml.nvmlSystemGetDriverVersion())
        for i in range(nvml.nvmlDeviceGetCount()):
            h = nvml.nvmlDeviceGetHandleByIndex(i)
            m = memory.nvml_memory(nvml, h)
            out["gpus"].append(dict(nvml_index=i, name=_text(nvml.nvmlDeviceGetName(h)), total=m.total, used=m.used,
                                    reserved=m.reserved, free=m.free, nvml_memory_version=m.version,
                                    bus_id=_text(nvml.nvmlDeviceGetPciInfo(h).busId),
                                    pcie_gen_max=nvml.nvmlDeviceGetMaxPcieLinkGeneration(h),
                                    pcie_width_max=nvml.nvmlDeviceGetMaxPcieLinkWidth(h)))
        for g in out["gpus"]:
            g["pcie_theoretical_gbps"] = pcie.link_gbps(g["pcie_gen_max"], g["pcie_width_max"])
    except Exception as e:  # NVML answers what it can: the run goes on
        out["nvml_error"] = f"{type(e).__name__}: {e}"[:300]
    return out


PACKAGES = ("torch", "transformers", "accelerate", "huggingface_hub", "safetensors", "tokenizers", "nvidia-ml-py",
            "psutil", "numpy", "pytest", "gradio")


def versions() -> dict:
    """Every package the run uses, from its metadata (None where absent: gradio is, on a bare CUDA image)."""
    out = {}
    for pkg in PACKAGES:
        try:
            out[pkg] = metadata.version(pkg)
        except metadata.PackageNotFoundError:
            out[pkg] = None
    return out


def error_text(e: BaseException) -> str:
    """A step's failure as the run's JSON keeps it: the exception and its last frames."""
    return f"{type(e).__name__}: {e}"[:1000] + "\n" + "".join(traceback.format_tb(e.__traceback__)[-4:])[-3000:]


def _text(v) -> str:
    return v.decode() if isinstance(v, bytes) else str(v)


def said_both(s: Said) -> dict:
    return {"reason": s.text("en"), "reason_zh": s.text("zh")}


def run_step(step: Step, out: Path, seconds: float, env: dict) -> dict:
    """One step in a process of its own, stopped after `seconds`; its result file, or what went wrong."""
    result_file = out / "steps" / f"{step.name}.json"
    result_file.unlink(missing_ok=True)
    log = out / "logs" / f"{step.name}.log"
    t0 = time.perf_counter()
    with open(log, "w", encoding="utf-8") as fh:
        try:
            proc = subprocess.run(step.command(out), stdout=fh, stderr=subprocess.STDOUT, timeout=seconds, env=env,
                                  cwd=Path(__file__).resolve().parents[2])
            code = proc.returncode
        except subprocess.TimeoutExpired:  # subprocess.run killed it
            return dict(status=TIMEOUT, seconds=time.perf_counter() - t0, budget_seconds=round(seconds),
                        log=log.relative_to(out).as_posix(), **said_both(said("gpurun.timeout", budget=round(seconds))))
    entry = dict(seconds=time.perf_counter() - t0, budget_seconds=round(seconds), log=log.relative_to(out).as_posix())
    if result_file.is_file():
        return json.loads(result_file.read_text(encoding="utf-8")) | entry
    tail = log.read_text(encoding="utf-8", errors="replace")[-2000:]
    return dict(status=ERROR, error=f"the step's process exited with status {code} and wrote no result:\n{tail}", **entry)


def child(name: str, out: Path) -> int:
    """`--step NAME`: run one step here and write its result (or its error) to OUT_DIR/steps/NAME.json."""
    step = next(s for s in STEPS if s.name == name)
    if step.fn == "break_it":
        # deferred (start-up): the lab's scenarios take seconds to import; only this step's process needs them
        from playground.tools import gpu_lab as steps
    else:
        # deferred (start-up): the loader, the pool and the survey take seconds to import; the run's own process,
        # which only starts the steps, does not need them
        from playground.tools import gpu_steps as steps
    device = "cuda:0" if gpu_here() is None else "cpu"
    t0 = time.perf_counter()
    try:
        result = getattr(steps, step.fn)(device)
        entry = dict(status=OK, device=device, result=result)
        if device == "cpu" and name != "selfcheck":  # the self-check runs on every device present, GPU or not
            entry.update(said_both(said("gpurun.cpu_part", why=gpu_here())))
    except Exception as e:  # the step's own failure: recorded, the run goes on with the next
        entry = dict(status=ERROR, device=device, error=error_text(e))
    entry["step_seconds"] = time.perf_counter() - t0
    if name == "selfcheck" and entry["status"] == OK:
        (out / "selfcheck.json").write_text(json.dumps(entry["result"], default=str), encoding="utf-8")
        r = entry["result"]
        entry["result"] = dict(file="selfcheck.json", passed=r["passed"], failed=r["failed"], skipped=r["skipped"],
                               ok=r["ok"], seconds=r["seconds"],
                               failures=[{k: c[k] for k in ("test", "device", "reason")}
                                         for c in r["checks"] if c["status"] == "fail"])
    (out / "steps" / f"{name}.json").write_text(json.dumps(entry, default=str), encoding="utf-8")
    return 0


def findings(name: str, entry: dict) -> list[str]:
    """What a step that ran found wrong, in a line each: device tests that failed, scenarios that did not do what
    their data expects on this GPU, fixes that did not run as written."""
    r = entry.get("result") or {}
    if entry["status"] in (ERROR, TIMEOUT):
        return [f"{name}: {entry['status']}"]
    if name == "selfcheck" and not r.get("ok", True):
        return [f"selfcheck: {r['failed']} device tests failed"]
    found = []
    if name == "break_it" and r.get("not_as_expected"):
        found.append(f"break_it: not as expected on {r['target']}: {', '.join(r['not_as_expected'])}")
    if name == "break_it" and r.get("fix_failed"):
        found.append(f"break_it: the fix failed on {r['target']}: {', '.join(r['fix_failed'])}")
    return found


def run(out: Path, budget: float = BUDGET, only: list[str] | None = None, keep: bool = False,
        steps: tuple[Step, ...] = STEPS, log=print) -> dict:
    """Every step (or `only` those) in order, each isolated and timed against its budget and the run's; one dict
    with every result, also written to OUT_DIR/gpu-run.json after each step."""
    t0 = time.perf_counter()
    for sub in ("steps", "logs", "work"):
        (out / sub).mkdir(parents=True, exist_ok=True)
    env = dict(os.environ, PLAYGROUND_SYNTHETIC_DIR=str((out / "work" / "synthetic").resolve()),
               HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1")
    no_gpu = gpu_here()
    doc = dict(command="gpu-run", started=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), budget_seconds=budget,
               environment=environment(), steps={}, findings=[], ok=True, wall_seconds=None)
    for step in steps:
        if only and step.name not in only:
            continue
        left = budget - (time.perf_counter() - t0) - RESERVE
        if no_gpu is not None and not step.cpu_part:
            entry = dict(status=SKIPPED, **said_both(said("gpurun.skip.no_gpu", why=no_gpu)))
        elif left < 5:
            entry = dict(status=SKIPPED, **said_both(said("gpurun.skip.budget", budget=round(budget))))
        else:
            entry = run_step(step, out, min(step.budget, left), env)
        doc["steps"][step.name] = entry
        doc["findings"] += findings(step.name, entry)
        doc["ok"] = doc["ok"] and entry["status"] not in (ERROR, TIMEOUT) and not doc["findings"]
        log(f"{step.name:<18} {entry['status']:<8} {entry.get('seconds', 0):6.1f} s  "
            f"{entry.get('reason') or (entry.get('error') or '').splitlines()[0][:120] if entry['status'] != OK else ''}")
        doc["wall_seconds"] = time.perf_counter() - t0
        (out / "gpu-run.json").write_text(json.dumps(doc, default=str), encoding="utf-8")
    if not keep:
        shutil.rmtree(out / "work", ignore_errors=True)  # the synthetic checkpoint: gigabytes, rebuilt on demand
    doc["wall_seconds"] = time.perf_counter() - t0
    (out / "gpu-run.json").write_text(json.dumps(doc, default=str), encoding="utf-8")
    return doc
