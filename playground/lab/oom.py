"""Out-of-memory messages read to their numbers, as a stacked bar, with the remedies those numbers point at.

`read(text)` finds a CUDA (or ROCm's HIP, or Intel's XPU) out-of-memory message in any wording since PyTorch 1.0, an MPS
one or a CPU allocator failure in pasted text, and returns an `Oom`: the numbers in bytes, the bar's parts
(what the request needed, what PyTorch held, what its cache held, what the rest of the process and the
other processes held, what was free) and the remedies that apply, kept as keys to be said in either
language. The patterns read the structure of each wording (every number is `<float> <unit>`), so a
version that moves a clause still reads. The wordings and what each number means: docs/memory.md.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from playground.core.i18n import Said, said
from playground.core.units import fmt_bytes

_UNITS = {"b": 1, "byte": 1, "bytes": 1, "kb": 2**10, "kib": 2**10, "mb": 2**20, "mib": 2**20, "gb": 2**30,
          "gib": 2**30, "tb": 2**40, "tib": 2**40}
_SIZE = r"(\d+(?:\.\d+)?)\s*(bytes|byte|[KMGT]i?B|B)\b"  # PyTorch's format_size: binary units, "GB" on MPS too
_GPU = r"(?:CUDA|HIP|XPU)"  # ROCm's HIP words it as CUDA does; Intel's XPU too, without "of which F is free"

# PyTorch 2.x: "Tried to allocate X. GPU 0 has a total capacity of T of which F is free. [Process P has M memory
# in use. ...] [Including non-PyTorch memory, this process has P memory in use.] Of the allocated memory A is
# allocated by PyTorch, and R is reserved by PyTorch but unallocated." (2.1 spelled "capacty")
NEW = re.compile(
    _GPU + r" out of memory\. Tried to allocate " + _SIZE + r"\. GPU (\d+) has a total capac(?:i)?ty of " + _SIZE
    + r"(?: of which " + _SIZE + r" is free)?\.(.{0,2000}?)Of the allocated memory " + _SIZE
    + r" is allocated by PyTorch, and " + _SIZE + r" is reserved by PyTorch but unallocated", re.I | re.S)
PROCESS = re.compile(r"this process has " + _SIZE + r" memory in use", re.I)
OTHER = re.compile(r"Process (\d+) has " + _SIZE + r" memory in use", re.I)
# PyTorch 1.x: "Tried to allocate X (GPU 0; T total capacity; A already allocated; F free; R reserved in total by
# PyTorch)"; 1.0-1.3 ended "...; F free; C cached)"; Intel's extension (IPEX) for XPU gave no free figure
OLD = re.compile(
    _GPU + r" out of memory\. Tried to allocate " + _SIZE + r" \(GPU (\d+); " + _SIZE + r" total capacity; "
    + _SIZE + r" already allocated;(?: " + _SIZE + r" free;)?(?: " + _SIZE + r" reserved in total by PyTorch| "
    + _SIZE + r" cached)", re.I)
MPS = re.compile(
    r"MPS backend out of memory \(MPS allocated: " + _SIZE + r", other allocations: " + _SIZE + r", max allowed: "
    + _SIZE + r"\)\. Tried to allocate " + _SIZE + r" on (private|shared) pool", re.I)
CPU = re.compile(r"DefaultCPUAllocator: (?:can't allocate memory|not enough memory): you tried to allocate (\d+) bytes",
                 re.I)
ANY = re.compile(_GPU + r" out of memory|MPS backend out of memory|DefaultCPUAllocator: (?:can't allocate memory"
                 r"|not enough memory)|OutOfMemoryError", re.I)

KINDS = ("cuda", "cuda_1x", "xpu", "xpu_1x", "mps", "cpu")  # the wordings read (their words: oom.kind.<kind>)
PARTS = ("requested", "allocated", "allocator_cache", "non_pytorch", "other_processes", "free")  # oom.part.<part>


def _bytes(number: str, unit: str) -> int:
    return int(float(number) * _UNITS[unit.lower()])


@dataclass
class Oom:
    kind: str  # "cuda" (PyTorch 2.x), "cuda_1x" (1.x: "reserved in total" or "cached"), "xpu", "xpu_1x", "mps", "cpu"
    device: str  # "cuda:0", "xpu:0", "mps", "cpu"
    requested: int
    total: int | None = None  # the GPU's capacity; MPS's high-water limit ("max allowed")
    free: int | None = None
    process: int | None = None  # this process, PyTorch and not ("Including non-PyTorch memory")
    allocated: int | None = None  # live tensors (allocated by PyTorch)
    reserved: int | None = None  # allocated + the allocator's cache
    other_processes: int | None = None  # total - free - this process, or the processes the message lists
    processes: list[tuple[int, int]] = field(default_factory=list)  # (pid, bytes) as the message lists them
    line: str = ""  # the words read

    @property
    def cache(self) -> int | None:
        """Reserved by PyTorch but not allocated: blocks its caching allocator keeps for reuse."""
        return None if self.reserved is None or self.allocated is None else max(self.reserved - self.allocated, 0)

    def parts(self) -> list[tuple[str, int]]:
        """(part, bytes) of the stacked bar, bottom to top: what PyTorch held, its cache, the rest of this
        process, the other processes, free, and what the request needed (above what was free)."""
        out = [("allocated", self.allocated), ("allocator_cache", self.cache)]
        if self.process is not None and self.reserved is not None:
            out.append(("non_pytorch", max(self.process - self.reserved, 0)))
        out += [("other_processes", self.other_processes), ("free", self.free), ("requested", self.requested)]
        return [(p, b) for p, b in out if b is not None]

    def remedies(self) -> list[Said]:
        """What these numbers point at, most telling first; never empty."""
        fields = dict(requested=fmt_bytes(self.requested), device=self.device)
        if self.kind == "cpu":
            return [said("oom.fix.cpu_size", **fields), said("oom.fix.context"), said("oom.fix.dtype"),
                    said("oom.fix.offload")]
        out: list[Said] = []
        total = self.total or 0
        cache = self.cache or 0
        if self.kind == "mps":
            if self.other_processes and self.other_processes >= 0.25 * total:
                out.append(said("oom.fix.others", others=fmt_bytes(self.other_processes), **fields))
            out.append(said("oom.fix.watermark", allowed=fmt_bytes(total)))
        else:
            if cache and (cache >= self.requested or cache >= 0.1 * total):
                out.append(said("oom.fix.expandable", cache=fmt_bytes(cache)))
            if self.free is not None and self.free >= self.requested:
                out.append(said("oom.fix.fragmented", free=fmt_bytes(self.free), **fields))
            if self.other_processes and self.other_processes >= max(0.1 * total, self.requested):
                out.append(said("oom.fix.others", others=fmt_bytes(self.other_processes), **fields))
        if total and self.requested >= 0.1 * total:
            out.append(said("oom.fix.context", **fields))
        held = self.allocated if self.allocated is not None else 0
        if total and held >= 0.5 * total:
            out.append(said("oom.fix.dtype"))
        if total and held + self.requested > total:
            out.append(said("oom.fix.offload"))
        return out or [said("oom.fix.context", **fields), said("oom.fix.dtype")]


def _backend(m: re.Match) -> str:
    """"xpu" for Intel's wording, else "cuda" (ROCm's HIP names its devices cuda:N in PyTorch too)."""
    return "xpu" if m.group(0)[:3].upper() == "XPU" else "cuda"


def _new(m: re.Match) -> Oom:
    req, gpu, total = _bytes(*m.group(1, 2)), int(m.group(3)), _bytes(*m.group(4, 5))
    free = _bytes(*m.group(6, 7)) if m.group(6) else None
    middle = m.group(8)
    allocated, unalloc = _bytes(*m.group(9, 10)), _bytes(*m.group(11, 12))
    p = PROCESS.search(middle)
    process = _bytes(*p.group(1, 2)) if p else None
    procs = [(int(pid), _bytes(n, u)) for pid, n, u in OTHER.findall(middle)]
    others = (max(total - free - process, 0) if process is not None and free is not None
              else sum(b for _, b in procs) if procs else None)
    kind = _backend(m)
    return Oom(kind, f"{kind}:{gpu}", req, total, free, process, allocated, allocated + unalloc, others, procs)


def _old(m: re.Match) -> Oom:
    req, gpu, total = _bytes(*m.group(1, 2)), int(m.group(3)), _bytes(*m.group(4, 5))
    allocated = _bytes(*m.group(6, 7))
    free = _bytes(*m.group(8, 9)) if m.group(8) else None
    if m.group(10) is not None:  # "R reserved in total by PyTorch"
        reserved = _bytes(*m.group(10, 11))
    else:  # "C cached": the cache alone, in PyTorch 1.0-1.3
        reserved = allocated + _bytes(*m.group(12, 13))
    # no figure for the process: what is neither PyTorch's nor free is the CUDA context and the others, together
    kind = _backend(m)
    return Oom(f"{kind}_1x", f"{kind}:{gpu}", req, total, free, None, allocated, reserved,
               max(total - free - reserved, 0) if free is not None else None)


def _mps(m: re.Match) -> Oom:
    allocated, other, allowed, req = (_bytes(*m.group(i, i + 1)) for i in (1, 3, 5, 7))
    return Oom("mps", "mps", req, allowed, max(allowed - allocated - other, 0), None, allocated, None, other)


def read(text: str) -> Oom | None:
    """The first out-of-memory message in `text` (whitespace already collapsed or not), read to its numbers;
    None when there is none or its numbers cannot be read (`mentions` still says an OOM was named)."""
    flat = " ".join(text.split())
    for pattern, make in ((NEW, _new), (OLD, _old), (MPS, _mps)):
        m = pattern.search(flat)
        if m:
            oom = make(m)
            oom.line = flat[m.start(): m.end()][:400]
            return oom
    m = CPU.search(flat)
    if m:
        return Oom("cpu", "cpu", int(m.group(1)), line=flat[m.start(): m.end()][:400])
    return None


def mentions(text: str) -> bool:
    """Does the text name an out-of-memory error at all (even one whose numbers are cut off)?"""
    return ANY.search(" ".join(text.split())) is not None
