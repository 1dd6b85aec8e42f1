"""What an offloaded model moves per token, measured: the hooks' bytes and time, the disk's bytes, the page faults.

`Meter(model, files, cold)` wraps each offloading `AlignDevicesHook`'s `pre_forward` and `post_forward` (as
instance attributes, removed on exit: Accelerate's own code runs unchanged inside) to count the bytes each
brings in per forward pass (copied into new memory, or mapped from the checkpoint) and the time spent in
them, and marks every forward pass; with `cold` it evicts the offloaded files from the page cache before each
pass, as on a machine whose RAM cannot cache them. `measure(...)` generates greedy tokens under a meter and
reports the decode steps' figures per token (`OffloadRun`). See docs/placement.md.
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field

from accelerate.hooks import AlignDevicesHook
from accelerate.utils import named_module_tensors

from playground.hw import devices, disk
from playground.run import generation


@dataclass
class Totals:
    """Running sums over a generation; a forward pass's figures are the difference between two snapshots."""

    t: float = 0.0
    moved: int = 0  # bytes the hooks brought onto the execution device
    copied: int = 0  # of which copied into memory PyTorch allocated (the rest: mapped from the checkpoint)
    hook_seconds: float = 0.0
    evict_seconds: float = 0.0
    io: disk.IoCounters | None = None


class Meter:
    """Count what the offloading hooks of `model` bring in, per forward pass (see the module docstring)."""

    def __init__(self, model, files: set[str] | None = None, cold: bool = False) -> None:
        self.model, self.files, self.cold = model, set(files or ()), cold
        self.now = Totals()
        self.snapshots: list[Totals] = []  # one at the start of each forward pass, one at the end
        self._wrapped: list[AlignDevicesHook] = []
        self._handle = None

    def __enter__(self) -> Meter:
        for _, module in self.model.named_modules():
            hook = getattr(module, "_hf_hook", None)
            for h in getattr(hook, "hooks", None) or [hook]:
                if isinstance(h, AlignDevicesHook) and h.offload:
                    self._wrap(h, module)
        self._handle = self.model.register_forward_pre_hook(self._pass_starts)
        return self

    def __exit__(self, *exc) -> None:
        self._handle.remove()
        for h in self._wrapped:
            del h.pre_forward, h.post_forward  # the class's own methods again
        self._wrapped.clear()
        self.snapshots.append(self._snapshot())

    def _snapshot(self) -> Totals:
        return Totals(time.perf_counter(), self.now.moved, self.now.copied, self.now.hook_seconds,
                      self.now.evict_seconds, disk.io())

    def _pass_starts(self, module, args) -> None:
        self.snapshots.append(self._snapshot())
        if self.cold and self.files:
            self.now.evict_seconds += disk.evict(self.files)

    def _wrap(self, hook: AlignDevicesHook, module) -> None:
        names = [n.rpartition(".") for n, _ in named_module_tensors(
            module, include_buffers=hook.offload_buffers, recurse=hook.place_submodules, remove_non_persistent=True)]
        device = str(hook.execution_device) if hook.execution_device is not None else "cpu"
        sync = device if devices.kind_of(device) != "cpu" else None
        pre, post, now = hook.pre_forward, hook.post_forward, self.now

        def pre_forward(mod, *args, **kwargs):
            devices.sync(sync)  # a GPU copies asynchronously: wait before reading the clock
            t0 = time.perf_counter()
            out = pre(mod, *args, **kwargs)
            devices.sync(sync)
            now.hook_seconds += time.perf_counter() - t0
            for owner, _, attr in names:
                x = getattr(mod.get_submodule(owner), attr)
                now.moved += x.nbytes
                # memory PyTorch allocated is resizable; a tensor mapped from the file is not
                if x.device.type != "cpu" or x.untyped_storage().resizable():
                    now.copied += x.nbytes
            return out

        def post_forward(mod, output):
            t0 = time.perf_counter()
            out = post(mod, output)
            now.hook_seconds += time.perf_counter() - t0
            return out

        hook.pre_forward, hook.post_forward = pre_forward, post_forward
        self._wrapped.append(hook)


@dataclass
class OffloadRun:
    """One greedy generation on a (possibly) offloaded model; per-token figures are the decode steps' (each
    one forward pass, one new token), not the prefill's."""

    cold: bool
    new_tokens: int
    prompt_tokens: int
    ttft_seconds: float | None
    decode_seconds: float | None  # first to last token, the evictions' time taken out
    tokens_per_second: float | None  # (new_tokens - 1) / decode_seconds
    decode_passes: int
    moved_bytes_per_token: float
    copied_bytes_per_token: float
    disk_bytes_per_token: float | None  # None where the OS keeps no such counter
    hook_ms_per_token: float
    step_ms_per_token: float  # the decode passes' wall time, evictions out: the window the hooks' time lies in
    evict_ms_per_token: float
    minor_faults_per_token: float
    major_faults_per_token: float
    token_ids: list[int] = field(default_factory=list)

    def to_dict(self) -> dict:
        return asdict(self)


def generate(model, tokenizer, device: str, prompt: str, n: int) -> tuple[list[int], list[float], int]:
    """Exactly `n` greedy tokens (EOS held back until then, so that every run counts the same), each stamped
    as generate() hands it over: (ids, seconds since the call, prompt tokens)."""
    return generation.generate_ids(model, tokenizer, device, prompt, n, exact=True)


def measure(model, tokenizer, device: str, prompt: str, n: int, cold: bool = False,
            files: set[str] | None = None) -> OffloadRun:
    """`n` greedy tokens under a `Meter` (cold: the offloaded `files` evicted before every forward pass)."""
    with Meter(model, files, cold) as meter:
        ids, stamps, n_prompt = generate(model, tokenizer, device, prompt, n)
    snaps = meter.snapshots
    first, last = (snaps[1], snaps[-1]) if len(snaps) > 2 else (snaps[0], snaps[-1])  # decode: after the prefill
    passes = max(len(snaps) - 2, 0)
    per = (lambda v: v / passes) if passes else (lambda v: 0.0)
    evict_decode = last.evict_seconds - first.evict_seconds
    decode = stamps[-1] - stamps[0] - evict_decode if len(stamps) > 1 else None
    io = last.io - first.io
    return OffloadRun(
        cold=cold, new_tokens=len(ids), prompt_tokens=n_prompt, ttft_seconds=stamps[0] if stamps else None,
        decode_seconds=decode, tokens_per_second=(len(ids) - 1) / decode if decode else None, decode_passes=passes,
        moved_bytes_per_token=per(last.moved - first.moved), copied_bytes_per_token=per(last.copied - first.copied),
        disk_bytes_per_token=per(io.read_bytes) if io.read_bytes is not None else None,
        hook_ms_per_token=per(1e3 * (last.hook_seconds - first.hook_seconds)),
        step_ms_per_token=per(1e3 * (last.t - first.t - evict_decode)), evict_ms_per_token=per(1e3 * evict_decode),
        minor_faults_per_token=per(io.minor_faults), major_faults_per_token=per(io.major_faults), token_ids=ids)


def first_difference(ids: list[int], ref: list[int]) -> int | None:
    """Index of the first token where `ids` and `ref` differ (None: the same, token for token)."""
    diff = next((i for i, (a, b) in enumerate(zip(ids, ref)) if a != b), None)
    if diff is None and len(ids) != len(ref):
        diff = min(len(ids), len(ref))
    return diff
