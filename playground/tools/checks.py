"""What a self-check is: one path of the playground run for real on this machine, with its verdict.

A check is a function registered with `@check(name, device, proves)`. It runs the
path and returns the figures it measured (a dict); it raises `Skip(reason)` when
this machine cannot run it (the reason says why: "this PyTorch build has no
CUDA"), and any other exception is a failure, its message the reason. The
runner (`playground.tools.selfcheck`) times each one and never stops at a
failure.

The pure rules the GPU checks judge by live here too, so that tests can feed them
recorded readings: whether greedy tokens from two devices agree within the dtype's
tolerance, and whether NVML and PyTorch's allocator tell one story.
"""

from __future__ import annotations

import time
import traceback
from dataclasses import dataclass, field
from typing import Callable

import torch

PASS, FAIL, SKIP = "pass", "fail", "skip"


class Skip(Exception):
    """This machine cannot run the check; the message says why."""


@dataclass
class Check:
    name: str
    device: str  # "cpu", "cuda" or "mps": what --device selects it by
    proves: str  # what a pass shows (the README's table says it too)
    fn: Callable[[str], dict]  # takes the device id it runs on ("cpu", "cuda:0", "mps")


@dataclass
class Result:
    name: str
    status: str  # pass, fail, skip
    reason: str  # why it was skipped or failed ("" for a pass)
    device: str
    proves: str
    seconds: float
    figures: dict = field(default_factory=dict)

    def to_dict(self) -> dict:
        return {"name": self.name, "status": self.status, "reason": self.reason, "device": self.device,
                "proves": self.proves, "seconds": round(self.seconds, 3), **self.figures}


REGISTRY: list[Check] = []


def check(name: str, device: str, proves: str) -> Callable[[Callable[[str], dict]], Callable[[str], dict]]:
    def register(fn: Callable[[str], dict]) -> Callable[[str], dict]:
        REGISTRY.append(Check(name, device, proves, fn))
        return fn

    return register


def run_one(c: Check, device: str, debug: bool = False) -> Result:
    """Run one check on `device`; a Skip or any failure becomes its Result, never an exception."""
    t0 = time.perf_counter()
    try:
        figures = c.fn(device) or {}
        status, reason = PASS, ""
    except Skip as e:
        figures, status, reason = {}, SKIP, str(e)
    except Exception as e:  # a failure of the path under test: reported, and the next check runs
        if debug:
            traceback.print_exc()
        figures, status, reason = {}, FAIL, f"{type(e).__name__}: {' '.join(str(e).split())[:400]}"
    return Result(c.name, status, reason, device, c.proves, time.perf_counter() - t0, figures)


def expect(condition: bool, message: str) -> None:
    """A check's assertion (not `assert`, which `python -O` removes)."""
    if not condition:
        raise AssertionError(message)


# ---------------------------------------------------------------- pure rules, testable on recorded readings

def greedy_agreement(ref_ids: list[int], ids: list[int], ref_logits: torch.Tensor, max_abs_diff: float) -> dict:
    """Do two greedy runs agree within tolerance? `ref_ids` chose by `ref_logits` (one row of logits per
    generated position, from the reference device), `ids` on the other device, whose logits for the
    same sequence differ from the reference's by at most `max_abs_diff` (measured, teacher-forced).

    The tokens must be equal up to the first position where they differ; there, the reference's
    margin between its choice and the other device's choice must be within 2 x max_abs_diff (a
    near-tie that the measured numeric difference can flip). After it the contexts differ, so later
    tokens are not compared. Returns {agree, first_difference, margin, compared}."""
    n = min(len(ref_ids), len(ids))
    first = next((i for i in range(n) if ref_ids[i] != ids[i]), None)
    if first is None:
        return dict(agree=len(ref_ids) == len(ids), first_difference=None if len(ref_ids) == len(ids) else n,
                    margin=None, compared=n)
    row = ref_logits[first].to(torch.float32)
    margin = float(row[ref_ids[first]] - row[ids[first]])
    return dict(agree=margin <= 2 * max_abs_diff, first_difference=first, margin=margin, compared=first + 1)


def dtype_tolerance(dtype: torch.dtype) -> float:
    """Largest logit difference expected between two devices computing the same model in `dtype`
    (different kernels sum in different orders): machine epsilon x a few hundred, for logits of order 10."""
    return {torch.float32: 1e-3, torch.bfloat16: 0.5, torch.float16: 0.1}.get(dtype, 1e-3) * 10


def memory_consistent(nvml_delta: int, reserved_delta: int, allocated_delta: int, slack: int = 64 * 2**20) -> bool:
    """NVML's device-wide used memory and PyTorch's caching allocator tell one story: after an allocation,
    the driver's growth covers the allocator's reservation (which covers the live tensors), and exceeds it by
    at most `slack` (other processes, the driver's own bookkeeping, 2 MiB page granularity)."""
    return allocated_delta <= reserved_delta and reserved_delta - slack <= nvml_delta <= reserved_delta + slack
