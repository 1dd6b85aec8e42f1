"""Checkpoint mistakes: a GPU checkpoint loaded on a CPU-only machine without `map_location`."""

from __future__ import annotations

import functools
import tempfile
import threading
from pathlib import Path

import torch

from playground.core.i18n import W
from playground.lab.capture import attempt, fix
from playground.lab.harness import Lab, load_checkpoint, row, scenario
from playground.lab.result import BreakResult


LABELS = {
    "checkpoint_bytes": W("checkpoint file size", "检查点文件大小"),
    "storage_locations_in_file": W("storage locations recorded in the file", "文件中记录的存储位置"),
    "storages": W("storages in the file", "文件中的存储数"),
}


_TAG = threading.local()  # per thread: the location to record while the lab saves, else unset


def _tagger(storage) -> str | None:
    """A torch.serialization tagger: while the lab saves, storages are recorded as living on _TAG.location."""
    return getattr(_TAG, "location", None)


@functools.cache
def _register_tagger() -> None:
    # lower number = asked first; returns None (defer to PyTorch's own taggers) outside _save_tagged
    torch.serialization.register_package(3, _tagger, lambda storage, location: None)


def _save_tagged(obj, path: str, location: str) -> None:
    """torch.save, recording every storage's location as `location` (what a save on that GPU records)."""
    _register_tagger()
    _TAG.location = location
    try:
        torch.save(obj, path)
    finally:
        _TAG.location = None


@scenario(
    "cuda-checkpoint", 8,
    title=W("A checkpoint saved on a GPU, loaded on a CPU-only machine without map_location",
            "在 GPU 上保存的检查点，在只有 CPU 的机器上不带 map_location 加载"),
    explain=W(
        "`torch.save` records, for every storage, the device it lived on (here cuda:0). `torch.load` "
        "restores each storage on that device unless told otherwise, and this machine has no CUDA. "
        "`map_location='cpu'` rewrites the location at load time; `weights_only=True` (the default since "
        "PyTorch 2.6) unpickles only tensors and plain containers, so a checkpoint cannot run code.",
        "`torch.save` 会为每个存储记录它所在的设备（这里是 cuda:0）。除非另行指定，"
        "`torch.load` 会把每个存储恢复到那个设备上，而这台机器没有 CUDA。"
        "`map_location='cpu'` 在加载时改写位置；"
        "`weights_only=True`（PyTorch 2.6 起的默认值）只反序列化张量和普通容器，"
        "这样检查点就不能执行代码。",
    ),
    before="""
# saved on a GPU machine: torch.save(model.state_dict(), "model.pt")
state_dict = torch.load("model.pt")
""",
    after="""
state_dict = torch.load("model.pt", map_location="cpu", weights_only=True)
model.load_state_dict(state_dict)
""",
    labels=LABELS,
)
def cuda_checkpoint(lab: Lab, r: BreakResult) -> None:
    state = lab.cpu_model().state_dict()
    # On a GPU host, a cuda:0 checkpoint loads fine; one past the last GPU reproduces the same failure there.
    location = f"cuda:{torch.cuda.device_count()}" if lab.gpu else "cuda:0"
    with tempfile.TemporaryDirectory(prefix="breakit-ckpt-") as folder:
        path = str(Path(folder) / "model.pt")
        _save_tagged(state, path, location)
        tags: list[str] = []
        torch.load(path, map_location=lambda storage, loc: tags.append(loc) or storage, weights_only=True)
        r.measured = {"checkpoint_bytes": Path(path).stat().st_size, "storage_locations_in_file": sorted(set(tags)),
                      "storages": len(tags)}
        name = next(iter(state))
        r.tensors = [row(f"{name} (saved)", state[name])]
        attempt(r, lambda: load_checkpoint(path))

        def fixed():
            loaded = torch.load(path, map_location="cpu", weights_only=True)
            ok = all(torch.equal(loaded[k], state[k]) and loaded[k].device.type == "cpu" for k in state)
            return ok, f"{len(loaded)} tensors loaded onto cpu, equal to the saved ones: {ok}", None

        fix(r, fixed)


SCENARIOS = (cuda_checkpoint,)
