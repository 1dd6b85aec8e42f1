"""Checkpoint mistakes: a GPU checkpoint loaded on a CPU-only machine without `map_location`."""

from __future__ import annotations

import functools
import tempfile
import threading
from pathlib import Path

import torch

from playground.core.i18n import W, said
from playground.hw import devices
from playground.lab.capture import attempt
from playground.lab.harness import Lab, load_checkpoint, run_fix, scenario
from playground.lab.outcome import Outcome
from playground.lab.result import BreakResult, TensorRow
from playground.lab.scripts import Script

# What a script does on its own, where the lab writes the file with `save_tagged`: a checkpoint recorded
# the way torch.save records one on a GPU machine. (On a GPU host, one past the last GPU: it cannot load there either.)
GPU_CHECKPOINT = """
import tempfile
gpu = f"cuda:{torch.cuda.device_count()}"   # cuda:0 on this machine; a GPU that is not there, on a GPU host
# This machine cannot save from a GPU; torch.serialization lets it record the location a GPU machine would.
torch.serialization.register_package(0, lambda storage: gpu, lambda storage, location: None)
ckpt = tempfile.mkdtemp() + "/model.pt"
torch.save(model.state_dict(), ckpt)        # every storage recorded as living on the GPU
"""


# torch.serialization's two refusals (its _validate_device): "...on a CUDA device but ... is False" where there
# is no CUDA, and "...on CUDA device 1 but ... device_count() is 1" on a GPU host (the lab records one GPU too many)
DESERIALIZE_ON_CUDA = r"Attempting to deserialize object on (a CUDA device|CUDA device \d+ but)"

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


def as_saved(path: str, name: str, pick) -> TensorRow:
    """A tensor of a checkpoint (`pick(loaded)`) as its file records it: on the device torch.save wrote down
    for its storage, which torch.load hands to `map_location` with each storage, not the CPU it is read into."""
    where: dict[int, str] = {}

    def keep(storage, location: str):
        where[storage.data_ptr()] = location
        return storage

    x = pick(torch.load(path, map_location=keep, weights_only=True))
    return TensorRow(name, where[x.untyped_storage().data_ptr()], str(x.dtype).removeprefix("torch."),
                     list(x.shape), False, said("ui.row.in_file"))


def save_tagged(obj, path: str, location: str) -> None:
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
    expect=Outcome(RuntimeError, DESERIALIZE_ON_CUDA),
    group="checkpoint",
    script=Script("lm", setup=GPU_CHECKPOINT, broken="""
state_dict = torch.load(ckpt, weights_only=True)   # no map_location: every storage restored on the GPU
model.load_state_dict(state_dict)
""", fix="""
state_dict = torch.load(ckpt, map_location="cpu", weights_only=True)   # every storage onto the CPU first
model.load_state_dict(state_dict)
model = model.to(device)                   # then the model where this machine computes
print(len(state_dict), "tensors loaded; on", {t.device for t in state_dict.values()}, "| model on", model.device)
"""),
)
def cuda_checkpoint(lab: Lab, r: BreakResult) -> None:
    state = lab.cpu_model().state_dict()
    # cuda:0 without a GPU; on a GPU host, where a cuda:0 checkpoint loads fine, one past the last GPU
    # reproduces the same failure (as the script's own `gpu` line does)
    location = f"cuda:{devices.cuda_count()}"
    with tempfile.TemporaryDirectory(prefix="breakit-ckpt-") as folder:
        path = str(Path(folder) / "model.pt")
        save_tagged(state, path, location)
        tags: list[str] = []
        torch.load(path, map_location=lambda storage, loc: tags.append(loc) or storage, weights_only=True)
        r.measured = {"checkpoint_bytes": Path(path).stat().st_size, "storage_locations_in_file": sorted(set(tags)),
                      "storages": len(tags)}
        name = next(iter(state))
        r.tensors = [as_saved(path, name, lambda sd: sd[name])]
        attempt(r, lambda: load_checkpoint(path))
        run_fix(lab, cuda_checkpoint, r, ckpt=path)


SCENARIOS = (cuda_checkpoint,)
