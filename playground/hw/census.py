"""Where a model's tensors are held: on which device, and in RAM whether PyTorch allocated their bytes or they
still lie in a memory-mapped checkpoint, with how many of those pages are resident now.

`census(model)` walks the parameters and buffers once (a tied weight once) and keeps what the load report, the
ledger and the migration note read (`Census`); `resident_files` and `resident_in` read the resident pages of the
checkpoint mappings from /proc/self/pagemap. Linux's /proc; elsewhere the figures are None, said as such.
"""

from __future__ import annotations

import bisect
import os
from dataclasses import dataclass

import torch

from playground.hw import devices, memory


def file_mappings(suffix: str = "") -> list[tuple[int, int, str]] | None:
    """(start, end, path) of every file-backed mapping of this process (Linux) whose path ends with
    `suffix`, or None where /proc/self/maps cannot be read."""
    try:
        with open("/proc/self/maps", "rb") as fh:
            lines = fh.read().splitlines()
    except OSError:
        return None
    end = os.fsencode(suffix)
    out = []
    for line in lines:
        if end and not line.endswith(end):
            continue  # a process maps hundreds of files (every .so); skip them unparsed
        parts = line.split(maxsplit=5)
        if len(parts) == 6 and parts[4] != b"0" and parts[5].startswith(b"/"):
            lo, hi = parts[0].split(b"-")
            out.append((int(lo, 16), int(hi, 16), os.fsdecode(parts[5])))
    return out


def resident_files(folder: str | None, model: torch.nn.Module | None = None,
                   counted: Census | None = None) -> tuple[int, int, int] | None:
    """(resident bytes of this process's mappings of the `.safetensors` files inside `folder`, resident bytes
    of every other mapped file but checkpoints: the interpreter, libtorch and the other libraries' code and
    data, resident bytes of the other checkpoint mappings). With `model`, a mapping is the model's only if one
    of its tensors lies in it: another model loaded from the same folder (another visitor's, in the pool) maps
    the file again, and its pages are its own. A library's code pages come in as its code first runs, so the
    second grows after the first generation. None off Linux.

    A page of a mapped file is resident when this process's page table maps it: /proc/self/pagemap says so
    page by page (bit 63, "present"), 8 bytes a page, read for the checkpoints' ranges only; the libraries are
    the rest of the kernel's RssFile. (/proc/self/smaps gives the same figures but costs ~20 ms here: the
    kernel walks every one of torch's ~2,000 mappings to write it.)"""
    if counted is None and model is not None:
        counted = census(model)
    maps = counted.maps if counted is not None and counted.mapped is not None else file_mappings(".safetensors")
    total_files = memory.rss_files()
    if maps is None or total_files is None:
        return None
    root = os.path.realpath(folder) + os.sep if folder else None
    ptrs = counted.ptrs if counted is not None else None
    mine = others = 0
    for lo, hi, path in maps:
        pages = memory.present_pages(lo, hi)
        if pages is None:
            return _resident_files_smaps(root, ptrs)
        ours = (ptrs is None or _holds_any(ptrs, lo, hi)) and root is not None and \
            os.path.realpath(path).startswith(root)
        if ours:
            mine += pages * memory.PAGE
        else:
            others += pages * memory.PAGE
    return mine, max(total_files - mine - others, 0), others


def resident_in(ranges: list[tuple[int, int]] | None) -> int | None:
    """Resident bytes of these address ranges now (`memory.present_pages`), None where it cannot be read."""
    if ranges is None:
        return None
    total = 0
    for lo, hi in ranges:
        pages = memory.present_pages(lo, hi)
        if pages is None:
            return None
        total += pages * memory.PAGE
    return total


