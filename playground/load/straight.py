"""Load straight onto the target, or load then move: both timed, with peak RSS, in one run.

On a GPU: `from_pretrained(..., device_map=device)` (the weights materialise on the device, no CPU copy)
against `from_pretrained(...)` then `.to(device)`. On the CPU, where `.to("cpu")` moves nothing, the same
question with the dtype, where a real copy happens: `from_pretrained(..., dtype=bfloat16)` against loading
float32 then `.to(torch.bfloat16)`. Each path starts from the checkpoint in the page cache, with memory
given back in between; RSS is sampled at 100 Hz (and VRAM read from torch's allocator on CUDA).
See docs/placement.md.
"""

from __future__ import annotations

import os
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import torch

from playground.core.errors import UserError
from playground.hw import census, devices, memory
from playground.hw.devices import DeviceInfo
from playground.hw.sampler import Sampler
from playground.load import migration

STRAIGHT, THEN_MOVE = "straight", "then_move"


@dataclass
class LoadPath:
    how: str  # STRAIGHT or THEN_MOVE
    code: str  # the lines it ran
    load_seconds: float
    move_seconds: float  # 0 for the straight path: nothing to move
    rss_before: int
    rss_peak: int  # sampled at 100 Hz, and at each phase's start and end
    rss_after: int
    samples: int
    vram_peak: int | None  # torch.cuda.max_memory_allocated on a CUDA target
    file_backed_bytes: int | None  # weights left memory-mapped from the checkpoint (no copy made)
    device: str
    dtype: str

    @property
    def seconds(self) -> float:
        return self.load_seconds + self.move_seconds

    @property
    def peak_delta(self) -> int:
        return self.rss_peak - self.rss_before


@dataclass
class StraightReport:
    model: str
    form: str  # "dtype" (on the CPU) or "device" (a GPU)
    device: str
    dtype: str
    paths: list[LoadPath]
    same_weights: bool  # both paths ended with the same values (compared tensor by tensor)
    weights_bytes: int
    load_average: float  # the machine's 1-minute load average when it ran (timings on a shared machine vary)

    def to_dict(self) -> dict:
        d = asdict(self)
        for p, path in zip(d["paths"], self.paths):
            p["seconds"], p["peak_delta"] = path.seconds, path.peak_delta
        return d


def check(dev: DeviceInfo, dtype: torch.dtype | str) -> None:
    """The edge's check: on the CPU the question is the dtype's (float32 would compare a no-op with itself)."""
    if dev.kind == "auto":
        raise UserError.of("place.err.straight_auto")
    if dev.kind == "cpu" and dtype in ("auto", torch.float32):
        raise UserError.of("place.err.straight_cpu")
    if dtype in devices.QUANTIZED:  # quantized after loading: no checkpoint holds int8 weights to load straight
        raise UserError.of("quant.err.straight", dtype=dtype)


def _warm(folder: Path) -> None:
    """Read the checkpoint once, so that both paths find it in the page cache."""
    for f in folder.glob("*.safetensors"):
        with open(f, "rb") as fh:
            while fh.read(16 * 2**20):
                pass


def compare(folder: str, name: str, dev: DeviceInfo, dtype: torch.dtype) -> StraightReport:
    """Both paths on the checkpoint in `folder` (already checked by a load: safetensors, no remote code)."""
    from transformers import AutoModelForCausalLM  # deferred (start-up): catalog.import_model_classes
    check(dev, dtype)
    on_cpu = dev.kind == "cpu"
    dname = devices.dtype_name(dtype)
    kw = dict(use_safetensors=True, trust_remote_code=False, local_files_only=True)
    _warm(Path(folder))
    # untimed: a process's first from_pretrained of an architecture pays one-off costs (float32 maps the file: cheap)
    del_me = AutoModelForCausalLM.from_pretrained(folder, dtype=torch.float32, **kw)
    del del_me
    first = second = None
    paths = []
    for how in (STRAIGHT, THEN_MOVE):
        memory.release_memory()
        memory.reset_peak(dev.id)  # a GPU's allocator peak, counted afresh (nothing to do on the CPU)
        with Sampler(hz=100, gpus=False) as s:
            s.mark("load")
            devices.sync(dev.id)
            t0 = time.perf_counter()
            if how == STRAIGHT:
                where = {} if on_cpu else {"device_map": dev.id}
                model = AutoModelForCausalLM.from_pretrained(folder, dtype=dtype, **where, **kw)
                code = (f"from_pretrained(path, dtype=torch.{dname})" if on_cpu
                        else f"from_pretrained(path, dtype=torch.{dname}, device_map={dev.id!r})")
            else:
                model = AutoModelForCausalLM.from_pretrained(folder, dtype=torch.float32 if on_cpu else dtype, **kw)
                code = (f"from_pretrained(path, dtype=torch.float32).to(torch.{dname})" if on_cpu
                        else f"from_pretrained(path, dtype=torch.{dname}).to({dev.id!r})")
            devices.sync(dev.id)
            loaded = time.perf_counter() - t0
            s.mark("move")
            t1 = time.perf_counter()
            if how == THEN_MOVE:
                model = model.to(dtype if on_cpu else dev.id)
            devices.sync(dev.id)
            moved = time.perf_counter() - t1 if how == THEN_MOVE else 0.0
        peaks = s.peaks()
        vram = memory.peak_allocated(dev.id)
        paths.append(LoadPath(how, code, loaded, moved, peaks[0].rss_start, max(p.rss_peak for p in peaks),
                              peaks[-1].rss_end, sum(p.samples for p in peaks), vram, migration.file_backed_bytes(model),
                              str(next(model.parameters()).device), devices.dtype_name(next(model.parameters()).dtype)))
        state = {k: v.to("cpu") for k, v in model.state_dict().items()}
        if first is None:
            first = state
        else:
            second = state
        weights = census.weights_bytes(model)
        del model
    same = first.keys() == second.keys() and all(torch.equal(first[k], second[k]) for k in first)
    del first, second
    memory.release_memory()
    return StraightReport(model=name, form="dtype" if on_cpu else "device", device=dev.id, dtype=dname, paths=paths,
                          same_weights=same, weights_bytes=weights, load_average=os.getloadavg()[0])
