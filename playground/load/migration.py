"""Anatomy of a migration: where a loaded model's bytes live, and what its `.to(device)` cost beside the rates.

`gap(report, model, survey)` sets a load's measured migrate time beside what this machine's
measured rates predict for its bytes; `file_backed_bytes(model)` counts the bytes still mapped
from the checkpoint file (Transformers 5 memory-maps safetensors). See docs/loading.md.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import torch

from playground.core.i18n import Said, as_text, said
from playground.hw import census, devices


# -- where the bytes live ---------------------------------------------------------
def file_backed_bytes(model: torch.nn.Module) -> int | None:
    """Bytes of the model's CPU tensors whose storage lies inside a memory-mapped checkpoint (a zero-copy
    safetensors load), or None where /proc/self/maps is not available (`census.census`)."""
    return census.census(model).mapped


# -- the loaded model's .to(): measured, predicted, and the tutorials' arithmetic ---------
TUTORIAL_GBPS = 16.0  # the tutorials' "PCIe 3.0 x16: ~16 GB/s" (15.75 GB/s per direction, in theory)


@dataclass
class MigrateGap:
    """The loaded model's measured `.to(device)` beside what this machine's rates predict for it."""

    model: str
    device: str
    dtype: str
    weights_bytes: int
    tensors: int  # parameters + buffers, each one `.to()` call
    measured_seconds: float  # the load report's migrate phase, synchronised
    moved: bool  # whether anything was copied (False: already there, Tensor.to returned it)
    rate: dict | None  # the measured rate the prediction divides by (None: nothing to move)
    predicted_seconds: float  # weights bytes / that rate (0 when nothing moves)
    pinned_seconds: float | None  # the same from pinned memory: the link's ceiling (GPU only)
    link_seconds: float | None  # at the PCIe link's theoretical rate from NVML (GPU only)
    tutorial_seconds: float  # weights bytes / 16 GB/s, as the tutorials compute it
    cast_seconds: float | None  # what `.to(torch.bfloat16)` of these float32 weights would take here
    why: Said
    mapped_bytes: int = 0  # weights still memory-mapped from the checkpoint when `.to()` began (read by page faults)

    def to_dict(self) -> dict:
        return as_text(asdict(self))


def gap(report, model: torch.nn.Module, survey: dict, link_gbps: float | None = None) -> MigrateGap:
    """Explain the loaded model's migrate time (`report`: its LoadReport; `model`: the model, whose
    tensors `.to()` walked) with the rates of `bandwidth.survey` (and the link's theoretical rate,
    when NVML gives one)."""
    b = report.weights_bytes
    kind = devices.kind_of(report.device)
    moved = report.migrate_code == "copied"
    mapped = int(report.migrate_fields.get("mapped_bytes") or 0) if moved else 0
    tensors = len(census.tensors(model))
    tutorial = b / (TUTORIAL_GBPS * 1e9)
    cast = survey["cpu"]["cast"]
    cast_s = b / (cast["gbps"] * 1e9) if report.dtype == "float32" and cast.get("gbps") else None
    gpu = next((g for g in survey["gpu"]["devices"] if g["device"] == report.device), None)
    rate = pinned = link = None
    predicted = 0.0
    fields = dict(device=report.device, measured=f"{report.migrate_seconds * 1e3:.2f}", tensors=tensors,
                  tutorial=f"{tutorial * 1e3:.1f}", size=f"{b / 1e6:.0f}")
    if kind == "auto":
        why = said("gap.auto", **fields)
    elif not moved:
        per = report.migrate_seconds / tensors * 1e6 if tensors else 0.0
        why = said("gap.noop", per=f"{per:.1f}", **fields)
    elif kind == "cuda" and gpu is not None:
        rate = gpu["h2d_pageable"]
        predicted = b / (rate["gbps"] * 1e9)
        pinned = b / (gpu["h2d_pinned"]["gbps"] * 1e9)
        link = b / (link_gbps * 1e9) if link_gbps else None
        extra = max(report.migrate_seconds - predicted, 0.0)
        # the pageable rate was measured on memory already in RAM; weights still mapped from the checkpoint (a
        # float32 load of float32 weights copies nothing) are read by page faults, from the disk where cold
        why = said("gap.cuda_mapped" if mapped else "gap.cuda", predicted=f"{predicted * 1e3:.1f}",
                   rate=f"{rate['gbps']:.1f}", extra=f"{extra * 1e3:.1f}", per=f"{extra / max(tensors, 1) * 1e6:.0f}",
                   mapped=f"{mapped / 1e6:.0f}", **fields)
    elif kind == "mps":  # one memory shared with the CPU: a copy within RAM
        rate = survey["cpu"]["memcpy"]
        predicted = 2 * b / (rate["gbps"] * 1e9)  # memcpy's rate counts bytes read + written
        why = said("gap.copy", predicted=f"{predicted * 1e3:.1f}", rate=f"{rate['gbps']:.1f}", **fields)
    else:
        why = said("gap.no_rates", **fields)
    return MigrateGap(report.model, report.device, report.dtype, b, tensors, report.migrate_seconds, moved, rate,
                      predicted, pinned, link, tutorial, cast_s, why, mapped)