def _resident_files_smaps(root: str | None, ptrs: list[int] | None) -> tuple[int, int, int] | None:
    """`resident_files` from /proc/self/smaps, where /proc/self/pagemap cannot be read."""
    checkpoint = libraries = others = 0
    kind = ""
    try:
        with open("/proc/self/smaps", encoding="utf-8", errors="replace") as fh:
            for line in fh:
                if line[0] in "0123456789abcdef" and "-" in line.split(" ", 1)[0]:  # a mapping's header line
                    fields = line.rstrip("\n").split(maxsplit=5)
                    path = fields[5] if len(fields) == 6 else ""
                    if not path.startswith("/"):
                        kind = ""  # anonymous: the heap, stacks, [vdso]
                    elif path.endswith(".safetensors"):
                        lo, hi = (int(x, 16) for x in fields[0].split("-"))
                        ours = ptrs is None or _holds_any(ptrs, lo, hi)
                        kind = "mine" if ours and root and os.path.realpath(path).startswith(root) else "other"
                    else:
                        kind = "lib"
                elif kind and line.startswith("Rss:"):
                    n = int(line.split()[1]) * 1024
                    if kind == "mine":
                        checkpoint += n
                    elif kind == "other":
                        others += n
                    else:
                        libraries += n
    except OSError:
        return None
    return checkpoint, libraries, others


def _holds_any(ptrs: list[int], lo: int, hi: int) -> bool:
    """Does [lo, hi) contain one of the sorted addresses `ptrs`?"""
    i = bisect.bisect_left(ptrs, lo)
    return i < len(ptrs) and ptrs[i] < hi


def leaves(t: torch.Tensor) -> list[torch.Tensor]:
    """The plain tensors that hold `t`'s bytes: `t` itself, or for a tensor subclass that wraps others (torchao's
    quantized weights: `Int8Tensor` holds int8 values, a scale per row and a zero point) its inner tensors, named
    by its `__tensor_flatten__`, recursively. The wrapper reports the shape and dtype of the weight it stands for
    (a float32 [out, in] matrix) and owns no storage of its own."""
    if type(t) in (torch.Tensor, torch.nn.Parameter) or not hasattr(t, "__tensor_flatten__"):
        return [t]
    names, _meta = t.__tensor_flatten__()
    out: list[torch.Tensor] = []
    for n in names:
        inner = getattr(t, n, None)
        if isinstance(inner, torch.Tensor):
            out += leaves(inner)
    return out


def nbytes(t: torch.Tensor) -> int:
    """The bytes a tensor holds: `Tensor.nbytes`, or its inner tensors' for a tensor subclass (`leaves`), scales
    and zero points included. The one count of a tensor's bytes: the census, the ledger, the estimate and Inspect
    read it. (A subclass's own `nbytes` is numel x its dtype's size: 4 bytes per int8 weight of a float32 model.
    `torchao.utils.get_model_size_in_bytes` sums the same inner tensors per module, so it counts a head tied to the
    embedding twice; `weights_bytes` counts each tensor once.)"""
    return sum(x.nbytes for x in leaves(t))


def weights_bytes(model: torch.nn.Module) -> int:
    """Bytes of a model's parameters and buffers, each tensor once (`nbytes`): what reading every weight costs."""
    return sum(nbytes(t) for t in tensors(model))


def tensors(model: torch.nn.Module) -> list[torch.Tensor]:
    """The model's parameters and buffers, each tensor once (the ledger's weights, the migration's report)."""
    params, buffers, _ = _walk(model)
    return params + buffers


def _walk(model: torch.nn.Module) -> tuple[list[torch.Tensor], list[torch.Tensor], bool]:
    """(parameters, buffers, hooked), each tensor once, in `parameters()` then `buffers()` order, in one walk of
    the modules: the two calls would walk them twice and build every name on the way (~1 ms for GPT-2 small).
    `hooked`: a module carries an Accelerate hook (`_hf_hook`: it moves or brings in weights around forward)."""
    seen: set[int] = set()
    params: list[torch.Tensor] = []
    buffers: list[torch.Tensor] = []
    hooked = False
    for module in _modules(model):
        # Accelerate sets `module._hf_hook = hook`: a plain attribute, in the module's __dict__ (a getattr that
        # misses goes through nn.Module.__getattr__ and an AttributeError, ~5 us a module)
        hooked = hooked or module.__dict__.get("_hf_hook") is not None
        for group, out in ((module._parameters, params), (module._buffers, buffers)):
            for t in group.values():
                if t is not None and id(t) not in seen:  # tied weights are one tensor under two names
                    seen.add(id(t))
                    out.append(t)
    return params, buffers, hooked


def _modules(model: torch.nn.Module) -> list[torch.nn.Module]:
    """`model.modules()`, in its order (depth first, a module shared by two parents once), without the dotted
    name `named_modules` builds for each on the way."""
    out: list[torch.nn.Module] = []
    seen: set[int] = set()
    stack = [model]
    while stack:
        module = stack.pop()
        if id(module) in seen:
            continue
        seen.add(id(module))
        out.append(module)
        stack.extend(reversed([m for m in module._modules.values() if m is not None]))
    return out


@dataclass
class Census:
    """A model's tensors counted once (a tied weight once), each where it lies: bytes per device, and of the bytes
    in RAM those still memory-mapped from a `.safetensors` checkpoint, with the mappings that hold them. Read in
    one walk (`census`), so that the load report, the ledger and the migration note read the same figures."""

    by_device: dict[str, int]  # the ledger's device names ("cpu", "cuda:0", "mps", "meta") -> bytes
    tensors: int
    mapped: int | None  # bytes in RAM inside a checkpoint's mapping (None: /proc/self/maps cannot be read)
    ranges: list[tuple[int, int]]  # the checkpoint mappings holding one of its tensors: its own
    maps: list[tuple[int, int, str]]  # every checkpoint mapping of the process (the others' too)
    ptrs: list[int]  # its tensors' addresses in RAM, sorted
    parameters: int = 0  # the parameters' elements, each tensor once (a quantized weight: the weight it stands for)
    buffers: int = 0  # how many buffers
    hooked: bool = False  # a module carries an Accelerate hook (device_map="auto", an offload)

    @property
    def total(self) -> int:
        return sum(self.by_device.values())


def census(model: torch.nn.Module) -> Census:
    """Walk the model's parameters and buffers once (see `Census`)."""
    by_device: dict[str, int] = {}
    cpu: list[torch.Tensor] = []
    params, buffers, hooked = _walk(model)
    ts = params + buffers
    named: dict[torch.device, str] = {}  # a model's tensors lie on a device or two: each named once
    for t in ts:
        dev = named.get(t.device) or named.setdefault(t.device, devices.name(t.device))
        held = leaves(t)  # a quantized weight's storages are its inner tensors'
        by_device[dev] = by_device.get(dev, 0) + sum(x.nbytes for x in held)
        if dev == "cpu":
            cpu += held
    ptrs = sorted(t.data_ptr() for t in cpu)
    # every checkpoint mapping of the process, the other models' too (the ledger counts their resident pages
    # apart); reading them (~0.9 ms) costs less than asking each storage whether PyTorch allocated it
    maps = file_mappings(".safetensors")
    elements, n_buffers = sum(p.numel() for p in params), len(buffers)
    if maps is None:
        return Census(by_device, len(ts), None, [], [], ptrs, elements, n_buffers, hooked)
    ranges = [(lo, hi) for lo, hi, _ in maps if _holds_any(ptrs, lo, hi)]
    # a tensor whose bytes lie inside a checkpoint's mapping still reads them from the file (a cast copied them)
    mapped = sum(t.nbytes for t in cpu if any(lo <= t.data_ptr() < hi for lo, hi in ranges)) if ranges else 0
    return Census(by_device, len(ts), mapped, ranges, maps, ptrs, elements, n_buffers, hooked)
